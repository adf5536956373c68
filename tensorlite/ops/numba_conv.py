"""An optional compiled direct convolution (numba, the `jit` extra) for small shapes, where
im2col's copies and NumPy's per-call costs outweigh the arithmetic. The selector in
conv_select times it against the NumPy algorithms, so it is only used where it measured
faster; without numba (or with TENSORLITE_NUMBA=0) `available()` is False and nothing
changes.

The kernel is compiled on first use (cached on disk by numba), never at import.

Example:
    >>> if available(): y = conv(x4, w, (1, 1), (1, 1), (1, 1, 1, 1))
"""
import numpy as np

from tensorlite.ops.numba_backend import available, compiled

# Larger convolutions belong to BLAS: a direct loop there only costs a slow measurement.
MAX_MACS = 1 << 20


def _build(numba):
    @numba.njit(cache=True, nogil=True)
    def direct(xp, w, sh, sw, dh, dw, out):
        n, oh, ow, o = out.shape
        kh, kw, c, _ = w.shape
        for b in range(n):
            for i in range(oh):
                for j in range(ow):
                    for co in range(o):
                        out[b, i, j, co] = 0
                    for p in range(kh):
                        for q in range(kw):
                            r, s = i * sh + p * dh, j * sw + q * dw
                            for ci in range(c):
                                v = xp[b, r, s, ci]
                                for co in range(o):
                                    out[b, i, j, co] += v * w[p, q, ci, co]
    return direct


def eligible(x_shape, w_shape, strides, dilations, pads, dtype_char):
    n, h, wd, _ = x_shape
    macs = n * h * wd * int(np.prod(w_shape)) // (strides[0] * strides[1])
    return dtype_char in "fd" and macs <= MAX_MACS and available()


def conv(x4, w, strides, dilations, pads, pad_fn):
    """Direct convolution of [N, H, W, C] with [KH, KW, C, O]; pad_fn pads the input."""
    kernel = compiled("conv_direct", _build)
    xp = np.ascontiguousarray(pad_fn(x4, pads))
    kh, kw = w.shape[:2]
    oh = (xp.shape[1] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (xp.shape[2] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    out = np.empty((x4.shape[0], oh, ow, w.shape[3]), x4.dtype)
    if kernel is not None:
        kernel(xp, np.ascontiguousarray(w, dtype=x4.dtype), strides[0], strides[1],
               dilations[0], dilations[1], out)
        return out
    out[...] = 0  # numba failed to build: the same sum, one matmul per kernel tap
    for p in range(kh):
        for q in range(kw):
            out += xp[:, p * dilations[0]:p * dilations[0] + (oh - 1) * strides[0] + 1:strides[0],
                      q * dilations[1]:q * dilations[1] + (ow - 1) * strides[1] + 1:strides[1]] \
                @ w[p, q]
    return out
