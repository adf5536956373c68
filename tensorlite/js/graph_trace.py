"""The inference graph a TF.js Graph model is written from: a SavedModel signature or a
tf.function traced into tensorlite's graph IR, its variables frozen into constants, and
tensorlite's simplifying graph passes run on it (arithmetic simplification, constant
folding, common-subexpression elimination, dead-code elimination) and BatchNorm folding
(graph/passes/fold_batch_norm.py): what tfjs-converter's Grappler run does before it writes a GraphDef.

A function with a None batch dimension is traced at two batch sizes (as every exporter
does, tensorlite/graph/capture.py); both traces are frozen and optimised alike, so the
Capture built from them still says which dimensions and attribute entries follow the
batch size. Kernel fusion and the other final passes are not run: they make nodes that
have no TensorFlow op.

Example:
    >>> traced = trace_function(tf.function(f, input_signature=[tf.TensorSpec([None, 3])]))
    >>> traced.input_keys, traced.output_keys
    (['x'], ['output_0'])
"""
import inspect

from tensorlite.framework import errors, nest
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.graph import options
from tensorlite.graph.capture import BATCH_SIZES, Capture, _concrete_specs
from tensorlite.graph.capture import _python_callable as python_callable
from tensorlite.graph.capture import input_signature as input_signature_of
from tensorlite.graph.function import Function, function
from tensorlite.graph.ir import ASSIGN_VARIABLE, READ_VARIABLE, Graph
from tensorlite.graph.passes import arithmetic, constant_folding, cse, dce, derive
from tensorlite.graph.passes import MAX_ROUNDS, fold_batch_norm
from tensorlite.saved_model.function_def import arg_name
from tensorlite.saved_model.trace import TracedGraph

# tensorlite's simplifying passes, each with the tf.config.optimizer switch that turns it off.
PASSES = ((arithmetic, "arithmetic_optimization"), (constant_folding, "constant_folding"),
          (cse, "common_subexpression_elimination"), (dce, "dependency_optimization"),
          (fold_batch_norm, "constant_folding"))


class InferenceGraph(TracedGraph):
    """A TracedGraph (`graph`, `spec(slot)`, `attrs(node)`) of a frozen, optimised trace,
    with `input_keys` (the signature's key of each placeholder), `input_names` (its
    Placeholder node's name: TensorFlow's `[a-z][a-z0-9_]*`) and `output_keys` (one per
    flat output)."""

    def __init__(self, graphs, signature, input_keys, output_keys):  # noqa: D107
        # TracedGraph.__init__ traces; here the traces are made, frozen and optimised.
        self.signature = list(signature)
        self._capture = Capture(graphs, self.signature)
        self.graph = self._capture.graph
        self._symbolic = {}  # the Capture knows which dimensions vary (two traces)
        self.input_keys = [str(k) for k in input_keys]
        self.input_names = []
        for key in self.input_keys:
            self.input_names.append(arg_name(key, set(self.input_names)))
        self.output_keys = list(output_keys)
        # {slot: variable name} of the constants that are variables' values, as they were
        self.weight_names = getattr(graphs[0], "weight_names", {})
        self.pass_report = getattr(graphs[0], "pass_report", [])


def variable_names(graph):
    """{slot: the variable's name without ':0'} of the graph's variable reads: the names
    their frozen values keep as weights (slot ids survive every pass)."""
    return {n.outputs[0]: str(getattr(n.attrs["variable"], "name", "")).split(":")[0]
            for n in graph.nodes if n.op is READ_VARIABLE}


def freeze(graph):
    """A copy of `graph` whose variable reads are constants holding the variables' current
    values; an assignment or other stateful node is UnimplementedError (an inference graph
    for TF.js holds no state)."""
    constants, nodes = dict(graph.constants), []
    for node in graph.nodes:
        if node.op is READ_VARIABLE:
            constants[node.outputs[0]] = node.attrs["variable"].numpy()
            continue
        if node.op is ASSIGN_VARIABLE or node.op.stateful:
            raise errors.UnimplementedError(
                None, None, f"TF.js graph model: node {node.op.name} (created at "
                f"{node.where}) changes state or draws random numbers; TF.js runs inference "
                f"graphs only. Convert a function that reads variables without assigning")
        nodes.append(node)
    return derive(graph, nodes, constants=constants)


def optimize(graph):
    """`graph` after tensorlite's simplifying passes and BatchNorm folding, run in rounds
    until none changes anything; `pass_report` on the result holds their report lines."""
    report = []
    for _ in range(MAX_ROUNDS):
        changed = False
        for module, key in PASSES:
            if options.enabled(key):
                graph, lines = module.run(graph)
                report.extend(f"{module.__name__.rsplit('.', 1)[-1]}: {line}" for line in lines)
                changed = changed or bool(lines)
        if not changed:
            break
    graph.pass_report = report
    return graph


def _traces(fn, signature):
    """(trace at BATCH_SIZES[0], trace at BATCH_SIZES[1]) of a Python function over
    tensors, frozen and optimised; one trace twice when no dimension is None."""
    dynamic = any(d is None for s in signature for d in s.shape.as_list())
    graphs = []
    for batch in BATCH_SIZES if dynamic else BATCH_SIZES[:1]:
        graph = function(fn).get_concrete_function(*_concrete_specs(signature, batch)).graph
        if len(nest.flatten(graph.outputs)) != len(graph.output_slots()):
            raise ValueError("the function returns values that are not tensors; a TF.js "
                             "graph model needs tensor outputs only")
        frozen = optimize(freeze(graph))
        frozen.weight_names = variable_names(graph)
        graphs.append(frozen)
    return graphs if dynamic else graphs * 2


def _output_names(outputs):
    """The signature keys of a function's flat outputs: a dict's keys (in flattening
    order), else output_0, output_1, ..."""
    flat = nest.flatten(outputs)
    if isinstance(outputs, dict) and len(outputs) == len(flat):
        return [str(k) for k in sorted(outputs)]
    return [f"output_{i}" for i in range(len(flat))]


def _input_keys(python_function, n):
    """The signature keys of a Python function's tensor arguments: their names."""
    try:
        params = [p.name for p in inspect.signature(python_function).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[:n] + [f"args_{i}" for i in range(len(params), n)]


def trace_function(fn, input_signature=None):
    """The InferenceGraph of a tf.function (its own input_signature, or the one given: a
    list of tf.TensorSpec, only the first dimension may be None), of a concrete function
    (`f.get_concrete_function(...)`: its traced shapes) or of a Keras model (called with
    training=False; inputs keyed by the model's input names, outputs by its output
    names)."""
    if hasattr(fn, "trainable_variables") and hasattr(fn, "call"):
        return _trace_keras(fn, input_signature)
    if isinstance(getattr(fn, "graph", None), Graph) and input_signature is None:
        graph = fn.graph  # a ConcreteFunction: fixed shapes, as traced
        signature = [TensorSpec(graph.specs[s][0], graph.specs[s][1])
                     for s in graph.placeholders]
        frozen = optimize(freeze(graph))
        frozen.weight_names = variable_names(graph)
        keys = [graph.input_names.get(s, f"args_{i}") for i, s in enumerate(graph.placeholders)]
        return InferenceGraph([frozen, frozen], signature, keys, _output_names(graph.outputs))
    signature = input_signature if input_signature is not None else \
        getattr(fn, "_signature", None)
    if signature is None:
        raise ValueError("convert_function needs the function's input signature: "
                         "tf.function(f, input_signature=[tf.TensorSpec([None, ...], "
                         "tf.float32)]) or input_signature=[...] here")
    signature = [s if isinstance(s, TensorSpec) else TensorSpec(s.shape, s.dtype)
                 for s in signature]
    python = fn.python_function if isinstance(fn, Function) else fn
    if not callable(python):
        raise TypeError(f"expected a tf.function or a concrete function, got "
                        f"{type(fn).__name__}")
    graphs = _traces(python, signature)
    return InferenceGraph(graphs, signature, _input_keys(python, len(signature)),
                          _output_names(graphs[0].outputs))


def _trace_keras(model, input_signature):
    signature = input_signature_of(model, input_signature)
    graphs = _traces(python_callable(model, len(signature)), signature)
    keys = list(getattr(model, "input_names", None) or [])
    if len(keys) != len(signature):
        keys = ["inputs"] if len(signature) == 1 else [f"input_{i}" for i in
                                                       range(len(signature))]
    outputs = list(getattr(model, "output_names", None) or [])
    if len(outputs) != len(graphs[0].output_slots()) or len(set(outputs)) != len(outputs):
        outputs = _output_names(graphs[0].outputs)
    return InferenceGraph(graphs, signature, keys, outputs)


def trace_saved_model(saved_model_dir, signature_name="serving_default", tags=("serve",)):
    """The InferenceGraph of a SavedModel's signature function (loaded by
    tf.saved_model.load and called op by op, so every TensorFlow op becomes its tensorlite
    op); inputs named by the signature's keys, outputs by its output keys."""
    from tensorlite.saved_model.load import _Spec, load  # noqa: PLC0415
    if isinstance(tags, str):  # --saved_model_tags's form: "serve" or "serve,gpu"
        tags = [t.strip() for t in tags.split(",") if t.strip()]
    loaded = load(saved_model_dir, list(tags) if tags else None)
    signatures = getattr(loaded, "signatures", None) or {}
    if signature_name not in signatures:
        raise ValueError(f"Signature '{signature_name}' does not exist in SavedModel "
                         f"{saved_model_dir}; it has '{', '.join(sorted(signatures))}'")
    fn = signatures[signature_name]
    args, kwargs = fn.structured_input_signature or ((), {})
    names = sorted(kwargs)
    if nest.flatten(args) or not all(isinstance(kwargs[n], _Spec) for n in names):
        raise NotImplementedError(f"signature '{signature_name}' of {saved_model_dir} takes "
                                  f"positional or nested arguments; TF.js graph models are "
                                  f"converted from signatures of one tensor per keyword")
    signature = [TensorSpec(kwargs[n].shape, kwargs[n].dtype, name=n) for n in names]

    def call(*xs):  # op by op: a py_function node would be opaque to TF.js
        return fn.call_inline(**dict(zip(names, xs)))
    graphs = _traces(call, signature)
    return InferenceGraph(graphs, signature, names, _output_names(fn.structured_outputs))


__all__ = ["InferenceGraph", "freeze", "optimize", "trace_function", "trace_saved_model"]
