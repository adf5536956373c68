"""New tensors: zeros, ones, fill, zeros_like, ones_like, range, linspace and meshgrid,
each op's registration with all its consumers' rules."""
import builtins

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops.array_common import checked_dims
from tensorlite.ops.batching import leading
from tensorlite.ops.common import composite_aware, to_tensor
from tensorlite.ops.concat_ops import concat
from tensorlite.ops.reshape_ops import broadcast_to, expand_dims, reshape

_pyrange = builtins.range  # this module defines tf.range


# -- zeros / ones / fill ----------------------------------------------------------------------
def zeros(shape, dtype=dtypes.float32, name=None):
    """`tf.zeros`."""
    dt = dtypes.as_dtype(dtype)
    dims = checked_dims(shape, "Zeros", dt)
    return wrap(np.full(dims, b"", dtype=object) if dt.is_string
                else np.zeros(dims, dtype=dt.as_numpy_dtype))


def ones(shape, dtype=dtypes.float32, name=None):
    """`tf.ones`."""
    dt = dtypes.as_dtype(dtype)
    return wrap(np.ones(checked_dims(shape, "Ones", dt), dtype=dt.as_numpy_dtype))


def fill(dims, value, name=None):
    """`tf.fill`: a tensor of shape `dims` filled with scalar `value` (its dtype)."""
    v = to_tensor(value)
    if v._value.ndim != 0:
        raise invalid("Fill", f"fill: value must be a scalar, got shape {list(v._value.shape)}")
    return wrap(np.full(checked_dims(dims, "Fill", v._dtype), v._value, dtype=v._value.dtype))


def _fill_like_tf(name):
    def rule(attrs, in_specs):
        if attrs["dtype"] != in_specs[0].dtype:
            raise errors.UnimplementedError(None, None, f"{name} to {attrs['dtype'].name} of a "
                                            f"{in_specs[0].dtype.name} tensor has no "
                                            f"TensorFlow op; cast first")
        return name, {}
    return rule


def _fill_like_fwd(x, dtype, value):
    return np.full(x.shape, value, dtype=object if dtype.is_string else dtype.as_numpy_dtype)


# Ops, not Python shortcuts: inside a graph the shape is that of each run's input.
# The batch axis is one more dimension (batch=leading).
def _zeros_like_fwd(x, dtype):
    return _fill_like_fwd(x, dtype, b"" if dtype.is_string else 0)


def _ones_like_fwd(x, dtype):
    return _fill_like_fwd(x, dtype, 1)


ZEROS_LIKE = register(
    "ZerosLike", _zeros_like_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda x, dtype: Spec(x.shape, dtype), batch=leading(_zeros_like_fwd),
    tf=_fill_like_tf("ZerosLike"),
    # TensorFlow's Fill (written by the SavedModel exporter for a constant that follows the
    # batch size, and by tf.keras 2's LayerNormalization) has no op of its own here: tf.fill
    # makes a constant, so a loaded Fill runs it on each call's dims
    tf_import={"ZerosLike": lambda ins, a: zeros_like(ins[0]),
               "Fill": lambda ins, a: fill(ins[0], ins[1])},
    tf_outputs="y", unsupported="onnx tflite")
ONES_LIKE = register(
    "OnesLike", _ones_like_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda x, dtype: Spec(x.shape, dtype), batch=leading(_ones_like_fwd),
    tf=_fill_like_tf("OnesLike"), tf_import=lambda ins, a: ones_like(ins[0]),
    tf_outputs="y", unsupported="onnx tflite")


@composite_aware("zeros_like")
def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """`tf.zeros_like`."""
    x = to_tensor(input)
    return execute(ZEROS_LIKE, (x,), {"dtype": x._dtype if dtype is None else
                                      dtypes.as_dtype(dtype)})


@composite_aware("ones_like")
def ones_like(input, dtype=None, name=None):  # noqa: A002
    """`tf.ones_like`."""
    x = to_tensor(input)
    return execute(ONES_LIKE, (x,), {"dtype": x._dtype if dtype is None else
                                     dtypes.as_dtype(dtype)})


# -- range / linspace -------------------------------------------------------------------------
# TF infers tf.range's dtype as the widest of its arguments' in this order.
_RANGE_ORDER = ["int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _range_dtype(values):
    ts = [to_tensor(v) for v in values]
    for t in ts:
        if t._dtype.name not in _RANGE_ORDER or t._value.ndim != 0:
            raise invalid("Range", f"range arguments must be real scalars; got a "
                          f"{t._dtype.name} tensor of shape {list(t._value.shape)}")
    return max((t._dtype for t in ts), key=lambda d: _RANGE_ORDER.index(d.name))


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF's name
    """`tf.range`: [start, start + delta, ...) up to `limit` (exclusive); the dtype is the
    widest of the arguments' (int32 for ints, float32 for floats) unless given.

    >>> tf.range(1, 10, 3).numpy()
    array([1, 4, 7], dtype=int32)"""
    if limit is None:
        start, limit = 0, start
    dt = _range_dtype((start, limit, delta)) if dtype is None else dtypes.as_dtype(dtype)
    if dt.kind not in "iuf":
        raise invalid("Range", f"range does not support dtype {dt.name}")
    args = [to_tensor(v) for v in (start, limit, delta)]
    if any(isinstance(v, Tensor) for v in (start, limit, delta)):
        return execute(RANGE, tuple(args), {"dtype": dt})  # a graph computes it per run
    return wrap(_range_fwd(*[a._value for a in args], dtype=dt))


def _range_fwd(start, limit, delta, dtype):
    np_dt = dtype.as_numpy_dtype
    vals = [np.asarray(v) for v in (start, limit, delta)]
    s, lim, d = (np.trunc(v).astype(np_dt) if dtype.is_integer and v.dtype.kind == "f"
                 else v.astype(np_dt) for v in vals)
    s, lim, d = s.item(), lim.item(), d.item()
    for arg, v in (("start", s), ("limit", lim), ("delta", d)):
        if not np.isfinite(v):
            raise invalid("Range", f"Requires {arg} to be finite, got {v}")
    if d == 0:
        raise invalid("Range", f"Requires delta != 0: {d}")
    if d > 0 and s > lim:
        raise invalid("Range", f"Requires start <= limit when delta > 0: {s}/{lim}")
    if d < 0 and s < lim:
        raise invalid("Range", f"Requires start >= limit when delta < 0: {s}/{lim}")
    if dtype.is_integer:
        n = (abs(lim - s) + abs(d) - 1) // abs(d)
    else:
        n = int(np.ceil(abs((lim - s) / d)))
    checked_dims([n], "Range", dtype)
    return np.arange(n, dtype=np_dt) * np_dt(d) + np_dt(s)


def _range_tf(attrs, specs):
    """TensorFlow's Range takes start, limit and delta of its output's dtype: a Cast
    before each argument of another dtype."""
    dtype = attrs["dtype"]

    def write(add, ins):
        args = [ref if spec.dtype == dtype else
                add("Cast", [ref], SrcT=spec.dtype, DstT=dtype, Truncate=False) + ":y:0"
                for ref, spec in zip(ins, specs)]
        return [add("Range", args, Tidx=dtype) + ":output:0"]
    return write


RANGE = register(
    "Range", _range_fwd, grad=NOT_DIFFERENTIABLE, shape=lambda *specs, dtype: Spec((None,), dtype),
    tf=_range_tf, tf_outputs="output",
    unsupported="onnx tflite batch", tf_import=lambda ins, a: range(*ins, dtype=a.get("Tidx")))


def linspace(start, stop, num, name=None, axis=0):
    """`tf.linspace`: `num` evenly spaced values from `start` to exactly `stop` along a new
    `axis` (start and stop may be tensors of one shape); differentiable in both.

    >>> tf.linspace(10.0, 12.0, 3).numpy()
    array([10., 11., 12.], dtype=float32)"""
    from tensorlite.ops import math_ops as m  # noqa: PLC0415
    from tensorlite.ops.common import tensor_args  # noqa: PLC0415
    a, b = tensor_args("LinSpace", (start, stop), "fiu", ("start", "stop"))
    if a._dtype.is_integer:  # TF divides integers with truediv: float64
        a, b = m.cast(a, dtypes.float64), m.cast(b, dtypes.float64)
    num = int(np.asarray(num))
    if num <= 0:
        raise ValueError(f"linspace: num must be positive, got {num}")
    a, b = m.multiply(a, m.ones_like_t(b)), m.multiply(b, m.ones_like_t(a))  # broadcast
    checked_dims(a._value.shape + (num,), "LinSpace", a._dtype)  # before any allocation
    nd = a._value.ndim
    if not -nd - 1 <= axis <= nd:
        raise invalid("LinSpace", f"linspace: axis {axis} is out of range [{-nd - 1}, {nd}]")
    a, b = expand_dims(a, axis), expand_dims(b, axis)
    if num == 1:
        return a
    shape = [1] * (nd + 1)
    shape[axis % (nd + 1)] = num - 1
    steps = wrap(np.arange(num - 1, dtype=a._value.dtype).reshape(shape))
    delta = m.divide(m.subtract(b, a), wrap(np.array(num - 1, dtype=a._value.dtype)))
    return concat([m.add(a, m.multiply(steps, delta)), b], axis=axis)


def meshgrid(*args, **kwargs):
    """`tf.meshgrid`: coordinate grids from 1-D tensors; `indexing="xy"` (default) swaps the
    first two output dimensions, `"ij"` does not.

    Examples:
        >>> [t.shape for t in tf.meshgrid([1, 2, 3], [4, 5])]
        [TensorShape([2, 3]), TensorShape([2, 3])]"""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keywords: {', '.join(repr(k) for k in kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got "
                         f"'{indexing}'")
    if not args:
        return []
    from tensorlite.ops.common import tensor_args  # noqa: PLC0415
    xs = [reshape(x, (-1,)) for x in tensor_args("Meshgrid", list(args))]
    n = len(xs)
    pos = list(_pyrange(n))
    if indexing == "xy" and n > 1:
        pos[0], pos[1] = 1, 0
    out_shape = [0] * n
    for x, p in zip(xs, pos):
        out_shape[p] = x._value.shape[0]
    out = []
    for x, p in zip(xs, pos):
        shape = [1] * n
        shape[p] = -1
        out.append(broadcast_to(reshape(x, shape), out_shape))
    return out
