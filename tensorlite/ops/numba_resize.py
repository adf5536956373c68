"""Bilinear resizing (TF2's half-pixel centres, no antialiasing) as one compiled pass
(numba, the `jit` extra): each output pixel reads its four neighbours and interpolates as
TensorFlow's kernel does (top and bottom rows along x, then between them along y), where the
NumPy form takes a gather, a product and a sum per tap along each axis. Returns None where
it does not apply (numba missing or off, another method, antialiasing, integer images).

Example:
    >>> y = bilinear(x, (224, 224), idx_h, w_h, idx_w, w_w)   # None without numba
"""
import numpy as np

from tensorlite.ops.numba_backend import available, compiled


def _build(numba):
    @numba.njit(cache=True, nogil=True)
    def bilinear(x, y0, y1, fy, x0, x1, fx, out):
        n, oh, ow, c = out.shape
        for b in range(n):
            for i in range(oh):
                r0, r1, wy = y0[i], y1[i], fy[i]
                for j in range(ow):
                    c0, c1, wx = x0[j], x1[j], fx[j]
                    for k in range(c):
                        tl, tr = x[b, r0, c0, k], x[b, r0, c1, k]
                        bl, br = x[b, r1, c0, k], x[b, r1, c1, k]
                        top = tl + (tr - tl) * wx
                        bottom = bl + (br - bl) * wx
                        out[b, i, j, k] = top + (bottom - top) * wy
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
    kernel(x4, np.ascontiguousarray(ih[:, 0]), np.ascontiguousarray(ih[:, 1]),
           np.ascontiguousarray(wh[:, 1]), np.ascontiguousarray(iw[:, 0]),
           np.ascontiguousarray(iw[:, 1]), np.ascontiguousarray(ww[:, 1]), out)
    return out if x.ndim == 4 else out[0]
