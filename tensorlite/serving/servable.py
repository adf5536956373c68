"""Servables: a loaded SavedModel version as named signatures that run on NumPy arrays.

`load_servable(path)` loads one version directory with `tf.saved_model.load` (which fails
on a directory that is incomplete or torn: the manager then waits and retries). Each
signature knows its inputs' and outputs' dtypes and shapes (for validation and the
metadata API) and its method name (predict, classify or regress).

Example:
    >>> servable = load_servable("/models/mlp/1")
    >>> servable.signatures["serving_default"].run({"x": np.ones((2, 4), np.float32)})
    {'output_0': array(...)}
"""
import numpy as np

from tensorlite.framework import dtypes

PREDICT = "tensorflow/serving/predict"


class Signature:
    """One callable signature: `run({input name: array}) -> {output name: array}`."""

    def __init__(self, fn, inputs, outputs, method_name=PREDICT, input_tensor_names=None,
                 output_tensor_names=None):
        self._fn = fn
        self.inputs, self.outputs, self.method_name = inputs, outputs, method_name
        self.input_tensor_names = input_tensor_names or {}
        self.output_tensor_names = output_tensor_names or {}

    def run(self, inputs):
        from tensorlite.framework.tensor import wrap  # noqa: PLC0415
        out = self._fn(**{n: wrap(np.asarray(a)) for n, a in inputs.items()})
        if not isinstance(out, dict):
            out = {"output_0": out}
        return {n: np.asarray(v.numpy() if hasattr(v, "numpy") else v) for n, v in out.items()}


class Servable:
    """A loaded model version: its signatures by name."""

    def __init__(self, signatures, source=None):
        self.signatures = signatures
        self.source = source


def _spec(spec):
    """(DType, dims or None) of a TensorSpec (or a restored SavedModel's spec)."""
    shape = spec.shape
    if shape is None or getattr(shape, "rank", 0) is None:
        return dtypes.as_dtype(spec.dtype), None
    dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
    return dtypes.as_dtype(spec.dtype), tuple(dims)


def signature_from_function(fn, method_name=PREDICT, name="serving_default"):
    """A Signature of a concrete function whose inputs are keyword TensorSpecs (TF's
    `structured_input_signature`) and whose outputs are a dict (or one tensor)."""
    _, kwargs = fn.structured_input_signature
    inputs = {n: _spec(s) for n, s in kwargs.items()}
    outs = fn.structured_outputs
    if not isinstance(outs, dict):
        outs = {"output_0": outs}
    outputs = {n: _spec(s) for n, s in outs.items()}
    # TF1 signatures name their graph's tensors; TF2 ones follow tf.saved_model.save's names
    return Signature(fn, inputs, outputs, getattr(fn, "method_name", None) or method_name,
                     getattr(fn, "input_tensor_names", None)
                     or {n: f"{name}_{n}:0" for n in inputs},
                     getattr(fn, "output_tensor_names", None)
                     or {n: f"StatefulPartitionedCall:{i}" for i, n in enumerate(outputs)})


def load_servable(path):
    """The servable of one SavedModel version directory."""
    from tensorlite import saved_model  # noqa: PLC0415 - the SavedModel loader
    loaded = saved_model.load(path)
    signatures = {name: signature_from_function(fn, name=name)
                  for name, fn in loaded.signatures.items()}
    if not signatures:
        raise ValueError(f"the SavedModel at {path} has no signatures to serve; export it with "
                         f"tf.saved_model.save(obj, dir, signatures=...)")
    return Servable(signatures, source=path)
