"""`convert_image_dtype` from float32 to uint8 (what every colour adjustment of a uint8
image ends with) as one compiled pass (numba, the `jit` extra) with the GIL released,
instead of NumPy's four passes (scale, widen, clip, narrow). The same arithmetic: the
float32 product with 255.5, widened to float64, clipped to [0, 255] and truncated; NaN,
which NumPy's cast turns into 0 on x86-64, is 0 here too. Returns None where it does not
apply (numba missing or off, another dtype pair).

Example:
    >>> float32_to_uint8(np.array([0.0, 0.5, 1.0], np.float32))   # None without numba
    array([  0, 127, 255], dtype=uint8)
"""
import numpy as np

from tensorlite.ops.numba_backend import available, compiled, jitable


# uint8 -> float32 is x * float32(1 / 255): convert_image_dtype's scale, for kernels that
# read uint8 images directly
FROM_UINT8 = np.float32(1.0 / 255)
_TO_UINT8 = np.float32(255.5)


def uint8_of(y):
    """float32 -> uint8 as convert_image_dtype saturates it (a helper for kernels to end
    with: numba_backend.jitable)."""
    s = np.float64(y * _TO_UINT8)
    s = 0.0 if s != s else s  # NaN: 0, as NumPy's cast gives on x86-64
    s = 0.0 if s < 0.0 else (255.0 if s > 255.0 else s)
    return np.uint8(s)


def _build(numba):
    jitable(uint8_of, inline="always", error_model="numpy")

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def to_uint8(x, out):
        for i in range(x.shape[0]):
            out[i] = uint8_of(x[i])
    return to_uint8


def float32_to_uint8(x):
    """image_ops._float_to_int(x, np.uint8) for a float32 array, compiled; or None."""
    if x.dtype != np.float32 or not available():
        return None
    kernel = compiled("image_float32_to_uint8", _build)
    if kernel is None:
        return None
    out = np.empty(x.shape, np.uint8)
    kernel(np.ascontiguousarray(x).reshape(-1), out.reshape(-1))
    return out
