"""Bilinear resizing (TF2's half-pixel centres, no antialiasing) compiled (numba, the
`jit` extra): each output pixel interpolates its four neighbours as TensorFlow's kernel
does (top and bottom rows along x, then between them along y), each input row along x
once, where the NumPy form takes a gather, a product and a sum per tap along each axis. Returns None where
it does not apply (numba missing or off, another method, antialiasing, integer images).

Example:
    >>> y = bilinear(x, (224, 224), idx_h, w_h, idx_w, w_w)   # None without numba
"""
import numpy as np

from tensorlite.ops.numba_backend import available, compiled, jitable


def row_along_x(x, b, r, x0, x1, fx, row):
    """Input row r of image b interpolated along x: row[j, k] = left + (right - left) *
    wx, the first step of TensorFlow's kernel for a top or bottom row."""
    for j in range(row.shape[0]):
        c0, c1, wx = x0[j], x1[j], fx[j]
        for k in range(row.shape[1]):
            left, right = x[b, r, c0, k], x[b, r, c1, k]
            row[j, k] = left + (right - left) * wx


def _build(numba):
    jitable(row_along_x)

    @numba.njit(cache=True, nogil=True)
    def bilinear(x, y0, y1, fy, x0, x1, fx, rows, out):
        """rows: [2, OW, C] scratch of the computation's type. Each input row is
        interpolated along x once (output rows share input rows: 2.8 of them per input row
        upscaling 160 to 224) and kept while needed; then out = top + (bottom - top) * wy
        over a whole output row, contiguous, so that it vectorizes. The same operations
        as one output pixel at a time, so the same values."""
        n, oh, ow, c = out.shape
        for b in range(n):
            held = np.array([-1, -1])  # the input row each scratch slot holds
            for i in range(oh):
                r0, r1, wy = y0[i], y1[i], fy[i]
                s0 = 0 if held[0] == r0 else (1 if held[1] == r0 else
                                              (0 if held[1] == r1 else 1))
                if held[s0] != r0:
                    row_along_x(x, b, r0, x0, x1, fx, rows[s0])
                    held[s0] = r0
                s1 = s0 if r1 == r0 else 1 - s0
                if held[s1] != r1:
                    row_along_x(x, b, r1, x0, x1, fx, rows[s1])
                    held[s1] = r1
                top, bottom, dst = rows[s0].reshape(-1), rows[s1].reshape(-1), \
                    out[b, i].reshape(-1)
                for t in range(dst.shape[0]):
                    dst[t] = top[t] + (bottom[t] - top[t]) * wy
    return bilinear


def bilinear(x, size, taps_h, taps_w):
    """x [..., H, W, C] float resized to `size` with the (indices, weights) taps of each
    axis (image_resize._taps: weights (1 - f, f)), or None where this kernel does not apply."""
    if x.dtype.char not in "fd" or x.ndim not in (3, 4) or not available():
        return None
    kernel = compiled("resize_bilinear", _build)
    if kernel is None:
        return None
    (ih, wh), (iw, ww) = taps_h, taps_w
    x4 = np.ascontiguousarray(x if x.ndim == 4 else x[None])
    out = np.empty((x4.shape[0],) + tuple(size) + (x4.shape[-1],), x.dtype)
    rows = np.empty((2, size[1], x4.shape[-1]), np.result_type(x.dtype, ww.dtype, wh.dtype))
    kernel(x4, np.ascontiguousarray(ih[:, 0]), np.ascontiguousarray(ih[:, 1]),
           np.ascontiguousarray(wh[:, 1]), np.ascontiguousarray(iw[:, 0]),
           np.ascontiguousarray(iw[:, 1]), np.ascontiguousarray(ww[:, 1]), rows, out)
    return out if x.ndim == 4 else out[0]
