"""`tf.debugging` assertions, `tf.Assert` and `tf.debugging.check_numerics`.

Each check is an op: eagerly it raises at once; inside a tf.function it is a stateful
`Assert` node that checks on every call (the graph passes never remove it), as TensorFlow's
automatic control dependencies make it. Checks that the static shape or dtype decide
(assert_rank, assert_shapes, assert_type) raise while tracing, as in TF (ValueError /
TypeError). A failed data check is an InvalidArgumentError naming the condition, the
message and the first `summarize` values of the data.

Example:
    >>> tf.debugging.assert_equal(tf.constant([1, 2]), [1, 2])
    >>> tf.debugging.assert_near(tf.constant(1.0), 1.0 + 1e-7)
"""
import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.tensor import Tensor
from tensorlite.ops import math_ops
from tensorlite.ops.common import to_tensor

__all__ = ["Assert", "assert_equal", "assert_none_equal", "assert_less", "assert_less_equal",
           "assert_greater", "assert_greater_equal", "assert_positive", "assert_negative",
           "assert_non_negative", "assert_non_positive", "assert_near", "assert_rank",
           "assert_rank_at_least", "assert_shapes", "assert_type", "assert_integer",
           "assert_all_finite", "check_numerics", "enable_check_numerics",
           "disable_check_numerics"]

_NUMERICS = [False]  # enable_check_numerics: every float op output is checked


def _summary(arrays, summarize):
    n = 3 if summarize is None else summarize
    return ", ".join(np.array2string(np.asarray(a).ravel()[:n], separator=" ") +
                     ("..." if np.size(a) > n else "") for a in arrays)


def _assert_fwd(cond, *data, message, summarize):
    if not np.all(cond):
        shown = f" Data: {_summary(data, summarize)}" if data else ""
        raise errors.InvalidArgumentError(None, None, f"{message}{shown}")
    return np.asarray(True)


# "state": an assertion keeps its place in program order and is never dropped. TensorFlow's
# Assert in a SavedModel graph (rule form: saved_model/function_runner.py) has no outputs;
# nodes depend on it by control edges, which the runner follows.
ASSERT = register("Assert", _assert_fwd, grad=NOT_DIFFERENTIABLE,
                  shape=lambda cond, *data, message, summarize: Spec((), dtypes.bool),
                  effects="state", unsupported="tf onnx tflite batch",
                  tf_import=lambda ins, a: Assert(ins[0], list(ins[1:]),
                                                  summarize=a.get("summarize")) or [])


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """`tf.Assert`: raises InvalidArgumentError, printing `data`, when `condition` (a
    boolean scalar or tensor: all must hold) is False.

    >>> tf.Assert(tf.constant(True), ["never printed"])
    """
    cond = to_tensor(condition)
    if not cond._dtype.is_bool:
        raise TypeError(f"tf.Assert: condition must be a bool tensor, got {cond._dtype.name}")
    tensors = [x if isinstance(x, Tensor) else to_tensor(x) for x in
               (data if isinstance(data, (list, tuple)) else [data])]
    text = " ".join(_text(x) for x in tensors if x._dtype.is_string and x._value.ndim == 0)
    values = [x for x in tensors if not (x._dtype.is_string and x._value.ndim == 0)]
    execute(ASSERT, (cond, *values), {"message": f"assertion failed: {text}".strip(),
                                      "summarize": summarize})


def _text(x):
    v = x._value[()]
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _check(cond, what, message, data, summarize):
    head = f"{message}\n" if message else ""
    execute(ASSERT, (cond, *data), {"message": f"{head}Condition {what} did not hold "
                                               f"element-wise:", "summarize": summarize})


def _binary(compare, symbol):
    def check(x, y, message=None, summarize=None, name=None):
        x = to_tensor(x)
        y = to_tensor(y, dtype=x._dtype)
        cond = math_ops.reduce_all(compare(x, y))
        _check(cond, f"x {symbol} y", message, (x, y), summarize)
    check.__name__ = compare.__name__
    check.__doc__ = f"""`tf.debugging.assert_{compare.__name__}`: x {symbol} y element-wise
    (broadcasting), else InvalidArgumentError."""
    return check


assert_equal = _binary(math_ops.equal, "==")
assert_none_equal = _binary(math_ops.not_equal, "!=")
assert_less = _binary(math_ops.less, "<")
assert_less_equal = _binary(math_ops.less_equal, "<=")
assert_greater = _binary(math_ops.greater, ">")
assert_greater_equal = _binary(math_ops.greater_equal, ">=")


def _sign(compare, symbol):
    def check(x, message=None, summarize=None, name=None):
        x = to_tensor(x)
        _check(math_ops.reduce_all(compare(x, math_ops.cast(0, x._dtype))), f"x {symbol} 0",
               message, (x,), summarize)
    check.__doc__ = f"`tf.debugging`: x {symbol} 0 element-wise, else InvalidArgumentError."
    return check


assert_positive = _sign(math_ops.greater, ">")
assert_negative = _sign(math_ops.less, "<")
assert_non_negative = _sign(math_ops.greater_equal, ">=")
assert_non_positive = _sign(math_ops.less_equal, "<=")


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """`tf.debugging.assert_near`: |x - y| <= atol + rtol * |y| element-wise (defaults
    10 * eps of the dtype, as TF)."""
    x = to_tensor(x)
    y = to_tensor(y, dtype=x._dtype)
    eps = np.finfo(x._value.dtype).eps if x._dtype.is_floating else 0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    diff = math_ops.abs(math_ops.subtract(x, y))
    bound = math_ops.cast(atol, x._dtype) + math_ops.cast(rtol, x._dtype) * math_ops.abs(y)
    _check(math_ops.reduce_all(math_ops.less_equal(diff, bound)), "x and y near", message,
           (x, y), summarize)


def _static_rank_error(x, what, message):
    return ValueError(f"{message + ' ' if message else ''}Tensor must have {what}; received "
                      f"a tensor of shape {list(np.shape(x._value))} (rank {x._value.ndim})")


def assert_rank(x, rank, message=None, name=None):
    """`tf.debugging.assert_rank`: ValueError unless x has rank `rank`."""
    x = to_tensor(x)
    if x._value.ndim != int(rank):
        raise _static_rank_error(x, f"rank {int(rank)}", message)


def assert_rank_at_least(x, rank, message=None, name=None):
    x = to_tensor(x)
    if x._value.ndim < int(rank):
        raise _static_rank_error(x, f"rank at least {int(rank)}", message)


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """`tf.debugging.assert_shapes`: each (tensor, shape) pair has that shape, where a
    shape entry is a size, None or '.' (any), or a symbol that must be the same size
    everywhere it appears; '...' at the start or end stands for any leading/trailing dims.

    >>> tf.debugging.assert_shapes([(tf.zeros([2, 3]), ("N", "Q")), (tf.zeros([2]), ("N",))])
    """
    items = shapes.items() if isinstance(shapes, dict) else shapes
    sizes = {}
    for x, spec in items:
        shape = list(np.shape(to_tensor(x)._value))
        spec = [spec] if isinstance(spec, (str, int)) and spec != "..." and \
            not isinstance(spec, (list, tuple)) else list(spec)
        dims = shape
        if spec and spec[0] == "...":
            spec, dims = spec[1:], shape[len(shape) - len(spec) + 1:]
        elif spec and spec[-1] == "...":
            spec, dims = spec[:-1], shape[:len(spec) - 1]
        elif len(spec) != len(shape):
            raise ValueError(f"{message + ' ' if message else ''}Specified by tensor shape "
                             f"{shape}: rank must be {len(spec)} ({spec})")
        for d, s in zip(dims, spec):
            if s is None or s == "." or s == "*":
                continue
            want = s if isinstance(s, int) else sizes.setdefault(s, d)
            if d != want:
                raise ValueError(f"{message + ' ' if message else ''}Specified by tensor "
                                 f"shape {shape}: dimension {s!r} must have size {want}, "
                                 f"got {d}")


def assert_type(tensor, tf_type, message=None, name=None):
    """`tf.debugging.assert_type`: TypeError unless the tensor has dtype `tf_type`."""
    t = to_tensor(tensor)
    want = dtypes.as_dtype(tf_type)
    if t._dtype is not want:
        raise TypeError(f"{message + ' ' if message else ''}tensor has dtype "
                        f"{t._dtype.name}, expected {want.name}")


def assert_integer(x, message=None, name=None):
    t = to_tensor(x)
    if not t._dtype.is_integer:
        raise TypeError(f"{message + ' ' if message else ''}Expected integer tensor, got "
                        f"{t._dtype.name}")


def _check_numerics_fwd(x, message):
    if not np.all(np.isfinite(x)):
        what = "NaN" if np.isnan(x).any() else "Inf"
        raise errors.InvalidArgumentError(None, None, f"{message} : Tensor had {what} values")
    return x


CHECK_NUMERICS = register(
    "CheckNumerics", _check_numerics_fwd, grad=lambda g, ans, x, message: g,
    shape=lambda x, message: Spec(x.shape, x.dtype), unsupported="tf onnx tflite batch tf_import")


def check_numerics(tensor, message, name=None):
    """`tf.debugging.check_numerics`: the tensor, after checking it has no NaN or Inf."""
    return execute(CHECK_NUMERICS, (to_tensor(tensor),), {"message": message})


def assert_all_finite(t, msg, name=None, x=None, message=None):
    return check_numerics(t if x is None else x, msg if message is None else message)


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """`tf.debugging.enable_check_numerics`: from now on every floating-point op output is
    checked; the first NaN or Inf raises InvalidArgumentError naming the op and line."""
    _NUMERICS[0] = True
    from tensorlite.framework import dispatch  # noqa: PLC0415
    if _numerics_observer not in dispatch.OBSERVERS:
        dispatch.OBSERVERS.append(_numerics_observer)


def disable_check_numerics():
    _NUMERICS[0] = False
    from tensorlite.framework import dispatch  # noqa: PLC0415
    if _numerics_observer in dispatch.OBSERVERS:
        dispatch.OBSERVERS.remove(_numerics_observer)


class _NumericsObserver:
    """Checks every float output of every op run while check numerics is on."""

    def record(self, op, inputs, attrs, outputs):
        for o in outputs if type(outputs) is tuple else (outputs,):
            v = o._value
            if v.dtype.kind in "fc" and not np.all(np.isfinite(v)):
                from tensorlite.framework.user_frame import user_location  # noqa: PLC0415
                what = "NaN" if np.isnan(v).any() else "Inf"
                raise errors.InvalidArgumentError(
                    None, None, f"\n\n!!! Detected Infinity or NaN in output of op "
                    f"{op.name} (dtype {o._dtype.name}, shape {list(v.shape)}): {what} at "
                    f"{user_location(3)}; the inputs were "
                    f"{[f'{t._dtype.name}{list(t._value.shape)}' for t in inputs]}")

    def ignores(self):
        return False


_numerics_observer = _NumericsObserver()
