"""`tf.ragged`: RaggedTensor, its factories and ragged-aware functions.

Example:
    >>> rt = tf.ragged.constant([[1, 2], [3]])
    >>> tf.ragged.map_flat_values(tf.square, rt).to_list()
    [[1, 4], [9]]
"""
from tensorlite.ragged.ragged_tensor import RaggedTensor
from tensorlite.ragged import dispatch as _dispatch  # noqa: F401 - registers the dispatch
from tensorlite.ragged.factory import constant
from tensorlite.ragged.ragged_math import boolean_mask, map_flat_values, stack
from tensorlite.ragged.spec import RaggedTensorSpec


def _check_range_size(starts, limits, deltas, dtype):
    """InvalidArgumentError for a zero delta, ResourceExhaustedError for more values than
    memory holds, both before anything is allocated (as tf.zeros and tf.range check)."""
    from tensorlite.framework import dtypes, errors  # noqa: PLC0415
    from tensorlite.ops.array_ops import checked_dims  # noqa: PLC0415
    total = 0
    for a, b, c in zip(starts.reshape(-1).tolist(), limits.reshape(-1).tolist(),
                       deltas.reshape(-1).tolist()):
        if c == 0:
            raise errors.InvalidArgumentError(None, None, "RaggedRange: Requires delta != 0")
        total += max(0, int(-(-(b - a) // c)))  # ceil, exact for integers
    checked_dims((total,), "RaggedRange", dtypes.as_dtype(dtype))


def range(starts, limits=None, deltas=1, dtype=None, name=None,  # noqa: A001 - TF's name
          row_splits_dtype=None):
    """`tf.ragged.range`: row i is `range(starts[i], limits[i], deltas[i])`.

    >>> tf.ragged.range([3, 0], [5, 2]).to_list()
    [[3, 4], [0, 1]]"""
    import numpy as np  # noqa: PLC0415
    from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
    if limits is None:
        starts, limits = 0, starts
    from tensorlite.framework import errors  # noqa: PLC0415
    arrays = [np.asarray(convert_to_tensor(v)) for v in (starts, limits, deltas)]
    sizes = {a.size for a in arrays if a.ndim}
    if any(a.ndim > 1 for a in arrays) or len(sizes) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"RaggedRange: starts, limits and deltas must be scalars or vectors of "
            f"one length; got shapes {[list(a.shape) for a in arrays]}")
    s, lim, d = np.broadcast_arrays(*arrays)
    from tensorlite.framework import dtypes  # noqa: PLC0415
    if dtype is None:  # as TensorFlow: the widest of int32 < int64 < float32 < float64
        order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
        found = [convert_to_tensor(v).dtype for v in (starts, limits, deltas)]
        dtype = max(found, key=lambda t: order.index(t) if t in order else -1)
    dt = dtypes.as_dtype(dtype)
    _check_range_size(s, lim, d, dt)
    rows = [np.arange(a, b, c) for a, b, c in zip(s.reshape(-1), lim.reshape(-1),
                                                d.reshape(-1))]
    values = np.concatenate(rows) if rows else np.zeros(0)
    splits = np.cumsum([0] + [len(r) for r in rows], dtype=np.int64)
    return RaggedTensor.from_row_splits(
        convert_to_tensor(values.astype(dt.as_numpy_dtype)),
        convert_to_tensor(splits.astype(dtypes.as_dtype(row_splits_dtype or
                                                        dtypes.int64).as_numpy_dtype)))


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """`tf.ragged.stack_dynamic_partitions`: row p holds the rows of `data` (dense or ragged)
    whose partition is p, in their order.

    >>> tf.ragged.stack_dynamic_partitions(["a", "b", "c"], [1, 0, 1], 2).to_list()
    [[b'b'], [b'a', b'c']]"""
    from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
    from tensorlite.ops import ragged_ops  # noqa: PLC0415
    from tensorlite.ragged.indexing import take  # noqa: PLC0415
    if not isinstance(data, RaggedTensor):
        data = convert_to_tensor(data)
    parts = convert_to_tensor(partitions, dtype_hint="int64")
    if parts.shape.rank != 1 or not parts.dtype.is_integer:
        raise ValueError("stack_dynamic_partitions: partitions must be a vector of integers")
    splits, order = ragged_ops.RAGGED_SEGMENT_ORDER(
        parts, convert_to_tensor(int(num_partitions), dtype="int64"), check_range=True)
    return RaggedTensor(take(data, order), splits, internal=True)


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    from tensorlite.ops import ragged_ops  # noqa: PLC0415
    from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
    return ragged_ops.RAGGED_VALUE_ROWIDS(convert_to_tensor(splits, dtype="int64"))


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    from tensorlite.ops import ragged_ops  # noqa: PLC0415
    from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
    ids = convert_to_tensor(segment_ids, dtype="int64")
    return ragged_ops.RAGGED_SPLITS_FROM_ROWIDS(
        ids, nrows=None if num_segments is None else int(num_segments))


