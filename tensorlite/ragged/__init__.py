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


def range(starts, limits=None, deltas=1, dtype=None, name=None,  # noqa: A001 - TF's name
          row_splits_dtype=None):
    """`tf.ragged.range`: row i is `range(starts[i], limits[i], deltas[i])`.

    >>> tf.ragged.range([3, 0], [5, 2]).to_list()
    [[3, 4], [0, 1]]"""
    import numpy as np  # noqa: PLC0415
    from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
    if limits is None:
        starts, limits = 0, starts
    s, lim, d = np.broadcast_arrays(*(np.asarray(convert_to_tensor(v)) for v in
                                      (starts, limits, deltas)))
    rows = [list(np.arange(a, b, c)) for a, b, c in zip(s.reshape(-1), lim.reshape(-1),
                                                      d.reshape(-1))]
    return constant(rows, dtype=dtype or convert_to_tensor(limits).dtype, ragged_rank=1)


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


