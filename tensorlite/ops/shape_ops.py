"""Ops that describe or check a tensor's shape: tf.shape, tf.size, tf.rank and
tf.ensure_shape, each op's registration with all its consumers' rules."""
import builtins

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.tensor import Tensor
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.ops.common import fast_path, to_tensor


# -- ensure_shape ------------------------------------------------------------------------------
def _debug_shape(dims):
    """A shape as TensorFlow's messages write it: [2,?,3], or <unknown> for unknown rank."""
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _ensure_shape_fwd(x, shape):
    if shape is not None and (x.ndim != len(shape) or builtins.any(
            e is not None and e != a for a, e in zip(x.shape, shape))):
        raise invalid("EnsureShape", f"Shape of tensor x {_debug_shape(x.shape)} is not "
                      f"compatible with expected shape {_debug_shape(shape)}.")
    return x


def _ensure_shape_shape(x, shape):
    """The input's spec refined by the expected shape (a known size wins over None)."""
    if shape is None:
        return Spec(x.shape, x.dtype)
    if x.shape is None or len(x.shape) != len(shape):
        return Spec(tuple(shape), x.dtype)
    return Spec(tuple(a if a is not None else e for a, e in zip(x.shape, shape)), x.dtype)


ENSURE_SHAPE = register("EnsureShape", _ensure_shape_fwd, grad=lambda g, ans, x, shape: g,
                        shape=_ensure_shape_shape, unsupported="tf tflite batch tf_import",
    onnx=lambda ctx, node: ctx.emit("Identity", ctx.inputs(node)[:1]))


def _expected_dims(shape):
    """`shape` of ensure_shape as a tuple of ints and None (None: unknown rank)."""
    if shape is None:
        return None
    if isinstance(shape, Tensor):
        shape = shape._value.tolist()
    try:
        if isinstance(shape, (str, bytes)):
            raise TypeError(shape)
        dims = TensorShape(shape).dims
    except (TypeError, ValueError):
        raise TypeError(f"tf.ensure_shape: shape must be a TensorShape, a list or tuple of "
                        f"ints and None, or None, got {shape!r}") from None
    if dims is not None and builtins.any(d is not None and d < -1 for d in dims):
        raise ValueError(f"tf.ensure_shape: dimensions must be >= 0 or None, got {shape!r}")
    return None if dims is None else tuple(None if d == -1 else d for d in dims)


def _ensure_shape_fast(x, shape, name=None):
    # eager: an assertion that returns its input, as in TensorFlow
    x = to_tensor(x)
    _ensure_shape_fwd(x._value, _expected_dims(shape))
    return x


@fast_path(_ensure_shape_fast)
def ensure_shape(x, shape, name=None):
    """`tf.ensure_shape`: `x` after checking that its shape is compatible with `shape` (None
    dimensions match any size); inside tf.function the check runs on every call.
    >>> tf.ensure_shape(tf.zeros([2, 3]), [None, 3]).shape
    TensorShape([2, 3])"""
    return execute(ENSURE_SHAPE, (to_tensor(x),), {"shape": _expected_dims(shape)})


# -- shape / size / rank ------------------------------------------------------------------------
def _onnx_shape(ctx, node):
    return ctx.emit("Cast", [ctx.emit("Shape", ctx.inputs(node))],
                    to=ctx.onnx_dtype(node.attrs["dtype"]))


def _per_example_meta(forward):
    """Rule for ops that describe their input (Shape, Size, Rank): each example's value."""
    def rule(arrays, batched, **attrs):
        one = forward(arrays[0][0] if batched[0] else arrays[0], **attrs)
        return np.broadcast_to(one, (len(arrays[0]),) + np.shape(one)).copy()
    rule.kind = "leading"
    return rule


def _shape_fwd(x, dtype):
    return np.array(x.shape, dtype=dtype.as_numpy_dtype)


def _size_fwd(x, dtype):
    return np.array(x.size, dtype=dtype.as_numpy_dtype)


def _rank_fwd(x):
    return np.array(x.ndim, dtype=np.int32)


# Registered ops (not Python shortcuts) so that graphs recompute them for new inputs.
# shape_only: their outputs follow the inputs' shapes, not their values (graph/tracing.py)
SHAPE = register(
    "Shape", _shape_fwd, grad=NOT_DIFFERENTIABLE, shape_only=True,
    shape=lambda x, dtype: Spec((len(x.shape),), dtype), batch=_per_example_meta(_shape_fwd),
    tf=lambda a, specs: ("Shape", {"out_type": a["dtype"]}), tf_outputs="output",
    tf_import=lambda ins, a: shape(ins[0], out_type=a.get("out_type", dtypes.int32)),
    onnx=_onnx_shape, unsupported="tflite")
SIZE = register(
    "Size", _size_fwd, grad=NOT_DIFFERENTIABLE, shape_only=True,
    shape=lambda x, dtype: Spec((), dtype), batch=_per_example_meta(_size_fwd),
    tf=lambda a, specs: ("Size", {"out_type": a["dtype"]}), tf_outputs="output",
    tf_import=lambda ins, a: size(ins[0], out_type=a.get("out_type", dtypes.int32)),
    unsupported="onnx tflite")
RANK = register(
    "Rank", _rank_fwd, grad=NOT_DIFFERENTIABLE, shape_only=True,
    shape=lambda x: Spec((), dtypes.int32), batch=_per_example_meta(_rank_fwd),
    tf="Rank", tf_outputs="output", tf_import=lambda ins, a: rank(ins[0]),
    unsupported="onnx tflite")


def shape(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """`tf.shape`: the dynamic shape as an int32 tensor."""
    return execute(SHAPE, (to_tensor(input),), {"dtype": dtypes.as_dtype(out_type)})


def size(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """`tf.size`: number of elements."""
    return execute(SIZE, (to_tensor(input),), {"dtype": dtypes.as_dtype(out_type)})


def rank(input, name=None):  # noqa: A002
    """`tf.rank`."""
    return execute(RANK, (to_tensor(input),), None)
