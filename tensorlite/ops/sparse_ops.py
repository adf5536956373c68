"""The ops of `tf.sparse` on SparseTensor (`framework.sparse_tensor`): conversions to and from
dense, and the sparse guide's operations: add, sparse_dense_matmul, concat, slice, transpose,
map_values, reduce_sum, reduce_max.

Index bookkeeping is NumPy on the (constant) indices; values go through differentiable
ops (gather, concat, segment sums, `to_dense`'s scatter), so gradients flow to `values`.

Example:
    >>> st = tf.sparse.SparseTensor(indices=[[0, 1], [2, 0]], values=[5, 7], dense_shape=[3, 2])
    >>> tf.sparse.to_dense(st).numpy().tolist()
    [[0, 5], [0, 0], [7, 0]]
"""
import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import Spec, register
from tensorlite.framework.tensor import wrap
from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.ops import array_ops, gather_ops, math_ops, segment_ops
from tensorlite.ops import sparse_dispatch  # noqa: F401 - tf.cast, tf.math.abs, ... take one


def batch(items):
    """SparseTensors of one rank stacked along a new first dimension (tf.data's batch):
    the dense shape is the largest of theirs in each dimension."""
    shapes = [_shape_of(_sparse(t, "batch")) for t in items]
    if len({len(sh) for sh in shapes}) != 1:
        raise errors.InvalidArgumentError(None, None, f"batch: SparseTensor elements have "
                                          f"different ranks {sorted({len(sh) for sh in shapes})}")
    dense = [len(items)] + [max(d) for d in zip(*shapes)] if shapes[0] else [len(items)]
    idx = [np.concatenate([np.full((len(t.indices._value), 1), k, np.int64),
                           t.indices._value], 1) for k, t in enumerate(items)]
    return _from_parts(np.concatenate(idx), array_ops.concat([t.values for t in items], 0),
                       dense)


def _check_indices(sp, op_name):
    """TF's validate_indices: in bounds, lexicographically sorted, no repeats."""
    idx, shape = sp.indices._value, sp.dense_shape._value
    bad = np.nonzero(np.any((idx < 0) | (idx >= shape), axis=1))[0]
    if bad.size:
        k = int(bad[0])
        raise errors.InvalidArgumentError(
            None, None, f"{op_name}: indices[{k}] = {idx[k].tolist()} is out of bounds: need "
            f"0 <= index < {shape.tolist()}")
    if len(idx) > 1:
        strides = np.cumprod(np.concatenate([shape[1:], [1]])[::-1])[::-1]
        lin = idx @ strides
        step = np.diff(lin)
        if np.any(step <= 0):
            k = int(np.nonzero(step <= 0)[0][0]) + 1
            what = "is repeated" if step[k - 1] == 0 else "is out of order"
            raise errors.InvalidArgumentError(
                None, None, f"{op_name}: indices[{k}] = {idx[k].tolist()} {what}. Many sparse "
                f"ops require sorted indices; use tf.sparse.reorder to sort them")


def _to_dense_fwd(indices, dense_shape, values, default):
    out = np.full(tuple(int(d) for d in dense_shape), default[()], dtype=values.dtype)
    if len(indices):
        out[tuple(indices.T)] = values
    return out


def _to_dense_grad(g, ans, indices, dense_shape, values, default):
    rank = len(ans._value.shape)
    picked = execute(gather_ops.GATHER_ND, (g, indices), {"batch_dims": 0, "rank": rank})
    from tensorlite.ops.math_ops import reduce_sum, subtract  # noqa: PLC0415
    return None, None, picked, subtract(reduce_sum(g), reduce_sum(picked))


# One op (TensorFlow's SparseToDense), so a traced graph computes the dense shape from the
# SparseTensor it meets instead of freezing the traced one.
SPARSE_TO_DENSE = register(
    "SparseToDense", _to_dense_fwd, grad=_to_dense_grad,
    shape=lambda i, shape, v, d: Spec((None,) * (shape.shape[0] or 0), v.dtype),
    tf=lambda a, specs: ("SparseToDense", {"validate_indices": False, "T": specs[2].dtype,
                                           "Tindices": specs[0].dtype}, [0, 1, 2, 3]),
    tf_outputs="dense",
    tf_import=lambda ins, a: SPARSE_TO_DENSE(math_ops.cast(ins[0], "int64"),
                                             math_ops.cast(ins[1], "int64"), ins[2], ins[3]),
    unsupported="onnx tflite batch")


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """`tf.sparse.to_dense`: the dense tensor, `default_value` (0 or b'') where unset."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"tf.sparse.to_dense: expected a SparseTensor, got "
                        f"{type(sp_input).__name__}")
    if validate_indices:
        _check_indices(sp_input, "SparseToDense")
    dt = sp_input.dtype
    if default_value is None:
        default_value = b"" if dt.is_string else np.zeros((), dt.as_numpy_dtype)
    default = convert_to_tensor(default_value, dtype=dt)
    return SPARSE_TO_DENSE(sp_input.indices, sp_input.dense_shape, sp_input.values, default)


def from_dense(tensor, name=None):
    """`tf.sparse.from_dense`: the nonzero (non-empty) entries of a dense tensor."""
    t = convert_to_tensor(tensor)
    arr = t._value
    mask = arr != b"" if t.dtype.is_string else arr != 0
    idx = wrap(np.argwhere(mask).astype(np.int64).reshape(-1, arr.ndim))
    values = gather_ops.gather_nd(t, idx) if arr.ndim else wrap(arr[mask])  # differentiable
    return SparseTensor(idx, values, wrap(np.array(arr.shape, dtype=np.int64)))


def reorder(sp_input, name=None):
    """`tf.sparse.reorder`: the same entries in row-major (lexicographic) index order."""
    idx = _sparse(sp_input, "tf.sparse.reorder").indices._value
    order = np.lexsort(idx.T[::-1]) if len(idx) else np.zeros(0, dtype=np.int64)
    return SparseTensor(wrap(idx[order]), gather_ops.gather(sp_input.values, wrap(order)),
                        sp_input.dense_shape)


def _shape_of(sp):
    return tuple(int(d) for d in sp.dense_shape._value)


def _sparse(x, op_name):
    if not isinstance(x, SparseTensor):
        raise TypeError(f"{op_name}: expected a SparseTensor, got {type(x).__name__}")
    return x


def _from_parts(indices, values, shape):
    return SparseTensor(wrap(np.asarray(indices, np.int64).reshape(-1, len(shape))), values,
                        wrap(np.asarray(shape, np.int64)))


def map_values(op, *args, **kwargs):
    """`tf.sparse.map_values`: op applied to the values of the SparseTensor arguments
    (which must share their indices and shape); other arguments are passed as they are."""
    from tensorlite.framework import nest  # noqa: PLC0415
    sparse = [a for a in nest.flatten([list(args), kwargs]) if isinstance(a, SparseTensor)]
    if not sparse:
        raise ValueError("tf.sparse.map_values: no SparseTensor among the arguments")
    first = sparse[0]
    for other in sparse[1:]:
        if _shape_of(other) != _shape_of(first) or not np.array_equal(
                other.indices._value, first.indices._value):
            raise ValueError("tf.sparse.map_values: the SparseTensor arguments must have the "
                             "same indices and dense_shape")

    def values_of(x):
        return x.values if isinstance(x, SparseTensor) else x
    out = op(*[values_of(a) for a in args], **{k: values_of(v) for k, v in kwargs.items()})
    return SparseTensor(first.indices, out, first.dense_shape)


def add(a, b, threshold=0, name=None):
    """`tf.sparse.add`: of two SparseTensors a SparseTensor (entries at the same index
    summed; sums with magnitude below `threshold` dropped); with a dense operand, the dense
    sum."""
    if not isinstance(a, SparseTensor) or not isinstance(b, SparseTensor):
        sp, dense = (a, b) if isinstance(a, SparseTensor) else (b, a)
        return math_ops.add(to_dense(_sparse(sp, "tf.sparse.add"), validate_indices=False),
                            dense)
    shape = _shape_of(a)
    if _shape_of(b) != shape:
        raise errors.InvalidArgumentError(None, None, f"tf.sparse.add: dense shapes differ: "
                                          f"{list(shape)} and {list(_shape_of(b))}")
    idx = np.concatenate([a.indices._value, b.indices._value])
    values = array_ops.concat([a.values, math_ops.cast(b.values, a.dtype)], 0)
    if not len(idx):
        return a
    lin = np.ravel_multi_index(tuple(idx.T), shape) if shape else np.zeros(len(idx), np.intp)
    uniq, where = np.unique(lin, return_inverse=True)
    summed = segment_ops.unsorted_segment_sum(values, wrap(where.astype(np.int64)), len(uniq))
    out_idx = np.stack(np.unravel_index(uniq, shape), 1) if shape else np.zeros((len(uniq), 0))
    thresh = float(np.asarray(getattr(threshold, "_value", threshold)))
    if thresh > 0:
        keep = np.nonzero(np.abs(summed._value) >= thresh)[0]
        out_idx = out_idx[keep]
        summed = gather_ops.gather(summed, wrap(keep.astype(np.int64)))
    return _from_parts(out_idx, summed, shape)


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """`tf.sparse.sparse_dense_matmul`: a SparseTensor (either operand) times a dense
    matrix; a dense result."""
    a_dense = to_dense(sp_a, validate_indices=False) if isinstance(sp_a, SparseTensor) else sp_a
    b_dense = to_dense(b, validate_indices=False) if isinstance(b, SparseTensor) else b
    return math_ops.matmul(a_dense, b_dense, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


def concat(axis, sp_inputs, expand_nonconcat_dims=False, name=None, concat_dim=None):
    """`tf.sparse.concat`: SparseTensors joined along `axis` (other dimensions must agree
    unless `expand_nonconcat_dims`, which takes their largest)."""
    axis = concat_dim if concat_dim is not None else axis
    inputs = [_sparse(x, "tf.sparse.concat") for x in sp_inputs]
    if not inputs:
        raise ValueError("tf.sparse.concat: sp_inputs is empty")
    shapes = [_shape_of(x) for x in inputs]
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        raise errors.InvalidArgumentError(None, None, f"tf.sparse.concat: ranks differ: "
                                          f"{[list(s) for s in shapes]}")
    axis = int(axis) + rank if int(axis) < 0 else int(axis)
    others = {tuple(d for k, d in enumerate(s) if k != axis) for s in shapes}
    if len(others) > 1 and not expand_nonconcat_dims:
        raise errors.InvalidArgumentError(
            None, None, f"tf.sparse.concat: the shapes {[list(s) for s in shapes]} differ "
            f"outside axis {axis}; pass expand_nonconcat_dims=True to take the largest")
    out_shape = [max(s[k] for s in shapes) for k in range(rank)]
    out_shape[axis] = sum(s[axis] for s in shapes)
    parts, offset = [], 0
    for x, s in zip(inputs, shapes):
        idx = x.indices._value.copy()
        idx[:, axis] += offset
        parts.append(idx)
        offset += s[axis]
    joined = _from_parts(np.concatenate(parts), array_ops.concat([x.values for x in inputs], 0),
                         out_shape)
    return reorder(joined)


def slice(sp_input, start, size, name=None):  # noqa: A001 - TF's name
    """`tf.sparse.slice`: the entries in [start, start + size), re-indexed from `start`."""
    sp = _sparse(sp_input, "tf.sparse.slice")
    shape = np.array(_shape_of(sp), np.int64)
    start = np.asarray(getattr(start, "_value", start), np.int64).reshape(-1)
    size = np.asarray(getattr(size, "_value", size), np.int64).reshape(-1)
    if len(start) != len(shape) or len(size) != len(shape) or np.any(start < 0) or \
            np.any(size < 0):
        raise errors.InvalidArgumentError(
            None, None, f"tf.sparse.slice: start {start.tolist()} and size {size.tolist()} "
            f"must be non-negative, one entry per dimension of {shape.tolist()}")
    end = np.minimum(start + size, shape)
    idx = sp.indices._value
    keep = np.nonzero(np.all((idx >= start) & (idx < end), axis=1))[0]
    return _from_parts(idx[keep] - start, gather_ops.gather(sp.values, wrap(keep)),
                       np.maximum(end - start, 0))


def transpose(sp_input, perm=None, name=None):
    """`tf.sparse.transpose`: dimensions permuted (reversed by default), indices re-sorted."""
    sp = _sparse(sp_input, "tf.sparse.transpose")
    shape = _shape_of(sp)
    perm = list(range(len(shape)))[::-1] if perm is None else \
        [int(p) for p in np.asarray(getattr(perm, "_value", perm)).reshape(-1)]
    if sorted(perm) != list(range(len(shape))):
        raise errors.InvalidArgumentError(None, None, f"tf.sparse.transpose: perm {perm} is "
                                          f"not a permutation of {len(shape)} dimensions")
    return reorder(_from_parts(sp.indices._value[:, perm], sp.values,
                               [shape[p] for p in perm]))


def _reduce(kind, sp_input, axis, keepdims, output_is_sparse):
    sp = _sparse(sp_input, f"tf.sparse.reduce_{kind}")
    if kind == "sum":
        dense, reduce = to_dense(sp, validate_indices=False), math_ops.reduce_sum
    else:  # TF's sparse maximum looks at the stored values only
        dt = sp.dtype.as_numpy_dtype
        lowest = -np.inf if np.issubdtype(dt, np.floating) else np.iinfo(dt).min
        dense = to_dense(sp, default_value=np.asarray(lowest, dt), validate_indices=False)
        reduce = math_ops.reduce_max
    out = reduce(dense, axis=axis, keepdims=bool(keepdims))
    return from_dense(out) if output_is_sparse else out


def reduce_sum(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """`tf.sparse.reduce_sum`: a dense sum (a SparseTensor with output_is_sparse)."""
    return _reduce("sum", sp_input, axis, keepdims, output_is_sparse)


def reduce_max(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """`tf.sparse.reduce_max`: the largest stored value (implicit zeros are not values):
    `reduce_max(from_dense([-5, 0, -3]))` is -3."""
    return _reduce("max", sp_input, axis, keepdims, output_is_sparse)


# -- SparseTensor's operators; arithmetic with dense operands (TF's sparse_dense_cwise ops) ---
def _getitem(self, i):
    """Row `i` along the first dimension (what tf.data slices and unbatches)."""
    if not isinstance(i, (int, np.integer)):
        raise TypeError("SparseTensor indexing takes one integer (a row); convert with "
                        "tf.sparse.to_dense for other indexing")
    shape = _shape_of(self)
    if not shape:
        raise TypeError("a SparseTensor of rank 0 has no rows")
    i = int(i) + shape[0] if int(i) < 0 else int(i)
    idx = self._indices._value
    keep = np.nonzero(idx[:, 0] == i)[0]
    return _from_parts(idx[keep, 1:], gather_ops.gather(self._values, wrap(keep)),
                       shape[1:])


def _dense_at_indices(self, other):
    """`other` broadcast to the dense shape, read at the stored indices."""
    other = convert_to_tensor(other, dtype_hint=self.dtype)
    if other.shape.rank == 0:
        return other
    full = array_ops.broadcast_to(other, list(_shape_of(self)))
    return gather_ops.gather_nd(full, self._indices)


def _mul(self, other):
    if isinstance(other, SparseTensor):
        raise TypeError("SparseTensor * SparseTensor is not supported; multiply by a "
                        "dense tensor or use tf.sparse.map_values")
    return self.with_values(math_ops.multiply(self._values,
                                              _dense_at_indices(self, other)))


def _truediv(self, other):
    return self.with_values(math_ops.truediv(self._values, _dense_at_indices(self, other)))


def _neg(self):
    return self.with_values(math_ops.negative(self._values))


def _add(self, other):
    return add(self, other)


# The operators of SparseTensor (a framework type) are ops: attached here, once.
SparseTensor.__getitem__ = _getitem
SparseTensor.__mul__ = SparseTensor.__rmul__ = _mul
SparseTensor.__truediv__ = _truediv
SparseTensor.__neg__ = _neg
SparseTensor.__add__ = SparseTensor.__radd__ = _add


__all__ = ["batch", "to_dense", "from_dense", "reorder", "map_values", "add",
           "sparse_dense_matmul", "concat", "slice", "transpose", "reduce_sum", "reduce_max"]
