"""The NumPy (and compiled) kernels behind Conv2D, DepthwiseConv2dNative and their backprop
ops: im2col in cache-sized runs, the algorithm choices conv_select measures (im2col, 1x1
GEMM, Winograd F(2,3)/F(4,3), numba), col2im input gradients, filter gradients and the
depthwise forms. Plain array functions: the ops, their rules and argument checking are in
conv_ops.py; pooling reuses the geometry helpers here.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorlite.framework import blas_threads, intra_op_pool
from tensorlite.ops import (conv_select, numba_conv, numba_depthwise, numba_winograd,
                            winograd)


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
def out_len(n, k, s, d, p0, p1):
    """Output length of a window of size `k`, stride `s`, dilation `d` over `n`
    padded by p0 and p1 (None for an unknown `n`)."""
    if n is None:
        return None
    return (n + p0 + p1 - ((k - 1) * d + 1)) // s + 1


def same_pads(n, k, s, d):
    """TensorFlow's SAME padding (before, after) for size `n`, window `k`, stride
    `s`, dilation `d`."""
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def _rows(i, d, s, n_out):
    return slice(i * d, i * d + (n_out - 1) * s + 1, s)


def tap(xp, i, j, out_hw, strides, dilations):
    """The input pixels that kernel tap (i, j) meets, one per output pixel: [..., OH, OW, C]."""
    return xp[..., _rows(i, dilations[0], strides[0], out_hw[0]),
              _rows(j, dilations[1], strides[1], out_hw[1]), :]


def pad_hw(x, pads, fill=0):
    """Pads the spatial dims of [..., H, W, C]."""
    pt, pb, pl, pr = pads
    if not (pt or pb or pl or pr):
        return x
    *lead, h, w, c = x.shape
    shape = tuple(lead) + (h + pt + pb, w + pl + pr, c)
    out = np.zeros(shape, x.dtype) if fill == 0 else np.full(shape, fill, x.dtype)
    out[..., pt:pt + h, pl:pl + w, :] = x
    return out


def crop_hw(xp, pads, hw):
    """The unpadded [..., H, W, C] interior of the padded `xp` (the inverse of pad_hw)."""
    pt, _, pl, _ = pads
    if xp.shape[-3:-1] == tuple(hw):
        return xp
    return np.ascontiguousarray(xp[..., pt:pt + hw[0], pl:pl + hw[1], :])


def padded_out_hw(xp_hw, k_hw, strides, dilations):
    """The output (height, width) of a window over an already padded input."""
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
    xp = pad_hw(x4, pads)
    oh, ow = padded_out_hw(xp.shape[1:3], k_hw, strides, dilations)
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
    oh, ow = padded_out_hw((h + pads[0] + pads[1], w + pads[2] + pads[3]), k_hw, strides,
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
    oh, ow = padded_out_hw((hp, wp), k_hw, strides, dilations)
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
def conv_fwd(x, w, strides, dilations, pads):
    """Conv2D's forward on NumPy arrays ([..., N, H, W, C] and [..., KH, KW, C, O]),
    by the algorithm conv_select picks for unbatched operands."""
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
    oh = out_len(x4.shape[1], kh, strides[0], dilations[0], pads[0], pads[1])
    ow = out_len(x4.shape[2], kw, strides[1], dilations[1], pads[2], pads[3])
    if _small_patches(x4.shape[0] * oh * ow, kh * kw * c, x4.itemsize):
        out = _conv_im2col_small(x4, w, strides, dilations, pads, (oh, ow))
        if epilogue is not None:
            epilogue(out, 0)
        return out
    w2 = np.ascontiguousarray(w.reshape(kh * kw * c, o))
    out = np.empty((x4.shape[0] * oh * ow, o), x4.dtype)

    def worker(pull):
        for rows, s, e in _patch_chunks(x4, (kh, kw), strides, dilations, pads, pull):
            part = np.matmul(rows, w2, out=out[s * oh * ow:e * oh * ow])
            if epilogue is not None:
                epilogue(part, s * oh * ow * o)
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
        pos = pad_hw(np.arange(1, size + 1, dtype=np.intp).reshape(shape), pads)  # 0: padding
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
    return numba_conv.conv(x4, w, strides, dilations, pads, pad_hw)


def _col2im(tap_fn, dxp, k_hw, out_hw, strides, dilations):
    """Scatter-adds per-tap [n, OH, OW, C] contributions into padded [n, Hp, Wp, C]."""
    for i in range(k_hw[0]):
        for j in range(k_hw[1]):
            tap(dxp, i, j, out_hw, strides, dilations)[...] += tap_fn(i, j)


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
        return conv_fwd(g, w[::-1, ::-1].transpose(0, 1, 3, 2), (1, 1), dilations, full)
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


def dw_fwd(x, w, strides, dilations, pads):
    """DepthwiseConv2dNative's forward: the compiled loops, else one NumPy pass per tap."""
    fast = numba_depthwise.forward(x, w, strides, dilations, pads)
    if fast is not None:
        return fast
    kh, kw, c, m = w.shape[-4:]
    xp = pad_hw(x, pads)
    out_hw = padded_out_hw(xp.shape[-3:-1], (kh, kw), strides, dilations)
    out = None
    for i in range(kh):
        for j in range(kw):
            term = tap(xp, i, j, out_hw, strides, dilations)[..., None] * _dw_filter_tap(w, i, j)
            if out is None:
                out = term
            else:
                out += term
    return out.reshape(out.shape[:-2] + (c * m,))


def dw_bi_fwd(g, w, input_hw, strides, dilations, pads):
    """The depthwise convolution's input gradient (compiled, else per tap)."""
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
            tap(dxp, i, j, (oh, ow), strides, dilations)[...] += contrib
    return crop_hw(dxp, pads, input_hw)


def dw_bf_fwd(x, g, filter_hw, strides, dilations, pads):
    """The depthwise convolution's filter gradient (compiled, else per tap)."""
    fast = numba_depthwise.filter_grad(x, g, filter_hw, strides, dilations, pads)
    if fast is not None:
        return fast
    kh, kw = filter_hw
    c = x.shape[-1]
    m = g.shape[-1] // c
    n, oh, ow = g.shape[-4:-1]
    g5 = g.reshape(g.shape[:-1] + (c, m))
    xp = pad_hw(x, pads)
    lead = np.broadcast_shapes(x.shape[:-4], g.shape[:-4])
    out = np.empty(lead + (kh, kw, c, m), g.dtype)
    for i in range(kh):
        for j in range(kw):
            xt = tap(xp, i, j, (oh, ow), strides, dilations)
            out[..., i, j, :, :] = np.einsum("...nhwc,...nhwcm->...cm", xt, g5)
    return out


def bi_threaded(g, w, input_hw, strides, dilations, pads):
    """Conv2DBackpropInput's forward, split over the intra-op threads."""
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


def bf_threaded(x, g, filter_hw, strides, dilations, pads):
    """Conv2DBackpropFilter's forward: the fastest algorithm for unbatched operands,
    else im2col split over the threads."""
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
