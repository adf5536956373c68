"""Ragged implementations of public functions: the one elementwise dispatch over flat values
(every elementwise op, by way of `tensorlite.ops.common.COMPOSITES`), `map_flat_values`,
row reductions, gather, concat, stack, tile, boolean_mask and friends.

Example:
    >>> rt = tf.ragged.constant([[1.0, 2.0], [], [3.0]])
    >>> (rt * 2 + 1).to_list()
    [[3.0, 5.0], [], [7.0]]
    >>> tf.reduce_mean(rt, axis=1).numpy()
    array([1.5, nan, 3. ], dtype=float32)
"""
import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.ops import array_ops, gather_ops, math_ops
from tensorlite.ops import ragged_ops as rops
from tensorlite.ragged.indexing import gather_rows, take
from tensorlite.ragged.ragged_tensor import RaggedTensor


# -- the elementwise dispatch -----------------------------------------------------------------
def _common_splits(rts):
    first = rts[0].nested_row_splits
    for other in rts[1:]:
        splits = other.nested_row_splits
        if len(splits) != len(first):
            raise ValueError(f"ragged operands have different ragged ranks ({len(first)} and "
                             f"{len(splits)}); convert one of them")
        for a, b in zip(first, splits):
            if a is not b:
                rops.RAGGED_SAME_SPLITS(a, b)
    return first


def _flatten_arg(a, template):
    """A non-ragged operand as something that lines up with `template.flat_values`, by
    TensorFlow's ragged broadcasting: its dimensions align with the template's from the
    right; against a ragged dimension it must have size 1, against the outer one 1 or the
    number of rows, against inner ones the usual rules."""
    if isinstance(a, RaggedTensor):
        return a.flat_values
    t = a if isinstance(a, Tensor) or not hasattr(a, "__len__") and not isinstance(
        a, np.ndarray) else convert_to_tensor(a, dtype_hint=template.dtype)
    rank = getattr(t, "shape", None)
    rank = rank.rank if rank is not None and hasattr(rank, "rank") else 0
    inner = template.flat_values.shape.rank - 1
    if rank <= inner:
        return a  # broadcasts against each value's inner dimensions
    full = template.ragged_rank + 1 + inner
    if rank > full:
        raise errors.InvalidArgumentError(
            None, None, f"cannot broadcast a dense operand of shape {t.shape} against a ragged "
            f"tensor of shape {template.shape}: it has more dimensions")
    dims = [1] * (full - rank) + t.shape.as_list()
    ragged_dims = dims[1:template.ragged_rank + 1]
    if any(d != 1 for d in ragged_dims):
        raise errors.InvalidArgumentError(
            None, None, f"cannot broadcast a dense operand of shape {t.shape} against a ragged "
            f"tensor of shape {template.shape}: its size along a ragged dimension must be 1; "
            f"convert it with tf.RaggedTensor.from_tensor or reshape it")
    nrows = int(template.nrows())
    if dims[0] not in (1, nrows):
        raise errors.InvalidArgumentError(
            None, None, f"cannot broadcast a dense operand of shape {t.shape} against a ragged "
            f"tensor of shape {template.shape}: {dims[0]} rows for {nrows}")
    per_row = array_ops.reshape(t, [dims[0]] + dims[template.ragged_rank + 1:])
    if dims[0] == 1:
        return array_ops.reshape(per_row, dims[template.ragged_rank + 1:])
    rows = template  # the outer row of each flat value, through every ragged level
    row_of = np.arange(nrows, dtype=np.int64)
    while isinstance(rows, RaggedTensor):
        row_of = row_of[rows.value_rowids()._value]
        rows = rows.values
    return gather_ops.gather(per_row, row_of)  # one entry per flat value


def map_flat_values(op, *args, **kwargs):
    """`tf.ragged.map_flat_values`: `op` applied to the flat values of the ragged arguments
    (all with the same row partitions); the result has their row partitions.

    >>> tf.ragged.map_flat_values(tf.ones_like, tf.ragged.constant([[5], [6, 7]])).to_list()
    [[1], [1, 1]]"""
    rts = [a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor)]
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, (list, tuple)):
            rts += [b for b in a if isinstance(b, RaggedTensor)]
    if not rts:
        return op(*args, **kwargs)
    _common_splits(rts)
    template = rts[0]

    def flat(a):
        if isinstance(a, (list, tuple)):
            return type(a)(flat(b) for b in a)
        return a.flat_values if isinstance(a, RaggedTensor) else a
    out = op(*[flat(a) for a in args], **{k: flat(v) for k, v in kwargs.items()})
    return template.with_flat_values(out)


def elementwise(fn, args):
    """An elementwise public function applied over flat values, dense operands broadcast."""
    rts = [a for a in args if isinstance(a, RaggedTensor)]
    _common_splits(rts)
    template = rts[0]
    out = fn(*[_flatten_arg(a, template) for a in args])
    return template.with_flat_values(out)


def _flat_only(fn):
    def apply(x, *args, **kwargs):
        return x.with_flat_values(fn(x.flat_values, *args, **kwargs))
    return apply


# -- reductions -----------------------------------------------------------------------------------
_DENSE = {"sum": math_ops.reduce_sum, "prod": math_ops.reduce_prod, "max": math_ops.reduce_max,
          "min": math_ops.reduce_min, "any": math_ops.reduce_any, "all": math_ops.reduce_all,
          "mean": math_ops.reduce_mean}


class Reducer:
    """A reduction beside the registry's numeric ones (tf.strings.reduce_join): `dense(x,
    axis)` reduces a dense tensor over one axis (all axes when None), `segment(values,
    splits)` each row of a ragged_rank-1 layout."""

    def __init__(self, name, dense, segment):
        self.name, self.dense, self.segment = name, dense, segment


def _dense(reducer, x, axis=None):
    if isinstance(reducer, Reducer):
        return reducer.dense(x, axis)
    return _DENSE[reducer](x, axis=axis)


def _drop_innermost(rt, new_flat):
    """`rt` without its innermost ragged dimension, with `new_flat` as flat values."""
    if rt.ragged_rank == 1:
        return new_flat
    return RaggedTensor(_drop_innermost(rt.values, new_flat), rt.row_splits, internal=True)


def _segment(rt, reducer):
    flat, splits = rt.flat_values, rt.nested_row_splits[-1]
    if isinstance(reducer, Reducer):
        return reducer.segment(flat, splits)
    if reducer != "mean":
        return rops.RAGGED_SEGMENT_REDUCE(flat, splits, reducer=reducer)
    total = rops.RAGGED_SEGMENT_REDUCE(flat, splits, reducer="sum")
    count = math_ops.cast(rops.RAGGED_ROW_LENGTHS(splits), flat.dtype)
    count = array_ops.reshape(count, [-1] + [1] * (flat.shape.rank - 1))
    # TensorFlow's ragged mean is sum / count with `/`: integers give float64 (float32 for
    # 8- and 16-bit ones), and an empty row is 0/0 = NaN
    with np.errstate(invalid="ignore", divide="ignore"):
        return math_ops.truediv(total, count)


def _segment_aggregate(data, ids, num_segments, reducer):
    """Rows of `data` (dense or ragged) reduced by segment id, as TensorFlow's
    _ragged_segment_aggregate: ragged rows of one segment are reduced position by position,
    the output row as long as the longest of them."""
    if isinstance(data, RaggedTensor):
        splits, positions = rops.RAGGED_SEGMENT_LAYOUT(data.row_splits, ids, num_segments)
        values = _segment_aggregate(data.values, positions, splits[-1], reducer)
        return RaggedTensor(values, splits, internal=True)
    splits, order = rops.RAGGED_SEGMENT_ORDER(ids, num_segments)
    return _segment(RaggedTensor(take(data, order), splits, internal=True), reducer)


def _columns(rt, reducer):
    """axis=0: reduce each column over the rows that have it."""
    if rt.ragged_rank != 1 or isinstance(reducer, Reducer):
        positions, longest = rops.RAGGED_POSITIONS(rt.row_splits)
        return _segment_aggregate(rt.values, positions, longest, reducer)
    if reducer == "mean":
        total = _columns(rt, "sum")
        ones = rt.with_flat_values(array_ops.ones_like(rt.flat_values))
        return math_ops.divide(total, _columns(ones, "sum"))
    flat = rt.flat_values
    identity = rops._identity(reducer, flat.dtype.as_numpy_dtype if not flat.dtype.is_bool
                              else np.dtype(bool))
    dense = rt.to_tensor(default_value=np.array(identity).astype(
        flat.dtype.as_numpy_dtype))
    return _DENSE[reducer](dense, axis=0)


def _reduce_one(rt, reducer, axis):
    if not isinstance(rt, RaggedTensor):
        return _dense(reducer, rt, axis)
    rank = rt.shape.rank
    axis = axis + rank if axis < 0 else axis
    if axis == 0:
        return _columns(rt, reducer)
    if axis == rt.ragged_rank:
        return _drop_innermost(rt, _segment(rt, reducer))
    if axis > rt.ragged_rank:
        return rt.with_flat_values(_dense(reducer, rt.flat_values, axis - rt.ragged_rank))
    if axis == 1:  # an outer ragged axis: each row's sub-rows reduced column by column
        return _segment_aggregate(rt.values, rt.value_rowids(), rt.nrows(), reducer)
    return rt.with_values(_reduce_one(rt.values, reducer, axis - 1))


def reducer_fn(reducer):
    def reduce(input_tensor, axis=None, keepdims=False, name=None):
        rt = input_tensor
        rank = rt.shape.rank
        if axis is None and not keepdims:
            return _dense(reducer, rt.flat_values)
        axes = range(rank) if axis is None else [int(a) for a in np.atleast_1d(np.asarray(axis))]
        axes = sorted({a + rank if a < 0 else a for a in axes}, reverse=True)
        out = rt
        for a in axes:
            out = _reduce_one(out, reducer, a)
        for a in reversed(axes) if keepdims else ():  # TF: expand_dims at each reduced axis
            out = expand_dims(out, a) if isinstance(out, RaggedTensor) else \
                array_ops.expand_dims(out, a)
        return out
    reduce.__name__ = f"reduce_{getattr(reducer, 'name', reducer)}"
    return reduce


# -- structure ops --------------------------------------------------------------------------------
def _as_ragged(x, ragged_rank=1):
    if isinstance(x, RaggedTensor):
        return x
    return RaggedTensor.from_tensor(convert_to_tensor(x), ragged_rank=ragged_rank)


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """`tf.gather` with ragged params or ragged indices, any `axis` and `batch_dims` as
    TensorFlow's ragged gather reduces them: batch dimensions peel one row partition at a
    time, an axis inside the rows gathers in each row, `batch_dims=1` gathers within each
    row (an index past a row's end is InvalidArgumentError; TensorFlow reads the next row).

    >>> tf.gather(tf.ragged.constant([[1, 2], [3]]), [[1, 0], [0]], batch_dims=1).to_list()
    [[2, 1], [3]]"""
    params, indices = (x if isinstance(x, RaggedTensor) or hasattr(x, "shape") else
                       convert_to_tensor(x) for x in (params, indices))  # a Variable stays
    rank = params.shape.rank
    batch_dims = int(batch_dims)
    if batch_dims < 0:
        batch_dims += indices.shape.rank
    axis = batch_dims if axis is None else int(axis) + rank if int(axis) < 0 else int(axis)
    if not batch_dims <= axis < rank:
        raise ValueError(f"tf.gather: axis {axis} must be in [batch_dims={batch_dims}, "
                         f"rank of params={rank})")
    return _gather(params, indices, axis, batch_dims)


def _gather(params, indices, axis, batch_dims):
    if not isinstance(params, RaggedTensor) and not isinstance(indices, RaggedTensor):
        return gather_ops.gather(params, indices, axis=axis, batch_dims=batch_dims)
    if batch_dims > 1:  # params[i] with indices[i]: one row partition less on both
        p, i = _as_ragged(params), _as_ragged(indices)
        return p.with_values(_gather(p.values, i.values, axis - 1, batch_dims - 1))
    if batch_dims == 1 and axis > 1:  # each value row of params[i] takes indices[i]
        p = _as_ragged(params)
        return _gather(p, p.with_values(gather(indices, p.value_rowids())), axis, 2)
    if batch_dims == 1:
        return _batch_gather(params, indices)
    if axis > 1:  # the same gather inside every row
        p = _as_ragged(params)
        return p.with_values(_gather(p.values, indices, axis - 1, 0))
    if axis == 1:  # the indices for every row: a batch gather of them repeated
        p = _as_ragged(params)
        if isinstance(indices, RaggedTensor):
            every_row = RaggedTensor.from_uniform_row_length(
                _concat0([indices] * len(p)), indices.nrows())
        else:
            every_row = array_ops.tile(array_ops.expand_dims(indices, 0),
                                       [len(p)] + [1] * indices.shape.rank)
        return _batch_gather(p, every_row)
    if isinstance(indices, RaggedTensor):
        if isinstance(params, RaggedTensor):  # rows of params, nested like the indices
            rows = gather(params, indices.flat_values)
            for splits in reversed(indices.nested_row_splits):
                rows = RaggedTensor(rows, splits, internal=True)
            return rows
        return indices.with_flat_values(gather_ops.gather(params, indices.flat_values))
    idx = math_ops.cast(convert_to_tensor(indices), dtypes.int64)
    if idx.shape.rank == 0:
        return params[idx]
    rows = gather_rows(params, array_ops.reshape(idx, [-1]))
    if idx.shape.rank == 1:
        return rows
    for n in reversed(idx.shape.as_list()[1:]):
        rows = RaggedTensor.from_uniform_row_length(rows, n)
    return rows


def _batch_gather(params, indices):
    """gather(params, indices, batch_dims=1): row i of the result is params[i] gathered at
    indices[i]; ragged like the indices (dense [B, k] indices give [B, k, ...])."""
    p = _as_ragged(params)
    if isinstance(indices, RaggedTensor):
        if indices.ragged_rank > 1:  # rows of indices nested deeper: params rows repeated
            repeated = gather(p, indices.value_rowids())
            return indices.with_values(_batch_gather(repeated, indices.values))
        splits, flat = indices.row_splits, indices.values
    else:
        idx = convert_to_tensor(indices)
        if idx.shape.rank < 2:
            raise ValueError(f"tf.gather(batch_dims=1): indices must have rank >= 2 (a row "
                             f"of indices per params row), got shape {idx.shape}")
        per_row = int(np.prod(idx.shape.as_list()[1:]))
        splits = convert_to_tensor(np.arange(idx.shape[0] + 1, dtype=np.int64) * per_row)
        flat = array_ops.reshape(idx, [-1])
    positions = rops.RAGGED_BATCH_POSITIONS(p.row_splits, splits,
                                            math_ops.cast(flat, dtypes.int64))
    values = take(p.values, positions)
    if isinstance(indices, RaggedTensor):
        return RaggedTensor.from_row_splits(values, indices.row_splits, validate=False)
    if isinstance(values, RaggedTensor):
        for n in reversed(idx.shape.as_list()[1:]):
            values = RaggedTensor.from_uniform_row_length(values, n)
        return values
    return array_ops.reshape(values, idx.shape.as_list() + values.shape.as_list()[1:])


def _concat0(items):
    if not isinstance(items[0], RaggedTensor):
        return array_ops.concat(items, 0)
    splits, offset = [items[0].row_splits], items[0].row_splits[-1:]
    for rt in items[1:]:
        splits.append(math_ops.add(rt.row_splits[1:], offset))
        offset = math_ops.add(offset, rt.row_splits[-1:])
    return RaggedTensor(_concat0([rt.values for rt in items]), array_ops.concat(splits, 0),
                        internal=True)


def concat(values, axis, name=None):
    """`tf.concat` of ragged (and dense) tensors along axis 0 or 1."""
    items = [_as_ragged(v) for v in values]
    ranks = {rt.ragged_rank for rt in items}
    if len(ranks) != 1:
        raise ValueError(f"tf.concat: ragged inputs have different ragged ranks {sorted(ranks)}")
    axis = int(axis) + items[0].shape.rank if int(axis) < 0 else int(axis)
    if axis == 0:
        return _concat0(items)
    if axis == 1:
        nrows = {len(rt) for rt in items}
        if len(nrows) != 1:
            raise ValueError(f"tf.concat(axis=1): inputs have different numbers of rows "
                             f"{sorted(nrows)}")
        splits, positions = rops.RAGGED_CONCAT_ROWS(*[rt.row_splits for rt in items])
        return RaggedTensor(take(_concat0([rt.values for rt in items]), positions), splits,
                            internal=True)
    # an inner axis: rows must line up (same row splits); concatenate inside the values
    for rt in items[1:]:
        rops.RAGGED_SAME_SPLITS(items[0].row_splits, rt.row_splits)
    values = [rt.values for rt in items]
    inner = concat(values, axis - 1) if isinstance(values[0], RaggedTensor) else \
        array_ops.concat(values, axis - 1)
    return RaggedTensor(inner, items[0].row_splits, internal=True)


def stack(values, axis=0, name=None):
    """`tf.stack` of ragged tensors: axis 0 adds an outer dimension, axis 1 pairs rows.
    Dense vectors of different lengths stack along axis 0 into the rows of a ragged
    tensor (`tf.ragged.stack([[1, 2], [3]])`)."""
    axis = int(axis)
    if axis in (0, -2) and values and not any(isinstance(v, RaggedTensor) for v in values):
        dense = [convert_to_tensor(v) for v in values]
        if all(d.shape.rank == 1 for d in dense):
            lengths = np.array([d.shape[0] for d in dense], np.int64)
            return RaggedTensor.from_row_lengths(array_ops.concat(dense, 0), lengths,
                                                 validate=False)
    items = [_as_ragged(v) for v in values]
    if axis == 0:
        outer = np.cumsum([0] + [len(rt) for rt in items]).astype(np.int64)
        return RaggedTensor.from_row_splits(_concat0(items), outer, validate=False)
    axis = axis + items[0].shape.rank + 1 if axis < 0 else axis
    return concat([expand_dims(rt, axis) for rt in items], axis=axis)


def expand_dims(input, axis, name=None):  # noqa: A002 - TF's argument name
    rt = input
    axis = int(axis)
    axis = axis + rt.shape.rank + 1 if axis < 0 else axis
    if axis == 0:
        return RaggedTensor.from_row_splits(rt, np.array([0, len(rt)], np.int64),
                                            validate=False)
    if axis == 1:
        return RaggedTensor.from_row_splits(rt, np.arange(len(rt) + 1, dtype=np.int64),
                                            validate=False)
    values = rt.values  # axis > 1: a new dimension inside each row's values
    inner = expand_dims(values, axis - 1) if isinstance(values, RaggedTensor) else \
        array_ops.expand_dims(values, axis - 1)
    return RaggedTensor(inner, rt.row_splits, internal=True)


def tile(input, multiples, name=None):  # noqa: A002
    rt = input
    m = [int(v) for v in np.asarray(multiples).reshape(-1)]
    if len(m) != rt.shape.rank:
        raise ValueError(f"tf.tile: multiples {m} must have one entry per dimension of the "
                         f"ragged tensor (rank {rt.shape.rank})")
    values = rt.values
    if any(v != 1 for v in m[2:]):  # inner axes first: each value row tiled (recursively)
        values = tile(values, [1] + m[2:]) if isinstance(values, RaggedTensor) else \
            array_ops.tile(values, [1] + m[2:])
    splits, positions = rops.RAGGED_TILE_ROWS(rt.row_splits, rows=m[0], cols=m[1])
    return RaggedTensor(take(values, positions), splits, internal=True)


def boolean_mask(tensor, mask, axis=None, name=None):
    """`tf.boolean_mask` (`tf.ragged.boolean_mask`) of a ragged tensor by a dense row mask
    or a ragged mask: a mask of the data's shape drops single values, a shorter ragged mask
    drops whole sub-rows (the mask's row partitions must be the data's outer ones)."""
    if axis not in (None, 0):
        raise ValueError("tf.boolean_mask of a ragged tensor masks from axis 0 (TensorFlow's "
                         "ragged boolean_mask has no axis); pass a ragged mask of the data's "
                         "outer shape to mask inner dimensions")
    if isinstance(mask, RaggedTensor):
        if not isinstance(tensor, RaggedTensor) or tensor.ragged_rank < mask.ragged_rank:
            raise ValueError("tf.boolean_mask with a ragged mask needs ragged data of at "
                             "least the mask's ragged rank")
        rops.RAGGED_SAME_SPLITS(tensor.row_splits, mask.row_splits)
        if mask.ragged_rank > 1:  # mask inside each row
            return RaggedTensor(boolean_mask(tensor.values, mask.values), tensor.row_splits,
                                internal=True)
        keep = mask.values
        lengths = rops.RAGGED_SEGMENT_REDUCE(math_ops.cast(keep, dtypes.int64),
                                             mask.row_splits, reducer="sum")
        kept = take(tensor.values, array_ops.reshape(math_ops.where(keep), [-1]))
        return RaggedTensor.from_row_lengths(kept, lengths, validate=False)
    if not isinstance(tensor, RaggedTensor):  # dense data, dense mask: tf.boolean_mask's
        return gather_ops.boolean_mask(tensor, mask)
    rows = array_ops.reshape(math_ops.where(convert_to_tensor(mask)), [-1])
    return gather_rows(tensor, rows)


def reverse(tensor, axis, name=None):
    """`tf.reverse` of a ragged tensor: axis 0 reverses the rows' order, a ragged axis each
    row's entries, a uniform inner axis the flat values'."""
    from tensorlite.ops.common import int_list  # noqa: PLC0415
    rt = tensor
    rank = rt.shape.rank
    for a in int_list(axis, "axis"):
        if not -rank <= a < rank:
            raise errors.InvalidArgumentError(
                None, None, f"ReverseV2: axis {a} is out of range for a ragged tensor of rank "
                f"{rank}")
        rt = _reverse_one(rt, a % rank)
    return rt


def _reverse_one(rt, axis):
    if axis == 0:
        return gather_rows(rt, np.arange(int(rt.nrows()) - 1, -1, -1, dtype=np.int64))
    if axis > rt.ragged_rank:  # a uniform dimension of the flat values
        return rt.with_flat_values(array_ops.reverse(rt.flat_values, [axis - rt.ragged_rank]))
    if axis > 1:  # deeper: inside each row's values
        return RaggedTensor(_reverse_one(rt.values, axis - 1), rt.row_splits, internal=True)
    splits = rt.row_splits._value
    order = np.concatenate([np.arange(e - 1, s - 1, -1) for s, e in
                            zip(splits[:-1], splits[1:])] or [np.zeros(0, np.int64)])
    values = rt.values
    picked = gather_rows(values, order.astype(np.int64)) if isinstance(values, RaggedTensor) \
        else gather_ops.gather(values, order.astype(np.int64))
    return RaggedTensor(picked, rt.row_splits, internal=True)


def reshape(tensor, shape, name=None):
    """`tf.reshape` of a RaggedTensor, as TF dispatches it: its values (row by row, in
    order) reshaped to `shape`; the load-text tutorial flattens batches of tokens with
    `tf.reshape(toks, [-1])`."""
    return array_ops.reshape(tensor.flat_values, shape)


FUNCTIONS = {
    "Sum": reducer_fn("sum"), "Mean": reducer_fn("mean"), "Max": reducer_fn("max"),
    "Min": reducer_fn("min"), "Prod": reducer_fn("prod"), "Any": reducer_fn("any"),
    "All": reducer_fn("all"),
    "gather": gather, "concat": concat, "stack": stack, "tile": tile,
    "boolean_mask": boolean_mask, "expand_dims": expand_dims, "reverse": reverse,
    "cast": _flat_only(math_ops.cast), "zeros_like": _flat_only(array_ops.zeros_like),
    "ones_like": _flat_only(array_ops.ones_like), "reshape": reshape,
}
