"""`tf.RaggedTensorSpec`: the type of a RaggedTensor (shape with None ragged dimensions,
dtype, ragged_rank), as `Dataset.element_spec` and `tf.function` signatures show it.

Example:
    >>> tf.RaggedTensorSpec.from_value(tf.ragged.constant([[1], [2, 3]]))
    RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)
"""
from tensorlite.framework import dtypes
from tensorlite.framework.tensor_shape import TensorShape


class RaggedTensorSpec:
    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype")

    def __init__(self, shape=None, dtype=dtypes.float32, ragged_rank=None,
                 row_splits_dtype=dtypes.int64, flat_values_spec=None):
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        rank = self._shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("RaggedTensorSpec: ragged_rank must be given when the shape's "
                                 "rank is unknown")
            ragged_rank = rank - 1
        if rank is not None and not 0 <= ragged_rank < rank:
            raise ValueError(f"RaggedTensorSpec: ragged_rank={ragged_rank} must be in "
                             f"[0, {rank}) for shape {self._shape}")
        self._ragged_rank = ragged_rank
        self._row_splits_dtype = dtypes.as_dtype(row_splits_dtype)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ragged_rank = property(lambda self: self._ragged_rank)
    row_splits_dtype = property(lambda self: self._row_splits_dtype)

    @property
    def value_type(self):
        from tensorlite.ragged.ragged_tensor import RaggedTensor  # noqa: PLC0415
        return RaggedTensor

    def _trace_example(self):
        """A small RaggedTensor of this spec (each row of length 1, a None size as 1) that
        `get_concrete_function` traces on; the graph keeps its sizes unknown."""
        import numpy as np  # noqa: PLC0415
        from tensorlite.framework.tensor import wrap  # noqa: PLC0415
        from tensorlite.ragged.ragged_tensor import RaggedTensor  # noqa: PLC0415
        dims = self._shape.as_list()
        rows = dims[0] or 1
        inner = [1 if d is None else d for d in dims[self._ragged_rank + 1:]]
        np_dtype = object if self._dtype.is_string else self._dtype.as_numpy_dtype
        value = wrap(np.zeros([rows] + inner, np_dtype))
        for _ in range(self._ragged_rank):
            value = RaggedTensor.from_row_lengths(
                value, wrap(np.ones(rows, self._row_splits_dtype.as_numpy_dtype)))
        return value

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype, value.ragged_rank)

    def is_compatible_with(self, other):
        if not isinstance(other, RaggedTensorSpec):
            other_rank = getattr(other, "ragged_rank", None)
            if other_rank is None:
                return False
            other = RaggedTensorSpec.from_value(other)
        return (other._dtype is self._dtype and other._ragged_rank == self._ragged_rank and
                self._shape.is_compatible_with(other._shape))

    def most_specific_compatible_type(self, other):
        if not isinstance(other, RaggedTensorSpec) or other._dtype is not self._dtype or \
                other._ragged_rank != self._ragged_rank:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return RaggedTensorSpec(self._shape.most_specific_compatible_shape(other._shape),
                                self._dtype, self._ragged_rank)

    def __eq__(self, other):
        return (isinstance(other, RaggedTensorSpec) and self._shape == other._shape and
                self._dtype is other._dtype and self._ragged_rank == other._ragged_rank)

    def __hash__(self):
        return hash((self._shape, self._dtype.name, self._ragged_rank))

    def __repr__(self):
        return (f"RaggedTensorSpec({self._shape!r}, {self._dtype!r}, {self._ragged_rank}, "
                f"{self._row_splits_dtype!r})")
