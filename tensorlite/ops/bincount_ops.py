"""Counting ops behind Keras's categorical encodings: `DenseBincount` (rows of a dense
[batch, k] or [k] id tensor) and `RaggedBincount` (rows of a ragged tensor), both with
optional weights and `binary_output`, as TensorFlow's ops of those names.

Example:
    >>> DENSE_BINCOUNT(tf.constant([[1, 1, 3]]), size=4, binary_output=False).numpy()
    array([[0., 2., 0., 1.]], dtype=float32)
"""
import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.tensor import GRAPH_TENSOR_INFO, _graph_tensor_info


def _count(rowids, ids, nrows, size, weights, binary_output, dtype):
    if ids.size and (ids.min() < 0 or ids.max() >= size):
        bad = ids[(ids < 0) | (ids >= size)][0]
        raise errors.InvalidArgumentError(
            None, None, f"Bincount: input value {bad} is out of range [0, {size}); a "
            f"CategoryEncoding/lookup layer needs num_tokens > the largest index")
    out = np.zeros((nrows, size), dtype=dtype)
    np.add.at(out, (rowids, ids), 1 if weights is None else weights)
    return (out > 0).astype(dtype) if binary_output else out


def _dense_fwd(ids, size, binary_output, weights=None, out_dtype="float32"):
    rows = ids.reshape(1, -1) if ids.ndim == 1 else ids.reshape(ids.shape[0], -1)
    rowids = np.repeat(np.arange(rows.shape[0]), rows.shape[1])
    w = None if weights is None else weights.reshape(-1)
    out = _count(rowids, rows.reshape(-1).astype(np.int64), rows.shape[0], size, w,
                 binary_output, np.dtype(out_dtype))
    return out[0] if ids.ndim == 1 else out


def _ragged_fwd(splits, ids, size, binary_output, out_dtype="float32"):
    rowids = np.repeat(np.arange(splits.shape[0] - 1), np.diff(splits))
    return _count(rowids, ids.astype(np.int64), splits.shape[0] - 1, size, None,
                  binary_output, np.dtype(out_dtype))


# -- SavedModel rules (forms: saved_model/function_runner.py) --------------------------------
def _import_dense(ins, attrs):
    """TensorFlow's DenseBincount(input, size, weights): empty weights count ones; the
    output has the weights' dtype T."""
    ids, size, weights = ins
    binary = bool(attrs.get("binary_output", False))
    # inside a trace the size may follow the input (a row count, a shape: the tracer lets
    # a shape be read, which would freeze it): the sized form keeps it a tensor
    traced = bool(GRAPH_TENSOR_INFO) and _graph_tensor_info(size) is not None
    try:
        size_value = None if traced else int(size.numpy())
    except errors.InvalidArgumentError:  # a trace refuses: the size follows the input
        traced = True
    if traced:
        if weights.shape.num_elements():
            raise errors.UnimplementedError(None, None, "DenseBincount with weights and a "
                                            "size computed in the graph is not supported")
        return DENSE_BINCOUNT_SIZED(ids, size, binary_output=binary,
                                    out_dtype=weights.dtype.name)
    kw = {"size": size_value, "binary_output": binary, "out_dtype": weights.dtype.name}
    if weights.shape.num_elements() == 0:
        return DENSE_BINCOUNT(ids, **kw)
    return WEIGHTED_BINCOUNT(ids, weights, **kw)


def _import_ragged(ins, attrs):
    """TensorFlow's RaggedBincount(splits, values, size, weights), unweighted."""
    splits, ids, size, weights = ins
    if weights.shape.num_elements():
        raise errors.UnimplementedError(None, None, "SavedModel: RaggedBincount with weights "
                                        "is not supported")
    return RAGGED_BINCOUNT(splits, ids, size=int(size.numpy()),
                           binary_output=bool(attrs.get("binary_output", False)),
                           out_dtype=weights.dtype.name)


def _ragged_tf(attrs, specs):
    """TensorFlow's RaggedBincount(splits, values, size, weights): empty weights count ones,
    in the weights' dtype."""
    out = dtypes.as_dtype(attrs.get("out_dtype", "float32"))
    return ("RaggedBincount", {"Tidx": specs[1].dtype, "T": out,
                               "binary_output": attrs["binary_output"]},
            [0, 1, np.array(attrs["size"], specs[1].dtype.as_numpy_dtype),
             np.zeros(0, out.as_numpy_dtype)])


def _sized_tf(attrs, specs):
    """TensorFlow's DenseBincount(input, size, weights): empty weights count ones."""
    out = dtypes.as_dtype(attrs["out_dtype"])
    return ("DenseBincount", {"Tidx": specs[0].dtype, "T": out,
                              "binary_output": attrs["binary_output"]},
            [0, 1, np.zeros(0, out.as_numpy_dtype)])


def _shape(ids, size, binary_output, out_dtype="float32"):
    return Spec((size,) if len(ids.shape) == 1 else (ids.shape[0], size),
                dtypes.as_dtype(out_dtype))


DENSE_BINCOUNT = register(
    "DenseBincount", _dense_fwd, grad=NOT_DIFFERENTIABLE, shape=_shape,
    tf_import=_import_dense, unsupported="tf onnx tflite batch")
RAGGED_BINCOUNT = register(
    "RaggedBincount", _ragged_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda s, ids, size, binary_output, out_dtype="float32": Spec(
        (None, size), dtypes.as_dtype(out_dtype)),
    tf=_ragged_tf, tf_outputs="output", tf_import=_import_ragged,
    unsupported="onnx tflite batch")
WEIGHTED_BINCOUNT = register(
    "DenseBincountWeighted",
    lambda ids, weights, size, binary_output, out_dtype="float32": _dense_fwd(
        ids, size, binary_output, weights, out_dtype),
    grad=NOT_DIFFERENTIABLE,
    shape=lambda ids, w, size, binary_output, out_dtype="float32": _shape(
        ids, size, binary_output, out_dtype),
    unsupported="tf onnx tflite batch tf_import")


# the size as a tensor input: in a traced graph it may follow the input (a split's row count)
DENSE_BINCOUNT_SIZED = register(
    "DenseBincountSized",
    lambda ids, size, binary_output, out_dtype="float32": _dense_fwd(
        ids, int(size), binary_output, None, out_dtype),
    grad=NOT_DIFFERENTIABLE,
    shape=lambda ids, size, binary_output, out_dtype="float32": Spec(
        (None,) if len(ids.shape) == 1 else (ids.shape[0], None), dtypes.as_dtype(out_dtype)),
    tf=_sized_tf, tf_outputs={"DenseBincount": "output"},
    unsupported="onnx tflite batch tf_import")
