"""Pooling ops (`tf.nn.max_pool2d`, `avg_pool2d`, the 1-D and rank-generic forms) and their
gradient ops, each registered with all its rules. Windows are folded tap by tap over strided
views of the padded input (conv_kernels' geometry); argument checking and the export padding
helpers are shared with convolution (conv_args).

Example:
    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.nn.max_pool2d(x, 2, 2, "VALID")[0, :, :, 0].numpy()
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)
"""
import numpy as np

from tensorlite.framework import blas_threads, errors, intra_op_pool
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, register
from tensorlite.ops import numba_fused
from tensorlite.ops.batching import cotangent_leading, leading
from tensorlite.ops.common import FLOAT, REAL, check_kind, to_tensor
from tensorlite.ops.conv_kernels import crop_hw, out_len, pad_hw, padded_out_hw, tap
from tensorlite.ops.conv_args import (TO_NCHW, TO_NHWC, arg_1d, as_2d, check_format, from_nhwc,
                                      hw_arg, onnx_pads, pads_arg, rank_check, squeeze_2d,
                                      tf_padding, tflite_padding, to_nhwc)

__all__ = []

# -- pooling: NumPy forwards ------------------------------------------------------------------
def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _reduce_taps(xp, ksize, strides, combine):
    """Every window position's taps folded into one array with `combine(out, tap, out=out)`
    (np.maximum, np.add): one strided view per tap, no window copies."""
    out_hw = padded_out_hw(xp.shape[-3:-1], ksize, strides, (1, 1))
    out = None
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            t = tap(xp, i, j, out_hw, strides, (1, 1))
            if out is None:
                out = t.copy()
            else:
                combine(out, t, out=out)
    return out, out_hw


def non_overlapping(ksize, strides, pads):
    """Whether pooling windows tile the input without overlap or padding (each pixel is in
    one window at most): what the compiled pooling kernels handle."""
    return tuple(ksize) == tuple(strides) and not any(pads)


def _max_pool_fwd(x, ksize, strides, pads):
    k = numba_fused.kernels_for(x) if x.ndim == 4 else None
    if k is not None:
        n, h, w, c = x.shape
        if non_overlapping(ksize, strides, pads):  # one compiled pass (0.4 -> 0.1 ms on
            y = np.empty((n, h // ksize[0], w // ksize[1], c), x.dtype)  # CIFAR's [32, 30,
            k.max_pool(x, ksize[0], ksize[1], 0, n, y)                    # 30, 32])
            return y
        # Overlapping or padded windows (ResNet's 3x3 stride 2): one pass, not a padded
        # copy and KH*KW strided maxima over the whole output.
        return max_pool_padded(x, ksize, strides, pads, _lowest(x.dtype), k)
    return _reduce_taps(pad_hw(x, pads, _lowest(x.dtype)), ksize, strides, np.maximum)[0]


def max_pool_padded(x, ksize, strides, pads, fill, k=None):
    """Max pool of [N, H, W, C] padded by `pads` with the value `fill` (the lowest value
    for MaxPool's own padding; 0 for a zero padding before it, graph/passes/kernel_fusion):
    one compiled pass with numba (`k`: its kernels), else a padded copy and the taps."""
    k = numba_fused.kernels_for(x) if k is None else k
    if k is None:
        return _reduce_taps(pad_hw(x, pads, fill), ksize, strides, np.maximum)[0]
    n, h, w, c = x.shape
    y = np.empty((n, out_len(h, ksize[0], strides[0], 1, pads[0], pads[1]),
                  out_len(w, ksize[1], strides[1], 1, pads[2], pads[3]), c), x.dtype)
    if y.size:
        k.max_pool_general(x, ksize[0], ksize[1], strides[0], strides[1], pads[0], pads[2],
                           fill, 0, n, y)
    return y


def _argmax_masks(x, y, ksize, strides, pads):
    """Per tap, where that tap holds its window's max (the first one, on ties, as TF).
    Each mask is only valid until the next one is drawn."""
    xp = pad_hw(x, pads, _lowest(x.dtype))
    out_hw = y.shape[-3:-1]
    last = ksize[0] * ksize[1] - 1
    taken = None
    for t in range(last + 1):
        i, j = divmod(t, ksize[1])
        m = tap(xp, i, j, out_hw, strides, (1, 1)) == y
        if taken is None:
            taken = m
        else:
            np.greater(m, taken, out=m)  # equal here and not claimed by an earlier tap
            if t < last:
                taken |= m
        yield i, j, m


def _max_pool_grad_fwd(x, y, g, ksize, strides, pads):
    lead = g.shape[:g.ndim - y.ndim]
    h, w = x.shape[-3:-1]
    dxp = np.zeros(lead + x.shape[:-3] + (h + pads[0] + pads[1], w + pads[2] + pads[3],
                                          x.shape[-1]), g.dtype)
    overlap = ksize[0] > strides[0] or ksize[1] > strides[1]
    for i, j, m in _argmax_masks(x, y, ksize, strides, pads):
        dst = tap(dxp, i, j, y.shape[-3:-1], strides, (1, 1))
        if overlap:
            dst += g * m
        else:  # each input pixel is in one window at most: write, don't add
            np.multiply(g, m, out=dst)
    return dxp[..., pads[0]:pads[0] + h, pads[2]:pads[2] + w, :]


def _max_pool_grad_grad_fwd(x, y, h, ksize, strides, pads):
    lead = h.shape[:h.ndim - x.ndim]
    hp = pad_hw(h, pads)
    out = np.zeros(lead + y.shape, h.dtype)
    for i, j, m in _argmax_masks(x, y, ksize, strides, pads):
        out += tap(hp, i, j, y.shape[-3:-1], strides, (1, 1)) * m
    return out


def _window_counts(input_hw, ksize, strides, pads, out_hw, dtype):
    """How many real (unpadded) pixels each SAME/explicit-padded window covers: [OH, OW, 1]."""
    def per_axis(a):
        starts = np.arange(out_hw[a]) * strides[a] - pads[2 * a]
        lo, hi = np.maximum(starts, 0), np.minimum(starts + ksize[a], input_hw[a])
        return np.maximum(hi - lo, 1)
    return np.multiply.outer(per_axis(0), per_axis(1)).astype(dtype)[:, :, None]


def _avg_pool_fwd(x, ksize, strides, pads):
    out, out_hw = _reduce_taps(pad_hw(x, pads), ksize, strides, np.add)
    out /= _window_counts(x.shape[-3:-1], ksize, strides, pads, out_hw, x.dtype)
    return out


def _avg_pool_grad_fwd(g, input_hw, ksize, strides, pads):
    out_hw = g.shape[-3:-1]
    gs = g / _window_counts(input_hw, ksize, strides, pads, out_hw, g.dtype)
    hp, wp = input_hw[0] + pads[0] + pads[1], input_hw[1] + pads[2] + pads[3]
    dxp = np.zeros(g.shape[:-3] + (hp, wp, g.shape[-1]), g.dtype)
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            tap(dxp, i, j, out_hw, strides, (1, 1))[...] += gs
    return crop_hw(dxp, pads, input_hw)


def _pool_shape(x, ksize, strides, pads):
    h, w = x.shape[-3:-1]
    return Spec(tuple(x.shape[:-3]) + (out_len(h, ksize[0], strides[0], 1, pads[0], pads[1]),
                                       out_len(w, ksize[1], strides[1], 1, pads[2], pads[3]),
                                       x.shape[-1]), x.dtype)


def _max_pool_grad_shape(x, y, g, **_):
    return Spec(tuple(g.shape[:len(g.shape) - len(y.shape)]) + tuple(x.shape), g.dtype)


def _max_pool_gg_shape(x, y, h, **_):
    return Spec(tuple(h.shape[:len(h.shape) - len(x.shape)]) + tuple(y.shape), h.dtype)


def _avg_pool_grad_shape(g, input_hw, **_):
    return Spec(tuple(g.shape[:-3]) + tuple(input_hw) + (g.shape[-1],), g.dtype)


def _by_images(fn, arrays, kw):
    """fn(*arrays, **kw) with every array's first axis (images) cut into runs, spread over
    the intra-op threads (the first run on this thread, to size the output)."""
    n = arrays[0].shape[0]
    runs = intra_op_pool.split_runs(n, n)
    if len(runs) <= 1:
        return fn(*arrays, **kw)
    first = fn(*(a[runs[0][0]:runs[0][1]] for a in arrays), **kw)
    out = np.empty((n,) + first.shape[1:], first.dtype)
    out[:runs[0][1]] = first

    def worker(pull):
        for s, e in pull:
            out[s:e] = fn(*(a[s:e] for a in arrays), **kw)
    intra_op_pool.map_runs(runs[1:], worker)
    return out


def _split_pool(fn):
    """A pooling kernel whose unbatched NHWC calls may split their images over threads
    (blas_threads measures whether that is faster for each size)."""
    def split(arrays, kw):
        return _by_images(fn, arrays, kw)
    split.__qualname__ = fn.__qualname__  # timings of its own (keyed by the kernel's name)

    def run(*arrays, **kw):
        if "ksize" not in kw or any(a.ndim != 4 for a in arrays) or \
                len({a.shape[0] for a in arrays}) != 1:
            return fn(*arrays, **kw)
        taps = kw["ksize"][0] * kw["ksize"][1]
        return blas_threads.run(arrays[0].size * taps, split, arrays, kw, split=True)
    return run




def _pool(op_obj, name, input, ksize, strides, padding, data_format, kinds):
    check_format(name, data_format, ("NHWC", "NCHW"))
    x = check_kind(name, to_tensor(input), kinds, "input")
    rank_check(name, x, 4, "input", data_format)
    last = data_format == "NHWC"
    k = hw_arg(name, ksize, "ksize", last)
    s = hw_arg(name, strides, "strides", last)
    x = to_nhwc(x, data_format)
    pads = pads_arg(name, padding, x._value.shape[1:3], k, s, (1, 1), last)
    return from_nhwc(execute(op_obj, (x,), {"ksize": k, "strides": s, "pads": pads}),
                      data_format)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """`tf.nn.max_pool2d`: the max over each window (padding never wins)."""
    return _pool(MAX_POOL, "MaxPool", input, ksize, strides, padding, data_format, REAL)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """`tf.nn.avg_pool2d`: the mean over each window's real (unpadded) pixels."""
    return _pool(AVG_POOL, "AvgPool", input, ksize, strides, padding, data_format, FLOAT)


def _pool1d(fn, op, input, ksize, strides, padding, data_format):  # noqa: A002
    if not isinstance(padding, str):
        raise ValueError(f"{op}: 1-D pooling takes padding 'SAME' or 'VALID', got {padding!r}")
    x4, axis, fmt = as_2d(op, to_tensor(input), data_format)
    y = fn(x4, arg_1d(op, ksize, "ksize", axis), arg_1d(op, strides, "strides", axis),
           padding, fmt)
    return squeeze_2d(y, axis)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """`tf.nn.max_pool1d`."""
    return _pool1d(max_pool2d, "MaxPool1D", input, ksize, strides, padding, data_format)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """`tf.nn.avg_pool1d`."""
    return _pool1d(avg_pool2d, "AvgPool1D", input, ksize, strides, padding, data_format)


def _pool_nd(fns, input, ksize, strides, padding, data_format):  # noqa: A002
    rank = to_tensor(input)._value.ndim
    if rank not in fns:
        raise invalid("MaxPool", f"pooling supports rank-3 (1-D) and rank-4 (2-D) inputs, got "
                      f"shape {list(to_tensor(input).shape)}")
    fn, default = fns[rank]
    return fn(input, ksize, strides, padding, data_format or default)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """`tf.nn.max_pool`: 1-D or 2-D by the input's rank."""
    return _pool_nd({3: (max_pool1d, "NWC"), 4: (max_pool2d, "NHWC")}, input, ksize, strides,
                    padding, data_format)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """`tf.nn.avg_pool`: 1-D or 2-D by the input's rank."""
    return _pool_nd({3: (avg_pool1d, "NWC"), 4: (avg_pool2d, "NHWC")}, input, ksize, strides,
                    padding, data_format)


# -- export rules ----------------------------------------------------------------------------
def _pool_tf(op_name):
    def rule(attrs, in_specs):
        k, s, pads = attrs["ksize"], attrs["strides"], attrs["pads"]
        padding = tf_padding(pads, in_specs[0].shape[-3:-1], k, s, (1, 1))
        if padding["padding"] == "EXPLICIT":
            raise errors.UnimplementedError(None, None, f"{op_name} with explicit pads {pads} "
                                            f"has no TensorFlow form (SAME or VALID only)")
        return op_name, {"ksize": [1, *k, 1], "strides": [1, *s, 1], "data_format": "NHWC",
                         **padding}
    return rule


def _onnx_pool(onnx_op, **extra):
    def rule(ctx, node):
        x = ctx.transpose(ctx.inputs(node)[0], TO_NCHW)
        y = ctx.emit(onnx_op, [x], kernel_shape=list(node.attrs["ksize"]),
                     strides=list(node.attrs["strides"]),
                     pads=onnx_pads(node.attrs["pads"]), **extra)
        return ctx.transpose(y, TO_NHWC)
    return rule


def _tflite_pool(builtin):
    def rule(ctx, node):
        kh, kw = node.attrs["ksize"]
        sh, sw = node.attrs["strides"]
        padding, inp = tflite_padding(ctx, node, (kh, kw), (1, 1), pad_op=False)
        ctx.op(builtin, [inp], [ctx.output(node)],
               options=("Pool2DOptions", {"padding": padding, "stride_h": int(sh),
                                          "stride_w": int(sw), "filter_height": int(kh),
                                          "filter_width": int(kw)}),
               fuse=(None, "fused_activation_function"))
    return rule


def _import_pool(fn):
    return lambda ins, a: fn(ins[0], a["ksize"], a["strides"], a["padding"],
                             a.get("data_format") or "NHWC")


# Pools: forwards take leading batch dims; MaxPoolGrad is linear in its cotangent and
# piecewise constant in x (the argmax masks). TensorFlow averages over the real pixels of a
# padded window: ONNX's count_include_pad=0.
_MAX_POOL_FWD, _MAX_POOL_GRAD_FWD = _split_pool(_max_pool_fwd), _split_pool(_max_pool_grad_fwd)
MAX_POOL = register(
    "MaxPool", _MAX_POOL_FWD, shape=_pool_shape,
    grad=lambda c, ans, x, **a: execute(MAX_POOL_GRAD, (x, ans, c), a),
    batch=leading(_MAX_POOL_FWD), tf=_pool_tf("MaxPool"), tf_outputs="output",
    tf_import=_import_pool(max_pool2d), onnx=_onnx_pool("MaxPool"),
    tflite=_tflite_pool("MAX_POOL_2D"))
MAX_POOL_GRAD = register(
    "MaxPoolGrad", _MAX_POOL_GRAD_FWD, shape=_max_pool_grad_shape,
    grad=lambda c, ans, x, y, g, **a: (None, None, execute(MAX_POOL_GRAD_GRAD, (x, y, c), a)),
    batch=cotangent_leading(_MAX_POOL_GRAD_FWD), unsupported="tf onnx tflite tf_import")
MAX_POOL_GRAD_GRAD = register(
    "MaxPoolGradGrad", _max_pool_grad_grad_fwd, shape=_max_pool_gg_shape,
    grad=lambda c, ans, x, y, h, **a: (None, None, execute(MAX_POOL_GRAD, (x, y, c), a)),
    batch=cotangent_leading(_max_pool_grad_grad_fwd), unsupported="tf onnx tflite tf_import")
AVG_POOL = register(
    "AvgPool", _avg_pool_fwd, shape=_pool_shape,
    grad=lambda c, ans, x, **a: execute(AVG_POOL_GRAD, (c,),
                                        dict(a, input_hw=x._value.shape[-3:-1])),
    batch=leading(_avg_pool_fwd), tf=_pool_tf("AvgPool"), tf_outputs="output",
    tf_import=_import_pool(avg_pool2d), onnx=_onnx_pool("AveragePool", count_include_pad=0),
    tflite=_tflite_pool("AVERAGE_POOL_2D"))
AVG_POOL_GRAD = register(
    "AvgPoolGrad", _avg_pool_grad_fwd, shape=_avg_pool_grad_shape,
    grad=lambda c, ans, g, input_hw, **a: execute(AVG_POOL, (c,), a),
    batch=leading(_avg_pool_grad_fwd), unsupported="tf onnx tflite tf_import")
