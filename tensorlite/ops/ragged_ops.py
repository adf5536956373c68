"""Registry ops behind `tf.RaggedTensor`: row-partition arithmetic, to/from dense, row
reductions.

A ragged tensor is flat `values` plus int64 `row_splits` per ragged dimension. Moving values
(gathering rows, slicing rows, concatenating, tiling) is done by ops here that compute
*positions* (not differentiable: they are integer bookkeeping) followed by `tf.gather` on
the values, so every value movement is differentiable through GatherV2's own gradient. The
two ops that create or fold values (`RaggedTensorToTensor`, `RaggedSegmentReduce`) carry
their own gradients.

Example:
    >>> RAGGED_ROW_LENGTHS(tf.constant([0, 2, 2, 5], tf.int64)).numpy()
    array([2, 0, 3])
"""
import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.ops import gather_ops, math_ops

_I64 = np.int64


def _bad(op, message):
    return errors.InvalidArgumentError(None, None, f"{op}: {message}")


def _vec(dtype=dtypes.int64):
    return lambda *specs, **_: Spec((None,), dtype)


def _int_op(name, fwd, shape=None, multi_output=False, **rules):
    return register(name, fwd, grad=NOT_DIFFERENTIABLE, shape=shape or _vec(),
                    multi_output=multi_output, **rules)


# -- TensorFlow's ragged ops as SavedModel graphs spell them ------------------------------------
# (rule form: tensorlite/saved_model/function_runner.py)
def _partition_splits(partitions, types):
    """Row splits (int64 tensors) from RaggedTensorToTensor's row partition tensors."""
    splits, nrows = [], None
    for tensor, kind in zip(partitions, types):
        if kind == "FIRST_DIM_SIZE":
            nrows = math_ops.cast(tensor, dtypes.int64)
        elif kind == "ROW_SPLITS":
            splits.append(math_ops.cast(tensor, dtypes.int64))
        elif kind == "VALUE_ROWIDS":
            if splits:
                nrows = splits[-1][-1]
            rowids = math_ops.cast(tensor, dtypes.int64)
            splits.append(RAGGED_SPLITS_FROM_ROWIDS(rowids) if nrows is None else
                          RAGGED_SPLITS_FROM_ROWIDS_N(rowids, nrows))
        else:
            raise errors.UnimplementedError(None, None, f"RaggedTensorToTensor: row partition "
                                            f"type {kind} is not supported")
    return splits


def _import_to_dense(ins, a):
    types = a["row_partition_types"]
    shape = np.asarray(ins[0].numpy())
    shape = None if shape.ndim == 0 else [None if d < 0 else int(d) for d in shape]
    return RAGGED_TO_DENSE(ins[1], ins[2], *_partition_splits(ins[3:], types), shape=shape)


def _import_gather(ins, a):
    """RaggedGather of whole rows by a vector of indices (indices of rank > 1 add uniform
    dimensions, not supported)."""
    k = a["PARAMS_RAGGED_RANK"]
    splits, values, indices = ins[:k], ins[k], ins[k + 1]
    if indices.shape.rank != 1:
        raise errors.UnimplementedError(None, None, f"RaggedGather with indices of rank "
                                        f"{indices.shape.rank} (only a vector is supported)")
    out, positions = [], math_ops.cast(indices, dtypes.int64)
    for s in splits:
        new_splits, positions = RAGGED_GATHER_ROWS(math_ops.cast(s, dtypes.int64), positions)
        out.append(math_ops.cast(new_splits, a.get("Tsplits") or dtypes.int64))
    return out + [gather_ops.gather(values, positions)]


def _to_dense_tf(attrs, specs):
    """TensorFlow's op takes the shape as its first input (-1: the bounding size)."""
    shape = attrs["shape"]
    k = len(specs) - 2
    target = np.array(-1 if shape is None else [-1 if d is None else d for d in shape], _I64)
    return ("RaggedTensorToTensor", {
        "T": specs[0].dtype, "Tindex": dtypes.int64, "Tshape": dtypes.int64,
        "num_row_partition_tensors": k, "row_partition_types": ["ROW_SPLITS"] * k},
        [target, 0, 1] + list(range(2, 2 + k)))




def _splits_from_rowids_tf(attrs, specs):
    """TensorFlow's segment_ids_to_row_splits: [0] and the running sum of DenseBincount of
    the row ids over `nrows` bins (without nrows: the largest row id + 1, 0 when empty)."""
    i32, i64 = np.int32, np.int64

    def write(add, ins):
        nrows = attrs.get("nrows")
        if len(ins) > 1:  # RaggedSplitsFromRowIdsAndCount
            size = ins[1]
        elif nrows is not None and np.ndim(nrows) == 0 and nrows >= 0:
            size = np.array(int(nrows), i64)
        else:
            top = add("Max", [ins[0], np.array(0, i32)], T=dtypes.int64, Tidx=dtypes.int32,
                      keep_dims=False)
            plus = add("AddV2", [f"{top}:output:0", np.array(1, i64)], T=dtypes.int64)
            size = add("Maximum", [f"{plus}:z:0", np.array(0, i64)], T=dtypes.int64) + ":z:0"
        return [write_splits_from_rowids(add, ins[0], size)]
    return write


def write_splits_from_rowids(add, rowids, nrows):
    """The TensorFlow nodes (written by a tf rule's `add`) of int64 row splits from sorted
    int64 row ids over `nrows` rows: [0] and the running sum of DenseBincount; returns the
    splits' ref."""
    i32, i64 = np.int32, np.int64
    counts = add("DenseBincount", [rowids, nrows, np.zeros(0, i64)], Tidx=dtypes.int64,
                 T=dtypes.int64, binary_output=False)
    ends = add("Cumsum", [f"{counts}:output:0", np.array(0, i32)], T=dtypes.int64,
               Tidx=dtypes.int32, exclusive=False, reverse=False)
    splits = add("ConcatV2", [np.zeros(1, i64), f"{ends}:out:0", np.array(0, i32)],
                 N=2, T=dtypes.int64, Tidx=dtypes.int32)
    return f"{splits}:output:0"




def _uniform_splits_tf(attrs, specs):
    """Row splits every `length` values: Range(0, rows of the input + 1, length) (length 0:
    nrows + 1 zeros)."""
    i32, i64 = np.int32, np.int64
    length = attrs["length"]

    def write(add, ins):
        if length == 0:
            if attrs.get("nrows") is None:
                raise errors.UnimplementedError(None, None, "SavedModel export: "
                                                "from_uniform_row_length(0) without nrows")
            return [add("Identity", [np.zeros(attrs["nrows"] + 1, i64)],
                        T=dtypes.int64) + ":output:0"]
        shape = add("Shape", [ins[0]], T=specs[0].dtype, out_type=dtypes.int64)
        n = add("StridedSlice", [f"{shape}:output:0", np.array([0], i32),
                                 np.array([1], i32), np.array([1], i32)], T=dtypes.int64,
                Index=dtypes.int32, begin_mask=0, end_mask=0, ellipsis_mask=0,
                new_axis_mask=0, shrink_axis_mask=1)
        limit = add("AddV2", [f"{n}:output:0", np.array(1, i64)], T=dtypes.int64)
        return [add("Range", [np.array(0, i64), f"{limit}:z:0", np.array(length, i64)],
                    Tidx=dtypes.int64) + ":output:0"]
    return write



# TensorFlow's ragged reductions (reduce_sum/mean over a ragged dimension) are
# UnsortedSegmentSum over the row ids of the values: ops/segment_ops.py imports it


# -- row partitions ------------------------------------------------------------------------------
def check_splits(splits, nvals, op="RaggedTensor"):
    """Raises InvalidArgumentError unless `splits` is a valid partition of `nvals` values."""
    if splits.ndim != 1 or splits.size == 0:
        raise _bad(op, f"row_splits must be a non-empty vector, got shape {list(splits.shape)}")
    if splits[0] != 0:
        raise _bad(op, f"row_splits must start with 0, got {splits[0]}")
    if np.any(np.diff(splits) < 0):
        raise _bad(op, f"row_splits must be sorted in ascending order, got {splits.tolist()}")
    if splits[-1] != nvals:
        raise _bad(op, f"the last row_split ({splits[-1]}) must equal the number of values "
                   f"({nvals})")


def _validate_fwd(splits, values, values_are_splits):
    nvals = values.shape[0] - 1 if values_are_splits else values.shape[0]
    check_splits(splits, nvals, "RaggedTensor.from_row_splits")
    return splits.astype(_I64, copy=False)


def _lengths_to_splits(lengths):
    if np.any(lengths < 0):
        raise _bad("RaggedTensor.from_row_lengths", f"row_lengths must be non-negative, got "
                   f"{lengths.tolist()}")
    out = np.zeros(lengths.shape[0] + 1, dtype=_I64)
    np.cumsum(lengths, out=out[1:])
    return out


def _rowids_to_splits(rowids, nrows):
    if rowids.size and (np.any(np.diff(rowids) < 0) or rowids[0] < 0):
        raise _bad("RaggedTensor.from_value_rowids", f"value_rowids must be sorted and "
                   f"non-negative, got {rowids.tolist()}")
    n = int(nrows) if nrows is not None and np.ndim(nrows) == 0 and nrows >= 0 else \
        (int(rowids[-1]) + 1 if rowids.size else 0)
    if rowids.size and rowids[-1] >= n:
        raise _bad("RaggedTensor.from_value_rowids", f"nrows ({n}) must be greater than the "
                   f"largest value_rowid ({rowids[-1]})")
    return np.searchsorted(rowids, np.arange(n + 1), side="left").astype(_I64)


RAGGED_VALIDATE = _int_op(
    "RaggedValidateSplits", _validate_fwd, unsupported="tf onnx tflite batch tf_import")
RAGGED_ROW_LENGTHS = _int_op(
    "RaggedRowLengths", lambda s: np.diff(s).astype(_I64),
    unsupported="tf onnx tflite batch tf_import")
def _last(add, ref, begin, end, shrink):
    """StridedSlice [begin:end] of an int64 vector (shrink: the one element, a scalar)."""
    i32 = np.int32
    node = add("StridedSlice", [ref, np.array([begin], i32), np.array([end], i32),
                                np.array([1], i32)], T=dtypes.int64, Index=dtypes.int32,
               begin_mask=0, end_mask=1 if end == 0 else 0, ellipsis_mask=0,
               new_axis_mask=0, shrink_axis_mask=1 if shrink else 0)
    return f"{node}:output:0"


def _value_rowids_tf(attrs, specs):
    """TensorFlow has no op for a ragged tensor's value row ids (its Python computes them):
    the running sum of DenseBincount of the inner splits splits[1:-1] over nvals + 1 bins,
    without its last entry (a value's row is how many row ends are at or before it)."""
    i32, i64 = np.int32, np.int64

    def write(add, ins):
        nvals = _last(add, ins[0], -1, 0, True)
        size = add("AddV2", [nvals, np.array(1, i64)], T=dtypes.int64)
        inner = _last(add, ins[0], 1, -1, False)
        counts = add("DenseBincount", [inner, f"{size}:z:0", np.zeros(0, i64)],
                     Tidx=dtypes.int64, T=dtypes.int64, binary_output=False)
        ends = add("Cumsum", [f"{counts}:output:0", np.array(0, i32)], T=dtypes.int64,
                   Tidx=dtypes.int32, exclusive=False, reverse=False)
        return [_last(add, f"{ends}:out:0", 0, -1, False)]
    return write


RAGGED_VALUE_ROWIDS = _int_op(
    "RaggedValueRowIds", lambda s: np.repeat(np.arange(s.shape[0] - 1, dtype=_I64), np.diff(s)),
    unsupported="onnx tflite batch tf_import", tf=_value_rowids_tf, tf_outputs={})
RAGGED_SPLITS_FROM_LENGTHS = _int_op(
    "RaggedSplitsFromLengths", _lengths_to_splits, unsupported="tf onnx tflite batch tf_import")
RAGGED_SPLITS_FROM_ROWIDS = _int_op(
    "RaggedSplitsFromRowIds", _rowids_to_splits, unsupported="onnx tflite batch tf_import",
    tf=_splits_from_rowids_tf, tf_outputs={})
# nrows as a tensor input: a graph's row count follows its input (the batch size), where an
# attribute would be frozen at its traced value
RAGGED_SPLITS_FROM_ROWIDS_N = _int_op(
    "RaggedSplitsFromRowIdsAndCount", lambda rowids, nrows: _rowids_to_splits(rowids, nrows),
    unsupported="onnx tflite batch tf_import", tf=_splits_from_rowids_tf, tf_outputs={})
def _uniform_splits_fwd(x, length, nrows):
    nvals = x.shape[0]
    if length == 0:
        return np.zeros((nrows or 0) + 1, dtype=_I64)
    if nvals % length:
        raise _bad("RaggedTensor.from_uniform_row_length", f"{nvals} values do not split into "
                   f"rows of length {length}")
    return np.arange(0, nvals + 1, length, dtype=_I64)


RAGGED_UNIFORM_SPLITS = _int_op(
    "RaggedUniformSplits", _uniform_splits_fwd, unsupported="onnx tflite batch tf_import",
    tf=_uniform_splits_tf, tf_outputs={})


# -- positions (which values move where) --------------------------------------------------------
def _gather_rows_fwd(splits, indices):
    n = splits.shape[0] - 1
    idx = indices.reshape(-1).astype(_I64)
    bad = (idx < 0) | (idx >= n)
    if np.any(bad):
        raise _bad("RaggedGather", f"indices[{int(np.argmax(bad))}] = {idx[bad][0]} is not in "
                   f"[0, {n}); use row indices within the number of rows")
    starts, lengths = splits[idx], splits[idx + 1] - splits[idx]
    new_splits = _lengths_to_splits(lengths)
    positions = np.repeat(starts - new_splits[:-1], lengths) + np.arange(new_splits[-1])
    return new_splits, positions.astype(_I64)


def _row_slice_fwd(splits, start, stop, step):
    pieces = [np.arange(a, b, dtype=_I64)[slice(start, stop, step)]
              for a, b in zip(splits[:-1].tolist(), splits[1:].tolist())]
    new_splits = _lengths_to_splits(np.array([len(p) for p in pieces], dtype=_I64))
    return new_splits, (np.concatenate(pieces) if pieces else np.zeros(0, _I64))


def _column_fwd(splits, column):
    lengths = np.diff(splits)
    col = np.where(column < 0, lengths + column, column)
    bad = (col < 0) | (col >= lengths)
    if np.any(bad):
        row = int(np.argmax(bad))
        raise _bad("RaggedGetItem", f"index {column} is out of bounds for row {row} of length "
                   f"{lengths[row]}; slice the rows instead (rt[:, a:b]) to keep short rows")
    return (splits[:-1] + col).astype(_I64)


def _concat_rows_fwd(*splits_list):
    """axis=1 concatenation: row i of the result is row i of every input, in order."""
    offsets = np.cumsum([0] + [s[-1] for s in splits_list[:-1]])
    lengths = np.stack([np.diff(s) for s in splits_list], axis=1)
    new_splits = _lengths_to_splits(lengths.sum(axis=1))
    pieces = []
    for i in range(lengths.shape[0]):
        for s, off in zip(splits_list, offsets):
            pieces.append(np.arange(s[i], s[i + 1], dtype=_I64) + off)
    return new_splits, (np.concatenate(pieces) if pieces else np.zeros(0, _I64))


def _tile_rows_fwd(splits, rows, cols):
    """tile(rt, [rows, cols, ...]): every row repeated `cols` times inside itself, then
    the whole row list repeated `rows` times."""
    pieces, lengths = [], []
    for _ in range(rows):
        for a, b in zip(splits[:-1].tolist(), splits[1:].tolist()):
            pieces.append(np.tile(np.arange(a, b, dtype=_I64), cols))
            lengths.append((b - a) * cols)
    return (_lengths_to_splits(np.array(lengths, dtype=_I64)),
            np.concatenate(pieces) if pieces else np.zeros(0, _I64))


_PAIR = (lambda *s, **_: [Spec((None,), dtypes.int64), Spec((None,), dtypes.int64)])
# tf_import_opaque: the import rule computes with NumPy outside the registry
RAGGED_GATHER_ROWS = _int_op(
    "RaggedGatherRows", _gather_rows_fwd, _PAIR, True, unsupported="tf onnx tflite batch",
    tf_import={"RaggedGather": _import_gather}, tf_import_opaque=True,
    tf_outputs={"RaggedGather": (("output_nested_splits", "OUTPUT_RAGGED_RANK"),
                                 "output_dense_values")})
RAGGED_ROW_SLICE = _int_op(
    "RaggedRowSlice", _row_slice_fwd, _PAIR, True, unsupported="tf onnx tflite batch tf_import")
RAGGED_COLUMN = _int_op("RaggedColumn", _column_fwd, unsupported="tf onnx tflite batch tf_import")
RAGGED_CONCAT_ROWS = _int_op(
    "RaggedConcatRows", _concat_rows_fwd, _PAIR, True,
    unsupported="tf onnx tflite batch tf_import")
RAGGED_TILE_ROWS = _int_op(
    "RaggedTileRows", _tile_rows_fwd, _PAIR, True, unsupported="tf onnx tflite batch tf_import")


# -- to dense ------------------------------------------------------------------------------------
def dense_layout(values_shape, splits_list, shape):
    """(dense shape, outer position of each value row or -1 when cut off) for packing
    ragged values into a dense tensor of `shape` (None entries: the bounding size)."""
    nrows = splits_list[0].shape[0] - 1
    bounding = [nrows] + [int(np.max(np.diff(s), initial=0)) for s in splits_list] + \
        list(values_shape[1:])
    if shape is None:
        shape = bounding
    if len(shape) != len(bounding):
        raise ValueError(f"to_tensor: shape {list(shape)} must have rank {len(bounding)} "
                         f"(the ragged tensor's rank)")
    shape = [b if s is None or s == -1 else int(s) for s, b in zip(shape, bounding)]
    k = len(splits_list)
    for i, (want, have) in enumerate(zip(shape[k + 1:], values_shape[1:])):
        if want != have:
            raise _bad("RaggedTensorToTensor", f"shape {shape} has {want} in dimension "
                       f"{k + 1 + i}, but the ragged tensor's values have {have} there; only "
                       f"the rows and the ragged dimensions are padded or cut to `shape`, "
                       f"uniform dimensions must match")
    pos = np.arange(nrows, dtype=_I64)
    valid = pos < shape[0]
    for level, s in enumerate(splits_list):
        lengths = np.diff(s)
        rowids = np.repeat(np.arange(lengths.shape[0]), lengths)
        col = np.arange(s[-1], dtype=_I64) - s[:-1][rowids]
        width = shape[level + 1]
        valid = valid[rowids] & (col < width)
        pos = pos[rowids] * width + col
    return shape, np.where(valid, pos, -1), k


def _to_dense_fwd(values, default, *splits, shape):
    dense_shape, pos, k = dense_layout(values.shape, splits, shape)
    outer = int(np.prod(dense_shape[:k + 1], dtype=_I64))
    out = np.empty([outer] + dense_shape[k + 1:], dtype=values.dtype)
    out[...] = default
    keep = pos >= 0
    out[pos[keep]] = values[keep]
    return out.reshape(dense_shape)


def _to_dense_grad_fwd(g, values, default, *splits, shape):
    dense_shape, pos, k = dense_layout(values.shape, splits, shape)
    lead = g.shape[:g.ndim - len(dense_shape)]  # jacobian batch dimensions
    flat = g.reshape(lead + (-1,) + tuple(dense_shape[k + 1:]))
    gv = np.zeros(lead + values.shape, dtype=g.dtype)
    keep = pos >= 0
    nb = (slice(None),) * len(lead)
    gv[nb + (keep,)] = flat[nb + (pos[keep],)]
    filled = np.zeros(flat.shape[len(lead):], dtype=bool)
    filled[pos[keep]] = True
    gd = np.where(filled, 0, flat).reshape(lead + (-1,)).sum(axis=-1).astype(g.dtype)
    if default.ndim:
        gd = gd.reshape(lead + (1,) * default.ndim)
    return gv, gd.reshape(lead + default.shape)


def _to_dense_grad(g, ans, values, default, *splits, shape):
    gv, gd = RAGGED_TO_DENSE_GRAD(g, values, default, *splits, shape=shape)
    return [gv, gd] + [None] * len(splits)


def _to_dense_shape(values, default, *splits, shape):
    if shape is not None and all(d is not None and d != -1 for d in shape):
        return Spec(tuple(shape), values.dtype)
    return Spec((None,) * (len(splits) + len(values.shape)), values.dtype)


RAGGED_TO_DENSE = register("RaggedTensorToTensor", _to_dense_fwd, grad=_to_dense_grad,
                           shape=_to_dense_shape, unsupported="onnx tflite batch",
    tf_import=_import_to_dense, tf=_to_dense_tf, tf_outputs="result")
RAGGED_TO_DENSE_GRAD = register(
    "RaggedTensorToTensorGrad", _to_dense_grad_fwd, grad=None, multi_output=True,
    shape=lambda g, v, d, *s, shape: [v, d], unsupported="tf onnx tflite batch tf_import")


def _lengths_from_padding_fwd(x, padding):
    """Row lengths of a dense [rows, cols, ...] tensor with trailing `padding` dropped."""
    is_pad = x == padding
    if x.ndim > 2:
        is_pad = is_pad.reshape(x.shape[0], x.shape[1], -1).all(axis=2)
    not_pad = ~is_pad
    last = x.shape[1] - np.argmax(not_pad[:, ::-1], axis=1)
    return np.where(not_pad.any(axis=1), last, 0).astype(_I64)


RAGGED_LENGTHS_FROM_PADDING = _int_op(
    "RaggedLengthsFromPadding", _lengths_from_padding_fwd,
    unsupported="tf onnx tflite batch tf_import")


# -- row reductions --------------------------------------------------------------------------------
_IDENTITY = {"sum": 0, "prod": 1}
_UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
          "any": np.logical_or, "all": np.logical_and}


def _identity(reducer, dtype):
    if reducer in _IDENTITY:
        return _IDENTITY[reducer]
    if reducer in ("any", "all"):
        return reducer == "all"
    if dtype.kind == "f":  # TensorFlow's numeric_limits<T>::lowest() / max()
        return np.finfo(dtype).min if reducer == "max" else np.finfo(dtype).max
    info = np.iinfo(dtype)
    return info.min if reducer == "max" else info.max


def _segment_fwd(values, splits, reducer):
    nrows = splits.shape[0] - 1
    rowids = np.repeat(np.arange(nrows), np.diff(splits))
    out = np.full((nrows,) + values.shape[1:], _identity(reducer, values.dtype),
                  dtype=values.dtype)
    _UFUNC[reducer].at(out, rowids, values)
    return out


def _segment_grad(g, ans, values, splits, reducer):
    rowids = RAGGED_VALUE_ROWIDS(splits)
    spread = gather_ops.gather(g, rowids, axis=g._value.ndim - ans._value.ndim)
    if reducer == "sum":
        return spread, None
    if reducer == "prod":
        return math_ops.divide(math_ops.multiply(spread, gather_ops.gather(ans, rowids)),
                               values), None
    hit = math_ops.cast(math_ops.equal(values, gather_ops.gather(ans, rowids)), g.dtype)
    ties = RAGGED_SEGMENT_REDUCE(hit, splits, reducer="sum")
    return math_ops.multiply(spread, math_ops.divide(hit, gather_ops.gather(ties, rowids))), None


_SEGMENT_TF = {"sum": "UnsortedSegmentSum", "prod": "UnsortedSegmentProd",
               "max": "UnsortedSegmentMax", "min": "UnsortedSegmentMin"}


def _segment_tf(attrs, specs):
    """As TensorFlow's ragged reductions: UnsortedSegment<op>(values, value row ids, nrows)
    (any/all: none yet, TensorFlow casts them to a sum/product of ints)."""
    reducer = attrs["reducer"]
    if reducer not in _SEGMENT_TF:
        raise errors.UnimplementedError(None, None, f"SavedModel export: a ragged reduce_"
                                        f"{reducer} has no TensorFlow mapping yet")
    i64 = np.int64

    def write(add, ins):
        rowids = _value_rowids_tf(attrs, specs[1:])(add, [ins[1]])[0]
        shape = add("Shape", [ins[1]], T=dtypes.int64, out_type=dtypes.int64)
        n = _last(add, f"{shape}:output:0", 0, 1, True)
        nrows = add("Sub", [n, np.array(1, i64)], T=dtypes.int64)
        node = add(_SEGMENT_TF[reducer], [ins[0], rowids, f"{nrows}:z:0"], T=specs[0].dtype,
                   Tindices=dtypes.int64, Tnumsegments=dtypes.int64)
        return [f"{node}:output:0"]
    return write


RAGGED_SEGMENT_REDUCE = register(
    "RaggedSegmentReduce", _segment_fwd, grad=_segment_grad,
    shape=lambda v, s, reducer: Spec((None,) + tuple(v.shape[1:]), v.dtype), batchable=False,
    tf=_segment_tf, tf_outputs={},
    unsupported="onnx tflite batch tf_import")


# -- segment aggregation (reductions over an outer ragged axis, as TensorFlow's
# _ragged_segment_aggregate): rows of data grouped by a segment id per row -----------------------
def _positions_fwd(splits):
    """Each value's position in its row, and the longest row's length (a scalar)."""
    lengths = np.diff(splits)
    rowids = np.repeat(np.arange(lengths.shape[0]), lengths)
    return (np.arange(splits[-1], dtype=_I64) - splits[:-1][rowids],
            np.array(lengths.max(initial=0), dtype=_I64))


def _segment_layout_fwd(data_splits, ids, num_segments):
    """Output row splits when ragged data rows are aggregated by segment (each output row as
    long as its segment's longest data row), and each data value's output position."""
    lengths = np.diff(data_splits)
    out_lengths = np.zeros(int(num_segments), dtype=_I64)
    np.maximum.at(out_lengths, ids.astype(_I64), lengths)
    out_splits = _lengths_to_splits(out_lengths)
    start = out_splits[:-1][ids.astype(_I64)]
    return out_splits, (np.repeat(start - data_splits[:-1], lengths) +
                        np.arange(data_splits[-1], dtype=_I64))


def _segment_order_fwd(ids, num_segments, check_range=False):
    """Row splits of the segments and a stable order that groups the rows by segment."""
    ids = ids.astype(_I64)
    if check_range and ids.size and (ids.min() < 0 or ids.max() >= num_segments):
        bad = ids[(ids < 0) | (ids >= num_segments)][0]
        raise _bad("StackDynamicPartitions", f"partition {bad} is not in [0, "
                   f"{int(num_segments)}); partitions must be less than num_partitions")
    return (_lengths_to_splits(np.bincount(ids, minlength=int(num_segments))),
            np.argsort(ids, kind="stable").astype(_I64))


def _batch_positions_fwd(params_splits, index_splits, index_values):
    """gather(..., batch_dims=1): where each row's indices point into the params' values
    (out-of-range indices are an error; TensorFlow reads whatever lies there)."""
    nrows = params_splits.shape[0] - 1
    if index_splits.shape[0] - 1 != nrows:
        raise _bad("RaggedGather", f"batch_dims=1 needs as many index rows as params rows; got "
                   f"{index_splits.shape[0] - 1} and {nrows}")
    rowids = np.repeat(np.arange(nrows), np.diff(index_splits))
    lengths = np.diff(params_splits)[rowids]
    idx = index_values.astype(_I64)
    bad = (idx < 0) | (idx >= lengths)
    if np.any(bad):
        k = int(np.argmax(bad))
        raise _bad("RaggedGather", f"batch_dims=1: index {idx[k]} in row {rowids[k]} is not "
                   f"in [0, {lengths[k]}) (that row's length)")
    return params_splits[:-1][rowids] + idx


RAGGED_BATCH_POSITIONS = _int_op(
    "RaggedBatchGatherPositions", _batch_positions_fwd,
    unsupported="tf onnx tflite batch tf_import")
_SCALAR_PAIR = (lambda *s, **_: [Spec((None,), dtypes.int64), Spec((), dtypes.int64)])
RAGGED_POSITIONS = _int_op(
    "RaggedPositionsInRows", _positions_fwd, _SCALAR_PAIR, True,
    unsupported="tf onnx tflite batch tf_import")
RAGGED_SEGMENT_LAYOUT = _int_op(
    "RaggedSegmentLayout", _segment_layout_fwd, _PAIR, True,
    unsupported="tf onnx tflite batch tf_import")
RAGGED_SEGMENT_ORDER = _int_op(
    "RaggedSegmentOrder", _segment_order_fwd, _PAIR, True,
    unsupported="tf onnx tflite batch tf_import")


# -- sparse ---------------------------------------------------------------------------------------
def _to_sparse_fwd(flat_values, *splits):
    """Indices and dense shape of every flat value of a ragged tensor."""
    nvals = flat_values.shape[0]
    pos, cols = np.arange(nvals, dtype=_I64), []
    for s in reversed(splits):
        rowids = np.repeat(np.arange(s.shape[0] - 1, dtype=_I64), np.diff(s))[pos]
        cols.insert(0, pos - s[rowids])
        pos = rowids
    cols.insert(0, pos)
    idx = np.stack(cols, axis=1) if nvals else np.zeros((0, len(splits) + 1), _I64)
    inner = flat_values.shape[1:]
    if inner:
        grid = np.indices(inner).reshape(len(inner), -1).T
        idx = np.concatenate([np.repeat(idx, len(grid), axis=0),
                              np.tile(grid, (nvals, 1))], axis=1)
    dense = [splits[0].shape[0] - 1] + [int(np.max(np.diff(s), initial=0)) for s in splits] + \
        list(inner)
    return idx.astype(_I64), np.array(dense, dtype=_I64)


def _sparse_splits_fwd(indices, dense_shape):
    if indices.shape[1] != 2:
        raise _bad("RaggedTensor.from_sparse", f"the SparseTensor must have rank 2, got rank "
                   f"{indices.shape[1]}")
    rows, cols = indices[:, 0], indices[:, 1]
    splits = np.searchsorted(rows, np.arange(int(dense_shape[0]) + 1)).astype(_I64)
    expected = np.arange(rows.shape[0]) - splits[:-1][rows] if rows.size else cols
    if np.any(np.diff(rows) < 0) or np.any(cols != expected):
        raise _bad("RaggedTensor.from_sparse", "the SparseTensor must be ordered and "
                   "ragged-right (each row's columns 0, 1, ..., n-1); call tf.sparse.reorder "
                   "or pass a SparseTensor made from a ragged tensor")
    return splits


def _to_sparse_tf(attrs, specs):
    """TensorFlow's RaggedTensorToSparse takes the splits first and the flat values last,
    and also outputs the values (ours come from the flat values themselves)."""
    k = len(specs) - 1

    def write(add, ins):
        node = add("RaggedTensorToSparse", list(ins[1:]) + [ins[0]], RAGGED_RANK=k,
                   T=specs[0].dtype, Tsplits=specs[1].dtype)
        return [f"{node}:sparse_indices:0", f"{node}:sparse_dense_shape:0"]
    return write


def _import_to_sparse(ins, a):
    """TensorFlow's RaggedTensorToSparse(splits..., values): indices, values, dense shape."""
    k = a["RAGGED_RANK"]
    splits = [math_ops.cast(s, dtypes.int64) for s in ins[:k]]
    indices, dense_shape = RAGGED_TO_SPARSE(ins[k], *splits)
    from tensorlite.ops import array_ops  # noqa: PLC0415 - array_ops imports us
    return [indices, array_ops.reshape(ins[k], [-1]), dense_shape]


def _sparse_splits_tf(attrs, specs):
    """Row splits of an ordered 2-D SparseTensor, as TensorFlow's RaggedTensor.from_sparse:
    from the row ids indices[:, 0] over dense_shape[0] rows (TensorFlow checks the order
    with assertions; the graph trusts it)."""
    i32 = np.int32

    def write(add, ins):
        rows = add("StridedSlice", [ins[0], np.array([0, 0], i32), np.array([0, 1], i32),
                                    np.array([1, 1], i32)], T=dtypes.int64,
                   Index=dtypes.int32, begin_mask=1, end_mask=1, ellipsis_mask=0,
                   new_axis_mask=0, shrink_axis_mask=2)
        nrows = _last(add, ins[1], 0, 1, True)
        return [write_splits_from_rowids(add, f"{rows}:output:0", nrows)]
    return write


RAGGED_TO_SPARSE = _int_op(
    "RaggedTensorToSparse", _to_sparse_fwd,
    lambda flat, *splits: [Spec((None, len(splits) + len(flat.shape)), dtypes.int64),
                           Spec((len(splits) + len(flat.shape),), dtypes.int64)],
    True, unsupported="onnx tflite batch",
    tf=_to_sparse_tf, tf_import=_import_to_sparse,
    tf_outputs={"RaggedTensorToSparse": ("sparse_indices", "sparse_values",
                                         "sparse_dense_shape")})
RAGGED_SPARSE_SPLITS = _int_op(
    "RaggedSplitsFromSparse", _sparse_splits_fwd, unsupported="onnx tflite batch tf_import",
    tf=_sparse_splits_tf, tf_outputs={})


def _same_splits_fwd(a, b):
    if a.shape != b.shape or not np.array_equal(a, b):
        raise _bad("RaggedElementwise", f"the ragged operands have different row partitions "
                   f"(row_splits {a.tolist()} vs {b.tolist()}); elementwise ops need ragged "
                   f"tensors with the same row lengths")
    return a


RAGGED_SAME_SPLITS = _int_op(
    "RaggedAssertSameSplits", _same_splits_fwd, unsupported="tf onnx tflite batch tf_import")
