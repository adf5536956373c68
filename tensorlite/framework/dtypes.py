"""TensorFlow dtypes (`tf.float32`, ...) and their mapping to NumPy.

Example:
    >>> tf.as_dtype("float32") is tf.float32
    True
"""
import builtins as _builtins

import numpy as np

try:  # bfloat16 is cheap only where ml_dtypes provides a NumPy type for it.
    from ml_dtypes import bfloat16 as _np_bfloat16
except ImportError:  # pragma: no cover - optional
    _np_bfloat16 = None


class DType:
    """A tensor element type; compare with `is` or `==`."""

    __slots__ = ("name", "kind", "_np", "is_floating", "is_integer", "is_bool", "is_complex",
                 "is_string", "is_unsigned", "is_differentiable", "__weakref__")

    def __init__(self, name, np_type, kind):
        self.name = name
        self.kind = kind  # 'f' float, 'i' int, 'u' unsigned, 'b' bool, 'c' complex, 'S' string
        self._np = None if np_type is None else np.dtype(np_type)
        self.is_floating = kind == "f"
        self.is_integer = kind in "iu"
        self.is_unsigned = kind == "u"
        self.is_bool = kind == "b"
        self.is_complex = kind == "c"
        self.is_string = kind == "S"
        self.is_differentiable = kind in "fc"  # an attribute: the tape reads it per op

    @property
    def as_datatype_enum(self):
        """TensorFlow's DataType enum value of this dtype (1 for float32)."""
        return DATA_TYPES[DT_NAMES[self.name]]

    @property
    def as_numpy_dtype(self):
        if self._np is None:
            raise NotImplementedError(
                f"tensorlite has no NumPy type for {self.name}: install ml_dtypes to use it")
        return self._np.type

    @property
    def base_dtype(self):
        return self

    @property
    def real_dtype(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    @property
    def is_numpy_compatible(self):
        return self._np is not None

    @property
    def size(self):
        return self._np.itemsize if not self.is_string else 1

    @property
    def min(self):
        return self._limits().min

    @property
    def max(self):
        return self._limits().max

    def _limits(self):
        if self.is_floating:
            return np.finfo(self._np)
        if self.is_integer:
            return np.iinfo(self._np)
        raise TypeError(f"Cannot find minimum/maximum value of {self.name}.")

    def is_compatible_with(self, other):
        return self is as_dtype(other)

    def __repr__(self):
        return f"tf.{self.name}"

    def __reduce__(self):
        return (as_dtype, (self.name,))

    def __eq__(self, other):
        if other is None:
            return False
        try:
            return self is as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.name)


float16 = DType("float16", np.float16, "f")
half = float16
float32 = DType("float32", np.float32, "f")
float64 = DType("float64", np.float64, "f")
double = float64
bfloat16 = DType("bfloat16", _np_bfloat16, "f")
int8 = DType("int8", np.int8, "i")
int16 = DType("int16", np.int16, "i")
int32 = DType("int32", np.int32, "i")
int64 = DType("int64", np.int64, "i")
uint8 = DType("uint8", np.uint8, "u")
uint16 = DType("uint16", np.uint16, "u")
uint32 = DType("uint32", np.uint32, "u")
uint64 = DType("uint64", np.uint64, "u")
bool = DType("bool", np.bool_, "b")  # noqa: A001 - TensorFlow's name
complex64 = DType("complex64", np.complex64, "c")
complex128 = DType("complex128", np.complex128, "c")
string = DType("string", np.object_, "S")

ALL = [float16, float32, float64, bfloat16, int8, int16, int32, int64, uint8, uint16,
       uint32, uint64, bool, complex64, complex128, string]
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"half": float16, "double": float64, "float": float32, "int": int32,
                 "str": string, "bytes": string})
# TensorFlow's DataType enum (tensorflow/core/framework/types.proto): the wire value of a
# dtype in every TensorFlow file format, and what `tf.zeros(3, 1)` means by dtype 1.
DATA_TYPES = {"DT_INVALID": 0, "DT_FLOAT": 1, "DT_DOUBLE": 2, "DT_INT32": 3, "DT_UINT8": 4,
              "DT_INT16": 5, "DT_INT8": 6, "DT_STRING": 7, "DT_COMPLEX64": 8, "DT_INT64": 9,
              "DT_BOOL": 10, "DT_QINT8": 11, "DT_QUINT8": 12, "DT_QINT32": 13,
              "DT_BFLOAT16": 14, "DT_QINT16": 15, "DT_QUINT16": 16, "DT_UINT16": 17,
              "DT_COMPLEX128": 18, "DT_HALF": 19, "DT_RESOURCE": 20, "DT_VARIANT": 21,
              "DT_UINT32": 22, "DT_UINT64": 23}
# dtype name (and the handle types resource and variant) -> its DataType enum name
DT_NAMES = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE",
            "bfloat16": "DT_BFLOAT16", "int8": "DT_INT8", "int16": "DT_INT16",
            "int32": "DT_INT32", "int64": "DT_INT64", "uint8": "DT_UINT8",
            "uint16": "DT_UINT16", "uint32": "DT_UINT32", "uint64": "DT_UINT64",
            "bool": "DT_BOOL", "complex64": "DT_COMPLEX64", "complex128": "DT_COMPLEX128",
            "string": "DT_STRING", "resource": "DT_RESOURCE", "variant": "DT_VARIANT"}
_BY_ENUM = {DATA_TYPES[dt]: _BY_NAME[name] for name, dt in DT_NAMES.items()
            if name in _BY_NAME}

# Keyed by np.dtype: the hot path maps every op result's dtype through this dict.
BY_NUMPY = {d._np: d for d in ALL if d._np is not None and not d.is_string}
BY_NUMPY[np.dtype(object)] = string


def as_dtype(type_value):
    """Converts a DType, NumPy dtype, Python type, name or DataType enum value to a
    `tf.DType`."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str) and type_value in _BY_NAME:
        return _BY_NAME[type_value]
    if type_value is _builtins.bool:
        return bool
    if type_value is float:
        return float32
    if type_value is int:
        return int32
    if type_value in (str, bytes):
        return string
    if type(type_value) is int and type_value in _BY_ENUM:  # a DataType enum value
        return _BY_ENUM[type_value]
    try:
        npd = np.dtype(type_value)
    except TypeError:
        npd = None
    if npd is not None:
        if npd.kind in "USO":
            return string
        found = BY_NUMPY.get(npd)
        if found is not None:
            return found
    raise TypeError(f"Cannot convert {type_value!r} to a tensorlite DType; use one of "
                    f"{sorted(n for n in _BY_NAME)}")

