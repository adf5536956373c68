"""RaggedTensor <-> dense Tensor and SparseTensor.

Example:
    >>> rt = tf.RaggedTensor.from_tensor([[1, 2, 0], [3, 0, 0]], padding=0)
    >>> rt.to_list()
    [[1, 2], [3]]
"""
from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.ops import array_ops, gather_ops, math_ops
from tensorlite.ops import ragged_ops as rops
from tensorlite.ragged.ragged_tensor import RaggedTensor


def from_tensor(tensor, lengths=None, padding=None, ragged_rank=1):
    """`RaggedTensor.from_tensor`: see there."""
    t = convert_to_tensor(tensor)
    rank = t.shape.rank
    if not 1 <= ragged_rank < rank:
        raise ValueError(f"from_tensor: ragged_rank must be in [1, {rank}) for a tensor of "
                         f"rank {rank}, got {ragged_rank}")
    if lengths is not None and padding is not None:
        raise ValueError("from_tensor: specify lengths or padding, not both")
    if ragged_rank > 1 and lengths is not None:
        return _from_nested_lengths(t, lengths, ragged_rank)
    if ragged_rank > 1 and padding is not None:
        # padding strips the innermost ragged dimension only; the outer ones stay uniform
        dims = t.shape.as_list()
        flat = from_tensor(array_ops.reshape(t, [-1] + dims[ragged_rank:]), padding=padding)
        for d in reversed(dims[1:ragged_rank]):
            flat = RaggedTensor.from_uniform_row_length(flat, d)
        return flat
    if ragged_rank > 1:
        d0, d1 = t.shape[0], t.shape[1]
        inner = from_tensor(array_ops.reshape(t, [d0 * d1] + t.shape.as_list()[2:]),
                            ragged_rank=ragged_rank - 1)
        return RaggedTensor.from_uniform_row_length(inner, d1)
    if padding is not None:
        pad = convert_to_tensor(padding, dtype=t.dtype)
        lengths = rops.RAGGED_LENGTHS_FROM_PADDING(t, pad)
    if lengths is None:
        return RaggedTensor.from_uniform_row_length(
            array_ops.reshape(t, [-1] + t.shape.as_list()[2:]), t.shape[1])
    lengths = math_ops.cast(convert_to_tensor(lengths), dtypes.int64)
    mask = gather_ops.sequence_mask(lengths, maxlen=t.shape[1])
    return RaggedTensor.from_row_lengths(gather_ops.boolean_mask(t, mask), lengths)


def _from_nested_lengths(t, lengths, ragged_rank):
    """from_tensor(t, lengths=(l1, l2, ...), ragged_rank=k): l1 keeps the first l1[i]
    sub-rows of row i, l2 the first l2[j] entries of each kept sub-row j, and so on."""
    if not isinstance(lengths, (list, tuple)) or len(lengths) != ragged_rank:
        raise ValueError(f"from_tensor: with ragged_rank={ragged_rank}, lengths must be a "
                         f"tuple of {ragged_rank} vectors of row lengths (one per ragged "
                         f"dimension), got {lengths!r}")
    values, nested = t, []
    for level, lens in enumerate(lengths):
        lens = math_ops.cast(convert_to_tensor(lens), dtypes.int64)
        if lens.shape.rank != 1 or lens.shape[0] != values.shape[0]:
            raise ValueError(f"from_tensor: lengths[{level}] must have one entry per row at "
                             f"that level ({values.shape[0]}), got shape {lens.shape}")
        mask = gather_ops.sequence_mask(lens, maxlen=values.shape[1])
        values = gather_ops.boolean_mask(values, mask)
        nested.append(lens)
    return RaggedTensor.from_nested_row_lengths(values, nested)


def to_sparse(rt):
    """`RaggedTensor.to_sparse`: a SparseTensor with one entry per value."""
    from tensorlite.framework.sparse_tensor import SparseTensor  # noqa: PLC0415
    flat = rt.flat_values
    indices, dense_shape = rops.RAGGED_TO_SPARSE(flat, *rt.nested_row_splits)
    return SparseTensor(indices, array_ops.reshape(flat, [-1]), dense_shape)


def from_sparse(st):
    """`RaggedTensor.from_sparse`: rows of an ordered, ragged-right rank-2 SparseTensor."""
    splits = rops.RAGGED_SPARSE_SPLITS(st.indices, st.dense_shape)
    return RaggedTensor.from_row_splits(st.values, splits, validate=False)
