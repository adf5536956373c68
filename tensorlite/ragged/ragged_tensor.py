"""`tf.RaggedTensor`: rows of different lengths, as flat values plus row splits.

A RaggedTensor holds `values` (a Tensor, or another RaggedTensor for more ragged
dimensions) and int64 `row_splits` (row i is `values[row_splits[i]:row_splits[i+1]]`).
Everything it computes goes through registry ops (tensorlite/ops/ragged_ops.py), so ragged
code runs the same eagerly, under a GradientTape and inside `tf.function`.

Example:
    >>> rt = tf.RaggedTensor.from_row_splits([3, 1, 4, 1, 5, 9, 2], [0, 4, 4, 7])
    >>> rt
    <tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2]]>
    >>> rt.row_lengths().numpy()
    array([4, 0, 3])
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.ops import array_ops, gather_ops, math_ops
from tensorlite.ops import ragged_ops as rops


def _int64(x, what):
    t = x if isinstance(x, Tensor) else convert_to_tensor(np.asarray(x) if not isinstance(
        x, (list, tuple)) or len(x) else np.zeros(0, np.int64))
    if not t.dtype.is_integer:
        raise TypeError(f"RaggedTensor: {what} must be an integer tensor, got {t.dtype.name}")
    return t if t.dtype is dtypes.int64 else math_ops.cast(t, dtypes.int64)


def _nest(flat_values, partitions, make):
    """Wraps `flat_values` in one ragged level per partition, innermost last."""
    result = _values(flat_values)
    for p in reversed(list(partitions)):
        result = make(result, p)
    return result


def _values(v):
    return v if isinstance(v, (Tensor, RaggedTensor)) else convert_to_tensor(v)


class RaggedTensor:
    """A tensor with one or more ragged dimensions; see the module docstring."""

    __slots__ = ("_values", "_row_splits", "__weakref__")

    def __init__(self, values, row_splits, internal=False):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; use a factory method such "
                             "as tf.RaggedTensor.from_row_splits or tf.ragged.constant")
        self._values = values
        self._row_splits = row_splits

    # -- factories ---------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Rows `values[row_splits[i]:row_splits[i+1]]`.

        >>> tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 3]).to_list()
        [[1, 2], [3]]"""
        values = _values(values)
        splits = _int64(row_splits, "row_splits")
        if validate:
            inner = values._row_splits if isinstance(values, RaggedTensor) else values
            splits = rops.RAGGED_VALIDATE(splits, inner,
                                          values_are_splits=isinstance(values, RaggedTensor))
        return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """>>> tf.RaggedTensor.from_row_lengths([1, 2, 3], [2, 0, 1]).to_list()
        [[1, 2], [], [3]]"""
        splits = rops.RAGGED_SPLITS_FROM_LENGTHS(_int64(row_lengths, "row_lengths"))
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """>>> tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 0, 2], nrows=4).to_list()
        [[1, 2], [], [3], []]"""
        rowids = _int64(value_rowids, "value_rowids")
        if isinstance(nrows, Tensor):  # a tensor input: in a graph it follows the batch
            splits = rops.RAGGED_SPLITS_FROM_ROWIDS_N(rowids, _int64(nrows, "nrows"))
            return cls.from_row_splits(values, splits, validate=validate)
        n = -1 if nrows is None else int(np.asarray(nrows))
        splits = rops.RAGGED_SPLITS_FROM_ROWIDS(rowids, nrows=n if n >= 0 else None)
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        values = _values(values)
        starts = _int64(row_starts, "row_starts")
        nvals = values.nrows() if isinstance(values, RaggedTensor) else \
            array_ops.shape(values, out_type=dtypes.int64)[0]
        splits = array_ops.concat([starts, array_ops.reshape(nvals, [1])], 0)
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        limits = _int64(row_limits, "row_limits")
        splits = array_ops.concat([array_ops.zeros([1], dtypes.int64), limits], 0)
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True,
                                name=None):
        values = _values(values)
        splits = rops.RAGGED_UNIFORM_SPLITS(values if isinstance(values, Tensor) else
                                            values._row_splits[1:],
                                            length=int(uniform_row_length),
                                            nrows=None if nrows is None else int(nrows))
        return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        return _nest(flat_values, nested_row_splits,
                     lambda v, s: cls.from_row_splits(v, s, validate=validate))

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None,
                                validate=True):
        return _nest(flat_values, nested_row_lengths,
                     lambda v, n: cls.from_row_lengths(v, n, validate=validate))

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None,
                                 name=None, validate=True):
        result = _values(flat_values)
        nested_nrows = nested_nrows or [None] * len(nested_value_rowids)
        for rowids, n in reversed(list(zip(nested_value_rowids, nested_nrows))):
            result = cls.from_value_rowids(result, rowids, n, validate=validate)
        return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None,
                    row_splits_dtype=dtypes.int64):
        """Rows of a dense tensor, cut to `lengths` or with trailing `padding` dropped.

        >>> tf.RaggedTensor.from_tensor([[1, 0], [2, 3]], padding=0).to_list()
        [[1], [2, 3]]"""
        from tensorlite.ragged.conversion import from_tensor  # noqa: PLC0415
        return from_tensor(tensor, lengths, padding, ragged_rank)

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=dtypes.int64):
        from tensorlite.ragged.conversion import from_sparse  # noqa: PLC0415
        return from_sparse(st_input)

    # -- structure -----------------------------------------------------------------------------
    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return self._row_splits

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self):
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt._row_splits)
            rt = rt._values
        return tuple(out)

    @property
    def ragged_rank(self):
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self):
        return dtypes.int64

    @property
    def shape(self):
        nrows = self._row_splits._value.shape[0] - 1
        return TensorShape([nrows] + [None] * self.ragged_rank +
                           list(self.flat_values._value.shape[1:]))

    def get_shape(self):
        return self.shape

    @property
    def ndim(self):
        return self.shape.rank

    def nrows(self, out_type=dtypes.int64, name=None):
        n = array_ops.shape(self._row_splits, out_type=out_type)[0]
        return math_ops.subtract(n, np.array(1, dtype=dtypes.as_dtype(out_type).as_numpy_dtype))

    def row_lengths(self, axis=1, name=None):
        """Length of each row in ragged dimension `axis`.

        >>> tf.ragged.constant([[1, 2], [3]]).row_lengths().numpy()
        array([2, 1])"""
        if axis == 1:
            return rops.RAGGED_ROW_LENGTHS(self._row_splits)
        if axis < 1 or not isinstance(self._values, RaggedTensor):
            raise ValueError(f"row_lengths: axis {axis} is not a ragged dimension of a tensor "
                             f"with ragged_rank {self.ragged_rank}")
        return self.with_values(self._values.row_lengths(axis - 1))

    def value_rowids(self, name=None):
        return rops.RAGGED_VALUE_ROWIDS(self._row_splits)

    def row_starts(self, name=None):
        return self._row_splits[:-1]

    def row_limits(self, name=None):
        return self._row_splits[1:]

    def nested_row_lengths(self, name=None):
        return tuple(rops.RAGGED_ROW_LENGTHS(s) for s in self.nested_row_splits)

    def bounding_shape(self, axis=None, name=None, out_type=dtypes.int64):
        """The smallest dense shape holding every row, e.g. [3, 4] for rows of 2, 4, 1.

        >>> tf.ragged.constant([[1, 2], [3]]).bounding_shape().numpy()
        array([2, 2])"""
        parts = [array_ops.reshape(self.nrows(out_type=dtypes.int64), [1])]
        for splits in self.nested_row_splits:
            lengths = rops.RAGGED_ROW_LENGTHS(splits)
            parts.append(array_ops.reshape(math_ops.reduce_max(array_ops.concat(
                [lengths, array_ops.zeros([1], dtypes.int64)], 0)), [1]))
        parts.append(array_ops.shape(self.flat_values, out_type=dtypes.int64)[1:])
        shape = math_ops.cast(array_ops.concat(parts, 0), out_type)
        return shape if axis is None else shape[axis]

    def with_values(self, new_values):
        return RaggedTensor(_values(new_values), self._row_splits, internal=True)

    def with_flat_values(self, new_values):
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype):
        return self

    # -- conversion ----------------------------------------------------------------------------
    def to_tensor(self, default_value=None, name=None, shape=None):
        """A dense tensor, short rows padded with `default_value` (zero/empty by default);
        with `shape`, rows and ragged dimensions are padded or cut to it (None: bounding).

        >>> tf.ragged.constant([[1, 2], [3]]).to_tensor().numpy().tolist()
        [[1, 2], [3, 0]]"""
        flat = self.flat_values
        if default_value is None:
            default_value = b"" if flat.dtype.is_string else 0
        default = convert_to_tensor(default_value, dtype=flat.dtype) \
            if not isinstance(default_value, Tensor) else default_value
        if shape is not None:
            shape = tuple(None if d is None else int(d) for d in
                          (TensorShape(shape).as_list() if not isinstance(shape, Tensor)
                           else np.asarray(shape).tolist()))
            if len(shape) != self.shape.rank:
                raise ValueError(f"to_tensor: shape {list(shape)} must have rank "
                                 f"{self.shape.rank}, the rank of the ragged tensor "
                                 f"{self.shape}")
        return rops.RAGGED_TO_DENSE(flat, default, *self.nested_row_splits, shape=shape)

    def to_list(self):
        """Nested Python lists (bytes for strings).

        >>> tf.ragged.constant([["a"], []]).to_list()
        [[b'a'], []]"""
        rows = self.flat_values._value.tolist()
        for splits in reversed(self.nested_row_splits):
            s = splits._value.tolist()
            rows = [rows[a:b] for a, b in zip(s[:-1], s[1:])]
        return rows

    def numpy(self):
        """A NumPy object array of per-row arrays (as TensorFlow's eager RaggedTensor)."""
        rows = [np.asarray(r) if not isinstance(r, RaggedTensor) else r.numpy()
                for r in self]
        out = np.empty(len(rows), dtype=object)
        out[:] = rows
        return out

    def to_sparse(self, name=None):
        from tensorlite.ragged.conversion import to_sparse  # noqa: PLC0415
        return to_sparse(self)

    def merge_dims(self, outer_axis, inner_axis):
        """Dimensions `outer_axis..inner_axis` merged into one (ragged, or dense when the
        outer dimension is merged away), as TensorFlow's.

        >>> tf.ragged.constant([[[1], [2, 3]], [[4]]]).merge_dims(1, 2).to_list()
        [[1, 2, 3], [4]]"""
        rank = self.shape.rank
        outer = outer_axis + rank if outer_axis < 0 else outer_axis
        inner = inner_axis + rank if inner_axis < 0 else inner_axis
        if not 0 <= outer <= inner < rank:
            raise ValueError(f"merge_dims: need 0 <= outer_axis <= inner_axis < rank {rank}, "
                             f"got ({outer_axis}, {inner_axis})")
        if outer == inner:
            return self
        if outer > 1:
            return self.with_values(_merge(self._values, outer - 1, inner - 1))
        if outer == 0:
            return _merge(self._values, 0, inner - 1) if inner > 1 else self._values
        # outer == 1: each row's elements in dims 1..inner become one row; its bounds are
        # the row splits carried down through every merged dimension
        splits, values = self._row_splits, self._values
        for _ in range(inner - 1):
            if isinstance(values, RaggedTensor):
                splits, values = gather_ops.gather(values.row_splits, splits), values.values
            else:
                splits = math_ops.multiply(splits, np.int64(values.shape[1]))
                values = array_ops.reshape(values, [-1] + values.shape.as_list()[2:])
        return RaggedTensor(values, splits, internal=True)

    # -- composite protocol (nest.flatten(expand_composites=True): tf.function) ---------------
    def _tl_components(self):
        return [self._values, self._row_splits]

    def _tl_rebuild(self, components):
        return RaggedTensor(components[0], components[1], internal=True)

    # -- Python protocol ------------------------------------------------------------------------
    def __getitem__(self, key):
        from tensorlite.ragged.indexing import getitem  # noqa: PLC0415
        return getitem(self, key)

    def __iter__(self):
        for i in range(self._row_splits._value.shape[0] - 1):
            yield self[i]

    def __len__(self):
        return self._row_splits._value.shape[0] - 1

    def __bool__(self):
        raise TypeError("RaggedTensor may not be used as a boolean.")

    def __hash__(self):
        raise TypeError("RaggedTensor is unhashable; use .ref() as the key.")

    def __repr__(self):
        if not isinstance(self.flat_values, Tensor):  # a graph's output structure (slots)
            return f"RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"
        return f"<tf.RaggedTensor {_list_text(self.to_list())}>"

    __str__ = __repr__


def _merge(x, outer, inner):
    """merge_dims of a ragged or dense tensor."""
    if isinstance(x, RaggedTensor):
        return x.merge_dims(outer, inner)
    shape = x.shape.as_list()
    return array_ops.reshape(x, shape[:outer] + [-1] + shape[inner + 1:])


def _list_text(rows):
    return repr(rows)
