"""Index-driven array ops: gather, gather_nd, scatter_nd and the tensor_scatter_nd_* family
(one [batch, pre, N, post] view of the indexed axis for all of them, with their gradients),
one_hot, sequence_mask, boolean_mask and repeat, each registered with all its rules.

Example:
    >>> tf.gather(tf.constant([10, 20, 30]), [2, 0]).numpy()
    array([30, 10], dtype=int32)
"""
import numpy as np

from tensorlite.framework import convert, dtypes, errors
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, declare, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops.array_common import checked_dims, int32s
from tensorlite.ops.reshape_ops import reshape
from tensorlite.ops.batching import with_batch_axis
from tensorlite.ops.common import (DECLINED, composite_aware, fast_path, int_list,
                                   single_axis, to_tensor)

__all__ = ["gather", "gather_nd", "scatter_nd", "tensor_scatter_nd_update",
           "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_min",
           "tensor_scatter_nd_max", "one_hot", "sequence_mask", "boolean_mask", "repeat"]


# -- export rules of the gather ops (declared at their registration below) --------------------
def _onnx_gather(ctx, node):
    if node.attrs["batch_dims"]:
        ctx.unsupported(node, "with batch_dims != 0 has no ONNX mapping")
    params, indices = ctx.inputs(node)
    lead = len(ctx.shape(node.inputs[0])) - node.attrs["rank"]
    return ctx.emit("Gather", [params, indices], axis=lead + int(node.attrs["axis"]))


def _tflite_gather(ctx, node):
    if node.attrs["batch_dims"]:
        ctx.unsupported(node, "with batch_dims != 0 has no TFLite mapping here")
    lead = len(ctx.shape(node.inputs[0])) - node.attrs["rank"]
    ctx.op("GATHER", [ctx.tensor(s) for s in node.inputs], [ctx.output(node)],
           options=("GatherOptions", {"axis": lead + int(node.attrs["axis"])}))


def _gather_tf(attrs, in_specs):
    params = in_specs[0]
    axis = len(params.shape) - attrs["rank"] + attrs["axis"]
    return "GatherV2", {"Tparams": params.dtype, "Tindices": in_specs[1].dtype,
                        "Taxis": dtypes.int32, "batch_dims": attrs["batch_dims"], "T": None}, \
        [0, 1, int32s([axis])[0]]


# -- gather / scatter kernels ------------------------------------------------------------------
# A gather along `axis` with `batch_dims` views params (logical shape P, after any leading
# cotangent dims L) as [L, B, Pre, N, Post] and indices as [B, I]; the result is
# [L, B, Pre, I, Post]. gather_nd and scatter_nd reduce to the same view by flattening the
# indexed dimensions into one of size N.
def _prod(dims):
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _take(params, idx, rank, bd, axis):
    nb = params.ndim - rank
    if bd == 0:
        return np.take(params, idx, axis=nb + axis)
    s = params.shape
    lead, b, pre, post = s[:nb], s[nb:nb + bd], s[nb + bd:nb + axis], s[nb + axis + 1:]
    bf, pf = _prod(b), _prod(pre)
    p5 = params.reshape(_prod(lead), bf, pf, s[nb + axis], _prod(post))
    i2 = idx.reshape(bf, _prod(idx.shape[bd:]))
    out = p5[:, np.arange(bf)[:, None, None], np.arange(pf)[None, :, None], i2[:, None, :]]
    return out.reshape(lead + b + pre + idx.shape[bd:] + post)


def _segment_add(out, lin, vals):
    """out[lin[j]] += vals[j] for rows of 2-D `out`, duplicates summed."""
    if lin.size == 0:
        return
    if out.shape[1] == 1:
        flat = out.reshape(-1)
        np.add.at(flat, lin, vals.reshape(-1))
    elif lin.size < 256:
        np.add.at(out, lin, vals)
    else:  # sorting and summing runs beats ufunc.at on rows by ~2x
        order = np.argsort(lin, kind="stable")
        s = lin[order]
        starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
        out[s[starts]] += np.add.reduceat(vals[order], starts, axis=0)


def _scatter_add(g, idx, shape, bd, axis):
    """Adjoint of `_take`: sums `g` into zeros of logical `shape` at `idx` (leading dims of
    `g` kept)."""
    nb = g.ndim - (len(shape) - 1 + idx.ndim - bd)
    lead = g.shape[:nb]
    n = shape[axis]
    qf, nf = _prod(shape[axis + 1:]), _prod(idx.shape[bd:])
    if nb == 0 and axis == 0:  # the common gather's adjoint: rows of params, no offsets
        out = np.zeros((n, qf), dtype=g.dtype)
        _segment_add(out, idx.reshape(nf), g.reshape(nf, qf))
        return out.reshape(shape)
    lf, bf, pf = _prod(lead), _prod(shape[:bd]), _prod(shape[bd:axis])
    out = np.zeros((lf * bf * pf * n, qf), dtype=g.dtype)
    base = (np.arange(lf)[:, None, None] * bf + np.arange(bf)[None, :, None]) * pf
    base = (base + np.arange(pf)[None, None, :]) * n
    lin = base[..., None] + idx.reshape(bf, nf)[None, :, None, :]
    _segment_add(out, lin.reshape(-1), g.reshape(lf * bf * pf * nf, qf))
    return out.reshape(lead + tuple(shape))


def _coords(pos):
    return ",".join(str(int(p)) for p in pos)


def _check_range(op_name, idx, n):
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = (idx < 0) | (idx >= n)
        pos = tuple(np.argwhere(bad)[0])
        where = f"indices[{_coords(pos)}]" if pos else "indices"
        raise invalid(op_name, f"{where} = {int(idx[pos])} is not in [0, {n})")


def _check_nd(op_name, idx, shape, bd, what):
    """Every index vector (last axis of idx) must lie inside shape[bd:bd + K]."""
    k = idx.shape[-1]
    lim = np.asarray(shape[bd:bd + k], dtype=np.int64)
    if not idx.size:
        return
    bad = ((idx < 0) | (idx >= lim)).any(axis=-1)
    if bad.any():
        pos = tuple(np.argwhere(bad)[0])
        vec = ", ".join(str(int(v)) for v in idx[pos])
        raise invalid(op_name, f"indices[{_coords(pos)}] = [{vec}] does not index into {what} "
                      f"[{','.join(str(d) for d in shape)}]")


def _nd_linear(idx, sub):
    """Row-major positions of the index vectors idx[..., K] inside shape `sub`."""
    strides = np.array([_prod(sub[i + 1:]) for i in range(len(sub))], dtype=np.int64)
    return idx.astype(np.int64, copy=False) @ strides


def _index_tensor(op_name, indices, arg="indices"):
    i = to_tensor(indices)
    if i._dtype.kind not in "iu":
        if i._value.size == 0 and i._dtype.kind == "f":  # `[]` converts to float32
            return wrap(i._value.astype(np.int32))
        raise invalid(op_name, f"{op_name}: `{arg}` must be an integer tensor (int32 or int64), "
                      f"got {i._dtype.name}; convert it with tf.cast")
    return i


# -- gather -----------------------------------------------------------------------------------
def _gather_fwd(params, indices, axis, batch_dims, rank):
    _check_range("GatherV2", indices, params.shape[params.ndim - rank + axis])
    return _take(params, indices, rank, batch_dims, axis)


def _gather_grad(g, ans, params, indices, axis, batch_dims, rank):
    shape = params._value.shape[params._value.ndim - rank:]
    return execute(GATHER_GRAD, (g, indices),
                   {"shape": shape, "axis": axis, "batch_dims": batch_dims}), None


def _gather_shape(p, i, axis, batch_dims, rank):
    at = len(p.shape) - rank + axis
    return Spec(tuple(p.shape[:at]) + tuple(i.shape[batch_dims:]) + tuple(p.shape[at + 1:]),
                p.dtype)


def _gather_grad_grad(gg, ans, g, indices, shape, axis, batch_dims):
    return execute(GATHER, (gg, indices), {"axis": axis, "batch_dims": batch_dims,
                                           "rank": len(shape)}), None


def _gather_grad_shape(g, i, shape, axis, batch_dims):
    nb = len(g.shape) - (len(shape) - 1 + len(i.shape) - batch_dims)
    return Spec(tuple(g.shape[:nb]) + tuple(shape), g.dtype)


def _gather_batch(arrays, batched, axis, batch_dims, rank):
    params, indices = arrays
    if not batched[1]:  # the batch is one more leading dim of params
        return _gather_fwd(params, indices, axis, batch_dims, rank)
    if not batched[0]:
        if batch_dims or params.ndim != rank:
            return NotImplemented
        return np.moveaxis(_gather_fwd(params, indices, axis, 0, rank), axis, 0)
    if params.ndim != rank + 1:
        return NotImplemented
    return _gather_fwd(params, indices, axis + 1, batch_dims + 1, rank + 1)


def _gather_grad_batch(arrays, batched, shape, axis, batch_dims):
    g, indices = arrays
    if not batched[1]:  # the batch is one more leading dim of g
        return _scatter_add(g, indices, shape, batch_dims, axis)
    g, indices = with_batch_axis(arrays, batched)
    if g.ndim - 1 != len(shape) - 1 + indices.ndim - 1 - batch_dims:
        return NotImplemented  # leading dims of g's own beside the batch: per example
    return _scatter_add(g, indices, (len(g),) + tuple(shape), batch_dims + 1, axis + 1)


_gather_batch.kind = _gather_grad_batch.kind = "leading"
# ResourceGather (import) reads a captured variable: the gather of its value, so the tape
# sees it
GATHER = register(
    "GatherV2", _gather_fwd, grad=_gather_grad, shape=_gather_shape, batch=_gather_batch,
    tf=_gather_tf, tf_outputs="output", tflite=_tflite_gather, onnx=_onnx_gather,
    tf_import={
        "GatherV2": lambda ins, a: gather(ins[0], ins[1], axis=int(ins[2].numpy()),
                                          batch_dims=a.get("batch_dims", 0)),
        "ResourceGather": lambda ins, a: gather(ins[0], ins[1],
                                                batch_dims=a.get("batch_dims", 0))})
# The gradient of a gather: scatter-add of the cotangent (TF builds an IndexedSlices and
# densifies it); its own gradient is the gather again, so second order works.
GATHER_GRAD = register(
    "GatherGrad", lambda g, indices, shape, axis, batch_dims:
    _scatter_add(g, indices, shape, batch_dims, axis),
    grad=_gather_grad_grad, shape=_gather_grad_shape, batch=_gather_grad_batch,
    unsupported="tf onnx tflite tf_import")


def _gather_fast(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    if batch_dims == 0 and (axis is None or type(axis) is int and axis == 0) \
            and type(params) is Tensor and type(indices) is Tensor \
            and indices._dtype.kind in "iu" and params._value.ndim:
        v = indices._value
        # take raises past the end; TF also refuses negatives, which NumPy would wrap. A
        # few indices are checked as a list: ndarray.min costs 1 us of wrappers.
        if v.size and (min(v.ravel().tolist()) if v.size <= 32 else v.min()) >= 0:
            try:
                return wrap(params._value.take(v, axis=0))
            except IndexError:  # the general path names the bad index
                pass
    return DECLINED


@composite_aware("gather")
@fast_path(_gather_fast)
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """`tf.gather`: slices of `params` along `axis` at `indices` (out of range is an error).

    >>> tf.gather(tf.constant([10, 20, 30]), [2, 0]).numpy()
    array([30, 10], dtype=int32)"""
    p = to_tensor(params)
    i = _index_tensor("GatherV2", indices)
    nd, ni = p._value.ndim, i._value.ndim
    bd = int(batch_dims)
    if not -ni <= bd <= ni:
        raise invalid("GatherV2", f"Expected batch_dims in the range [{-ni}, {ni}], but got "
                      f"{bd} (indices shape {list(i._value.shape)})")
    bd = bd % ni if bd < 0 else bd
    ax = bd if axis is None else int(np.asarray(axis))
    if not -nd <= ax < nd:
        raise invalid("GatherV2", f"Expected axis in the range [{-nd}, {nd}), but got {ax} "
                      f"(params shape {list(p._value.shape)})")
    ax %= nd
    if ax < bd:
        raise invalid("GatherV2", f"batch_dims ({bd}) must be less than or equal to axis "
                      f"({ax})")
    if p._value.shape[:bd] != i._value.shape[:bd]:
        raise invalid("GatherV2", f"params.shape[:{bd}] {list(p._value.shape[:bd])} must equal "
                      f"indices.shape[:{bd}] {list(i._value.shape[:bd])} with batch_dims={bd}")
    return execute(GATHER, (p, i), {"axis": ax, "batch_dims": bd, "rank": nd})


# -- gather_nd / scatter_nd -------------------------------------------------------------------
def _gather_nd_fwd(params, indices, batch_dims, rank):
    nb = params.ndim - rank
    k = indices.shape[-1]
    logical = params.shape[nb:]
    _check_nd("GatherNd", indices, logical, batch_dims, "param shape")
    sub = logical[batch_dims:batch_dims + k]
    flat = params.reshape(params.shape[:nb + batch_dims] + (_prod(sub),)
                          + logical[batch_dims + k:])
    return _take(flat, _nd_linear(indices, sub), rank - k + 1, batch_dims, batch_dims)


def _gather_nd_grad(g, ans, params, indices, batch_dims, rank):
    shape = params._value.shape[params._value.ndim - rank:]
    return execute(SCATTER_ND, (indices, g), {"shape": shape, "batch_dims": batch_dims}), None


def _gather_nd_shape(p, i, batch_dims, rank):
    nb = len(p.shape) - rank
    return Spec(tuple(p.shape[:nb]) + tuple(i.shape[:-1])
                + tuple(p.shape[nb + batch_dims + i.shape[-1]:]), p.dtype)


def _scatter_nd_fwd(indices, updates, shape, batch_dims):
    _check_nd("ScatterNd", indices, shape, batch_dims, "shape")
    k = indices.shape[-1]
    sub = shape[batch_dims:batch_dims + k]
    flat = tuple(shape[:batch_dims]) + (_prod(sub),) + tuple(shape[batch_dims + k:])
    out = _scatter_add(updates, _nd_linear(indices, sub), flat, batch_dims, batch_dims)
    return out.reshape(out.shape[:out.ndim - len(flat)] + tuple(shape))


def _scatter_nd_grad(g, ans, indices, updates, shape, batch_dims):
    return None, execute(GATHER_ND, (g, indices), {"batch_dims": batch_dims,
                                                   "rank": len(shape)})


def _scatter_nd_shape(i, u, shape, batch_dims):
    nb = len(u.shape) - (len(i.shape) - 1 + len(shape) - batch_dims - i.shape[-1])
    return Spec(tuple(u.shape[:nb]) + tuple(shape), u.dtype)


def _gather_nd_tf(attrs, specs):
    """TensorFlow's GatherNd (batch_dims=0; its Python writes batch_dims > 0 as several
    ops, not written here)."""
    if attrs["batch_dims"] != 0 or len(specs[0].shape) != attrs["rank"]:
        raise errors.UnimplementedError(None, None, "SavedModel export: tf.gather_nd with "
                                        "batch_dims > 0 (or under vectorized_map) has no "
                                        "TensorFlow mapping yet")
    # the written form: the one-node form would add a T attribute GatherNd has not
    return lambda add, ins: [add("GatherNd", ins, Tparams=specs[0].dtype,
                                 Tindices=specs[1].dtype) + ":output:0"]


GATHER_ND = register(
    "GatherNd", _gather_nd_fwd, grad=_gather_nd_grad, shape=_gather_nd_shape,
    tf=_gather_nd_tf, tf_outputs="output",
    tf_import=lambda ins, a: gather_nd(ins[0], ins[1]),
    unsupported="onnx tflite batch")
SCATTER_ND = register("ScatterNd", _scatter_nd_fwd, grad=_scatter_nd_grad,
                      shape=_scatter_nd_shape, unsupported="tf onnx tflite batch tf_import")


def gather_nd(params, indices, batch_dims=0, name=None):
    """`tf.gather_nd`: slices of `params` at the index vectors in the last axis of `indices`.

    >>> tf.gather_nd(tf.constant([[1, 2], [3, 4]]), [[1, 0]]).numpy()
    array([3], dtype=int32)"""
    p = to_tensor(params)
    i = _index_tensor("GatherNd", indices)
    ishape, pshape = i._value.shape, p._value.shape
    bd = int(batch_dims)
    if not ishape:
        raise invalid("GatherNd", "indices must be at least a vector (the last axis holds the "
                      "index vectors), got a scalar")
    if not 0 <= bd < len(ishape) or bd > len(pshape):
        raise invalid("GatherNd", f"batch_dims must be in [0, rank(indices)) = [0, "
                      f"{len(ishape)}) and at most rank(params) = {len(pshape)}; got {bd}")
    if pshape[:bd] != ishape[:bd]:
        raise invalid("GatherNd", f"params.shape[:{bd}] {list(pshape[:bd])} must equal "
                      f"indices.shape[:{bd}] {list(ishape[:bd])} with batch_dims={bd}")
    if bd + ishape[-1] > len(pshape):
        raise invalid("GatherNd", f"index innermost dimension length must be <= params rank; "
                      f"saw: {ishape[-1]} vs. {len(pshape) - bd} (params shape {list(pshape)}, "
                      f"indices shape {list(ishape)})")
    return execute(GATHER_ND, (p, i), {"batch_dims": bd, "rank": len(pshape)})


def _check_scatter(op_name, i, u, shape):
    ishape = i._value.shape
    if not ishape:
        raise invalid(op_name, "indices must be at least a vector (the last axis holds the "
                      "index vectors), got a scalar")
    k = ishape[-1]
    if k > len(shape):
        raise invalid(op_name, f"Index vectors of length {k} cannot index into shape "
                      f"{list(shape)} of rank {len(shape)}")
    want = ishape[:-1] + tuple(shape[k:])
    if u._value.shape != want:
        raise invalid(op_name, f"updates must have shape indices.shape[:-1] + shape[{k}:] = "
                      f"{list(want)}, got {list(u._value.shape)} (indices shape {list(ishape)}, "
                      f"shape {list(shape)})")


def scatter_nd(indices, updates, shape, name=None):
    """`tf.scatter_nd`: zeros of `shape` with `updates` added at `indices` (duplicates sum).

    >>> tf.scatter_nd([[1], [3]], [5., 7.], [4]).numpy()
    array([0., 5., 0., 7.], dtype=float32)"""
    i = _index_tensor("ScatterNd", indices)
    u = to_tensor(updates)
    shape = tuple(int_list(shape, "shape"))
    if any(d < 0 for d in shape):
        raise invalid("ScatterNd", f"shape must be non-negative, got {list(shape)}")
    _check_scatter("ScatterNd", i, u, shape)
    return execute(SCATTER_ND, (i, u), {"shape": shape, "batch_dims": 0})


def _scatter_slices(op_name, tensor, indices, updates, rank):
    """(a copy of `tensor`, its view [leading, indexed slices, slice size], the slices'
    rows in it, `updates` as [leading, updates, slice size]) for the TensorScatter ops."""
    nb = tensor.ndim - rank
    logical = tensor.shape[nb:]
    _check_nd(op_name, indices, logical, 0, "shape")
    k = indices.shape[-1]
    lin = _nd_linear(indices, logical[:k]).reshape(-1)
    out = tensor.copy()
    lf, q = _prod(tensor.shape[:nb]), _prod(logical[k:])
    return (out, out.reshape(lf, _prod(logical[:k]), q), lin,
            updates.reshape(lf, lin.size, q))


def _tensor_scatter_update_fwd(tensor, indices, updates, rank):
    out, view, lin, upd = _scatter_slices("TensorScatterUpdate", tensor, indices, updates,
                                          rank)
    view[:, lin] = upd
    return out


def _tensor_scatter_update_grad(g, ans, tensor, indices, updates, rank):
    gshape, ishape = g._value.shape, indices._value.shape
    nb = len(gshape) - rank
    upd_shape = gshape[:nb] + ishape[:-1] + gshape[nb + ishape[-1]:]
    hole = wrap(np.zeros(upd_shape, dtype=g._value.dtype))  # a constant: no gradient path
    return (execute(TENSOR_SCATTER_UPDATE, (g, indices, hole), {"rank": rank}), None,
            execute(GATHER_ND, (g, indices), {"batch_dims": 0, "rank": rank}))


def _tensor_scatter_add_fwd(tensor, indices, updates, rank):
    shape = tensor.shape[tensor.ndim - rank:]
    return tensor + _scatter_nd_fwd(indices, updates, shape, 0)


def _tensor_scatter_add_grad(g, ans, tensor, indices, updates, rank):
    return g, None, execute(GATHER_ND, (g, indices), {"batch_dims": 0, "rank": rank})


def _tensor_scatter_sub_fwd(tensor, indices, updates, rank):
    shape = tensor.shape[tensor.ndim - rank:]
    return tensor - _scatter_nd_fwd(indices, updates, shape, 0)


def _tensor_scatter_sub_grad(g, ans, tensor, indices, updates, rank):
    from tensorlite.ops.math_ops import negative  # noqa: PLC0415 - math_ops imports us
    return g, None, negative(execute(GATHER_ND, (g, indices), {"batch_dims": 0,
                                                              "rank": rank}))


def _tensor_scatter_extreme_fwd(ufunc):
    """TensorScatterMin/Max: each slice at `indices` becomes the elementwise min/max of
    itself and its updates (duplicates compare with each other too)."""
    def forward(tensor, indices, updates, rank):
        out, view, lin, upd = _scatter_slices("TensorScatterMinMax", tensor, indices,
                                              updates, rank)
        for b in range(len(view)):
            ufunc.at(view[b], lin, upd[b])
        return out
    return forward


def _tensor_scatter_extreme_grad(g, ans, tensor, indices, updates, rank):
    """TensorFlow's rule: the gradient goes to every input equal to the result, shared
    evenly among ties (the tensor's element and the updates that reached it)."""
    from tensorlite.ops.math_ops import multiply  # noqa: PLC0415 - math_ops imports us
    attrs = {"batch_dims": 0, "rank": rank}
    x, y, out = tensor._value, updates._value, ans._value
    x_hit = (x == out).astype(g._value.dtype)
    y_hit = (y == _gather_nd_fwd(out, indices._value, 0, rank)).astype(g._value.dtype)
    share = 1.0 / (x_hit + _scatter_nd_fwd(indices._value, y_hit, out.shape, 0))
    return (multiply(g, wrap(x_hit * share)), None,
            multiply(execute(GATHER_ND, (multiply(g, wrap(share)), indices), attrs),
                     wrap(y_hit)))


def _tensor_scatter_op(name, forward, grad, public):
    """A TensorScatter* op: TensorFlow's node of the same name takes (tensor, indices,
    updates) with T and Tindices; our `rank` attribute is not written. `public`: the name
    of the public function its import rule calls (defined below)."""
    return register(name, forward, grad=grad, shape=lambda t, i, u, rank: t,
                    tf=lambda attrs, in_specs: (name, {"Tindices": in_specs[1].dtype}),
                    tf_outputs="output", tf_import=lambda ins, a: globals()[public](*ins),
                    unsupported="onnx tflite batch")


TENSOR_SCATTER_UPDATE = _tensor_scatter_op("TensorScatterUpdate", _tensor_scatter_update_fwd,
                                           _tensor_scatter_update_grad, "tensor_scatter_nd_update")
TENSOR_SCATTER_ADD = _tensor_scatter_op("TensorScatterAdd", _tensor_scatter_add_fwd,
                                        _tensor_scatter_add_grad, "tensor_scatter_nd_add")
TENSOR_SCATTER_SUB = _tensor_scatter_op("TensorScatterSub", _tensor_scatter_sub_fwd,
                                        _tensor_scatter_sub_grad, "tensor_scatter_nd_sub")
TENSOR_SCATTER_MIN = _tensor_scatter_op("TensorScatterMin",
                                        _tensor_scatter_extreme_fwd(np.minimum),
                                        _tensor_scatter_extreme_grad, "tensor_scatter_nd_min")
TENSOR_SCATTER_MAX = _tensor_scatter_op("TensorScatterMax",
                                        _tensor_scatter_extreme_fwd(np.maximum),
                                        _tensor_scatter_extreme_grad, "tensor_scatter_nd_max")


def _tensor_scatter(op, op_name, tensor, indices, updates):
    from tensorlite.ops.common import tensor_args  # noqa: PLC0415
    t, u = tensor_args(op_name, (tensor, updates), names=("tensor", "updates"))
    i = _index_tensor(op_name, indices)
    _check_scatter(op_name, i, u, t._value.shape)
    return execute(op, (t, i, u), {"rank": t._value.ndim})


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """`tf.tensor_scatter_nd_update`: a copy of `tensor` with slices at `indices` replaced.

    >>> tf.tensor_scatter_nd_update([1, 2, 3], [[0]], [9]).numpy()
    array([9, 2, 3], dtype=int32)"""
    return _tensor_scatter(TENSOR_SCATTER_UPDATE, "TensorScatterUpdate", tensor, indices,
                           updates)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """`tf.tensor_scatter_nd_add`: a copy of `tensor` with `updates` added at `indices`.

    >>> tf.tensor_scatter_nd_add([1, 2, 3], [[0], [0]], [5, 5]).numpy()
    array([11,  2,  3], dtype=int32)"""
    return _tensor_scatter(TENSOR_SCATTER_ADD, "TensorScatterAdd", tensor, indices, updates)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """`tf.tensor_scatter_nd_sub`: a copy of `tensor` with `updates` subtracted at `indices`.

    >>> tf.tensor_scatter_nd_sub([1, 2, 3], [[0], [2]], [5, 5]).numpy()
    array([-4,  2, -2], dtype=int32)"""
    return _tensor_scatter(TENSOR_SCATTER_SUB, "TensorScatterSub", tensor, indices, updates)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """`tf.tensor_scatter_nd_min`: a copy of `tensor`, each slice at `indices` the
    elementwise minimum of itself and its updates.

    >>> tf.tensor_scatter_nd_min([1, 2, 3], [[0], [2]], [0, 5]).numpy()
    array([0, 2, 3], dtype=int32)"""
    return _tensor_scatter(TENSOR_SCATTER_MIN, "TensorScatterMin", tensor, indices, updates)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """`tf.tensor_scatter_nd_max`: a copy of `tensor`, each slice at `indices` the
    elementwise maximum of itself and its updates.

    >>> tf.tensor_scatter_nd_max([1, 2, 3], [[0], [2]], [0, 5]).numpy()
    array([1, 2, 5], dtype=int32)"""
    return _tensor_scatter(TENSOR_SCATTER_MAX, "TensorScatterMax", tensor, indices, updates)


# -- one_hot / sequence_mask ------------------------------------------------------------------
def _one_hot_fwd(indices, on, off, depth, axis):
    out = np.full(indices.shape + (depth,), off, dtype=on.dtype)
    flat = indices.reshape(-1)
    rows = np.flatnonzero((flat >= 0) & (flat < depth))
    out.reshape(flat.size, depth)[rows, flat[rows]] = on
    return out if axis == -1 else np.moveaxis(out, -1, axis)


def _one_hot_shape(i, on, off, depth, axis):
    shape = list(i.shape)
    shape.insert(len(shape) if axis == -1 else axis, depth)
    return Spec(tuple(shape), on.dtype)


def _one_hot_batch(arrays, batched, depth, axis):
    indices, on, off = with_batch_axis(arrays, batched)
    axis = axis + 1 if axis >= 0 else axis
    if not (batched[1] or batched[2]):
        return _one_hot_fwd(indices, arrays[1], arrays[2], depth, axis)
    hot = _one_hot_fwd(indices, np.array(True), np.array(False), depth, axis)
    lift = (-1,) + (1,) * (hot.ndim - 1)  # one on/off value per example
    return np.where(hot, on.reshape(lift), off.reshape(lift))


_one_hot_batch.kind = "leading"
ONE_HOT = declare(
    register("OneHot", _one_hot_fwd, grad=NOT_DIFFERENTIABLE,
             shape=_one_hot_shape, unsupported="tf onnx tflite tf_import"),
    batch=_one_hot_batch)


def _one_hot_dtypes(on_value, off_value, dtype):
    dt = None if dtype is None else dtypes.as_dtype(dtype)
    given = {}
    for arg, v in (("on_value", on_value), ("off_value", off_value)):
        if v is not None:
            given[arg] = convert.convert_to_tensor(v, dtype_hint=dt)
    for arg, t in given.items():
        if dt is not None and t._dtype is not dt:
            raise TypeError(f"dtype {t._dtype.name} of {arg} does not match dtype parameter "
                            f"{dt.name}")
    if len(given) == 2 and given["on_value"]._dtype is not given["off_value"]._dtype:
        raise TypeError(f"dtype {given['on_value']._dtype.name} of on_value does not match "
                        f"dtype {given['off_value']._dtype.name} of off_value")
    if dt is None:
        dt = next(iter(given.values()))._dtype if given else dtypes.float32
    on = given["on_value"] if "on_value" in given else wrap(np.array(1, dt.as_numpy_dtype))
    off = given["off_value"] if "off_value" in given else wrap(np.array(0, dt.as_numpy_dtype))
    return on, off


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """`tf.one_hot`: `on_value` where the position equals the index, else `off_value`
    (indices outside [0, depth) give all-`off_value` rows); float32 by default.

    >>> tf.one_hot([0, 2], 3).numpy()
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)"""
    if isinstance(indices, np.ndarray) and indices.dtype.kind == "f":
        # as TensorFlow takes a NumPy float array here (labels loaded as float32): truncated
        # toward zero; a float tensor or a Python list of floats is refused
        indices = np.trunc(indices).astype(np.int64)
    i = _index_tensor("OneHot", indices)
    depth = int(np.asarray(depth))
    if depth < 0:
        raise invalid("OneHot", f"depth must be non-negative, got: {depth}")
    on, off = _one_hot_dtypes(on_value, off_value, dtype)
    for arg, t in (("on_value", on), ("off_value", off)):
        if t._value.ndim != 0:
            raise invalid("OneHot", f"{arg} must be a scalar, but got shape "
                          f"{list(t._value.shape)}")
    nd = i._value.ndim
    axis = -1 if axis is None else int(axis)
    if axis != -1 and not 0 <= axis <= nd:
        raise invalid("OneHot", f"Expected axis to be -1 or between [0, {nd + 1}).  But "
                      f"received: {axis}")
    return execute(ONE_HOT, (i, on, off), {"depth": depth, "axis": -1 if axis == nd else axis})


SEQUENCE_MASK = register(
    "SequenceMask",
    lambda lengths, maxlen, dtype: (np.arange(maxlen) < lengths[..., None]).astype(
        dtype.as_numpy_dtype),
    grad=NOT_DIFFERENTIABLE,
    shape=lambda lengths, maxlen, dtype: Spec(tuple(lengths.shape) + (maxlen,), dtype),
    unsupported="tf onnx tflite batch tf_import")


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """`tf.sequence_mask`: mask[..., j] = j < lengths[...]; `maxlen` defaults to the longest.

    >>> tf.sequence_mask([1, 3], 4).numpy()
    array([[ True, False, False, False],
           [ True,  True,  True, False]])"""
    ln = _index_tensor("SequenceMask", lengths, "lengths")
    if maxlen is None:
        maxlen = int(ln._value.max()) if ln._value.size else 0
    maxlen = int(np.asarray(maxlen))
    if maxlen < 0:
        raise invalid("SequenceMask", f"maxlen must be non-negative, got {maxlen}")
    return execute(SEQUENCE_MASK, (ln,), {"maxlen": max(maxlen, 0),
                                          "dtype": dtypes.as_dtype(dtype)})


# -- boolean_mask / repeat --------------------------------------------------------------------
@composite_aware("boolean_mask")
def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """`tf.boolean_mask`: the entries of `tensor` where `mask` (matching dimensions
    axis..axis+mask.ndim) is true, flattened into one dimension; differentiable.

    >>> tf.boolean_mask(tf.constant([1, 2, 3]), [True, False, True]).numpy()
    array([1, 3], dtype=int32)"""
    x, mk = to_tensor(tensor), to_tensor(mask)
    shape, md = x._value.shape, mk._value.ndim
    if md == 0:
        raise ValueError("mask cannot be scalar.")
    ax = 0 if axis is None else int(axis)
    ax = ax + len(shape) if ax < 0 else ax
    if not 0 <= ax <= len(shape) - md:
        raise ValueError(f"boolean_mask: a mask of rank {md} at axis {axis} does not fit a "
                         f"tensor of shape {list(shape)}")
    if shape[ax:ax + md] != mk._value.shape:
        raise ValueError(f"Shapes {tuple(shape[ax:ax + md])} and {tuple(mk._value.shape)} are "
                         f"incompatible (tensor shape {list(shape)}, mask at axis {ax})")
    # a one-dimensional mask needs no reshape (one frozen at the traced size would keep a
    # graph from taking another batch)
    flat = x if md == 1 else reshape(x, shape[:ax] + (_prod(shape[ax:ax + md]),) +
                                     shape[ax + md:])
    from tensorlite.ops.math_ops import where  # noqa: PLC0415 - an op, so graphs recompute it
    picked = reshape(where(reshape(mk, [-1])), [-1])
    return gather(flat, picked, axis=ax)


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """`tf.repeat`: repeats each element `repeats` times along `axis` (flattened when None).

    >>> tf.repeat(tf.constant([1, 2]), [2, 3], axis=0).numpy()
    array([1, 1, 2, 2, 2], dtype=int32)"""
    x = to_tensor(input)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if x._value.ndim == 0:
        raise invalid("Repeat", "repeat with an axis needs a tensor of rank >= 1, got a scalar")
    ax = single_axis(axis, x._value.ndim, "Repeat")
    n = x._value.shape[ax]
    r = np.asarray(int_list(repeats, "repeats"), dtype=np.int64)
    if r.size == 1:
        r = np.full(n, r[0])
    if r.shape != (n,):
        raise invalid("Repeat", f"repeats must be a scalar or have one entry per element of "
                      f"dimension {ax} (size {n}); got {r.size} entries")
    if (r < 0).any():
        raise invalid("Repeat", f"repeats must be non-negative, got {r.tolist()}")
    total = sum(int(v) for v in r)  # Python ints: a huge count cannot overflow
    checked_dims(x._value.shape[:ax] + (total,) + x._value.shape[ax + 1:], "Repeat", x._dtype)
    checked_dims((total,), "Repeat", dtypes.int64)  # the gather indices
    return gather(x, wrap(np.repeat(np.arange(n), r)), axis=ax)
