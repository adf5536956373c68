"""Depthwise convolution (depth multiplier 1, MobileNet's and EfficientNet's) as compiled
loops (numba, the `jit` extra): the forward, the input gradient and the filter gradient.

A depthwise convolution does 9 multiply-adds per output value for a 3x3 filter: it is bound
by memory, not arithmetic. NumPy's form takes one pass (a product and a sum, with a
temporary) over the whole output per filter tap; these loops read each input row once per
tap from cache and write each output value once, with the channels innermost so the
compiler vectorizes them. Images are split over the intra-op threads (numba releases the
GIL); the filter gradient sums each thread's partial result in float64.

Every function returns None where it does not apply (numba missing or switched off, a depth
multiplier other than 1, leading batch dimensions of the vectorized and higher-order rules,
integer dtypes): the NumPy forms in conv_kernels then run.

Example:
    >>> y = forward(x, w, (1, 1), (1, 1), (1, 1, 1, 1))   # None without numba
"""
import numpy as np

from tensorlite.framework import blas_threads, intra_op_pool
from tensorlite.ops.numba_backend import available, compiled


def _build(numba):
    @numba.njit(cache=True, nogil=True)
    def forward(xp, w, sh, sw, dh, dw, out, start, end):
        _, oh, ow, c = out.shape
        kh, kw = w.shape[0], w.shape[1]
        for n in range(start, end):
            for a in range(oh):
                for b in range(ow):
                    for k in range(c):
                        out[n, a, b, k] = 0
                    for i in range(kh):
                        r = a * sh + i * dh
                        for j in range(kw):
                            s = b * sw + j * dw
                            for k in range(c):
                                out[n, a, b, k] += xp[n, r, s, k] * w[i, j, k]

    @numba.njit(cache=True, nogil=True)
    def input_grad(g, w, sh, sw, dh, dw, dxp, start, end):
        _, oh, ow, c = g.shape
        kh, kw = w.shape[0], w.shape[1]
        for n in range(start, end):
            dxp[n] = 0
            for a in range(oh):
                for b in range(ow):
                    for i in range(kh):
                        r = a * sh + i * dh
                        for j in range(kw):
                            s = b * sw + j * dw
                            for k in range(c):
                                dxp[n, r, s, k] += g[n, a, b, k] * w[i, j, k]

    @numba.njit(cache=True, nogil=True)
    def filter_grad(xp, g, sh, sw, dh, dw, acc, start, end):
        _, oh, ow, c = g.shape
        kh, kw = acc.shape[0], acc.shape[1]
        row = np.empty(c, np.float64)
        for n in range(start, end):
            for a in range(oh):
                for i in range(kh):
                    r = a * sh + i * dh
                    for j in range(kw):
                        row[:] = 0  # one output row's sum in float64, then into acc
                        for b in range(ow):
                            s = b * sw + j * dw
                            for k in range(c):
                                row[k] += xp[n, r, s, k] * g[n, a, b, k]
                        for k in range(c):
                            acc[i, j, k] += row[k]
    return forward, input_grad, filter_grad


def _kernels():
    return compiled("depthwise", _build)


def _applies(*arrays, w_shape):
    return available() and all(a.ndim == 4 and a.dtype.char in "fd" for a in arrays) and \
        len(w_shape) == 4 and w_shape[-1] == 1 and len({a.dtype for a in arrays}) == 1


def _pad(x, pads):
    pt, pb, pl, pr = pads
    if not (pt or pb or pl or pr):
        return np.ascontiguousarray(x)
    out = np.zeros((x.shape[0], x.shape[1] + pt + pb, x.shape[2] + pl + pr, x.shape[3]),
                   x.dtype)
    out[:, pt:pt + x.shape[1], pl:pl + x.shape[2]] = x
    return out


def _per_image(name, n, macs, body):
    """body(start, end) over runs of the n images, split over the intra-op threads when
    blas_threads measures that faster for this size (timings kept under `name`)."""
    def split():
        def worker(pull):
            for s, e in pull:
                body(s, e)
        intra_op_pool.map_runs(intra_op_pool.split_runs(n, n), worker)
    split.__qualname__ = name
    blas_threads.run(macs, split, split=True)


def forward(x, w, strides, dilations, pads, epilogue=None):
    """[N, H, W, C] * [KH, KW, C, 1] -> [N, OH, OW, C], or None where this does not apply.
    `epilogue(view)`, when given, runs in place on each run of output images right after
    they are computed (a fused bias add and activation, ops/fused_ops.py), still in cache."""
    if not _applies(x, w, w_shape=w.shape):
        return None
    kernel = _kernels()
    if kernel is None:
        return None
    xp = _pad(x, pads)
    kh, kw, c, _ = w.shape
    oh = (xp.shape[1] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (xp.shape[2] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    out = np.empty((x.shape[0], oh, ow, c), x.dtype)
    w3 = np.ascontiguousarray(w[..., 0])
    def body(s, e):
        kernel[0](xp, w3, strides[0], strides[1], dilations[0], dilations[1], out, s, e)
        if epilogue is not None:
            epilogue(out[s:e], s * out[0].size)
    _per_image("depthwise_forward", x.shape[0], out.size * kh * kw, body)
    return out


def input_grad(g, w, input_hw, strides, dilations, pads):
    """The input gradient [N, H, W, C] of the cotangent g [N, OH, OW, C], or None."""
    if not _applies(g, w, w_shape=w.shape):
        return None
    kernel = _kernels()
    if kernel is None:
        return None
    pt, pb, pl, pr = pads
    n, _, _, c = g.shape
    hp, wp = input_hw[0] + pt + pb, input_hw[1] + pl + pr
    dxp = np.empty((n, hp, wp, c), g.dtype)
    w3 = np.ascontiguousarray(w[..., 0])
    gc = np.ascontiguousarray(g)
    _per_image("depthwise_input_grad", n, g.size * w.shape[0] * w.shape[1], lambda s, e: kernel[1](
        gc, w3, strides[0], strides[1], dilations[0], dilations[1], dxp, s, e))
    if (hp, wp) == tuple(input_hw):
        return dxp
    return np.ascontiguousarray(dxp[:, pt:pt + input_hw[0], pl:pl + input_hw[1]])


def filter_grad(x, g, filter_hw, strides, dilations, pads):
    """The filter gradient [KH, KW, C, 1] of input x and cotangent g, or None."""
    if not _applies(x, g, w_shape=tuple(filter_hw) + (x.shape[-1], 1)) or \
            g.shape[-1] != x.shape[-1]:
        return None
    kernel = _kernels()
    if kernel is None:
        return None
    xp, gc = _pad(x, pads), np.ascontiguousarray(g)
    kh, kw = filter_hw
    parts = []

    def split():
        def worker(pull):
            acc = np.zeros((kh, kw, x.shape[-1]), np.float64)
            for s, e in pull:
                kernel[2](xp, gc, strides[0], strides[1], dilations[0], dilations[1], acc, s, e)
            return acc
        parts.extend(intra_op_pool.map_runs(intra_op_pool.split_runs(len(x), len(x)), worker))
    split.__qualname__ = "depthwise_filter_grad"
    blas_threads.run(g.size * kh * kw, split, split=True)
    total = intra_op_pool.sum_partials(parts, lambda: np.zeros((kh, kw, x.shape[-1])))
    return total.astype(x.dtype)[..., None]
