"""The eager `tf.Tensor`: an immutable value over a NumPy array.

Operators (`+`, `@`, indexing, ...) are installed by `tensorlite.ops.tensor_operators`, since
the ops layer sits above this one.

Example:
    >>> tf.constant([1.0, 2.0])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>
"""
import numpy as np

from tensorlite.framework import dtypes, tensor_notes
from tensorlite.framework.tensor_shape import TensorShape

_BY_NUMPY = dtypes.BY_NUMPY
_ndarray = np.ndarray


class Tensor:
    """An immutable multi-dimensional array with a `tf.DType`."""

    __slots__ = ("_value", "_dtype", "__weakref__")
    # NumPy binary operators defer to ours (ndarray + Tensor gives a Tensor).
    __array_priority__ = 100

    def __init__(self, value, dtype=None):
        value = np.asarray(value)
        self._value = value
        self._dtype = dtypes.as_dtype(value.dtype) if dtype is None else dtype

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        if GRAPH_TENSOR_INFO:  # a graph tensor: its static shape (None: unknown dims)
            info = _graph_tensor_info(self)
            if info is not None:
                return info.shape
        return TensorShape(self._value.shape)

    @property
    def graph(self):
        """The graph of a graph tensor (undefined for eager tensors, as in TF)."""
        return self._graph_info("graph").graph

    @property
    def op(self):
        """The Operation computing a graph tensor."""
        return self._graph_info("op").op

    def _graph_info(self, what):
        info = _graph_tensor_info(self) if GRAPH_TENSOR_INFO else None
        if info is None:
            raise AttributeError(f"Tensor.{what} is undefined when eager execution is "
                                 f"enabled.")
        return info

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """`Tensor.set_shape`: checks that `shape` (None dimensions match any size) is
        compatible with this tensor's shape; ValueError if not. A tensor's shape is always
        known here (functions trace on real values), so nothing else changes, except that a
        tf.compat.v1 placeholder's declared shape is refined, as in TensorFlow's graphs.
        >>> tf.constant([[1, 2, 3]]).set_shape([None, 3])"""
        try:
            if isinstance(shape, (str, bytes)):
                raise TypeError(shape)
            wanted = TensorShape(shape)
        except (TypeError, ValueError):
            raise TypeError(f"set_shape: shape must be a TensorShape, a list or tuple of ints "
                            f"and None, or None, got {shape!r}") from None
        if not self.shape.is_compatible_with(wanted):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied "
                             f"shape {shape}.")
        declared = getattr(self, "_declared", None)  # a graph input's static shape
        if declared is not None:
            self._declared = declared.merge_with(wanted)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def name(self):
        return self._graph_info("name").name

    @property
    def _keras_mask(self):
        """The Keras mask a layer attached to this tensor (its compute_mask), or None."""
        return tensor_notes.KERAS_MASKS.get(self)

    @_keras_mask.setter
    def _keras_mask(self, mask):
        tensor_notes.KERAS_MASKS.set(self, mask)

    def numpy(self):
        """The value as a NumPy array (a NumPy scalar for a 0-d tensor); may share memory."""
        if _ON_NUMPY:
            for hook in _ON_NUMPY:
                hook(self)
        v = self._value
        return v[()] if v.ndim == 0 else v

    def __array__(self, dtype=None, copy=None):
        if _ON_NUMPY:
            for hook in _ON_NUMPY:
                hook(self)
        v = self._value
        if dtype is not None and v.dtype != dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    def ref(self):
        return _Reference(self)

    def experimental_ref(self):
        return self.ref()

    def __hash__(self):
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def __bool__(self):
        if _ON_NUMPY:
            for hook in _ON_NUMPY:
                hook(self)
        return bool(self._value)

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __index__(self):
        if self._value.ndim != 0 or not self._dtype.is_integer:
            raise TypeError(f"Only integer scalar tensors can be used as an index; got "
                            f"{self._dtype.name} tensor of shape {self.shape}")
        if _ON_NUMPY:
            for hook in _ON_NUMPY:
                hook(self)
        return int(self._value)

    def __int__(self):
        return int(self.numpy())

    def __float__(self):
        return float(self.numpy())

    def __complex__(self):
        return complex(self.numpy())

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return iter(_UNSTACK[0](self))

    def __format__(self, format_spec):
        """As TensorFlow: the NumPy value formatted, so f"{loss:2.5f}" works on a scalar;
        a graph tensor (inside tf.function) formats as its str, f"{x}" included."""
        if not format_spec and GRAPH_TENSOR_INFO and _graph_tensor_info(self) is not None:
            return str(self)
        return self.numpy().__format__(format_spec)

    def __str__(self):
        info = _graph_tensor_info(self) if GRAPH_TENSOR_INFO else None
        if info is not None:  # as TF prints a symbolic tensor (inside tf.function too)
            shape = getattr(info, "static_shape", None) or info.shape
            return f'Tensor("{info.name}", shape={shape}, dtype={self._dtype.name})'
        return f"tf.Tensor({_newline(_format(self._value))}, shape={self.shape}, " \
               f"dtype={self._dtype.name})"

    def __repr__(self):
        info = _graph_tensor_info(self) if GRAPH_TENSOR_INFO else None
        if info is not None:
            shape = getattr(info, "static_shape", None) or info.shape
            return f"<tf.Tensor '{info.name}' shape={shape} dtype={self._dtype.name}>"
        return (f"<tf.Tensor: shape={self.shape}, dtype={self._dtype.name}, "
                f"numpy={_newline(_repr_value(self._value))}>")

    def __reduce__(self):
        return (Tensor, (self._value, None))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _format(v):
    if v.ndim == 0:
        return str(v[()])
    return str(v) if v.dtype == object else np.array2string(v, separator=" ")


def _repr_value(v):
    if v.ndim:
        return repr(v)
    return repr(v[()]) if v.dtype == object else str(v[()])  # numpy=6.0, numpy=b'abc'



def _newline(text):
    """TensorFlow starts a value that spans several lines on a line of its own."""
    return "\n" + text if "\n" in text else text


class _Reference:
    """`tensor.ref()`: a hashable handle that compares by identity."""

    __slots__ = ("_t",)

    def __init__(self, t):
        self._t = t

    def deref(self):
        return self._t

    def __hash__(self):
        return id(self._t)

    def __eq__(self, other):
        return isinstance(other, _Reference) and other._t is self._t


# Hooks called when a tensor leaves for NumPy (the tape uses this to explain a None
# gradient caused by a path broken through NumPy). Empty means no cost.
_ON_NUMPY = []
# Providers f(tensor) -> info with .graph, .op, .name, .shape (a TensorShape, None where a
# dimension is unknown), or None for a tensor the provider's graph did not compute:
# tf.compat.v1 graphs and tf.function traces (graph/tracing.py) install theirs. Empty means
# no cost.
GRAPH_TENSOR_INFO = []


def _graph_tensor_info(t):
    for provider in GRAPH_TENSOR_INFO:
        info = provider(t)
        if info is not None:
            return info
    return None
# Filled by ops: unstack, so that iteration over a tensor is differentiable.
_UNSTACK = []

_new = object.__new__


def wrap(value):
    """Wraps a NumPy result as a Tensor without copying (the hot path of every op)."""
    if type(value) is not _ndarray:
        value = np.asarray(value)
    t = _new(Tensor)
    t._value = value
    try:
        t._dtype = _BY_NUMPY[value.dtype]
    except KeyError:
        t._dtype = dtypes.as_dtype(value.dtype)
        if t._dtype.is_string and value.dtype != object:
            t._value = to_bytes_array(value)
    return t


def to_bytes_array(value):
    """NumPy text array -> object array of bytes (TF strings are bytes)."""
    arr = np.asarray(value)
    out = np.empty(arr.shape, dtype=object)
    flat_in, flat_out = arr.reshape(-1), out.reshape(-1)
    for i, s in enumerate(flat_in.tolist()):
        flat_out[i] = s.encode("utf-8") if isinstance(s, str) else s
    return out


def is_tensor(x):
    """`tf.is_tensor`: True for tensors and variables."""
    return isinstance(x, Tensor) or getattr(x, "_is_variable", False)
