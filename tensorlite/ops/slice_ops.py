"""Slicing: Python/TF-style `tensor[...]` (ints, slices with steps, Ellipsis, newaxis and
scalar integer tensors), `tf.slice` and `tf.strided_slice`.

Both ops accept extra leading (batch) dimensions, so each is the other's gradient.
"""
import builtins

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import OBSERVERS, execute, invalid
from tensorlite.framework.registry import Spec, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import control_flow_ops
from tensorlite.ops.batching import leading
from tensorlite.ops.common import DECLINED, fast_path, int_list, to_tensor

__all__ = ["slice", "strided_slice"]

_ALL = builtins.slice(None)


def _batched(key, nb):
    return (_ALL,) * nb + key if nb else key


def _slice_fwd(x, key, rank):
    return x[_batched(key, x.ndim - rank)]


def _slice_grad(g, ans, x, key, rank):
    return execute(SLICE_GRAD, (g,), {"key": key, "shape": x._value.shape})


def _slice_grad_fwd(g, key, shape):
    sliced_ndim = np.broadcast_to(np.zeros((), np.int8), shape)[key].ndim
    nb = g.ndim - sliced_ndim
    out = np.zeros(g.shape[:nb] + tuple(shape), dtype=g.dtype)
    out[_batched(key, nb)] = g
    return out


def _slice_grad_grad(gg, ans, g, key, shape):
    return execute(STRIDED_SLICE, (gg,), {"key": key, "rank": len(shape)})


# Two stand-in sizes for an unknown dimension: an output dimension that follows them is
# unknown; the index arithmetic runs on zero-stride views, so nothing is allocated.
_STAND_INS = (2 ** 20 + 1, 2 ** 20 + 7)


def _slice_shape(x, key, rank):
    outs = [np.broadcast_to(np.zeros((), np.int8), tuple(n if d is None else d
                                                         for d in x.shape))[
        _batched(key, len(x.shape) - rank)].shape for n in _STAND_INS]
    return Spec(tuple(a if a == b else None for a, b in zip(*outs)), x.dtype)


def _slice_grad_shape(g, key, shape):
    sliced_ndim = np.broadcast_to(np.zeros((), np.int8), shape)[key].ndim
    return Spec(tuple(g.shape[:len(g.shape) - sliced_ndim]) + tuple(shape), g.dtype)


# StridedSlice itself is registered at the end of this module, beside its export and
# import rules. Both take leading batch dimensions (their batch rules).
SLICE_GRAD = register("StridedSliceGrad", _slice_grad_fwd, grad=_slice_grad_grad,
                      shape=_slice_grad_shape, batch=leading(_slice_grad_fwd),
                      unsupported="tf onnx tflite tf_import")


def _index_value(k):
    if isinstance(k, Tensor) or getattr(k, "_is_variable", False):
        v = np.asarray(k)
        if v.ndim != 0 or v.dtype.kind not in "iu":
            raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) "
                            f"and scalar tf.int32/tf.int64 tensors are valid indices, got a "
                            f"{v.dtype} tensor of shape {list(v.shape)}")
        return int(v)
    return k


def _normalize(key):
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, builtins.slice):
            out.append(builtins.slice(*(None if v is None else int(_index_value(v))
                               for v in (k.start, k.stop, k.step))))
        elif isinstance(k, (bool, np.bool_)):
            raise TypeError("Boolean indices are not supported; use tf.boolean_mask")
        elif isinstance(k, (int, np.integer)):
            out.append(int(k))
        elif isinstance(k, Tensor) or getattr(k, "_is_variable", False):
            out.append(_index_value(k))
        else:
            raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) "
                            f"and scalar tf.int32/tf.int64 tensors are valid indices, got "
                            f"{k!r}")
    return tuple(out)


def _check(x, key):
    shape = x._value.shape
    dim = 0
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > len(shape):
        raise invalid("StridedSlice", f"Index out of range: {n_real} indices for a tensor of "
                      f"rank {len(shape)} (shape {list(shape)})")
    for k in key:
        if k is Ellipsis:
            dim += len(shape) - n_real
            continue
        if k is None:
            continue
        if dim >= len(shape):
            raise invalid("StridedSlice", f"Index out of range using input dim {dim}; input has "
                          f"only {len(shape)} dims (shape {list(shape)})")
        if isinstance(k, int) and not -shape[dim] <= k < shape[dim]:
            raise invalid("StridedSlice", f"slice index {k} of dimension {dim} out of bounds "
                          f"(dimension size {shape[dim]}, tensor shape {list(shape)})")
        if isinstance(k, builtins.slice) and k.step == 0:
            raise invalid("StridedSlice", "slice step must be nonzero")
        dim += 1


def _plain_key(key, shape):
    """True for the common keys (ints in range, slices of ints, up to the rank) that need no
    normalising and no check beyond these: NumPy indexes them exactly as TF does."""
    if type(key) is not tuple:
        key = (key,)
    if len(key) > len(shape):
        return False
    for k, d in zip(key, shape):
        t = type(k)
        if t is int:
            if not -d <= k < d:
                return False
        elif t is builtins.slice:
            a, b, c = k.start, k.stop, k.step
            if not ((a is None or type(a) is int) and (b is None or type(b) is int) and
                    (c is None or (type(c) is int and c != 0))):
                return False
        else:
            return False
    return True


def _getitem_fast(tensor, key):
    if type(tensor) is Tensor and _plain_key(key, tensor._value.shape):
        return wrap(tensor._value[key])
    return DECLINED


@fast_path(_getitem_fast)
def getitem(tensor, key):
    """`tensor[key]`, differentiable. A boolean array or tensor as the whole key selects
    as `tf.boolean_mask` (TF's rule)."""
    x = to_tensor(tensor)
    if _is_bool_mask(key):
        from tensorlite.ops.gather_ops import boolean_mask  # noqa: PLC0415 - imports us
        return boolean_mask(x, key)
    if OBSERVERS and control_flow_ops.graph_tracing():
        traced = _getitem_traced(x, key)
        if traced is not None:
            return traced
    key = _normalize(key)
    _check(x, key)
    return execute(STRIDED_SLICE, (x,), {"key": key, "rank": x._value.ndim})


def _getitem_traced(x, key):
    """Inside a trace, `x[i]` with a scalar integer tensor `i` is a gather (its value
    differs from run to run, so it cannot be a slicing constant); None when the key has no
    tensor index, or one with Ellipsis or newaxis (those slice as before)."""
    parts = key if isinstance(key, tuple) else (key,)
    static, gathers, axis = [], [], 0
    for k in parts:
        if isinstance(k, Tensor) or getattr(k, "_is_variable", False):
            static.append(_ALL)
            gathers.append((axis, k))
            axis += 1
        elif isinstance(k, builtins.slice):
            static.append(k)
            axis += 1
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            static.append(k)
        else:
            return None
    if not gathers:
        return None
    from tensorlite.ops.gather_ops import gather  # noqa: PLC0415 - array_ops imports us
    y = x if all(k is _ALL for k in static) else getitem(x, tuple(static))
    for ax, index in reversed(gathers):  # from the last: earlier axes keep their numbers
        y = gather(y, index, axis=ax)
    return y


def _is_bool_mask(key):
    if isinstance(key, Tensor):
        return key._value.dtype == np.bool_ and key._value.ndim > 0
    return isinstance(key, np.ndarray) and key.dtype == np.bool_ and key.ndim > 0


def slice(input_, begin, size, name=None):  # noqa: A001 - TF's name
    """`tf.slice`: `size[i] = -1` takes everything from `begin[i]` on."""
    x = to_tensor(input_)
    begin, size = int_list(begin, "begin"), int_list(size, "size")
    shape = x._value.shape
    if len(begin) != len(shape) or len(size) != len(shape):
        raise invalid("Slice", f"Expected begin and size arguments to be 1-D tensors of size "
                      f"{len(shape)}, but got shapes [{len(begin)}] and [{len(size)}]")
    key = []
    for b, s, d in zip(begin, size, shape):
        e = d if s == -1 else b + s
        if not (0 <= b <= d and b <= e <= d):
            raise invalid("Slice", f"Expected size[i] in [0, {d - b}] and begin[i] in [0, {d}], "
                          f"but got begin {begin}, size {size} for shape {list(shape)}")
        key.append(_pyslice(b, e))
    return getitem(x, tuple(key))


def _pyslice(b, e, s=None):
    return builtins.slice(b, e, s)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0,
                  ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, name=None):
    """`tf.strided_slice` with TF's bit masks."""
    begin, end = int_list(begin, "begin"), int_list(end, "end")
    strides = [1] * len(begin) if strides is None else int_list(strides, "strides")
    if not len(begin) == len(end) == len(strides):
        raise invalid("StridedSlice", f"Expected begin, end, and strides to be 1D equal size "
                      f"tensors, but got shapes [{len(begin)}], [{len(end)}], and "
                      f"[{len(strides)}] instead.")
    key = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(b)
        else:
            key.append(_pyslice(None if begin_mask & bit else b, None if end_mask & bit else e, s))
    return getitem(input_, tuple(key))


# -- import rule: TensorFlow's StridedSlice in SavedModel graphs (form: function_runner.py) --
def _import_strided_slice(ins, a):
    return strided_slice(ins[0], ins[1].numpy(), ins[2].numpy(), ins[3].numpy(),
                         a.get("begin_mask", 0), a.get("end_mask", 0),
                         a.get("ellipsis_mask", 0), a.get("new_axis_mask", 0),
                         a.get("shrink_axis_mask", 0))


# -- export rules: ONNX (the rule's form: tensorlite/onnx/__init__.py) ------------------------
_END = np.iinfo(np.int64).max


def _onnx_key(key, rank):
    """(starts, ends, axes, steps) of the slices, the axes ints remove and the output axes
    newaxis adds, for a key of ints, slices, Ellipsis and None over `rank` axes."""
    real = sum(1 for k in key if k is not None and k is not Ellipsis)
    items = []
    for k in key:
        items += [_ALL] * (rank - real) if k is Ellipsis else [k]
    bounds, squeeze, newaxis, axis, out_axis = [], [], [], 0, 0
    for k in items:
        if k is None:
            newaxis.append(out_axis)
            out_axis += 1
            continue
        if isinstance(k, builtins.slice):
            step = 1 if k.step is None else int(k.step)
            start = (0 if step > 0 else -1) if k.start is None else int(k.start)
            stop = (_END if step > 0 else -_END) if k.stop is None else int(k.stop)
            bounds.append((start, stop, axis, step))
            out_axis += 1
        else:
            k = int(k)
            bounds.append((k, _END if k == -1 else k + 1, axis, 1))
            squeeze.append(axis)
        axis += 1
    return bounds, squeeze, newaxis


def _onnx_strided_slice(ctx, node):
    x, = ctx.inputs(node)
    nb = len(ctx.shape(node.inputs[0])) - node.attrs["rank"]
    bounds, squeeze, newaxis = _onnx_key(tuple(node.attrs["key"]), node.attrs["rank"])
    if bounds:
        starts, stops, axes, steps = zip(*bounds)
        x = ctx.emit("Slice", [x, ctx.ints(starts), ctx.ints(stops),
                               ctx.ints([a + nb for a in axes]), ctx.ints(steps)])
    if squeeze:
        x = ctx.squeeze(x, [a + nb for a in squeeze])
    if newaxis:
        x = ctx.unsqueeze(x, [a + nb for a in newaxis])
    return x if bounds or squeeze or newaxis else ctx.emit("Identity", [x])



# -- export rule: TensorFlow's StridedSlice (the rule's form: saved_model/function_def.py) ---
def _strided_slice_tf(attrs, in_specs):
    key, rank = attrs["key"], attrs["rank"]
    key = key if isinstance(key, tuple) else (key,)
    if rank != len(in_specs[0].shape):
        raise errors.UnimplementedError(None, None, "StridedSlice of a batched (vectorized) "
                                        "tensor has no TensorFlow form")
    begin, end, strides = [], [], []
    masks = dict.fromkeys(("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                           "shrink_axis_mask"), 0)
    for i, k in enumerate(key):
        bit = 1 << i
        if k is Ellipsis or k is None:
            masks["ellipsis_mask" if k is Ellipsis else "new_axis_mask"] |= bit
            entry = (0, 0, 1)
        elif isinstance(k, builtins.slice):  # `slice` here is tf.slice
            masks["begin_mask"] |= bit if k.start is None else 0
            masks["end_mask"] |= bit if k.stop is None else 0
            entry = (k.start or 0, k.stop or 0, 1 if k.step is None else k.step)
        elif isinstance(k, (int, np.integer)):
            masks["shrink_axis_mask"] |= bit
            entry = (int(k), int(k) + 1, 1)
        else:
            raise errors.UnimplementedError(None, None, f"StridedSlice with index {k!r} has no "
                                            f"TensorFlow form here")
        begin.append(entry[0])
        end.append(entry[1])
        strides.append(entry[2])
    ints = [np.asarray(v, np.int32) for v in (begin, end, strides)]
    return "StridedSlice", {"Index": dtypes.int32, **masks}, [0, *ints]


STRIDED_SLICE = register(
    "StridedSlice", _slice_fwd, grad=_slice_grad, shape=_slice_shape,
    batch=leading(_slice_fwd), tf=_strided_slice_tf, tf_outputs="output",
    tf_import=_import_strided_slice, onnx=_onnx_strided_slice, unsupported="tflite")
