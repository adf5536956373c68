"""Fused elementwise kernels compiled with numba (the `jit` extra) for the fused ops of
optimised graphs (ops/fused_ops.py): a bias add and ReLU (or ReLU6) applied in place to a kernel's
output (with a residual block's sum before the activation), a ReLU gradient with its bias
gradient in one pass, max pools (non-overlapping, and any windows, strides and padding),
and a non-overlapping max pool's gradient with the ReLU gradient (and bias gradient)
behind it.

NumPy needs two to four passes and a temporary for each of these (the CIFAR CNN's
ReluGrad + Sum over [32, 32, 32, 32]: 1.2 ms); these read each element once, release the
GIL (intra-op threads run them side by side on runs of images) and do the same arithmetic
as the NumPy ops they replace (masks multiply, so an inf cotangent gives NaN there as
NumPy's and TF's kernels do). Bias gradients accumulate in float64 when split over
threads; the ReLU gradient's, on one thread, row by row in the array's dtype, as NumPy's
sum does. Compiled on first use, cached on disk; `kernels()` is None without numba and
fused_ops then uses NumPy.

Example:
    >>> k = kernels()
    >>> k.bias_act(out2d, bias, 1)   # out2d [rows, C] += bias, then max(., 0), in place
"""
import collections

import numpy as np

from tensorlite.ops.numba_backend import available, compiled, jitable

Kernels = collections.namedtuple("Kernels", "bias_act bias_add_act scale_bias_act "
                                             "relu_grad_bias max_pool "
                                             "max_pool_grad_relu max_pool_general")


def activated(v, act):
    """v after (act 1) ReLU or (act 2) ReLU6, NaN kept as np.maximum and np.clip keep it
    (the epilogues' helper: numba_backend.jitable)."""
    if act and v < 0:
        v = 0
    elif act == 2 and v > 6:
        v = 6
    return v


def _build(numba):
    jitable(activated, inline="always")

    @numba.njit(cache=True, nogil=True)
    def bias_act(o, b, act):
        """o [rows, C] += b [C], then (act 1) ReLU or (act 2) ReLU6, in place (NaN stays
        NaN, as np.maximum and np.clip keep it)."""
        rows, c = o.shape
        for i in range(rows):
            for k in range(c):
                v = o[i, k] + b[k]
                o[i, k] = activated(v, act)

    @numba.njit(cache=True, nogil=True)
    def bias_add_act(o, b, r, act):
        """o [rows, C] += b [C], then += r [rows, C] (a residual block's sum, added after the
        bias as the unfused ops do), then ReLU or ReLU6 as bias_act, in place."""
        rows, c = o.shape
        for i in range(rows):
            for k in range(c):
                v = (o[i, k] + b[k]) + r[i, k]
                o[i, k] = activated(v, act)

    @numba.njit(cache=True, nogil=True)
    def scale_bias_act(o, sc, b, r, act, residual):
        """o [rows, C] = o * sc [C] + b [C], then (`residual`) += r [rows, C], then ReLU or
        ReLU6 as bias_act, in place (r is not read without `residual`)."""
        rows, c = o.shape
        for i in range(rows):
            for k in range(c):
                v = o[i, k] * sc[k] + b[k]
                if residual:
                    v = v + r[i, k]
                o[i, k] = activated(v, act)

    @numba.njit(cache=True, nogil=True)
    def relu_grad_bias(g, y, out, acc):
        """out = g * (y > 0) over [rows, C]; acc [C] += out's column sums, row by row."""
        rows, c = g.shape
        for i in range(rows):
            for k in range(c):
                v = g[i, k] * (y[i, k] > 0)
                out[i, k] = v
                acc[k] += v

    @numba.njit(cache=True, nogil=True)
    def max_pool(x, kh, kw, s, e, y):
        """Images s..e of a max pool with windows kh x kw, stride = window, no padding:
        y [N, OH, OW, C] (NaN wins, as np.maximum's)."""
        oh, ow, c = y.shape[1], y.shape[2], y.shape[3]
        for b in range(s, e):
            for i in range(oh):
                for j in range(ow):
                    for k in range(c):
                        y[b, i, j, k] = x[b, i * kh, j * kw, k]
                    for di in range(kh):
                        for dj in range(kw):
                            if di == 0 and dj == 0:
                                continue
                            for k in range(c):
                                v = x[b, i * kh + di, j * kw + dj, k]
                                m = y[b, i, j, k]
                                y[b, i, j, k] = v if (v > m) | (v != v) else m

    @numba.njit(cache=True, nogil=True)
    def max_pool_grad_relu(x, y, g, kh, kw, s, e, dx, acc):
        """Images s..e of a max pool's gradient (windows kh x kw, stride = window, no
        padding: each pixel in one window at most) times the ReLU mask (x > 0) of its
        input x [N, H, W, C], written into dx [N, H, W, C]; pool output y and cotangent g
        [N, OH, OW, C]. The first tap equal to its window's max takes the gradient, as
        MaxPoolGrad's. acc [C] (float64) += the column sums of what is written."""
        _, h, w, c = x.shape
        oh, ow = y.shape[1], y.shape[2]
        free = np.empty(c, np.bool_)  # per channel: no tap of this window took it yet
        for b in range(s, e):
            for i in range(oh):
                for j in range(ow):
                    for k in range(c):
                        free[k] = True
                    for di in range(kh):
                        r = i * kh + di
                        for dj in range(kw):
                            q = j * kw + dj
                            for k in range(c):  # branch-free: it vectorizes over k
                                hit = free[k] & (x[b, r, q, k] == y[b, i, j, k])
                                free[k] = free[k] & ~hit
                                v = (g[b, i, j, k] * hit) * (x[b, r, q, k] > 0)
                                dx[b, r, q, k] = v
                                acc[k] += v
            for r in range(oh * kh, h):  # rows and columns no window covers
                for q in range(w):
                    for k in range(c):
                        dx[b, r, q, k] = 0
            for r in range(oh * kh):
                for q in range(ow * kw, w):
                    for k in range(c):
                        dx[b, r, q, k] = 0

    @numba.njit(cache=True, nogil=True)
    def max_pool_general(x, kh, kw, sh, sw, pt, pl, fill, s, e, y):
        """Images s..e of a max pool with any windows kh x kw, strides sh x sw and padding
        (pt top, pl left) of value `fill`: y [N, OH, OW, C] (NaN wins, as np.maximum's).
        ResNet's 3x3 stride-2 pool: one pass instead of a padded copy and nine strided
        maxima; with fill 0, also the zero padding (ZeroPadding2D) before it."""
        _, h, w, c = x.shape
        oh, ow = y.shape[1], y.shape[2]
        for b in range(s, e):
            for i in range(oh):
                r0 = i * sh - pt
                for j in range(ow):
                    q0 = j * sw - pl
                    first = True
                    padded = r0 < 0 or q0 < 0 or r0 + kh > h or q0 + kw > w
                    for di in range(kh):
                        r = r0 + di
                        if r < 0 or r >= h:
                            continue
                        for dj in range(kw):
                            q = q0 + dj
                            if q < 0 or q >= w:
                                continue
                            if first:
                                for k in range(c):
                                    y[b, i, j, k] = x[b, r, q, k]
                                first = False
                                continue
                            for k in range(c):
                                v = x[b, r, q, k]
                                m = y[b, i, j, k]
                                y[b, i, j, k] = v if (v > m) | (v != v) else m
                    if first:  # a window over padding only (explicit pads): the fill
                        for k in range(c):
                            y[b, i, j, k] = fill
                    elif padded:  # the fill as one more tap (NaN stays NaN)
                        for k in range(c):
                            m = y[b, i, j, k]
                            y[b, i, j, k] = fill if fill > m else m

    return Kernels(bias_act, bias_add_act, scale_bias_act, relu_grad_bias, max_pool,
                   max_pool_grad_relu, max_pool_general)


def kernels():
    """The compiled Kernels, or None where numba is unavailable."""
    return compiled("fused_elementwise", _build) if available() else None


def kernels_for(*arrays):
    """kernels() when every array is a contiguous float32 or float64 array of one dtype (the
    layouts the kernels take), else None."""
    dt = arrays[0].dtype
    if dt.char not in "fd" or any(a.dtype != dt or not a.flags.c_contiguous for a in arrays):
        return None
    return kernels()
