"""`Estimator.export_saved_model` for a graph-mode Estimator: a timestamped SavedModel under
export_dir_base whose `serving_default` signature (and one per PREDICT export output) maps
the serving receiver's tensors to model_fn's PREDICT outputs, with the variables' values
from model_dir's latest checkpoint.

How (a deviation from TF, which writes the v1 graph itself): tensorlite's SavedModel writer
works from traced TF2 functions, so model_fn's PREDICT graph is built once in a tf.Graph to
learn its variables (in creation order, with their checkpoint keys) and the receiver, and
then traced again as a tf.function over TensorSpecs of the receiver's placeholders; every
variable model_fn creates in that trace is handed the matching variable holding the
checkpoint's value (by creation order, as the eager Estimator's store does). The result is
an ordinary SavedModel that TensorFlow's tf.saved_model.load and Serving read.

Limits (NotImplementedError): features must be receiver tensors themselves (what
build_raw_serving_input_receiver_fn gives); a receiver that computes features from its
tensors (tf.io.parse_example of serialized Examples) is not exported yet.

Example:
    >>> path = export(est, "/tmp/export", serving_input_receiver_fn)   # doctest: +SKIP
"""
import inspect
import os
import time

from tensorlite.checkpoint.reader import load_checkpoint
from tensorlite.compat.v1 import graph as v1_graph
from tensorlite.compat.v1.optimizers import get_or_create_global_step
from tensorlite.compat.v1.variables import global_variables
from tensorlite.estimator import graph_checkpoint
from tensorlite.estimator.export import ServingInputReceiver, signature_outputs
from tensorlite.estimator.graph_model import fresh_graph
from tensorlite.framework import nest
from tensorlite.framework.module import Module
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.framework.variables import Variable, variable_creator_scope


def _receiver_in_graph(estimator, receiver_fn):
    """The receiver, model_fn's PREDICT variables and signature outputs, built in a graph."""
    with fresh_graph(v1_graph.Graph()):
        receiver = receiver_fn()
        if not isinstance(receiver, ServingInputReceiver):
            raise TypeError(f"serving_input_receiver_fn must return a "
                            f"tf.estimator.export.ServingInputReceiver, got "
                            f"{type(receiver).__name__}")
        step = get_or_create_global_step()
        spec = estimator._invoke_model_fn(receiver.features, None, "infer")
        signature_outputs(spec)     # fail here on malformed export_outputs
        variables = [v for v in global_variables() if v is not step]
    return receiver, variables


def _feature_keys(receiver):
    """For each feature leaf, the receiver key of the tensor it is."""
    key_of = {id(t): k for k, t in receiver.receiver_tensors.items()}
    keys = []
    for leaf in nest.flatten(receiver.features):
        if id(leaf) not in key_of:
            raise NotImplementedError(
                "export_saved_model: a feature computed from the receiver tensors (e.g. "
                "parsed tf.Examples) cannot be exported by tensorlite yet; features must be "
                "the receiver's placeholders themselves (build_raw_serving_input_receiver_fn)")
        keys.append(key_of[id(leaf)])
    return keys


def _serving_functions(estimator, receiver, variables):
    """{signature key: tf.function} over the receiver's TensorSpecs."""
    from tensorlite.graph.function import function  # noqa: PLC0415 - a high layer
    names = list(receiver.receiver_tensors)
    specs = [TensorSpec(t.shape, t.dtype, name=k) for k, t in
             receiver.receiver_tensors.items()]
    feature_keys = _feature_keys(receiver)
    handed = [0]

    def creator(next_creator, **kwargs):
        i = handed[0]
        handed[0] += 1
        if i >= len(variables):
            raise ValueError("model_fn created more variables while being exported than it "
                             "does in its PREDICT graph (it must build the same model)")
        return variables[i]

    def predict_outputs(args):
        by_key = dict(zip(names, args))
        features = nest.pack_like(receiver.features, [by_key[k] for k in feature_keys])
        handed[0] = 0
        with variable_creator_scope(creator):
            spec = estimator._invoke_model_fn(features, None, "infer")
        return signature_outputs(spec)

    out = {}
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    with fresh_graph(v1_graph.Graph()):
        keys = list(signature_outputs(estimator._invoke_model_fn(
            receiver.features, None, "infer")))
    for key in keys:
        def serve(*args, _key=key):
            return predict_outputs(args)[_key]
        serve.__signature__ = inspect.Signature(params)
        out[key] = function(serve, input_signature=specs)
    return out


def _new_export_dir(export_dir_base):
    stamp = int(time.time())
    while os.path.exists(os.path.join(export_dir_base, str(stamp))):
        stamp += 1
    return os.path.join(export_dir_base, str(stamp))


def export(estimator, export_dir_base, serving_input_receiver_fn, checkpoint_path=None):
    """Writes the SavedModel; returns its directory as bytes (as TF does)."""
    from tensorlite.saved_model import save  # noqa: PLC0415 - a high layer
    prefix = checkpoint_path or graph_checkpoint.latest(estimator.model_dir)
    if prefix is None:
        raise ValueError(f"Couldn't find trained model at {estimator.model_dir}.")
    receiver, graph_vars = _receiver_in_graph(estimator, serving_input_receiver_fn)
    reader = load_checkpoint(prefix)
    variables = [Variable(reader.get_tensor(graph_checkpoint.var_key(v)),
                          name=graph_checkpoint.var_key(v), trainable=v.trainable)
                 for v in graph_vars]
    module = Module()
    module.estimator_variables = variables
    signatures = _serving_functions(estimator, receiver, variables)
    for key, fn in signatures.items():
        setattr(module, f"signature_{len(module.__dict__)}", fn)
    os.makedirs(export_dir_base, exist_ok=True)
    export_dir = _new_export_dir(export_dir_base)
    save(module, export_dir, signatures=signatures)
    return export_dir.encode("utf-8")
