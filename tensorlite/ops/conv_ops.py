"""Convolution and pooling ops (`tf.nn.conv2d`, `depthwise_conv2d`, `max_pool2d`, ...).

Convolution is im2col: a strided view of the padded input gathers the patches into a
[rows, KH*KW*C] matrix that meets the filter in one matmul. The rows are built for a
cache-sized run of images at a time into one reused buffer, so the copy is still in cache
when the matmul reads it (measured 1.2-1.6x faster than one huge patch matrix). The
backward passes are ops of their own (`Conv2DBackpropInput`, `Conv2DBackpropFilter`,
`MaxPoolGrad`, ...), each with its own gradient, so gradients of any order work. A stride-1
input gradient is itself a convolution (cotangent with the flipped filter), so it reuses
the forward path; other strides scatter-add per kernel tap (col2im).

Batching: every op of a family accepts extra leading dimensions on either operand, and they
broadcast (as matmul's batch dimensions do). That is what lets gradient rules take
cotangents with leading batch dimensions, and lets second-order rules feed a batched filter
back in. Internally the leading dimensions are folded into N where the filter is unbatched.

Example:
    >>> x = tf.ones([1, 5, 5, 1]); k = tf.ones([3, 3, 1, 1])
    >>> tf.nn.conv2d(x, k, strides=1, padding="SAME")[0, :, :, 0].numpy()[0]
    array([4., 6., 6., 6., 4.], dtype=float32)
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorlite.framework import blas_threads, errors, intra_op_pool
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, input_needs_grad, register
from tensorlite.ops.batching import cotangent_leading, leading
from tensorlite.framework.tensor import Tensor
from tensorlite.ops.array_ops import reshape, transpose
from tensorlite.ops.common import FLOAT, REAL, batch_dims, check_kind, int_list, tensor_args, \
    to_tensor
from tensorlite.ops import (conv_select, numba_conv, numba_depthwise, numba_fused, numba_winograd,
                            winograd)
from tensorlite.ops.math_ops import reduce_sum

__all__ = []

# Input gradients for fewer input channels than this accumulate in a channels-first layout
# (each add runs along a whole row, not along C); for more, stride-1 ones run as a
# convolution and the others as one matmul per kernel tap added into NHWC rows.
_FEW_CHANNELS = 16
# Scratch per run of images (im2col rows, per-tap products): about what L2/L3 keeps hot.
_CHUNK_BYTES = 4 << 20
_NARROW_K = 64  # patch rows narrower than this are not chunked (see _patch_chunks)
# Patch matrices up to this size take _conv_im2col_small: one pad, one copy, one matmul.
_SMALL_PATCH_BYTES = 64 << 10
# Winograd's transforms are passes over the image that only pay back with enough channels
# to make the 16 matmuls the larger cost.
_WINOGRAD_MIN_CHANNELS = 8


# -- geometry -----------------------------------------------------------------------------
def _out_len(n, k, s, d, p0, p1):
    if n is None:
        return None
    return (n + p0 + p1 - ((k - 1) * d + 1)) // s + 1


def _same_pads(n, k, s, d):
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def _rows(i, d, s, n_out):
    return slice(i * d, i * d + (n_out - 1) * s + 1, s)


def _tap(xp, i, j, out_hw, strides, dilations):
    """The input pixels that kernel tap (i, j) meets, one per output pixel: [..., OH, OW, C]."""
    return xp[..., _rows(i, dilations[0], strides[0], out_hw[0]),
              _rows(j, dilations[1], strides[1], out_hw[1]), :]


def _pad(x, pads, fill=0):
    """Pads the spatial dims of [..., H, W, C]."""
    pt, pb, pl, pr = pads
    if not (pt or pb or pl or pr):
        return x
    *lead, h, w, c = x.shape
    shape = tuple(lead) + (h + pt + pb, w + pl + pr, c)
    out = np.zeros(shape, x.dtype) if fill == 0 else np.full(shape, fill, x.dtype)
    out[..., pt:pt + h, pl:pl + w, :] = x
    return out


def _crop(xp, pads, hw):
    pt, _, pl, _ = pads
    if xp.shape[-3:-1] == tuple(hw):
        return xp
    return np.ascontiguousarray(xp[..., pt:pt + hw[0], pl:pl + hw[1], :])


def _padded_out_hw(xp_hw, k_hw, strides, dilations):
    return tuple((xp_hw[a] - ((k_hw[a] - 1) * dilations[a] + 1)) // strides[a] + 1
                 for a in range(2))


def _patch_view(xp, k_hw, out_hw, strides, dilations):
    """[N, Hp, Wp, C] -> read-only strided view [N, OH, OW, KH, KW, C] of every patch."""
    n, _, _, c = xp.shape
    sn, sh, sw, sc = xp.strides
    shape = (n, out_hw[0], out_hw[1], k_hw[0], k_hw[1], c)
    st = (sn, sh * strides[0], sw * strides[1], sh * dilations[0], sw * dilations[1], sc)
    if xp.flags.c_contiguous and xp.size:  # a plain ndarray over the buffer: 10x cheaper
        return np.ndarray(shape, xp.dtype, buffer=xp, strides=st)
    return as_strided(xp, shape, st, writeable=False)


def _im2col(x4, k_hw, strides, dilations, pads):
    """[N, H, W, C] -> ([N*OH*OW, KH*KW*C] patch matrix, (OH, OW)): one strided copy."""
    xp = _pad(x4, pads)
    oh, ow = _padded_out_hw(xp.shape[1:3], k_hw, strides, dilations)
    view = _patch_view(xp, k_hw, (oh, ow), strides, dilations)
    return view.reshape(xp.shape[0] * oh * ow, -1), (oh, ow)


def _image_chunks(n, bytes_per_image):
    """Splits n images into runs whose per-run scratch stays cache-sized."""
    per = max(1, _CHUNK_BYTES // max(bytes_per_image, 1))
    return [(s, min(s + per, n)) for s in range(0, n, per)]


def _patch_runs(x4, k_hw, strides, dilations, pads):
    """Cache-sized (start, end) runs of images for `_patch_chunks`; under a split kernel
    (intra_op_pool.ways() > 1) at least two per thread."""
    n, h, w, c = x4.shape
    oh, ow = _padded_out_hw((h + pads[0] + pads[1], w + pads[2] + pads[3]), k_hw, strides,
                            dilations)
    k = k_hw[0] * k_hw[1] * c
    # Narrow patch rows (few channels) make the matmul memory-bound: chunks only cost there.
    per = _CHUNK_BYTES // max(oh * ow * k * x4.itemsize, 1) if k >= _NARROW_K else n
    return intra_op_pool.split_runs(n, per)


def _patch_chunks(x4, k_hw, strides, dilations, pads, pull=None):
    """Yields (patch rows, first image, end image) for the runs of images pulled from
    `pull` (default: all of `_patch_runs`), reusing one padded buffer and one patch buffer
    made on the first run: the padding and the im2col copy are still in cache when the
    matmul reads them. Threads sharing one `pull` each get buffers of their own."""
    n, h, w, c = x4.shape
    pt, pb, pl, pr = pads
    hp, wp = h + pt + pb, w + pl + pr
    oh, ow = _padded_out_hw((hp, wp), k_hw, strides, dilations)
    if pull is None:
        pull = iter(_patch_runs(x4, k_hw, strides, dilations, pads))
    if k_hw == (1, 1) and strides == (1, 1) and not any(pads):  # the input is the matrix
        for s, e in pull:
            yield x4[s:e].reshape((e - s) * h * w, c), s, e
        return
    buf = padded = None
    for s, e in pull:
        if buf is None or len(buf) < (e - s) * oh * ow:
            buf = np.empty(((e - s) * oh * ow, k_hw[0] * k_hw[1] * c), x4.dtype)
            padded = np.zeros((e - s, hp, wp, c), x4.dtype) if any(pads) else None
        if padded is None:
            xp = x4[s:e]
        else:  # only the interior is written: the border stays zero
            xp = padded[:e - s]
            xp[:, pt:pt + h, pl:pl + w, :] = x4[s:e]
        view = _patch_view(xp, k_hw, (oh, ow), strides, dilations)
        rows = buf[:(e - s) * oh * ow]
        np.copyto(rows.reshape(view.shape), view)
        yield rows, s, e


def _fold(a, core):
    """Folds all leading dims of `a` into the first of its `core` trailing dims."""
    return a.reshape((-1,) + a.shape[a.ndim - core + 1:])


# -- Conv2D and its two backward ops: NumPy forwards -----------------------------------------
def _conv_fwd(x, w, strides, dilations, pads):
    if x.ndim == 4 and w.ndim == 4:  # no leading batch dims: nothing to fold (~1 us)
        return conv_select.conv(x, w, strides, dilations, pads)
    lx, lw = x.shape[:-4], w.shape[:-4]
    kh, kw, c, o = w.shape[-4:]
    n = x.shape[-4]
    x4 = _fold(x, 4)
    if lw:  # a batch of filters (second-order rules): one batched matmul
        cols, (oh, ow) = _im2col(x4, (kh, kw), strides, dilations, pads)
        out = np.matmul(cols.reshape(lx + (n * oh * ow, kh * kw * c)),
                        w.reshape(lw + (kh * kw * c, o)))
        return out.reshape(out.shape[:-2] + (n, oh, ow, o))
    out = conv_select.conv(x4, w, strides, dilations, pads)
    return out.reshape(lx + (n,) + out.shape[1:]) if lx else out


@conv_select.algorithm("im2col", lambda *geo: True, split=True, fuses=True)
def _conv_im2col(x4, w, strides, dilations, pads, epilogue=None):
    """Patch rows of cache-sized runs of images, each run one matmul (and the epilogue)."""
    kh, kw, c, o = w.shape
    oh = _out_len(x4.shape[1], kh, strides[0], dilations[0], pads[0], pads[1])
    ow = _out_len(x4.shape[2], kw, strides[1], dilations[1], pads[2], pads[3])
    if _small_patches(x4.shape[0] * oh * ow, kh * kw * c, x4.itemsize):
        out = _conv_im2col_small(x4, w, strides, dilations, pads, (oh, ow))
        if epilogue is not None:
            epilogue(out)
        return out
    w2 = np.ascontiguousarray(w.reshape(kh * kw * c, o))
    out = np.empty((x4.shape[0] * oh * ow, o), x4.dtype)

    def worker(pull):
        for rows, s, e in _patch_chunks(x4, (kh, kw), strides, dilations, pads, pull):
            part = np.matmul(rows, w2, out=out[s * oh * ow:e * oh * ow])
            if epilogue is not None:
                epilogue(part)
    intra_op_pool.map_runs(_patch_runs(x4, (kh, kw), strides, dilations, pads), worker)
    return out.reshape(x4.shape[0], oh, ow, o)


def _small_patches(pixels, k, itemsize):
    """Whether a patch matrix of `pixels` rows of `k` taps fits _SMALL_PATCH_BYTES."""
    return pixels * k * itemsize <= _SMALL_PATCH_BYTES


def _conv_im2col_small(x4, w, strides, dilations, pads, out_hw):
    """im2col for a patch matrix that fits in L2 (few output pixels): the patch matrix is one
    take of precomputed positions from the flat input with a zero appended for the padding,
    then one matmul. The chunking's buffers and generator, or padding and a strided copy,
    cost more than the arithmetic there ([1,8,8,3]x[3,3,3,4]: 9.4 us chunked, 6.3 us padded
    and copied, 4.0 us here)."""
    kh, kw, c, o = w.shape
    idx = _small_patch_index(x4.shape, (kh, kw), strides, dilations, pads, out_hw)
    flat = np.concatenate((x4.reshape(-1), np.zeros(1, x4.dtype)))
    out = np.matmul(flat.take(idx), w.reshape(kh * kw * c, o))
    return out.reshape(x4.shape[0], out_hw[0], out_hw[1], o)


_SMALL_INDEX = {}  # (input shape, geometry) -> [pixels, KH*KW*C] positions in the flat input


def _small_patch_index(shape, k_hw, strides, dilations, pads, out_hw):
    """Where each patch element of `_conv_im2col_small` comes from in the flattened input;
    padding points at the zero appended after the input's last element. Cached per shape."""
    key = (shape, k_hw, strides, dilations, pads)
    idx = _SMALL_INDEX.get(key)
    if idx is None:
        size = int(np.prod(shape))
        pos = _pad(np.arange(1, size + 1, dtype=np.intp).reshape(shape), pads)  # 0: padding
        view = _patch_view(np.ascontiguousarray(pos), k_hw, out_hw, strides, dilations)
        idx = view.reshape(shape[0] * out_hw[0] * out_hw[1], k_hw[0] * k_hw[1] * shape[3]) - 1
        idx[idx < 0] = size
        if len(_SMALL_INDEX) >= 64:  # each holds at most _SMALL_PATCH_BYTES / itemsize positions
            _SMALL_INDEX.clear()
        _SMALL_INDEX[key] = idx
    return idx


@conv_select.algorithm("gemm1x1", lambda xs, ws, s, d, pads, dt: ws[:2] == (1, 1) and
                       not any(pads) and s != (1, 1))
def _conv_gemm1x1(x4, w, strides, dilations, pads):
    """A strided 1x1 convolution: the strided pixels meet the filter in one matmul (the
    unstrided one is already a single matmul in im2col, which copies nothing there)."""
    xs = np.ascontiguousarray(x4[:, ::strides[0], ::strides[1]])
    return np.matmul(xs, w[0, 0])


def _winograd_eligible(xs, ws, strides, dilations, pads, dtype_char):
    return ws[:2] == (3, 3) and strides == (1, 1) and dilations == (1, 1) and \
        xs[-1] >= _WINOGRAD_MIN_CHANNELS


def _winograd4_eligible(xs, ws, strides, dilations, pads, dtype_char):
    """F(4x4, 3x3): compiled transforms only (float32/float64 with numba)."""
    return _winograd_eligible(xs, ws, strides, dilations, pads, dtype_char) and \
        dtype_char in "fd" and numba_winograd.available()


@conv_select.algorithm("winograd", _winograd_eligible, split=True, fuses=True)
def _conv_winograd(x4, w, strides, dilations, pads, epilogue=None):
    return winograd.conv3x3(x4, w, pads, epilogue=epilogue)


@conv_select.algorithm("winograd4", _winograd4_eligible, split=True, fuses=True)
def _conv_winograd4(x4, w, strides, dilations, pads, epilogue=None):
    return winograd.conv3x3(x4, w, pads, epilogue=epilogue, m=4)


@conv_select.algorithm("numba", numba_conv.eligible)
def _conv_numba(x4, w, strides, dilations, pads):
    return numba_conv.conv(x4, w, strides, dilations, pads, _pad)


def _col2im(tap_fn, dxp, k_hw, out_hw, strides, dilations):
    """Scatter-adds per-tap [n, OH, OW, C] contributions into padded [n, Hp, Wp, C]."""
    for i in range(k_hw[0]):
        for j in range(k_hw[1]):
            _tap(dxp, i, j, out_hw, strides, dilations)[...] += tap_fn(i, j)


def _bi_channels_last(g2, w, ntot, dxp, out_hw, strides, dilations):
    """Input gradient, one matmul per kernel tap and cache-sized run of images, each
    [rows, O] @ [O, C] added straight into the NHWC rows it belongs to."""
    kh, kw, c, o = w.shape
    wt = np.ascontiguousarray(w.reshape(kh * kw, c, o).transpose(0, 2, 1))
    m = out_hw[0] * out_hw[1]
    for s, e in _image_chunks(ntot, m * kh * kw * c * g2.itemsize):
        gs = g2[s * m:e * m]
        _col2im(lambda i, j: (gs @ wt[i * kw + j]).reshape(e - s, out_hw[0], out_hw[1], c),
                dxp[s:e], (kh, kw), out_hw, strides, dilations)


def _bi_channels_first(g2, w, ntot, dxp_t, out_hw, strides, dilations):
    """Input gradient for few input channels: accumulate in [C, N, Hp, Wp] so every add
    runs along a whole output row rather than along C."""
    kh, kw, c, o = w.shape
    w2 = np.ascontiguousarray(w.reshape(kh * kw * c, o))
    m = out_hw[0] * out_hw[1]
    for s, e in _image_chunks(ntot, m * kh * kw * c * g2.itemsize):
        dcols_t = (w2 @ g2[s * m:e * m].T).reshape(kh, kw, c, e - s, out_hw[0], out_hw[1])
        dst = dxp_t[:, s:e]
        for i in range(kh):
            rows = _rows(i, dilations[0], strides[0], out_hw[0])
            for j in range(kw):
                dst[:, :, rows, _rows(j, dilations[1], strides[1], out_hw[1])] += dcols_t[i, j]


def _full_correlation_pads(k_hw, strides, dilations, pads):
    """Paddings that make conv(cotangent, flipped filter) the input gradient of a stride-1
    convolution, or None where that doesn't apply (strides, or explicit pads wider than
    the kernel)."""
    if strides != (1, 1):
        return None
    eff = [(k_hw[a] - 1) * dilations[a] for a in range(2)]
    full = (eff[0] - pads[0], eff[0] - pads[1], eff[1] - pads[2], eff[1] - pads[3])
    return full if min(full) >= 0 else None


def _conv_bi_fwd(g, w, input_hw, strides, dilations, pads):
    lg, lw = g.shape[:-4], w.shape[:-4]
    kh, kw, c, o = w.shape[-4:]
    n, oh, ow = g.shape[-4:-1]
    lead = np.broadcast_shapes(lg, lw)
    ntot = int(np.prod(lead, dtype=np.int64)) * n
    hp, wp = input_hw[0] + pads[0] + pads[1], input_hw[1] + pads[2] + pads[3]
    geo = ((oh, ow), strides, dilations)
    full = _full_correlation_pads((kh, kw), strides, dilations, pads)
    if not lw and full is not None and (c >= _FEW_CHANNELS or _small_patches(
            ntot * input_hw[0] * input_hw[1], kh * kw * o, g.itemsize)):
        # Stride 1: the input gradient is itself a convolution (of the padded cotangent with
        # the flipped, transposed filter), so it gets im2col's one big matmul; with few
        # channels too while the patches are small (one matmul beats KH*KW strided adds).
        return _conv_fwd(g, w[::-1, ::-1].transpose(0, 1, 3, 2), (1, 1), dilations, full)
    if lw:  # a batch of filters (second-order rules): one batched matmul, then col2im
        dcols = np.matmul(g.reshape(lg + (n * oh * ow, o)),
                          np.swapaxes(w.reshape(lw + (kh * kw * c, o)), -1, -2))
        taps = dcols.reshape(ntot, oh, ow, kh, kw, c)
        dxp = np.zeros((ntot, hp, wp, c), g.dtype)
        _col2im(lambda i, j: taps[:, :, :, i, j, :], dxp, (kh, kw), *geo)
    elif c < _FEW_CHANNELS:
        dxp_t = np.zeros((c, ntot, hp, wp), g.dtype)
        _bi_channels_first(g.reshape(-1, o), w, ntot, dxp_t, *geo)
        dxp = dxp_t.transpose(1, 2, 3, 0)  # a view: the copy to NHWC order is left undone
    else:
        dxp = np.zeros((ntot, hp, wp, c), g.dtype)
        _bi_channels_last(g.reshape(-1, o), w, ntot, dxp, *geo)
    dx = dxp[:, pads[0]:pads[0] + input_hw[0], pads[2]:pads[2] + input_hw[1], :]
    return dx.reshape(lead + (n,) + tuple(input_hw) + (c,))


def _conv_bf_fwd(x, g, filter_hw, strides, dilations, pads):
    lx, lg = x.shape[:-4], g.shape[:-4]
    kh, kw = filter_hw
    c, o = x.shape[-1], g.shape[-1]
    n, oh, ow = g.shape[-4:-1]
    m, k = n * oh * ow, kh * kw * c
    if lx:  # x with batch dims (second-order rules): one batched matmul
        cols, _ = _im2col(_fold(x, 4), filter_hw, strides, dilations, pads)
        dw = np.matmul(np.swapaxes(cols.reshape(lx + (m, k)), -1, -2), g.reshape(lg + (m, o)))
        return dw.reshape(dw.shape[:-2] + (kh, kw, c, o))
    p = int(np.prod(lg, dtype=np.int64))
    # Batched cotangents sit side by side as columns: one matmul serves all of them.
    g2 = g.reshape(m, o) if not lg else g.reshape(p, m, o).transpose(1, 0, 2).reshape(m, p * o)
    rows_per_image = oh * ow

    def worker(pull):  # each thread sums its own runs' products; the partial sums add up
        dw = None
        for rows, s, e in _patch_chunks(x, filter_hw, strides, dilations, pads, pull):
            part = rows.T @ g2[s * rows_per_image:e * rows_per_image]
            if dw is None:
                dw = part
            else:
                dw += part
        return dw
    dw = intra_op_pool.sum_partials(intra_op_pool.map_runs(
        _patch_runs(x, filter_hw, strides, dilations, pads), worker),
        lambda: np.zeros((k, p * o), g.dtype))
    if not lg:
        return dw.reshape(kh, kw, c, o)
    return dw.reshape(k, p, o).transpose(1, 0, 2).reshape(lg + (kh, kw, c, o))


# -- depthwise: compiled loops (numba_depthwise), else NumPy (one pass per kernel tap) ----
def _dw_filter_tap(w, i, j):
    """Filter tap (i, j) shaped to broadcast against [..., N, OH, OW, C, M]."""
    return w[..., i, j, :, :].reshape(w.shape[:-4] + (1, 1, 1) + w.shape[-2:])


def _dw_fwd(x, w, strides, dilations, pads):
    fast = numba_depthwise.forward(x, w, strides, dilations, pads)
    if fast is not None:
        return fast
    kh, kw, c, m = w.shape[-4:]
    xp = _pad(x, pads)
    out_hw = _padded_out_hw(xp.shape[-3:-1], (kh, kw), strides, dilations)
    out = None
    for i in range(kh):
        for j in range(kw):
            term = _tap(xp, i, j, out_hw, strides, dilations)[..., None] * _dw_filter_tap(w, i, j)
            if out is None:
                out = term
            else:
                out += term
    return out.reshape(out.shape[:-2] + (c * m,))


def _dw_bi_fwd(g, w, input_hw, strides, dilations, pads):
    fast = numba_depthwise.input_grad(g, w, input_hw, strides, dilations, pads)
    if fast is not None:
        return fast
    kh, kw, c, m = w.shape[-4:]
    n, oh, ow = g.shape[-4:-1]
    g5 = g.reshape(g.shape[:-1] + (c, m))
    lead = np.broadcast_shapes(g.shape[:-4], w.shape[:-4])
    hp, wp = input_hw[0] + pads[0] + pads[1], input_hw[1] + pads[2] + pads[3]
    dxp = np.zeros(lead + (n, hp, wp, c), g.dtype)
    for i in range(kh):
        for j in range(kw):
            contrib = np.einsum("...m,...m->...", g5, _dw_filter_tap(w, i, j))
            _tap(dxp, i, j, (oh, ow), strides, dilations)[...] += contrib
    return _crop(dxp, pads, input_hw)


def _dw_bf_fwd(x, g, filter_hw, strides, dilations, pads):
    fast = numba_depthwise.filter_grad(x, g, filter_hw, strides, dilations, pads)
    if fast is not None:
        return fast
    kh, kw = filter_hw
    c = x.shape[-1]
    m = g.shape[-1] // c
    n, oh, ow = g.shape[-4:-1]
    g5 = g.reshape(g.shape[:-1] + (c, m))
    xp = _pad(x, pads)
    lead = np.broadcast_shapes(x.shape[:-4], g.shape[:-4])
    out = np.empty(lead + (kh, kw, c, m), g.dtype)
    for i in range(kh):
        for j in range(kw):
            xt = _tap(xp, i, j, (oh, ow), strides, dilations)
            out[..., i, j, :, :] = np.einsum("...nhwc,...nhwcm->...cm", xt, g5)
    return out


# -- shape rules ----------------------------------------------------------------------------
def _bcast(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(q if p == 1 else p if q in (1, p) else None for p, q in zip(a, b))


def _conv_out_shape(channels):
    def rule(x, w, strides, dilations, pads):
        h, wd = x.shape[-3:-1]
        kh, kw = w.shape[-4:-2]
        oh = _out_len(h, kh, strides[0], dilations[0], pads[0], pads[1])
        ow = _out_len(wd, kw, strides[1], dilations[1], pads[2], pads[3])
        return Spec(_bcast(x.shape[:-4], w.shape[:-4]) + (x.shape[-4], oh, ow,
                                                          channels(w.shape)), x.dtype)
    return rule


def _bi_shape(g, w, input_hw, **_):
    return Spec(_bcast(g.shape[:-4], w.shape[:-4]) + (g.shape[-4],) + tuple(input_hw) +
                (w.shape[-2],), g.dtype)


def _bf_shape(tail):
    def rule(x, g, filter_hw, **_):
        return Spec(_bcast(x.shape[:-4], g.shape[:-4]) + tuple(filter_hw) +
                    tail(x.shape[-1], g.shape[-1]), g.dtype)
    return rule


# -- gradients ------------------------------------------------------------------------------
def _sum_to(t, nb, shape):
    """Sums `t` ([nb batch dims] + broadcast shape) down to [nb batch dims] + `shape`."""
    tshape = t._value.shape
    core = tshape[nb:]
    shape = tuple(shape)
    if core == shape:
        return t
    lead = len(core) - len(shape)
    axes = list(range(nb, nb + lead)) + [nb + lead + i for i, d in enumerate(shape)
                                         if d == 1 and core[lead + i] != 1]
    if axes:
        t = reduce_sum(t, axis=axes)
    return reshape(t, tshape[:nb] + shape)


class _ConvFamily:
    """A convolution op with its input- and filter-backprop ops: each is the others'
    gradient (all three are bilinear), so every order of derivative closes on the three."""

    def __init__(self, name, fwd, bi_fwd, bf_fwd, out_channels, filter_tail, **rules):
        # cost: the parallel pass's work estimate (graph/passes/parallel.py); `rules`: the
        # convolution's export and import rules; forwards take leading batch dims
        self.fwd = register(name, fwd, grad=self._fwd_grad, shape=_conv_out_shape(out_channels),
                            cost="conv", batch=leading(fwd), **rules)
        # the backprops run in training only: no inference format writes them
        self.bi_op = register(name + "BackpropInput", bi_fwd, grad=self._bi_grad,
                              shape=_bi_shape, cost="conv_backprop_input",
                              batch=leading(bi_fwd), unsupported="tf onnx tflite tf_import")
        self.bf_op = register(name + "BackpropFilter", bf_fwd, grad=self._bf_grad,
                              shape=_bf_shape(filter_tail), cost="conv_backprop_filter",
                              batch=leading(bf_fwd), unsupported="tf onnx tflite tf_import")

    def conv(self, x, w, geo):
        return execute(self.fwd, (x, w), geo)

    def bi(self, g, w, input_hw, geo):
        return execute(self.bi_op, (g, w), dict(geo, input_hw=tuple(input_hw)))

    def bf(self, x, g, filter_hw, geo):
        return execute(self.bf_op, (x, g), dict(geo, filter_hw=tuple(filter_hw)))

    def _fwd_grad(self, c, ans, x, w, **geo):
        nb = batch_dims(c, ans)
        xs, ws = x._value.shape, w._value.shape
        # a first layer's input gradient is a third of its backward pass: skip it unneeded
        return (_sum_to(self.bi(c, w, xs[-3:-1], geo), nb, xs) if input_needs_grad(0)
                else None,
                _sum_to(self.bf(x, c, ws[-4:-2], geo), nb, ws) if input_needs_grad(1)
                else None)

    def _bi_grad(self, c, ans, g, w, input_hw, **geo):
        nb = batch_dims(c, ans)
        gs, ws = g._value.shape, w._value.shape
        return (_sum_to(self.conv(c, w, geo), nb, gs),
                _sum_to(self.bf(c, g, ws[-4:-2], geo), nb, ws))

    def _bf_grad(self, c, ans, x, g, filter_hw, **geo):
        nb = batch_dims(c, ans)
        xs, gs = x._value.shape, g._value.shape
        return (_sum_to(self.bi(g, c, xs[-3:-1], geo), nb, xs),
                _sum_to(self.conv(x, c, geo), nb, gs))


def _bi_threaded(g, w, input_hw, strides, dilations, pads):
    if w.ndim == 4 and w.shape[-2] >= _FEW_CHANNELS and \
            _full_correlation_pads(w.shape[:2], strides, dilations, pads) is not None:
        # a convolution: the selector runs it (and picks its threads) itself
        return _conv_bi_fwd(g, w, input_hw, strides, dilations, pads)
    macs = g.size * w.size // max(w.shape[-1], 1)
    return blas_threads.run(macs, _conv_bi_fwd, g, w, input_hw, strides, dilations, pads)


def _bf_winograd(x, g, filter_hw, strides, dilations, pads):
    return winograd.filter_grad3x3(x, g, pads)


def _bf_winograd4(x, g, filter_hw, strides, dilations, pads):
    return winograd.filter_grad3x3(x, g, pads, m=4)


def _bf_threaded(x, g, filter_hw, strides, dilations, pads):
    if x.ndim == 4 and g.ndim == 4:  # unbatched: by the fastest algorithm for the shape
        candidates = {"im2col": _conv_bf_fwd}
        if _winograd4_eligible(x.shape, filter_hw, strides, dilations, pads,
                               x.dtype.char):  # (both need the compiled transforms)
            candidates["winograd"] = _bf_winograd
            candidates["winograd4"] = _bf_winograd4
        return conv_select.filter_grad(candidates, x, g, filter_hw, strides, dilations, pads)
    macs = g.size * x.shape[-1] * filter_hw[0] * filter_hw[1]
    return blas_threads.run(macs, _conv_bf_fwd, x, g, filter_hw, strides, dilations, pads,
                            split=x.ndim == 4)  # batched x: one batched matmul, BLAS threads


# -- pooling: NumPy forwards ------------------------------------------------------------------
def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _reduce_taps(xp, ksize, strides, combine):
    """Every window position's taps folded into one array with `combine(out, tap, out=out)`
    (np.maximum, np.add): one strided view per tap, no window copies."""
    out_hw = _padded_out_hw(xp.shape[-3:-1], ksize, strides, (1, 1))
    out = None
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            t = _tap(xp, i, j, out_hw, strides, (1, 1))
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
    if x.ndim == 4 and non_overlapping(ksize, strides, pads):
        k = numba_fused.kernels_for(x)
        if k is not None:  # non-overlapping windows: one compiled pass (0.4 -> 0.1 ms on
            n, h, w, c = x.shape   # the CIFAR CNN's [32, 30, 30, 32])
            y = np.empty((n, h // ksize[0], w // ksize[1], c), x.dtype)
            k.max_pool(x, ksize[0], ksize[1], 0, n, y)
            return y
    return _reduce_taps(_pad(x, pads, _lowest(x.dtype)), ksize, strides, np.maximum)[0]


def _argmax_masks(x, y, ksize, strides, pads):
    """Per tap, where that tap holds its window's max (the first one, on ties, as TF).
    Each mask is only valid until the next one is drawn."""
    xp = _pad(x, pads, _lowest(x.dtype))
    out_hw = y.shape[-3:-1]
    last = ksize[0] * ksize[1] - 1
    taken = None
    for t in range(last + 1):
        i, j = divmod(t, ksize[1])
        m = _tap(xp, i, j, out_hw, strides, (1, 1)) == y
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
        dst = _tap(dxp, i, j, y.shape[-3:-1], strides, (1, 1))
        if overlap:
            dst += g * m
        else:  # each input pixel is in one window at most: write, don't add
            np.multiply(g, m, out=dst)
    return dxp[..., pads[0]:pads[0] + h, pads[2]:pads[2] + w, :]


def _max_pool_grad_grad_fwd(x, y, h, ksize, strides, pads):
    lead = h.shape[:h.ndim - x.ndim]
    hp = _pad(h, pads)
    out = np.zeros(lead + y.shape, h.dtype)
    for i, j, m in _argmax_masks(x, y, ksize, strides, pads):
        out += _tap(hp, i, j, y.shape[-3:-1], strides, (1, 1)) * m
    return out


def _window_counts(input_hw, ksize, strides, pads, out_hw, dtype):
    """How many real (unpadded) pixels each SAME/explicit-padded window covers: [OH, OW, 1]."""
    def per_axis(a):
        starts = np.arange(out_hw[a]) * strides[a] - pads[2 * a]
        lo, hi = np.maximum(starts, 0), np.minimum(starts + ksize[a], input_hw[a])
        return np.maximum(hi - lo, 1)
    return np.multiply.outer(per_axis(0), per_axis(1)).astype(dtype)[:, :, None]


def _avg_pool_fwd(x, ksize, strides, pads):
    out, out_hw = _reduce_taps(_pad(x, pads), ksize, strides, np.add)
    out /= _window_counts(x.shape[-3:-1], ksize, strides, pads, out_hw, x.dtype)
    return out


def _avg_pool_grad_fwd(g, input_hw, ksize, strides, pads):
    out_hw = g.shape[-3:-1]
    gs = g / _window_counts(input_hw, ksize, strides, pads, out_hw, g.dtype)
    hp, wp = input_hw[0] + pads[0] + pads[1], input_hw[1] + pads[2] + pads[3]
    dxp = np.zeros(g.shape[:-3] + (hp, wp, g.shape[-1]), g.dtype)
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            _tap(dxp, i, j, out_hw, strides, (1, 1))[...] += gs
    return _crop(dxp, pads, input_hw)


def _pool_shape(x, ksize, strides, pads):
    h, w = x.shape[-3:-1]
    return Spec(tuple(x.shape[:-3]) + (_out_len(h, ksize[0], strides[0], 1, pads[0], pads[1]),
                                       _out_len(w, ksize[1], strides[1], 1, pads[2], pads[3]),
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


# -- argument handling ----------------------------------------------------------------------
def _check_format(op, data_format, allowed):
    if data_format not in allowed:
        raise ValueError(f"{op}: data_format must be one of {list(allowed)}, got "
                         f"{data_format!r}")


def _hw_arg(op, value, what, channels_last, default=1):
    """strides/dilations/ksize as TF takes them (int, or 1, 2 or 4 ints) -> (h, w)."""
    if value is None:
        value = default
    v = int_list(value, what)
    if len(v) == 1:
        v = v * 2
    elif len(v) == 4:
        outer = (v[0], v[3]) if channels_last else (v[0], v[1])
        if outer != (1, 1):
            raise invalid(op, f"{op}: {what}={v} has {what} in the batch or depth dimension; "
                          f"only height and width may differ from 1 (e.g. {what}=[1, 2, 2, 1] "
                          f"for NHWC)")
        v = v[1:3] if channels_last else v[2:4]
    elif len(v) != 2:
        raise ValueError(f"{op}: {what} must be an int or a list of 1, 2 or 4 ints, got "
                         f"{value!r}")
    if any(x is None or x < 1 for x in v):
        raise invalid(op, f"{op}: {what} must be positive, got {value!r}")
    return tuple(v)


def _pads(op, padding, in_hw, k_hw, strides, dilations, channels_last):
    """TF's padding argument -> (top, bottom, left, right), checking the output isn't empty."""
    if isinstance(padding, str):
        mode = padding
        if mode == "SAME":
            ph = _same_pads(in_hw[0], k_hw[0], strides[0], dilations[0])
            pw = _same_pads(in_hw[1], k_hw[1], strides[1], dilations[1])
            return ph + pw
        if mode != "VALID":
            raise ValueError(f"{op}: padding must be 'SAME', 'VALID' or a list of explicit "
                             f"paddings, got {padding!r} (TensorFlow's names are upper case)")
        pads = (0, 0, 0, 0)
    else:
        pairs = [int_list(p, "padding") for p in padding]
        if len(pairs) != 4 or any(len(p) != 2 for p in pairs) or \
                any(x < 0 for p in pairs for x in p):
            raise invalid(op, f"{op}: explicit padding must be 4 pairs of non-negative ints "
                          f"(one per dimension), got {padding!r}")
        outer = (pairs[0], pairs[3]) if channels_last else (pairs[0], pairs[1])
        if any(x for p in outer for x in p):
            raise invalid(op, f"{op}: explicit padding of the batch or channel dimension must "
                          f"be 0, got {padding!r}")
        hw = pairs[1:3] if channels_last else pairs[2:4]
        pads = (hw[0][0], hw[0][1], hw[1][0], hw[1][1])
    for a, name in ((0, "height"), (1, "width")):
        eff = (k_hw[a] - 1) * dilations[a] + 1
        size = in_hw[a] + pads[2 * a] + pads[2 * a + 1]
        if size < eff:
            raise invalid(op, f"{op}: Computed output size would be negative: the window of "
                          f"effective {name} {eff} (kernel {k_hw[a]}, dilation "
                          f"{dilations[a]}) is larger than the padded input {name} {size} "
                          f"(input {name} {in_hw[a]}); use padding='SAME', a smaller "
                          f"kernel or a larger input")
    return pads


def _nhwc(x, data_format):
    return x if data_format.endswith("C") else transpose(x, [0, 2, 3, 1])


def _from_nhwc(y, data_format):
    return y if data_format.endswith("C") else transpose(y, [0, 3, 1, 2])


def _rank_check(op, t, rank, what, layout):
    if t._value.ndim != rank:
        raise invalid(op, f"{op}: {what} must be rank {rank} ({layout}), got shape "
                      f"{list(t._value.shape)}; add or remove dimensions with tf.reshape / "
                      f"tf.expand_dims")


def _conv_prep(op, input, filters, strides, padding, data_format, dilations, depthwise):
    _check_format(op, data_format, ("NHWC", "NCHW"))
    x, w = tensor_args(op, (input, filters), FLOAT, ("input", "filter"))
    _rank_check(op, x, 4, "input", f"[batch, height, width, channels] for {data_format}"
                if data_format == "NHWC" else "[batch, channels, height, width]")
    _rank_check(op, w, 4, "filter", "[filter_height, filter_width, in_channels, "
                f"{'channel_multiplier' if depthwise else 'out_channels'}]")
    last = data_format == "NHWC"
    x = _nhwc(x, data_format)
    c = x._value.shape[-1]
    if c != w._value.shape[2]:
        grouped = "" if depthwise or c % max(w._value.shape[2], 1) else \
            " (grouped convolution is not supported)"
        raise invalid(op, f"{op}: input depth {c} does not match the filter's in_channels "
                      f"{w._value.shape[2]} (input shape {list(to_tensor(input).shape)} "
                      f"{data_format}, filter shape {list(w._value.shape)}); the filter must "
                      f"be [filter_height, filter_width, {c}, "
                      f"{'channel_multiplier' if depthwise else 'out_channels'}]{grouped}")
    s = _hw_arg(op, strides, "strides", last)
    d = _hw_arg(op, dilations, "dilations", last)
    pads = _pads(op, padding, x._value.shape[1:3], w._value.shape[:2], s, d, last)
    return x, w, {"strides": s, "dilations": d, "pads": pads}


# -- public functions -----------------------------------------------------------------------
def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None,  # noqa: A002
           name=None):
    """`tf.nn.conv2d`: 2-D cross-correlation of [N, H, W, C] input with [KH, KW, C, O]
    filters; padding 'SAME', 'VALID' or explicit [[0, 0], [t, b], [l, r], [0, 0]]."""
    key = _geo_key(input, filters, strides, padding, data_format, dilations)
    try:
        geo = _GEO.get(key) if key is not None else None
    except TypeError:  # explicit paddings as nested lists: unhashable, checked every call
        geo = key = None
    if geo is not None and data_format == "NHWC":
        return CONV2D.conv(input, filters, geo)
    x, w, geo = _conv_prep("Conv2D", input, filters, strides, padding, data_format, dilations,
                           False)
    if key is not None:
        if len(_GEO) >= 1024:
            _GEO.clear()
        _GEO[key] = geo
    return _from_nhwc(CONV2D.conv(x, w, geo), data_format)


_GEO = {}  # checked geometry of conv2d calls on Tensors, by shapes, dtypes and arguments


def _geo_key(x, w, *args):
    """A key for _GEO when both operands are Tensors, else None: a hit means _conv_prep
    already accepted these exact shapes, dtypes and arguments. (Explicit paddings as nested
    lists make it unhashable: the lookup catches that.)"""
    if type(x) is not Tensor or type(w) is not Tensor:
        return None
    return (x._value.shape, w._value.shape, x._dtype, w._dtype) + tuple(
        tuple(a) if type(a) is list else a for a in args)


def convolution(input, filters, strides=None, padding="VALID", data_format=None,  # noqa: A002
                dilations=None, name=None):
    """`tf.nn.convolution` for 1-D and 2-D inputs."""
    rank = to_tensor(input)._value.ndim
    if rank == 3:
        return conv1d(input, filters, 1 if strides is None else strides, padding,
                      data_format or "NWC", dilations)
    if rank == 4:
        return conv2d(input, filters, 1 if strides is None else strides, padding,
                      data_format or "NHWC", dilations)
    raise invalid("Convolution", f"convolution supports rank-3 (1-D) and rank-4 (2-D) inputs "
                  f"here, got shape {list(to_tensor(input).shape)}")


def atrous_conv2d(value, filters, rate, padding, name=None):
    """`tf.nn.atrous_conv2d`: conv2d with dilation `rate`."""
    return conv2d(value, filters, 1, padding, dilations=rate)


def _1d_arg(op, value, what, axis):
    """A 1-D stride/dilation/ksize (an int, or 1 or 3 ints) -> [1, v] for conv2d/pool2d."""
    v = int_list(1 if value is None else value, what)
    if len(v) == 3:
        v = [v[axis]]
    if len(v) != 1:
        raise ValueError(f"{op}: {what} must be an int or a list of 1 or 3 ints, got {value!r}")
    return [1, v[0]]


def _as_2d(op, x, data_format):
    _check_format(op, data_format, ("NWC", "NCW"))
    _rank_check(op, x, 3, "input", "[batch, width, channels]" if data_format == "NWC"
                else "[batch, channels, width]")
    axis = 1 if data_format == "NWC" else 2  # the unit height goes just before the width
    x4 = reshape(x, x._value.shape[:axis] + (1,) + x._value.shape[axis:])
    return x4, axis, "NHWC" if data_format == "NWC" else "NCHW"


def _squeeze_2d(y, axis):
    return reshape(y, y._value.shape[:axis] + y._value.shape[axis + 1:])


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None,  # noqa: A002
           name=None):
    """`tf.nn.conv1d`: [N, W, C] input, [KW, C, O] filters (a conv2d with height 1)."""
    x, w = tensor_args("Conv1D", (input, filters), FLOAT, ("input", "filters"))
    _rank_check("Conv1D", w, 3, "filters", "[filter_width, in_channels, out_channels]")
    if not isinstance(padding, str):
        raise ValueError(f"conv1d: padding must be 'SAME' or 'VALID', got {padding!r}")
    x4, axis, fmt = _as_2d("Conv1D", x, data_format)
    y = conv2d(x4, reshape(w, (1,) + w._value.shape),
               _1d_arg("Conv1D", stride, "stride", axis), padding, fmt,
               _1d_arg("Conv1D", dilations, "dilations", axis))
    return _squeeze_2d(y, axis)


def depthwise_conv2d(input, filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """`tf.nn.depthwise_conv2d`: each input channel convolved with its own
    [KH, KW, 1, M] filters; output channel c*M + m."""
    fmt = data_format or "NHWC"
    x, w, geo = _conv_prep("DepthwiseConv2dNative", input, filter, strides, padding, fmt,
                           dilations, True)
    return _from_nhwc(DEPTHWISE.conv(x, w, geo), fmt)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     data_format=None, dilations=None, name=None):
    """`tf.nn.separable_conv2d`: depthwise, then a 1x1 convolution."""
    fmt = data_format or "NHWC"
    y = depthwise_conv2d(input, depthwise_filter, strides, padding, fmt, dilations)
    return conv2d(y, pointwise_filter, 1, "VALID", fmt)


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NHWC", dilations=None, name=None):
    """`tf.nn.conv2d_transpose`: the gradient of conv2d with respect to its input;
    filters are [KH, KW, output_channels, input_channels]."""
    op = "Conv2DBackpropInput"
    _check_format(op, data_format, ("NHWC", "NCHW"))
    g, w = tensor_args(op, (input, filters), FLOAT, ("input", "filters"))
    _rank_check(op, g, 4, "input", data_format)
    _rank_check(op, w, 4, "filters", "[filter_height, filter_width, output_channels, "
                "in_channels]")
    last = data_format == "NHWC"
    g = _nhwc(g, data_format)
    out = int_list(output_shape, "output_shape")
    if len(out) != 4:
        raise invalid(op, f"conv2d_transpose: output_shape must have 4 entries, got {out}")
    out_hw = tuple(out[1:3]) if last else tuple(out[2:4])
    out_c = out[3] if last else out[1]
    if g._value.shape[-1] != w._value.shape[3] or out_c != w._value.shape[2] \
            or out[0] != g._value.shape[0]:
        raise invalid(op, f"conv2d_transpose: input {list(to_tensor(input).shape)}, filters "
                      f"{list(w._value.shape)} and output_shape {out} disagree: filters must be "
                      f"[kh, kw, output_channels={out_c}, input_channels="
                      f"{g._value.shape[-1]}] and output_shape[0] the batch size")
    s = _hw_arg(op, strides, "strides", last)
    d = _hw_arg(op, dilations, "dilations", last)
    pads = _pads(op, padding, out_hw, w._value.shape[:2], s, d, last)
    expect = tuple(_out_len(out_hw[a], w._value.shape[a], s[a], d[a], pads[2 * a],
                            pads[2 * a + 1]) for a in range(2))
    if expect != g._value.shape[1:3]:
        raise invalid(op, f"conv2d_transpose: a conv2d of output_shape {out} with this filter, "
                      f"strides {list(s)} and padding {padding!r} gives spatial size "
                      f"{list(expect)}, but the input's is {list(g._value.shape[1:3])}; pick "
                      f"an output_shape consistent with the input")
    geo = {"strides": s, "dilations": d, "pads": pads}
    return _from_nhwc(CONV2D.bi(g, w, out_hw, geo), data_format)


def _pool(op_obj, name, input, ksize, strides, padding, data_format, kinds):
    _check_format(name, data_format, ("NHWC", "NCHW"))
    x = check_kind(name, to_tensor(input), kinds, "input")
    _rank_check(name, x, 4, "input", data_format)
    last = data_format == "NHWC"
    k = _hw_arg(name, ksize, "ksize", last)
    s = _hw_arg(name, strides, "strides", last)
    x = _nhwc(x, data_format)
    pads = _pads(name, padding, x._value.shape[1:3], k, s, (1, 1), last)
    return _from_nhwc(execute(op_obj, (x,), {"ksize": k, "strides": s, "pads": pads}),
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
    x4, axis, fmt = _as_2d(op, to_tensor(input), data_format)
    y = fn(x4, _1d_arg(op, ksize, "ksize", axis), _1d_arg(op, strides, "strides", axis),
           padding, fmt)
    return _squeeze_2d(y, axis)


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


# TensorFlow's ops as SavedModel graphs spell them (rule form: saved_model/function_runner.py)
def _import_padding(a):
    """TensorFlow's padding attribute, EXPLICIT as its [[0, 0], [t, b], [l, r], [0, 0]]."""
    if a["padding"] != "EXPLICIT":
        return a["padding"]
    p = list(a["explicit_paddings"])
    return [p[i:i + 2] for i in range(0, 8, 2)]


# -- export rules: TensorFlow's ops (the rule's form: tensorlite/saved_model/function_def.py)
def _tf_padding(pads, hw, ksize, strides, dilations):
    """TensorFlow's padding attributes of our explicit pads: "VALID", "SAME" where they are
    SAME's pads for this input size, else "EXPLICIT" with NHWC explicit_paddings."""
    if not any(pads):
        return {"padding": "VALID"}
    if None not in hw and all(
            (pads[2 * i], pads[2 * i + 1]) == _same_pads(hw[i], ksize[i], strides[i],
                                                         dilations[i]) for i in (0, 1)):
        return {"padding": "SAME"}
    return {"padding": "EXPLICIT", "explicit_paddings": [0, 0, *pads, 0, 0]}


def _conv_tf(op_name):
    def rule(attrs, in_specs):
        x, w = in_specs
        s, d, pads = attrs["strides"], attrs["dilations"], attrs["pads"]
        return op_name, {"strides": [1, *s, 1], "dilations": [1, *d, 1], "data_format": "NHWC",
                         **_tf_padding(pads, x.shape[-3:-1], w.shape[:2], s, d)}
    return rule


def _pool_tf(op_name):
    def rule(attrs, in_specs):
        k, s, pads = attrs["ksize"], attrs["strides"], attrs["pads"]
        padding = _tf_padding(pads, in_specs[0].shape[-3:-1], k, s, (1, 1))
        if padding["padding"] == "EXPLICIT":
            raise errors.UnimplementedError(None, None, f"{op_name} with explicit pads {pads} "
                                            f"has no TensorFlow form (SAME or VALID only)")
        return op_name, {"ksize": [1, *k, 1], "strides": [1, *s, 1], "data_format": "NHWC",
                         **padding}
    return rule


# -- export rules: ONNX (the rule's form: tensorlite/onnx/__init__.py) ------------------------
# ONNX convolves and pools NCHW: the rules transpose around the op (runtimes cancel adjacent
# transposes) and write weights pre-transposed when they are constants.
_TO_NCHW, _TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)


def _onnx_pads(pads):
    top, bottom, left, right = (int(p) for p in pads)
    return [top, left, bottom, right]


def _onnx_weights(ctx, node, perm, shape=None):
    """The filter in ONNX's [out, in/group, kh, kw] layout: folded when constant."""
    w = ctx.value(node.inputs[1])
    if w is not None:
        w = np.transpose(w, perm)
        return ctx.const(w if shape is None else w.reshape(shape), "weights")
    t = ctx.transpose(ctx.name(node.inputs[1]), perm)
    return t if shape is None else ctx.emit("Reshape", [t, ctx.ints(shape)])


def _onnx_conv(depthwise):
    def rule(ctx, node):
        if len(ctx.shape(node.inputs[0])) != 4:
            ctx.unsupported(node, "on inputs of rank other than 4 has no ONNX mapping")
        kh, kw, cin, cm = ctx.shape(node.inputs[1])
        if depthwise:  # [kh, kw, C, M] -> [C*M, 1, kh, kw], one group per input channel
            w, group = _onnx_weights(ctx, node, (2, 3, 0, 1), (cin * cm, 1, kh, kw)), cin
        else:
            w, group = _onnx_weights(ctx, node, (3, 2, 0, 1)), 1
        x = ctx.transpose(ctx.name(node.inputs[0]), _TO_NCHW)
        y = ctx.emit("Conv", [x, w], strides=list(node.attrs["strides"]),
                     dilations=list(node.attrs["dilations"]), group=group,
                     pads=_onnx_pads(node.attrs["pads"]), kernel_shape=[kh, kw])
        return ctx.transpose(y, _TO_NHWC)
    return rule


def _onnx_pool(onnx_op, **extra):
    def rule(ctx, node):
        x = ctx.transpose(ctx.inputs(node)[0], _TO_NCHW)
        y = ctx.emit(onnx_op, [x], kernel_shape=list(node.attrs["ksize"]),
                     strides=list(node.attrs["strides"]),
                     pads=_onnx_pads(node.attrs["pads"]), **extra)
        return ctx.transpose(y, _TO_NHWC)
    return rule


# -- export rules: TFLite (the rule's form: tensorlite/lite/convert/converter.py) -------------
def _tflite_padding(ctx, node, ksize, dilations, pad_op=True):
    """'VALID' or 'SAME' when the node's explicit pads are TensorFlow's for that padding;
    otherwise (convolutions only: zeros are their padding) the input is padded by an
    explicit PAD op first. Returns (padding, input tensor)."""
    x = node.inputs[0]
    pads = tuple(int(p) for p in node.attrs["pads"])
    inp = ctx.tensor(x)
    if not any(pads):
        return "VALID", inp
    shape = ctx.shape(x)
    same = []
    for size, k, s, d in zip(shape[1:3], ksize, node.attrs["strides"], dilations):
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        same += [total // 2, total - total // 2]
    if tuple(same) == pads:
        return "SAME", inp
    if not pad_op:
        ctx.unsupported(node, f"with pads {pads} (neither SAME nor VALID) has no TFLite "
                              f"builtin")
    padded_shape = (shape[0], shape[1] + pads[0] + pads[1], shape[2] + pads[2] + pads[3],
                    shape[3])
    out = ctx.new_tensor(padded_shape, ctx.dtype(x), "pad")
    paddings = np.asarray([[0, 0], pads[0:2], pads[2:4], [0, 0]], np.int32)
    ctx.op("PAD", [inp, ctx.const(paddings, "paddings")], [out])
    return "VALID", out


def _tflite_conv(depthwise):
    def rule(ctx, node):
        w = ctx.value(node.inputs[1])
        if w is None or len(ctx.shape(node.inputs[0])) != 4:
            ctx.unsupported(node, "needs constant filters and a rank-4 input for TFLite")
        kh, kw, cin, cm = w.shape
        sh, sw = node.attrs["strides"]
        dh, dw = node.attrs["dilations"]
        padding, inp = _tflite_padding(ctx, node, (kh, kw), (dh, dw))
        options = {"padding": padding, "stride_h": int(sh), "stride_w": int(sw),
                   "dilation_h_factor": int(dh), "dilation_w_factor": int(dw)}
        if depthwise:  # [kh, kw, C, M] -> [1, kh, kw, C*M]
            filt = w.reshape(1, kh, kw, cin * cm)
            builtin, options = "DEPTHWISE_CONV_2D", ("DepthwiseConv2DOptions",
                                                     dict(options, depth_multiplier=int(cm)))
        else:  # [kh, kw, in, out] -> [out, kh, kw, in]
            filt = np.transpose(w, (3, 0, 1, 2))
            builtin, options = "CONV_2D", ("Conv2DOptions", options)
        ctx.op(builtin, [inp, ctx.const(np.ascontiguousarray(filt), "filter"), -1],
               [ctx.output(node)], options=options, fuse=(2, "fused_activation_function"))
    return rule


def _tflite_pool(builtin):
    def rule(ctx, node):
        kh, kw = node.attrs["ksize"]
        sh, sw = node.attrs["strides"]
        padding, inp = _tflite_padding(ctx, node, (kh, kw), (1, 1), pad_op=False)
        ctx.op(builtin, [inp], [ctx.output(node)],
               options=("Pool2DOptions", {"padding": padding, "stride_h": int(sh),
                                          "stride_w": int(sw), "filter_height": int(kh),
                                          "filter_width": int(kw)}),
               fuse=(None, "fused_activation_function"))
    return rule


# -- the ops, each with all its rules (the helpers above) ---------------------------------------
def _import_conv(ins, a):
    return conv2d(ins[0], ins[1], a["strides"], _import_padding(a),
                  a.get("data_format") or "NHWC", a.get("dilations"))


def _import_depthwise(ins, a):
    return depthwise_conv2d(ins[0], ins[1], a["strides"], _import_padding(a),
                            a.get("data_format") or "NHWC",
                            a.get("dilations")[1:3] if a.get("dilations") else None)


def _import_pool(fn):
    return lambda ins, a: fn(ins[0], a["ksize"], a["strides"], a["padding"],
                             a.get("data_format") or "NHWC")


CONV2D = _ConvFamily("Conv2D", _conv_fwd, _bi_threaded, _bf_threaded,
                     lambda ws: ws[-1], lambda c, o: (c, o),
                     tf=_conv_tf("Conv2D"), tf_outputs="output", tf_import=_import_conv,
                     onnx=_onnx_conv(depthwise=False), tflite=_tflite_conv(depthwise=False))
DEPTHWISE = _ConvFamily("DepthwiseConv2dNative", _dw_fwd, _dw_bi_fwd, _dw_bf_fwd,
                        lambda ws: None if None in ws[-2:] else ws[-2] * ws[-1],
                        lambda c, o: (c, None if None in (c, o) else o // c),
                        tf=_conv_tf("DepthwiseConv2dNative"), tf_outputs="output",
                        tf_import=_import_depthwise, onnx=_onnx_conv(depthwise=True),
                        tflite=_tflite_conv(depthwise=True))

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
