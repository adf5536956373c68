"""`SparseTensor` (indices, values, dense_shape) and `SparseTensorSpec`, the types: they sit in
`framework` beside `Tensor` because every layer makes or reads them (parsing ops, ragged
conversion, tf.data's batching). Their operations, and the arithmetic operators the class
carries (`st * dense`, `-st`, `st[i]`), are ops: `tensorlite.ops.sparse_ops` defines them and
attaches the operators, as `ops.tensor_operators` does for `Tensor`.

Example:
    >>> st = tf.sparse.SparseTensor(indices=[[0, 1], [2, 0]], values=[5, 7], dense_shape=[3, 2])
    >>> st.shape
    TensorShape([3, 2])
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_shape import TensorShape


class SparseTensor:
    """`tf.sparse.SparseTensor(indices, values, dense_shape)`: int64 indices [N, rank], values
    [N], int64 dense_shape [rank]."""

    def __init__(self, indices, values, dense_shape):
        self._indices = _int64(indices, "indices")
        self._values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        self._dense_shape = _int64(dense_shape, "dense_shape")
        i, v, s = self._indices.shape, self._values.shape, self._dense_shape.shape
        if i.rank != 2 or v.rank != 1 or s.rank != 1:
            raise ValueError(f"SparseTensor: indices must have rank 2, values rank 1 and "
                             f"dense_shape rank 1; got shapes {i}, {v}, {s}")
        if i[0] != v[0] or i[1] != s[0]:
            raise ValueError(f"SparseTensor: indices {i} must be [len(values)={v[0]}, "
                             f"len(dense_shape)={s[0]}]")

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    shape = property(lambda self: TensorShape([int(d) for d in self._dense_shape._value]))

    def get_shape(self):
        return self.shape

    def with_values(self, new_values):
        """The same indices and shape with other values."""
        return SparseTensor(self._indices, new_values, self._dense_shape)

    @classmethod
    def from_value(cls, sparse_tensor_value):
        return sparse_tensor_value if isinstance(sparse_tensor_value, SparseTensor) else cls(
            sparse_tensor_value.indices, sparse_tensor_value.values,
            sparse_tensor_value.dense_shape)

    def __repr__(self):
        return (f"SparseTensor(indices={self._indices!s}, values={self._values!s}, "
                f"dense_shape={self._dense_shape!s})")

    ndim = property(lambda self: int(self._dense_shape._value.shape[0]))


class SparseTensorSpec:
    """`tf.SparseTensorSpec`: the type of a SparseTensor (its dense shape, None where it
    varies, and dtype), as `Dataset.element_spec` shows it."""

    def __init__(self, shape=None, dtype=dtypes.float32):
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)

    value_type = property(lambda self: SparseTensor)

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype)

    def is_compatible_with(self, other):
        other = other if isinstance(other, SparseTensorSpec) else \
            SparseTensorSpec.from_value(other) if isinstance(other, SparseTensor) else None
        return other is not None and other.dtype is self.dtype and \
            self.shape.is_compatible_with(other.shape)

    def most_specific_compatible_type(self, other):
        if not isinstance(other, SparseTensorSpec) or other.dtype is not self.dtype:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return SparseTensorSpec(self.shape.most_specific_compatible_shape(other.shape),
                                self.dtype)

    def __eq__(self, other):
        return isinstance(other, SparseTensorSpec) and self.shape == other.shape and \
            self.dtype is other.dtype

    def __hash__(self):
        return hash((self.shape, self.dtype.name))

    def __repr__(self):
        return f"SparseTensorSpec({self.shape!r}, {self.dtype!r})"


def _int64(x, what):
    if isinstance(x, Tensor):
        if not x.dtype.is_integer:
            raise TypeError(f"SparseTensor: {what} must be int64, got {x.dtype.name}")
        return x if x.dtype == dtypes.int64 else wrap(x._value.astype(np.int64))
    arr = np.asarray(x)
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"SparseTensor: {what} must be integers, got {arr.dtype}")
    return wrap(arr.astype(np.int64))


__all__ = ["SparseTensor", "SparseTensorSpec"]
