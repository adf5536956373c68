"""`tf.constant`, `tf.convert_to_tensor` and the tensor conversion registry.

TensorFlow's inference rules: Python floats become float32, ints int32 (int64 when too
large), bools bool, str/bytes string; NumPy arrays keep their dtype. A requested dtype that
would lose information (2.5 into int32) is a TypeError, as in TF.

Example:
    >>> tf.convert_to_tensor([1, 2]).dtype
    tf.int32
"""
import numbers

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.tensor import Tensor, to_bytes_array, wrap
from tensorlite.framework.tensor_shape import TensorShape

_CONVERSIONS = []  # (priority, base_type, fn), kept sorted by priority
# f(tensor, name) for each tf.constant made: a TF 1 graph (compat.v1) records it as a Const
# op of that name. Empty means no cost.
CONSTANT_HOOKS = []
_INT32 = np.iinfo(np.int32)


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """`tf.register_tensor_conversion_function`: objects of `base_type` convert through
    ``conversion_func(value, dtype=None, name=None, as_ref=False)``."""
    if not isinstance(base_type, (type, tuple)):
        raise TypeError(f"base_type must be a type or tuple of types, got {base_type!r}")
    _CONVERSIONS.append((priority, base_type, conversion_func))
    _CONVERSIONS.sort(key=lambda e: e[0])


def _is_variable(value):
    return getattr(value, "_is_variable", False)


def _tensor_shape_to_tensor(shape, dtype=None, name=None, as_ref=False):
    """A fully known TensorShape converts to its sizes, int32 unless a size needs int64
    (`tf.reduce_prod(layer.kernel.shape)`), as in TensorFlow."""
    if not shape.is_fully_defined():
        raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor; "
                         f"use tf.shape(x) for the sizes known when the graph runs")
    dims = shape.as_list()
    big = any(d > _INT32.max for d in dims)
    want = dtypes.int64 if big else dtypes.int32
    if dtype is not None and dtype in (dtypes.int32, dtypes.int64) and not (
            big and dtype is dtypes.int32):
        want = dtype
    return wrap(np.asarray(dims, dtype=want.as_numpy_dtype))


register_tensor_conversion_function(TensorShape, _tensor_shape_to_tensor)


def convert_to_tensor(value, dtype=None, name=None, dtype_hint=None, preferred_dtype=None):
    """`tf.convert_to_tensor`: Tensor, Variable, registered type, NumPy or Python value."""
    if type(value) is Tensor:
        if dtype is not None and value._dtype is not dtypes.as_dtype(dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for Tensor with dtype {value._dtype.name}: {value!r}")
        return value
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if _is_variable(value):
        return convert_to_tensor(value._read(), dtype=dtype)
    if isinstance(value, Tensor):
        return value
    for _, base, fn in _CONVERSIONS:
        if isinstance(value, base):
            out = fn(value, dtype=dtype, name=name, as_ref=False)
            if out is NotImplemented:
                continue
            return convert_to_tensor(out, dtype=dtype)
    if isinstance(value, (list, tuple)) and _observed() and _holds_tensor(value):
        return _pack(value, dtype)
    hint = dtype_hint or preferred_dtype
    if dtype is None and hint is not None:
        try:
            return wrap(to_numpy(value, dtypes.as_dtype(hint)))
        except (TypeError, ValueError):
            pass
    return wrap(to_numpy(value, dtype))


def _observed():
    from tensorlite.framework import dispatch  # noqa: PLC0415 - dispatch imports us
    return bool(dispatch.OBSERVERS)


def _holds_tensor(value):
    return any(isinstance(v, Tensor) or _is_variable(v) or
               (isinstance(v, (list, tuple)) and _holds_tensor(v)) for v in value)


def _first_dtype(value):
    for v in value:
        if isinstance(v, Tensor) or _is_variable(v):
            return v.dtype
        if isinstance(v, (list, tuple)):
            found = _first_dtype(v)
            if found is not None:
                return found
    return None


def _pack(value, dtype):
    """A list holding tensors, while a tape or a trace observes ops: one Pack op over the
    elements (as TensorFlow does), so that a trace does not freeze the tensors' values and a
    tape sees the dependence."""
    from tensorlite.framework import dispatch, registry  # noqa: PLC0415
    dtype = dtype or _first_dtype(value)
    elems = tuple(convert_to_tensor(v, dtype=dtype) for v in value)
    if not elems:
        return wrap(to_numpy(value, dtype))
    return dispatch.execute(registry.get("Pack"), elems, {"axis": 0})


def constant(value, dtype=None, shape=None, name="Const"):
    """`tf.constant`: a Tensor from a Python/NumPy value, optionally cast and reshaped.

    >>> tf.constant(0.0, shape=[2])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 0.], dtype=float32)>
    """
    if isinstance(value, TensorShape):  # tf.constant(x.shape)
        value = _tensor_shape_to_tensor(value, dtype)
    if isinstance(value, Tensor) or _is_variable(value):
        t = convert_to_tensor(value)
        arr = t._value
        if dtype is not None:
            arr = arr.astype(dtypes.as_dtype(dtype).as_numpy_dtype)
    else:
        arr = to_numpy(value, None if dtype is None else dtypes.as_dtype(dtype), allow_cast=True)
    if shape is not None:
        shape = tuple(int(d) for d in (shape if not isinstance(shape, int) else [shape]))
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
        elif int(np.prod(shape)) == arr.size:
            arr = arr.reshape(shape)
        else:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tried to "
                            f"convert {arr.size} elements into shape {list(shape)}.")
    t = wrap(arr)
    for hook in CONSTANT_HOOKS:
        hook(t, name)
    return t


def _infer_python(value):
    """The dtype TF infers for a (nested) Python value."""
    kinds = set()

    def walk(v):
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, (bool, np.bool_)):
            kinds.add("b")
        elif isinstance(v, numbers.Integral):
            kinds.add("i" if _INT32.min <= int(v) <= _INT32.max else "I")
        elif isinstance(v, numbers.Real):
            kinds.add("f")
        elif isinstance(v, numbers.Complex):
            kinds.add("c")
        elif isinstance(v, (str, bytes)):
            kinds.add("S")
        elif isinstance(v, (Tensor, np.ndarray, np.generic)) or _is_variable(v):
            kinds.add(("t", dtypes.as_dtype(np.asarray(v).dtype
                                            if not isinstance(v, Tensor) else v._value.dtype)))
        else:
            raise TypeError(f"Cannot convert {v!r} (of type {type(v).__name__}) to a Tensor; "
                            f"pass a number, a nested list of numbers, a NumPy array or a "
                            f"Tensor, or register a conversion with "
                            f"tf.register_tensor_conversion_function")
    walk(value)
    tensor_dtypes = {k[1] for k in kinds if isinstance(k, tuple)}
    if tensor_dtypes:
        if len(tensor_dtypes) == 1:
            return tensor_dtypes.pop()
        raise TypeError(f"Cannot convert a list mixing tensors of dtypes "
                        f"{sorted(d.name for d in tensor_dtypes)} to one Tensor; tf.cast first")
    if "S" in kinds:
        if len(kinds) > 1:
            raise TypeError(f"Cannot convert {value!r} to a Tensor: it mixes strings and numbers")
        return dtypes.string
    for k, dt in (("c", dtypes.complex128), ("f", dtypes.float32), ("I", dtypes.int64),
                  ("i", dtypes.int32), ("b", dtypes.bool)):
        if k in kinds:
            return dt
    return dtypes.float32  # empty list


def _unpack(value):
    """Nested lists that contain tensors/variables become nested NumPy values."""
    if isinstance(value, (list, tuple)):
        return [_unpack(v) for v in value]
    if isinstance(value, Tensor):
        v = value._value
        return v.tolist() if v.dtype == object else v  # strings: bytes, not 0-d arrays
    if _is_variable(value):
        return value._read()._value
    return value


def _array_like(value):
    """Objects NumPy turns into an array (pandas DataFrame/Series, anything with
    `__array__`), as TensorFlow accepts them; None for Python values."""
    if isinstance(value, (list, tuple, str, bytes, numbers.Number)) or \
            not hasattr(type(value), "__array__"):
        return None
    arr = np.asarray(value)
    if arr.dtype.kind == "O":  # pandas strings: str objects (None/NaN are not strings)
        flat = arr.ravel()
        if flat.size and all(isinstance(v, (str, bytes)) for v in flat):
            return to_bytes_array(arr)
        if flat.size and all(isinstance(v, numbers.Number) for v in flat):
            return np.asarray(flat.tolist()).reshape(arr.shape)
        raise TypeError(f"Cannot convert a {type(value).__name__} of Python objects "
                        f"{_short(flat[:4].tolist())} to a Tensor: its values must be all "
                        f"numbers or all strings (fill missing values first)")
    return arr


def to_numpy(value, dtype=None, allow_cast=False):
    """A NumPy array for `value` with TF's dtype rules; `dtype` requests one. With
    allow_cast (tf.constant) NumPy values are cast to `dtype`; Python values never lose
    information (tf.constant(2.2, dtype=tf.int32) is a TypeError, as in TF)."""
    if isinstance(value, range):  # a sequence to TF: tf.constant(range(3)) is [0 1 2]
        value = list(value)
    if not isinstance(value, (np.ndarray, np.generic)):
        arr = _array_like(value)
        if arr is not None:
            value = arr
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.kind in "USO":
            arr = to_bytes_array(arr)  # str (also inside object arrays) -> UTF-8 bytes
            if dtype is not None and not dtype.is_string:
                raise TypeError(f"Cannot convert a string array to {dtype.name}")
            return arr
        if dtype is None or arr.dtype == dtype._np:
            return arr
        if not allow_cast and not _safe_cast(arr, dtype):
            raise TypeError(f"Cannot convert a NumPy {arr.dtype} array to a Tensor of dtype "
                            f"{dtype.name}; tf.cast it explicitly")
        return arr.astype(dtype.as_numpy_dtype)
    inferred = _infer_python(value)
    if dtype is None:
        dtype = inferred
    if dtype.is_string:
        if not inferred.is_string:
            raise TypeError(f"Cannot convert {value!r} to a string tensor")
        return to_bytes_array(np.array(_unpack(value), dtype=object))
    if inferred.is_string:
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    if not _python_fits(inferred, dtype):
        raise TypeError(f"Cannot convert {_short(value)} to EagerTensor of dtype {dtype.name}")
    try:
        arr = np.array(_unpack(value), dtype=dtype.as_numpy_dtype)
    except ValueError as e:
        if "inhomogeneous" in str(e) or "sequence" in str(e):
            raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: "
                             f"{_short(value)}") from None
        raise TypeError(f"Cannot convert {_short(value)} to EagerTensor of dtype "
                        f"{dtype.name}: {e}") from None
    except OverflowError:
        raise TypeError(f"Cannot convert {_short(value)} to EagerTensor of dtype "
                        f"{dtype.name}: value out of range") from None
    return arr


def _python_fits(inferred, dtype):
    """Python ints fit int/float/complex dtypes, floats fit float/complex, bools only bool."""
    order = "ifc"
    src, dst = inferred.kind, "i" if dtype.kind == "u" else dtype.kind
    if src == "b" or dst == "b":
        return src == dst
    return dst in order and order.index(dst) >= order.index(src)


def _safe_cast(arr, dtype):
    return np.can_cast(arr.dtype, dtype._np, casting="same_kind")


def _short(value):
    s = repr(value)
    return s if len(s) < 80 else s[:77] + "..."
