"""`tf.experimental.numpy` (tnp): NumPy's API on tensorlite tensors, as TensorFlow ships it.

Each function takes NumPy's arguments (`axis`, `keepdims`, `dtype`, ...), follows NumPy's
type promotion (an int32 tensor plus 1.5 is float64; NumPy's default float is float64
unless `experimental_enable_numpy_behavior(prefer_float32=True)`), and returns a
`tnp.ndarray`, which is `tf.Tensor`: every function here is built from registered ops, so
it is differentiable and works inside `tf.function`. A NumPy function this module does not
provide raises NotImplementedError naming it, rather than computing outside the graph.

`experimental_enable_numpy_behavior()` gives tensors NumPy's methods and properties
(`x.T`, `x.reshape(...)`, `x.astype(...)`, `x.ravel()`, `x.size`, `x.tolist()`, ...), as
TensorFlow's does.

Example:
    >>> import tensorlite.experimental.numpy as tnp
    >>> x = tnp.ones([2, 3])
    >>> tnp.sum(x * 2, axis=1)
    <tf.Tensor: shape=(2,), dtype=float64, numpy=array([6., 6.])>
"""
import builtins

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.ops import array_ops, gather_ops, linalg_ops, math_ops, random_ops

ndarray = Tensor
newaxis = None
pi, e, inf, nan = np.pi, np.e, np.inf, np.nan
bool_, int8, int16, int32, int64 = (np.bool_, np.int8, np.int16, np.int32, np.int64)
uint8, uint16, float16, float32, float64 = (np.uint8, np.uint16, np.float16, np.float32,
                                            np.float64)
complex64, complex128 = np.complex64, np.complex128
_PREFER_FLOAT32 = [False]


def _np_value(x):
    return x._value if isinstance(x, Tensor) else (x.numpy() if hasattr(x, "numpy") else x)


def _default_float(dt):
    return np.dtype(np.float32) if _PREFER_FLOAT32[0] and dt == np.float64 else dt


def result_type(*arrays_and_dtypes):
    """NumPy's result dtype of the arguments (tensors, arrays, Python scalars, dtypes)."""
    vals = []
    for a in arrays_and_dtypes:
        if isinstance(a, dtypes.DType):
            vals.append(a.as_numpy_dtype)
        else:
            vals.append(_np_value(a))
    return _default_float(np.result_type(*vals))


def asarray(a, dtype=None):
    """A tensor of `a` with NumPy's dtype inference (Python floats are float64)."""
    if isinstance(a, Tensor) and dtype is None:
        return a
    if getattr(a, "_is_variable", False) and dtype is None:
        return a.read_value()
    value = np.asarray(_np_value(a) if not isinstance(a, (list, tuple)) else
                       [_np_value(v) for v in a] if builtins.all(isinstance(v, Tensor) for v in a)
                       else a, dtype=dtype)
    if dtype is None:
        value = value.astype(_default_float(value.dtype), copy=False)
    if isinstance(a, Tensor) and value.dtype == a._value.dtype:
        return a
    if isinstance(a, Tensor):
        return math_ops.cast(a, value.dtype)
    return convert_to_tensor(value)


def array(val, dtype=None, copy=True, ndmin=0):
    t = asarray(val, dtype)
    while t.shape.rank < ndmin:
        t = array_ops.expand_dims(t, 0)
    return t


asanyarray = ascontiguousarray = asarray


def _promote(*xs):
    target = result_type(*xs)
    return [math_ops.cast(x, target) if isinstance(x, Tensor) and x._value.dtype != target
            else asarray(x, target) if not isinstance(x, Tensor) else x for x in xs]


def _dtype(dtype, default=float64):
    return _default_float(np.dtype(default if dtype is None else
                                   dtypes.as_dtype(dtype).as_numpy_dtype
                                   if isinstance(dtype, (dtypes.DType, str)) else dtype))


# -- creation ------------------------------------------------------------------------------
def zeros(shape, dtype=float):
    return array_ops.zeros(shape, dtype=_dtype(dtype))


def ones(shape, dtype=float):
    return array_ops.ones(shape, dtype=_dtype(dtype))


def full(shape, fill_value, dtype=None):
    value = asarray(fill_value, dtype)
    return array_ops.broadcast_to(value, shape)


empty = zeros


def zeros_like(a, dtype=None):
    return array_ops.zeros_like(asarray(a), dtype=None if dtype is None else _dtype(dtype))


def ones_like(a, dtype=None):
    return array_ops.ones_like(asarray(a), dtype=None if dtype is None else _dtype(dtype))


def full_like(a, fill_value, dtype=None):
    a = asarray(a)
    return array_ops.broadcast_to(asarray(fill_value, dtype or a._value.dtype), a.shape)


empty_like = zeros_like


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    dt = np.arange(start, stop, step).dtype if dtype is None else np.dtype(dtype)
    return array_ops.range(start, stop, step, dtype=_default_float(dt))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=float, axis=0):
    values = array_ops.linspace(asarray(start, float64), asarray(stop, float64), num) \
        if endpoint else array_ops.linspace(asarray(start, float64), asarray(stop, float64),
                                            num + 1)[:num]
    values = math_ops.cast(values, _dtype(dtype))
    return (values, (stop - start) / builtins.max(num - int(endpoint), 1)) if retstep \
        else values


def eye(N, M=None, k=0, dtype=float):  # noqa: N803 - NumPy's names
    if k:
        return asarray(np.eye(N, M, k, dtype=_dtype(dtype)))
    return linalg_ops.eye(N, M, dtype=_dtype(dtype))


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


# -- elementwise -----------------------------------------------------------------------------
def _unary(fn, float_only=False):
    def op(x):
        x = asarray(x)
        if float_only and not x.dtype.is_floating and not x.dtype.is_complex:
            x = math_ops.cast(x, _default_float(np.dtype(np.float64)))
        return fn(x)
    op.__name__ = getattr(fn, "__name__", "op")
    return op


def _binary(fn):
    def op(x1, x2):
        return fn(*_promote(x1, x2))
    op.__name__ = getattr(fn, "__name__", "op")
    return op


abs = absolute = _unary(math_ops.abs)  # noqa: A001
negative, sign, square = _unary(math_ops.negative), _unary(math_ops.sign), \
    _unary(math_ops.square)
exp, log, sqrt = (_unary(f, True) for f in (math_ops.exp, math_ops.log, math_ops.sqrt))
log1p, expm1 = _unary(math_ops.log1p, True), _unary(math_ops.expm1, True)
sin, cos, tan = (_unary(f, True) for f in (math_ops.sin, math_ops.cos, math_ops.tan))
sinh, cosh, tanh = (_unary(f, True) for f in (math_ops.sinh, math_ops.cosh, math_ops.tanh))
arcsin, arccos, arctan = (_unary(f, True) for f in (math_ops.asin, math_ops.acos,
                                                    math_ops.atan))
floor, ceil = _unary(math_ops.floor, True), _unary(math_ops.ceil, True)
reciprocal = _unary(math_ops.reciprocal, True)
logical_not = _unary(math_ops.logical_not)


def log2(x):
    return log(x) / np.log(2.0)


def log10(x):
    return log(x) / np.log(10.0)


def exp2(x):
    return power(2.0, x)


def around(a, decimals=0):
    a = asarray(a)
    if not decimals:
        return math_ops.round(a)
    scale = 10.0 ** decimals
    return math_ops.round(a * scale) / scale


round = round_ = around  # noqa: A001


add, subtract, multiply = _binary(math_ops.add), _binary(math_ops.subtract), \
    _binary(math_ops.multiply)
maximum, minimum = _binary(math_ops.maximum), _binary(math_ops.minimum)
floor_divide, mod = _binary(math_ops.floordiv), _binary(math_ops.floormod)
remainder = mod
arctan2 = _binary(math_ops.atan2)
equal, not_equal = _binary(math_ops.equal), _binary(math_ops.not_equal)
less, less_equal = _binary(math_ops.less), _binary(math_ops.less_equal)
greater, greater_equal = _binary(math_ops.greater), _binary(math_ops.greater_equal)
logical_and, logical_or = _binary(math_ops.logical_and), _binary(math_ops.logical_or)
logical_xor = _binary(math_ops.logical_xor)


def true_divide(x1, x2):
    x1, x2 = _promote(x1, x2)
    if not x1.dtype.is_floating and not x1.dtype.is_complex:
        x1, x2 = (math_ops.cast(v, _default_float(np.dtype(np.float64))) for v in (x1, x2))
    return math_ops.divide(x1, x2)


divide = true_divide


def power(x1, x2):
    return math_ops.pow(*_promote(x1, x2))


def clip(a, a_min, a_max):
    a = asarray(a)
    lo = a_min if a_min is not None else a._value.dtype.type(-np.inf if a.dtype.is_floating
                                                             else np.iinfo(a._value.dtype).min)
    hi = a_max if a_max is not None else a._value.dtype.type(np.inf if a.dtype.is_floating
                                                             else np.iinfo(a._value.dtype).max)
    return math_ops.clip_by_value(a, lo, hi)


def where(condition, x=None, y=None):
    if x is None and y is None:
        return tuple(array_ops.unstack(math_ops.where(asarray(condition)), axis=1))
    x, y = _promote(x, y)
    return math_ops.where(asarray(condition, bool), x, y)


# -- reductions -----------------------------------------------------------------------------
def _reduction(fn, promote_int=None):
    def op(a, axis=None, dtype=None, keepdims=False):
        a = asarray(a)
        if dtype is not None:
            a = math_ops.cast(a, _dtype(dtype))
        elif promote_int is not None and (a.dtype.is_integer or a.dtype.is_bool):
            a = math_ops.cast(a, promote_int)
        return fn(a, axis=axis, keepdims=keepdims)
    return op


sum = _reduction(math_ops.reduce_sum, np.int64)  # noqa: A001
prod = _reduction(math_ops.reduce_prod, np.int64)
mean = _reduction(math_ops.reduce_mean, np.float64)
amax = max = _reduction(math_ops.reduce_max)  # noqa: A001
amin = min = _reduction(math_ops.reduce_min)  # noqa: A001
all = _reduction(math_ops.reduce_all)  # noqa: A001
any = _reduction(math_ops.reduce_any)  # noqa: A001


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    a = asarray(a)
    a = math_ops.cast(a, _dtype(dtype)) if dtype is not None or not a.dtype.is_floating else a
    centered = a - math_ops.reduce_mean(a, axis=axis, keepdims=True)
    n = np.prod([a.shape[i] for i in (range(a.shape.rank) if axis is None else
                                      np.atleast_1d(axis))])
    return math_ops.reduce_sum(centered * centered, axis=axis, keepdims=keepdims) / (n - ddof)


def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    return sqrt(var(a, axis, dtype, ddof, keepdims))


def argmax(a, axis=None):
    a = asarray(a)
    return math_ops.argmax(array_ops.reshape(a, [-1]) if axis is None else a,
                           axis=0 if axis is None else axis)


def argmin(a, axis=None):
    a = asarray(a)
    return math_ops.argmin(array_ops.reshape(a, [-1]) if axis is None else a,
                           axis=0 if axis is None else axis)


def cumsum(a, axis=None, dtype=None):
    a = asarray(a, dtype)
    return math_ops.cumsum(array_ops.reshape(a, [-1]) if axis is None else a,
                           axis=0 if axis is None else axis)


def cumprod(a, axis=None, dtype=None):
    a = asarray(a, dtype)
    return math_ops.cumprod(array_ops.reshape(a, [-1]) if axis is None else a,
                            axis=0 if axis is None else axis)


# -- linear algebra --------------------------------------------------------------------------
def matmul(x1, x2):
    return math_ops.matmul(*_promote(x1, x2))


def dot(a, b):
    a, b = _promote(a, b)
    if a.shape.rank == 0 or b.shape.rank == 0:
        return a * b
    if a.shape.rank == 1 and b.shape.rank == 1:
        return math_ops.reduce_sum(a * b)
    return math_ops.tensordot(a, b, [[a.shape.rank - 1], [builtins.max(b.shape.rank - 2, 0)]])


def vdot(a, b):
    return dot(ravel(a), ravel(b))


def inner(a, b):
    a, b = _promote(a, b)
    return math_ops.tensordot(a, b, [[a.shape.rank - 1], [b.shape.rank - 1]])


def outer(a, b):
    a, b = _promote(ravel(a), ravel(b))
    return array_ops.expand_dims(a, 1) * array_ops.expand_dims(b, 0)


def tensordot(a, b, axes=2):
    return math_ops.tensordot(*_promote(a, b), axes)


def einsum(subscripts, *operands, **kwargs):
    if kwargs:
        raise NotImplementedError(f"tnp.einsum: {sorted(kwargs)} are not supported")
    return math_ops.einsum(subscripts, *_promote(*operands))


# -- shapes ------------------------------------------------------------------------------------
def reshape(a, newshape, order="C"):
    if order != "C":
        raise NotImplementedError("tnp.reshape: only order='C' is supported")
    return array_ops.reshape(asarray(a), newshape)


def ravel(a):
    return array_ops.reshape(asarray(a), [-1])


def transpose(a, axes=None):
    return array_ops.transpose(asarray(a), axes)


def swapaxes(a, axis1, axis2):
    a = asarray(a)
    perm = list(range(a.shape.rank))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return array_ops.transpose(a, perm)


def moveaxis(a, source, destination):
    a = asarray(a)
    perm = [i for i in range(a.shape.rank) if i != source % a.shape.rank]
    perm.insert(destination % a.shape.rank, source % a.shape.rank)
    return array_ops.transpose(a, perm)


def squeeze(a, axis=None):
    return array_ops.squeeze(asarray(a), axis)


def expand_dims(a, axis):
    return array_ops.expand_dims(asarray(a), axis)


def concatenate(arys, axis=0):
    return array_ops.concat(_promote(*arys), axis=axis)


def stack(arrays, axis=0):
    return array_ops.stack(_promote(*arrays), axis=axis)


def hstack(tup):
    tup = [atleast_1d(t) for t in tup]
    return concatenate(tup, axis=0 if tup[0].shape.rank == 1 else 1)


def vstack(tup):
    return concatenate([atleast_2d(t) for t in tup], axis=0)


def atleast_1d(a):
    a = asarray(a)
    return array_ops.reshape(a, [1]) if a.shape.rank == 0 else a


def atleast_2d(a):
    a = atleast_1d(a)
    return array_ops.expand_dims(a, 0) if a.shape.rank == 1 else a


def split(ary, indices_or_sections, axis=0):
    ary = asarray(ary)
    if isinstance(indices_or_sections, int):
        return array_ops.split(ary, indices_or_sections, axis=axis)
    bounds = [0, *indices_or_sections, ary.shape[axis]]
    return array_ops.split(ary, [b - a for a, b in zip(bounds, bounds[1:])], axis=axis)


def tile(A, reps):  # noqa: N803 - NumPy's name
    A = asarray(A)
    reps = [reps] if isinstance(reps, int) else list(reps)
    while A.shape.rank < len(reps):
        A = array_ops.expand_dims(A, 0)
    reps = [1] * (A.shape.rank - len(reps)) + reps
    return array_ops.tile(A, reps)


def repeat(a, repeats, axis=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return gather_ops.repeat(a, repeats, axis=axis)


def flip(m, axis=None):
    m = asarray(m)
    axes = list(range(m.shape.rank)) if axis is None else list(np.atleast_1d(axis))
    return array_ops.reverse(m, axes)


def broadcast_to(array, shape):  # noqa: A002 - NumPy's name
    return array_ops.broadcast_to(asarray(array), shape)


def take(a, indices, axis=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return gather_ops.gather(a, indices, axis=axis)


def sort(a, axis=-1):
    return math_ops.sort(asarray(a), axis=axis)


def argsort(a, axis=-1):
    return math_ops.cast(math_ops.argsort(asarray(a), axis=axis, stable=True), np.int64)


def diag(v, k=0):
    v = asarray(v)
    if k:
        raise NotImplementedError("tnp.diag with k != 0")
    return linalg_ops.diag(v) if v.shape.rank == 1 else linalg_ops.diag_part(v)


def pad(array, pad_width, mode="constant", constant_values=0):  # noqa: A002
    array = asarray(array)
    widths = np.broadcast_to(np.asarray(pad_width), (array.shape.rank, 2)).tolist()
    return array_ops.pad(array, widths, mode=mode.upper(), constant_values=constant_values)


def shape(a):
    return tuple(asarray(a).shape.as_list())


def ndim(a):
    return asarray(a).shape.rank


def size(a, axis=None):
    a = asarray(a)
    return int(np.prod(a.shape.as_list())) if axis is None else a.shape[axis]


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promote(a, b)
    close = math_ops.less_equal(math_ops.abs(a - b), atol + rtol * math_ops.abs(b))
    return math_ops.reduce_all(close)


# -- random ------------------------------------------------------------------------------------
def _size(size):
    return [] if size is None else [size] if isinstance(size, int) else list(size)


class random:  # noqa: N801 - `tnp.random`, a namespace as NumPy's
    """`tnp.random`: seed, randn, rand, uniform, randint, standard_normal."""

    @staticmethod
    def seed(s):
        random_ops.set_seed(s)

    @staticmethod
    def standard_normal(size=None):
        return random_ops.normal(_size(size), dtype=_dtype(None))

    @staticmethod
    def randn(*args):
        return random_ops.normal(list(args), dtype=_dtype(None))

    @staticmethod
    def rand(*args):
        return random_ops.uniform(list(args), dtype=_dtype(None))

    @staticmethod
    def uniform(low=0.0, high=1.0, size=None):
        return random_ops.uniform(_size(size), low, high, dtype=_dtype(None))

    @staticmethod
    def randint(low, high=None, size=None, dtype=int):
        if high is None:
            low, high = 0, low
        return random_ops.uniform(_size(size), low, high, dtype=np.dtype(dtype))


# -- NumPy behaviour on tensors ------------------------------------------------------------
def experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """Gives tf.Tensor NumPy's methods and properties (`T`, `reshape`, `astype`, `ravel`,
    `size`, `tolist`, `clip`, ...); with prefer_float32, Python floats become float32."""
    _PREFER_FLOAT32[0] = bool(prefer_float32)
    methods = {"T": property(lambda self: transpose(self)),
               "ndim": property(lambda self: self.shape.rank),
               "size": property(lambda self: size(self)),
               "reshape": lambda self, *s, **kw: reshape(self, s[0] if len(s) == 1 else s, **kw),
               "ravel": ravel, "flatten": ravel, "astype": lambda self, d: asarray(self, d),
               "transpose": lambda self, *axes: transpose(self, axes or None),
               "clip": clip, "tolist": lambda self: self._value.tolist(),
               "sum": sum, "mean": mean, "max": amax, "min": amin, "prod": prod,
               "argmax": argmax, "argmin": argmin, "squeeze": squeeze,
               "item": lambda self: self._value.item()}
    for name, value in methods.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, value)


class NotProvidedError(NotImplementedError, AttributeError):
    """A NumPy function this module does not provide: NotImplementedError for the user,
    and an AttributeError, so `hasattr(tnp, name)` and `getattr(tnp, name, None)` hold."""


def __getattr__(name):
    if hasattr(np, name) and not name.startswith("_"):
        raise NotProvidedError(f"tf.experimental.numpy.{name} is not provided by "
                                  f"tensorlite yet; compose it from the functions this module "
                                  f"has, or use NumPy on .numpy() values outside the graph")
    raise AttributeError(f"module 'tensorlite.experimental.numpy' has no attribute {name!r}")
