"""Indexing and slicing a RaggedTensor as TensorFlow does: `rt[i]` is row i (a Tensor when
it has no ragged dimension left), `rt[a:b]` a ragged tensor of rows, `rt[:, j]` element j
of every row (an error when a row is too short), `rt[:, a:b]` each row sliced, and later
indices apply to the dimensions inside. Values move by `tf.gather`, so indexing is
differentiable.

Example:
    >>> rt = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    >>> rt[0].numpy(), rt[1:].to_list(), rt[:, :2].to_list()
    (array([1, 2, 3], dtype=int32), [[4], [5, 6]], [[1, 2], [4], [5, 6]])
"""
import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.ops import array_ops, gather_ops
from tensorlite.ops import ragged_ops as rops
from tensorlite.ragged.ragged_tensor import RaggedTensor


def take(values, positions):
    """Rows `positions` of dense or ragged `values`."""
    if isinstance(values, RaggedTensor):
        return gather_rows(values, positions)
    return gather_ops.gather(values, positions)


def gather_rows(rt, indices):
    """The ragged tensor made of rows `indices` of `rt` (1-D int64 tensor)."""
    if not isinstance(indices, Tensor):
        indices = convert_to_tensor(np.asarray(indices, dtype=np.int64))
    splits, positions = rops.RAGGED_GATHER_ROWS(rt.row_splits, indices)
    return RaggedTensor(take(rt.values, positions), splits, internal=True)


def _index(k, what):
    if isinstance(k, Tensor):
        if k.shape.rank != 0 or not k.dtype.is_integer:
            raise TypeError(f"RaggedTensor {what}: a tensor index must be an integer scalar")
        return int(k._value)
    if isinstance(k, (int, np.integer)):
        return int(k)
    raise TypeError(f"RaggedTensor {what}: indices must be ints, slices or integer scalar "
                    f"tensors, got {type(k).__name__}")


def getitem(rt, key):
    """`rt[key]`; see the module docstring."""
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis or k is None for k in key):
        return _expanded_getitem(rt, key)
    if not key:
        return rt
    first, rest = key[0], key[1:]
    nrows = len(rt)
    if isinstance(first, slice):
        rows = np.arange(nrows, dtype=np.int64)[first]
        return _inner(gather_rows(rt, rows), rest)
    i = _index(first, "row index")
    if not -nrows <= i < nrows:
        raise errors.InvalidArgumentError(
            None, None, f"RaggedGetItem: row index {i} is out of bounds for a ragged tensor "
            f"with {nrows} rows")
    i %= nrows
    _, positions = rops.RAGGED_GATHER_ROWS(rt.row_splits,
                                           convert_to_tensor(np.array([i], dtype=np.int64)))
    return _rows(take(rt.values, positions), rest)


def _expanded_getitem(rt, key):
    """Ellipsis (the full slices it stands for) and tf.newaxis (a size-1 dimension, added
    with expand_dims where it lands in the result)."""
    if sum(k is Ellipsis for k in key) > 1:
        raise ValueError("RaggedTensor indexing: an index can only have a single ellipsis")
    used = sum(k is not Ellipsis and k is not None for k in key)
    expanded, new_axes, out_dims = [], [], 0
    for k in key:
        if k is Ellipsis:
            fill = rt.shape.rank - used
            expanded += [slice(None)] * fill
            out_dims += fill
        elif k is None:
            new_axes.append(out_dims)
            out_dims += 1
        else:
            expanded.append(k)
            out_dims += isinstance(k, slice)
    out = getitem(rt, tuple(expanded))
    from tensorlite.ragged.ragged_math import expand_dims  # noqa: PLC0415 - it imports us
    for axis in new_axes:
        out = expand_dims(out, axis) if isinstance(out, RaggedTensor) else \
            array_ops.expand_dims(out, axis)
    return out


def _rows(values, rest):
    """Applies `rest` to the dimensions of `values` (no dimension kept in front)."""
    if not rest:
        return values
    if isinstance(values, RaggedTensor):
        return getitem(values, rest)
    return values[rest]


def _inner(rt, rest):
    """Applies `rest` to the dimensions inside the rows of `rt` (rows kept)."""
    if not rest:
        return rt
    k, more = rest[0], rest[1:]
    if isinstance(k, slice):
        splits, positions = rops.RAGGED_ROW_SLICE(rt.row_splits, start=k.start, stop=k.stop,
                                                  step=k.step)
        return RaggedTensor(_inner_all(take(rt.values, positions), more), splits,
                            internal=True)
    positions = rops.RAGGED_COLUMN(rt.row_splits, column=_index(k, "column index"))
    return _inner_all(take(rt.values, positions), more)


def _inner_all(values, more):
    """Applies `more` to every row of `values` (its first dimension kept)."""
    if not more:
        return values
    if isinstance(values, RaggedTensor):
        return _inner(values, more)
    return values[(slice(None),) + tuple(more)]


