"""A left-right flip of images [..., H, W, C] as one compiled copy (numba, the `jit` extra)
with the GIL released. NumPy's reversed view along W costs every later op a copy whose
innermost run is one pixel's C values (~100 us for a 160x160x3 image, more than the colour
adjustment that follows); this writes the flipped image contiguously in ~20 us. Returns None
where it does not apply (numba missing or off, not C-contiguous, fewer than 3 dimensions).

Example:
    >>> flip_width(image_uint8)   # == np.ascontiguousarray(image_uint8[..., ::-1, :])
"""
import numpy as np

from tensorlite.ops.numba_backend import available, compiled


def _build(numba):
    @numba.njit(cache=True, nogil=True)
    def flip(x, out):
        """out[i, j] = x[i, W - 1 - j] for x, out [R, W, C]; three channels spelled out
        (a loop of 3 per pixel runs at half the speed)."""
        rows, w, c = x.shape
        for i in range(rows):
            for j in range(w):
                k = w - 1 - j
                if c == 3:
                    out[i, j, 0], out[i, j, 1], out[i, j, 2] = x[i, k, 0], x[i, k, 1], \
                        x[i, k, 2]
                else:
                    for t in range(c):
                        out[i, j, t] = x[i, k, t]
    return flip


def flip_width(x):
    """np.flip(x, -2) as a new C-contiguous array, compiled; or None."""
    if x.ndim < 3 or not x.flags.c_contiguous or x.dtype.kind not in "uif" or not available():
        return None
    kernel = compiled("image_flip_width", _build)
    if kernel is None:
        return None
    out = np.empty(x.shape, x.dtype)
    kernel(x.reshape((-1,) + x.shape[-2:]), out.reshape((-1,) + x.shape[-2:]))
    return out
