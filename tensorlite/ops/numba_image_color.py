"""`adjust_hue`, `adjust_saturation` and `adjust_contrast`'s per-pixel pass as compiled
loops (numba, the `jit` extra), one pass over the pixels instead of the NumPy twins'
dozen passes over whole channel planes, with the GIL released so that a tf.data map on
threads runs them on every core at once.

Each loop computes the NumPy twin's formulas (tensorlite/ops/image_color.py) in the same
float32 operations and order, selections by 0/1 factors and NaN-propagating maxima
included, so the results are bit-identical (the tests compare them). Each returns None
where it does not apply (numba missing or off, not float32, not [..., 3] channels).

The `*_uint8` forms take a uint8 image and return one: the conversions of TF's colour ops
(convert_image_dtype to float32 and back, saturating) happen inside the same pass, with the
same float32 values, so a uint8 adjustment is one call that holds the GIL for microseconds
instead of three passes and their dispatch.

Example:
    >>> out = adjust_hue(rgb_float32, np.float32(0.1))   # None without numba
"""
import numpy as np

from tensorlite.ops.numba_backend import available, compiled, jitable
from tensorlite.ops.numba_image_dtype import FROM_UINT8, uint8_of


_ZERO, _ONE, _TWO, _THREE, _FOUR, _FIVE, _SIX = (np.float32(v) for v in range(7))


# the kernels' helpers, registered with numba by `_helpers` (module-level functions: see
# numba_backend.jitable)
def npmax(a, b):  # np.maximum: NaN if either is NaN
    return a if (a >= b) | (a != a) else b  # `|`, not `or`: a select, no branch


def npmin(a, b):  # np.minimum
    return a if (a <= b) | (a != a) else b


def floormod(x, m):  # image_color._np_floormod: x - floor(x / m) * m
    return x - np.floor(x / m) * m


def channel(h6, shift):
    """clip(min(k, 4 - k), 0, 1) for k = (h6 + shift) mod 6."""
    k = floormod(h6 + shift, _SIX)
    w = npmin(k, _FOUR - k)
    w = _ZERO if w < 0 else w  # np.clip, NaN kept
    return _ONE if w > 1 else w


def hue_value_range(r, g, b, delta):
    """(h6, value, range of a coloured pixel) of image_color._np_adjust_hue."""
    v = npmax(npmax(r, g), b)
    d = v - npmin(npmin(r, g), b)
    # 0/1 factors as the twin's boolean masks (unpredictable per pixel: selects, never
    # branches)
    is_r = np.float32(r == v)
    is_g = np.float32(g == v) * (_ONE - is_r)
    is_b = _ONE - is_r - is_g
    num = (g - b) * is_r + (b - r + d * _TWO) * is_g + (r - g + d * _FOUR) * is_b
    h6 = (floormod(num / (d * _SIX + np.float32(d == 0)), _ONE) + delta) * _SIX
    return h6, v, d * np.float32(v > 0)


def rgb_of(h6, v, c, unused):
    return v - c * channel(h6, _FIVE), v - c * channel(h6, _THREE), v - c * channel(h6, _ONE)


def saturated(r, g, b, factor):
    """image_color._np_adjust_saturation for one pixel."""
    v = npmax(npmax(r, g), b)
    d = v - npmin(npmin(r, g), b)
    ok = np.float32((v > 0) & (d > 0))
    ratio = npmax(npmin(factor, v / (d + (_ONE - ok))), _ZERO) * ok
    return v - (v - r) * ratio, v - (v - g) * ratio, v - (v - b) * ratio


def _helpers():
    jitable(npmax, npmin, floormod, channel, hue_value_range, rgb_of, saturated,
            error_model="numpy")


_CHUNK = 256  # pixels per round of the planar loops (scratch planes stay in L1)


def _planar(numba, pixel, then=None, u8=False):
    """A kernel (rgb [P, 3], param, out [P, 3]) applying `pixel(r, g, b, param) -> (o0,
    o1, o2)` to every pixel (and `then(o0, o1, o2, param)` to its results, in a second
    loop): chunks are split into channel planes first, so that the branch-free arithmetic
    vectorizes (LLVM does not vectorize the interleaved layout). With `u8` (a constant of
    the build) rgb and out are uint8, converted as convert_image_dtype does."""
    jitable(uint8_of, inline="always", error_model="numpy")

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def kernel(rgb, param, out):
        # six arrays, not rows of one: LLVM then knows they do not overlap
        r, g, b = np.empty(_CHUNK, np.float32), np.empty(_CHUNK, np.float32), \
            np.empty(_CHUNK, np.float32)
        o0, o1, o2 = np.empty(_CHUNK, np.float32), np.empty(_CHUNK, np.float32), \
            np.empty(_CHUNK, np.float32)
        q0, q1, q2 = np.empty(_CHUNK, np.uint8), np.empty(_CHUNK, np.uint8), \
            np.empty(_CHUNK, np.uint8)
        for start in range(0, rgb.shape[0], _CHUNK):
            m = min(_CHUNK, rgb.shape[0] - start)
            for j in range(m):
                r[j], g[j], b[j] = rgb[start + j, 0], rgb[start + j, 1], rgb[start + j, 2]
            if u8:
                for j in range(m):
                    r[j], g[j], b[j] = r[j] * FROM_UINT8, g[j] * FROM_UINT8, b[j] * FROM_UINT8
            for j in range(m):
                o0[j], o1[j], o2[j] = pixel(r[j], g[j], b[j], param)
            if then is not None:
                for j in range(m):
                    o0[j], o1[j], o2[j] = then(o0[j], o1[j], o2[j], param)
            if u8:  # converted plane by plane (vectorized), then interleaved
                for j in range(m):
                    q0[j], q1[j], q2[j] = uint8_of(o0[j]), uint8_of(o1[j]), uint8_of(o2[j])
                for j in range(m):
                    out[start + j, 0], out[start + j, 1], out[start + j, 2] = \
                        q0[j], q1[j], q2[j]
            else:
                for j in range(m):
                    out[start + j, 0], out[start + j, 1], out[start + j, 2] = \
                        o0[j], o1[j], o2[j]
    return kernel


def _build_hue(numba, u8=False):
    _helpers()
    # two planar loops: LLVM declines to vectorize the whole pixel as one loop body
    return _planar(numba, hue_value_range, rgb_of, u8)


def _build_saturation(numba, u8=False):
    _helpers()
    return _planar(numba, saturated, u8=u8)


def _build_contrast(numba, u8=False):
    jitable(uint8_of, inline="always", error_model="numpy")

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def contrast(values, pattern, factor, out):
        """values, out: [B, P*C] (pixels' channels interleaved); pattern: [B, L], each
        image's C channel means repeated to L (a multiple of C): one contiguous
        (x - mean) * factor + mean per value, vectorized over runs of L values; with `u8`
        (a constant of the build) values and out are uint8."""
        width = pattern.shape[1]
        for i in range(values.shape[0]):
            mean = pattern[i]
            for start in range(0, values.shape[1], width):
                m = min(width, values.shape[1] - start)
                src = values[i, start:start + m]
                dst = out[i, start:start + m]
                if u8:
                    for j in range(m):
                        f = np.float32(src[j]) * FROM_UINT8
                        dst[j] = uint8_of((f - mean[j]) * factor + mean[j])
                else:
                    for j in range(m):
                        dst[j] = (src[j] - mean[j]) * factor + mean[j]
    return contrast


def _build_brightness(numba):
    jitable(uint8_of, inline="always", error_model="numpy")

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def brightness(values, delta, out):
        """uint8 values, out [N]: convert_image_dtype(x) + delta, back to uint8."""
        for i in range(values.shape[0]):
            out[i] = uint8_of(np.float32(values[i]) * FROM_UINT8 + delta)
    return brightness


def _run_planar(name, build, x, param, u8):
    """A planar kernel (float32 or, with `u8`, uint8 in and out) on x [..., 3], or None
    where it does not apply."""
    dtype = np.uint8 if u8 else np.float32
    if x.dtype != dtype or x.ndim < 1 or x.shape[-1] != 3 or np.ndim(param) or \
            not available():
        return None
    kernel = compiled(name, (lambda numba: build(numba, u8=True)) if u8 else build)
    if kernel is None:
        return None
    out = np.empty(x.shape, dtype)
    kernel(np.ascontiguousarray(x).reshape(-1, 3), np.float32(param), out.reshape(-1, 3))
    return out


def _run_contrast(x, mean, factor, u8):
    """The contrast kernel (float32 or, with `u8`, uint8 in and out) on x [..., H, W, C]
    with its float32 channel means [..., 1, 1, C], or None where it does not apply."""
    dtype = np.uint8 if u8 else np.float32
    if x.dtype != dtype or mean.dtype != np.float32 or np.ndim(factor) or x.ndim < 3 or \
            not available():
        return None
    kernel = compiled("image_adjust_contrast_u8" if u8 else "image_adjust_contrast",
                      lambda numba: _build_contrast(numba, u8))
    if kernel is None:
        return None
    h, w, c = x.shape[-3:]
    out = np.empty(x.shape, dtype)
    pattern = np.tile(mean.reshape(-1, c), (1, 64))  # 64 pixels' worth of means per run
    kernel(np.ascontiguousarray(x).reshape(-1, h * w * c), pattern, np.float32(factor),
           out.reshape(-1, h * w * c))
    return out


def adjust_hue(f, delta):
    """image_color._np_adjust_hue(f, delta) compiled, or None where it does not apply."""
    return _run_planar("image_adjust_hue", _build_hue, f, delta, False)


def adjust_saturation(f, factor):
    """image_color._np_adjust_saturation(f, factor) compiled, or None where it does not
    apply."""
    return _run_planar("image_adjust_saturation", _build_saturation, f, factor, False)


def adjust_contrast(f, mean, factor):
    """`(f - mean) * factor + mean` for f [..., H, W, C] float32 and its per-image channel
    means `mean` [..., 1, 1, C], compiled, or None where it does not apply."""
    return _run_contrast(f, mean, factor, False)


def adjust_hue_uint8(x, delta):
    """adjust_hue of a uint8 image as TF computes it (to float32, adjust, back to uint8
    saturating), in one compiled pass; None where it does not apply."""
    return _run_planar("image_adjust_hue_u8", _build_hue, x, delta, True)


def adjust_saturation_uint8(x, factor):
    """adjust_saturation of a uint8 image, in one compiled pass; None where it does not
    apply."""
    return _run_planar("image_adjust_saturation_u8", _build_saturation, x, factor, True)


def adjust_contrast_uint8(x, mean, factor):
    """adjust_contrast of a uint8 image x [..., H, W, C] given the means `mean` [..., 1, 1,
    C] of its float32 form, back to uint8 in the same pass; None where it does not apply."""
    return _run_contrast(x, mean, factor, True)


def adjust_brightness_uint8(x, delta):
    """adjust_brightness of a uint8 image (to float32, + delta, back to uint8 saturating)
    in one compiled pass; None where it does not apply."""
    if x.dtype != np.uint8 or np.ndim(delta) or not available():
        return None
    kernel = compiled("image_adjust_brightness_u8", _build_brightness)
    if kernel is None:
        return None
    out = np.empty(x.shape, np.uint8)
    kernel(np.ascontiguousarray(x).reshape(-1), np.float32(delta), out.reshape(-1))
    return out
