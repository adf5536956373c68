"""`tf.image` colour ops: brightness, contrast, gamma, hue and saturation (with their random
and stateless_random forms) and the colour-space conversions (HSV, grayscale, YUV, YIQ).
"""

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import invalid
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import array_ops, math_ops, numba_image_color
from tensorlite.ops.common import DECLINED, fast_path, to_tensor
from tensorlite.ops.image_args import (at_least_3d, const_like, float_arg, float_only, numeric,
                                       scalar_like, shape_str, uniform_draw)
from tensorlite.ops.image_convert import convert_image_dtype, from_float, to_float
from tensorlite.ops.slice_ops import getitem

__all__ = []  # TensorFlow exports these under tf.image only


# -- brightness, contrast, gamma ---------------------------------------------------------------
def _scalar_value(v):
    """A 0-d parameter's value (Python number, array or tensor), else None."""
    v = v._value if isinstance(v, Tensor) else v
    return v if np.ndim(v) == 0 and np.asarray(v).dtype.kind in "fiu" else None


def _adjust_brightness_fast(image, delta):
    # a uint8 image and a scalar delta: one compiled pass, conversions included
    x = to_tensor(image)
    d = _scalar_value(delta)
    if x._dtype is not dtypes.uint8 or d is None:
        return DECLINED
    out = numba_image_color.adjust_brightness_uint8(x._value, d)
    return DECLINED if out is None else wrap(out)


@fast_path(_adjust_brightness_fast)
def adjust_brightness(image, delta):
    """`tf.image.adjust_brightness`: adds `delta` (in [0, 1] units for integer images).

    >>> tf.image.adjust_brightness(tf.constant([[[0.5]]]), 0.25).numpy().item()
    0.75"""
    x = numeric("adjust_brightness", to_tensor(image))
    orig = x._dtype
    f = to_float(x)
    return from_float(math_ops.add(f, scalar_like(delta, f)), orig)


def _contrast_input(images):
    x = at_least_3d("AdjustContrastv2", numeric("adjust_contrast", to_tensor(images)))
    return to_float(x), x._dtype


def _adjust_contrast_fast(images, contrast_factor):
    f, orig = _contrast_input(images)
    factor = np.asarray(contrast_factor)
    if orig is dtypes.uint8:  # the way back to uint8 inside the compiled pass
        out = numba_image_color.adjust_contrast_uint8(to_tensor(images)._value,
                                                      _channel_means(f._value), factor)
        if out is not None:
            return wrap(out.reshape(f._value.shape))
    return from_float(wrap(_np_adjust_contrast(f._value, factor)), orig)


@fast_path(_adjust_contrast_fast)
def adjust_contrast(images, contrast_factor):
    """`tf.image.adjust_contrast`: `(x - mean) * contrast_factor + mean`, the mean taken per
    image and channel over height and width."""
    f, orig = _contrast_input(images)
    mean = math_ops.reduce_mean(f, axis=[-3, -2], keepdims=True)
    out = math_ops.add(math_ops.multiply(math_ops.subtract(f, mean),
                                         scalar_like(contrast_factor, f)), mean)
    return from_float(out, orig)


def _channel_means(f):
    """Each image's channel means [..., 1, 1, C] of f [..., H, W, C], as a product with a
    ones vector (NumPy's own reduction over [H, W] with 3 channels is ~20x slower)."""
    h, w, c = f.shape[-3:]
    lead = f.shape[:-3]
    ones = np.full((1, h * w), 1.0 / (h * w), dtype=f.dtype)
    return np.matmul(ones, f.reshape(lead + (h * w, c))).reshape(lead + (1, 1, c))


def _np_adjust_contrast(f, factor):
    """NumPy twin of the composed `adjust_contrast`; the per-channel mean is a product with
    a ones vector (NumPy's own reduction over [H, W] with 3 channels is ~20x slower)."""
    mean = _channel_means(f)
    c = f.shape[-1]
    fast = numba_image_color.adjust_contrast(f, mean, factor)  # one compiled pass
    if fast is not None:
        return fast
    factor = factor.astype(f.dtype)
    out = np.empty(f.shape, f.dtype)
    for i in range(c):  # per channel plane (see _np_planes)
        m = mean[..., i]
        out[..., i] = (f[..., i] - m) * factor + m
    return out


def adjust_gamma(image, gamma=1, gain=1):
    """`tf.image.adjust_gamma`: `gain * image ** gamma` (integer images in [0, 1] units)."""
    x = numeric("adjust_gamma", to_tensor(image))
    g = np.asarray(gamma)
    if np.any(g < 0):
        raise ValueError(f"adjust_gamma: Gamma should be a non-negative real number, got "
                         f"{g.tolist()}")
    orig = x._dtype
    f = to_float(x)
    out = math_ops.multiply(scalar_like(gain, f), math_ops.pow(f, scalar_like(gamma, f)))
    return from_float(out, orig)


def _check_range_args(op_name, lower, upper):
    lo, hi = float_arg(lower, f"{op_name}: lower"), float_arg(upper, f"{op_name}: upper")
    if hi <= lo:
        raise ValueError(f"{op_name}: upper must be > lower, got lower={lo}, upper={hi}")
    if lo < 0:
        raise ValueError(f"{op_name}: lower must be non-negative, got lower={lo}")
    return lo, hi


def _check_max_delta(op_name, max_delta, limit=None):
    d = float_arg(max_delta, f"{op_name}: max_delta")
    if d < 0:
        raise ValueError(f"{op_name}: max_delta must be non-negative, got {d}")
    if limit is not None and d > limit:
        raise ValueError(f"{op_name}: max_delta must be <= {limit}, got {d}")
    return d


def _random_brightness(image, max_delta, seed, stateless, op_name):
    d = _check_max_delta(op_name, max_delta)
    return adjust_brightness(image, uniform_draw([], -d, d, seed, stateless))


def random_brightness(image, max_delta, seed=None):
    """`tf.image.random_brightness`: adds one delta drawn from [-max_delta, max_delta)."""
    return _random_brightness(image, max_delta, seed, False, "random_brightness")


def stateless_random_brightness(image, max_delta, seed):
    """`tf.image.stateless_random_brightness`: a function of the seed pair."""
    return _random_brightness(image, max_delta, seed, True, "stateless_random_brightness")


def _random_factor(adjust, image, lower, upper, seed, stateless, op_name):
    """`adjust(image, factor)` with a factor drawn from [lower, upper) (random_contrast,
    random_saturation and their stateless forms)."""
    lo, hi = _check_range_args(op_name, lower, upper)
    return adjust(image, uniform_draw([], lo, hi, seed, stateless))


def random_contrast(image, lower, upper, seed=None):
    """`tf.image.random_contrast`: a contrast factor drawn from [lower, upper)."""
    return _random_factor(adjust_contrast, image, lower, upper, seed, False, "random_contrast")


def stateless_random_contrast(image, lower, upper, seed):
    """`tf.image.stateless_random_contrast`: a function of the seed pair."""
    return _random_factor(adjust_contrast, image, lower, upper, seed, True,
                          "stateless_random_contrast")


# -- colour spaces -----------------------------------------------------------------------------
def _channel(x, i):
    return getitem(x, (Ellipsis, i))


def _safe_divide(num, den, ok):
    """num / den where `ok`, 0 elsewhere; the untaken branch never divides by zero, so its
    gradient stays finite."""
    safe = math_ops.where(ok, den, array_ops.ones_like(den))
    return math_ops.where(ok, math_ops.divide(num, safe), array_ops.zeros_like(num))


def _hue_value_range(x):
    """(hue in [0, 1), value = max, range = max - min) of RGB pixels, TF's formulas."""
    r, g, b = _channel(x, 0), _channel(x, 1), _channel(x, 2)
    v, mn = _channel_max_min(r, g, b)
    d = math_ops.subtract(v, mn)
    h_r = math_ops.subtract(g, b)
    h_g = math_ops.add(math_ops.subtract(b, r), math_ops.multiply(d, 2.0))
    h_b = math_ops.add(math_ops.subtract(r, g), math_ops.multiply(d, 4.0))
    num = math_ops.where(math_ops.equal(r, v), h_r,
                         math_ops.where(math_ops.equal(g, v), h_g, h_b))
    h = _safe_divide(num, math_ops.multiply(d, 6.0), math_ops.greater(d, 0.0))
    return math_ops.floormod(h, 1.0), v, d


def _channel_max_min(r, g, b):
    # Elementwise over three channel planes: NumPy's reductions over a last axis of size 3
    # are ~50x slower than two elementwise passes.
    return (math_ops.maximum(math_ops.maximum(r, g), b),
            math_ops.minimum(math_ops.minimum(r, g), b))


def _hue_weights(h, x):
    """Per-channel weight w(h) in [0, 1] with rgb = v - (v * s) * w: the piecewise-linear
    hexcone written without branches (channel n in (5, 3, 1) for r, g, b)."""
    k = math_ops.floormod(math_ops.add(math_ops.multiply(array_ops.expand_dims(h, -1), 6.0),
                                       const_like([5.0, 3.0, 1.0], x)), 6.0)
    tri = math_ops.minimum(k, math_ops.subtract(4.0, k))
    return math_ops.maximum(math_ops.minimum(tri, 1.0), 0.0)


def rgb_to_hsv(images, name=None):
    """`tf.image.rgb_to_hsv`: hue, saturation, value in [0, 1] for RGB in [0, 1].

    >>> tf.image.rgb_to_hsv(tf.constant([[[1.0, 0.0, 0.0]]])).numpy().tolist()
    [[[0.0, 1.0, 1.0]]]"""
    x = float_only("rgb_to_hsv", to_tensor(images))
    _channels("RGBToHSV", x)
    h, v, d = _hue_value_range(x)
    s = _safe_divide(d, v, math_ops.greater(v, 0.0))
    return array_ops.stack([h, s, v], axis=-1)


def hsv_to_rgb(images, name=None):
    """`tf.image.hsv_to_rgb`: the inverse of `rgb_to_hsv`."""
    x = float_only("hsv_to_rgb", to_tensor(images))
    _channels("HSVToRGB", x)
    h, s, v = _channel(x, 0), _channel(x, 1), _channel(x, 2)
    c = array_ops.expand_dims(math_ops.multiply(v, s), -1)
    return math_ops.subtract(array_ops.expand_dims(v, -1),
                             math_ops.multiply(c, _hue_weights(h, x)))


def _channels(op_name, x, n=3):
    if x._value.ndim < 1 or x._value.shape[-1] != n:
        raise invalid(op_name, f"{op_name}: input must have {n} channels but input has shape "
                      f"{shape_str(x)}")


def _hue_input(image, delta):
    x = at_least_3d("AdjustHue", numeric("adjust_hue", to_tensor(image)), 3)
    _hue_delta(delta)
    return to_float(x), x._dtype


def _hue_delta(delta):
    dv = np.asarray(delta)
    if dv.size and np.any(np.abs(dv) > 1):
        raise ValueError(f"adjust_hue: delta must be in the interval [-1, 1], got "
                         f"{dv.tolist()}")


def _adjust_hue_fast(image, delta, name=None):
    # the same formulas on plain NumPy arrays; a uint8 image in one compiled pass
    x = to_tensor(image)
    if x._dtype is dtypes.uint8 and x._value.ndim >= 3:
        _hue_delta(delta)
        out = numba_image_color.adjust_hue_uint8(x._value, np.asarray(delta))
        if out is not None:
            return wrap(out)
    f, orig = _hue_input(image, delta)
    return from_float(wrap(_np_adjust_hue(f._value, np.asarray(delta))), orig)


@fast_path(_adjust_hue_fast)
def adjust_hue(image, delta, name=None):
    """`tf.image.adjust_hue`: rotates the hue by `delta` (in turns, within [-1, 1]).

    >>> tf.image.adjust_hue(tf.constant([[[1.0, 2.0, 3.0]]]), 0.2).numpy().round(4).tolist()
    [[[2.4, 1.0, 3.0]]]"""
    f, orig = _hue_input(image, delta)
    h, v, d = _hue_value_range(f)
    # s * v is the range where v > 0; TF's saturation is 0 (a gray pixel) where v <= 0.
    c = math_ops.where(math_ops.greater(v, 0.0), d, array_ops.zeros_like(d))
    w = _hue_weights(math_ops.add(h, scalar_like(delta, f)), f)
    out = math_ops.subtract(array_ops.expand_dims(v, -1),
                            math_ops.multiply(array_ops.expand_dims(c, -1), w))
    return from_float(out, orig)


def _saturation_input(image):
    x = at_least_3d("AdjustSaturation", numeric("adjust_saturation", to_tensor(image)), 3)
    return to_float(x), x._dtype


def _adjust_saturation_fast(image, saturation_factor, name=None):
    # the same formulas on plain NumPy arrays; a uint8 image in one compiled pass
    x = to_tensor(image)
    if x._dtype is dtypes.uint8 and x._value.ndim >= 3:
        out = numba_image_color.adjust_saturation_uint8(x._value,
                                                        np.asarray(saturation_factor))
        if out is not None:
            return wrap(out)
    f, orig = _saturation_input(image)
    return from_float(wrap(_np_adjust_saturation(f._value, np.asarray(saturation_factor))),
                       orig)


@fast_path(_adjust_saturation_fast)
def adjust_saturation(image, saturation_factor, name=None):
    """`tf.image.adjust_saturation`: scales HSV saturation by the factor, clipped to [0, 1].

    Written in RGB: with value v and hue kept, each channel moves to
    `v - (v - c) * s'/s`, where `s'/s = clip(factor, 0, 1/s)`."""
    f, orig = _saturation_input(image)
    v, mn = _channel_max_min(_channel(f, 0), _channel(f, 1), _channel(f, 2))
    v = array_ops.expand_dims(v, -1)
    d = math_ops.subtract(v, array_ops.expand_dims(mn, -1))
    ok = math_ops.logical_and(math_ops.greater(v, 0.0), math_ops.greater(d, 0.0))
    inv_s = _safe_divide(v, d, ok)
    factor = scalar_like(saturation_factor, f)
    ratio = math_ops.where(ok, math_ops.maximum(math_ops.minimum(factor, inv_s), 0.0),
                           array_ops.zeros_like(inv_s))
    out = math_ops.subtract(v, math_ops.multiply(math_ops.subtract(v, f), ratio))
    return from_float(out, orig)


def _np_planes(f):
    # NumPy broadcasting along a last axis of size 3 runs ~3x slower than whole planes:
    # the twins below work on contiguous channel planes and interleave once at the end.
    return [np.ascontiguousarray(f[..., i]) for i in range(f.shape[-1])]


def _np_adjust_hue(f, delta):
    """NumPy twin of the composed `adjust_hue` (same formulas; selects by multiplying with
    masks, since np.where on unpredictable masks costs ~10x an arithmetic pass); one
    compiled pass with numba, bit-identical."""
    fast = numba_image_color.adjust_hue(f, delta)
    if fast is not None:
        return fast
    r, g, b = _np_planes(f)
    v = np.maximum(np.maximum(r, g), b)
    d = v - np.minimum(np.minimum(r, g), b)
    is_r = r == v
    is_g = (g == v) & ~is_r
    is_b = ~(is_r | is_g)
    num = (g - b) * is_r + (b - r + d * 2) * is_g + (r - g + d * 4) * is_b
    h6 = (_np_floormod(num / (d * 6 + (d == 0)), 1) + delta.astype(f.dtype)) * 6
    c = d * (v > 0)  # num is 0 where d is 0
    out = np.empty(f.shape, f.dtype)
    for i, n in enumerate((5, 3, 1)):  # channel by channel: three planes
        k = _np_floormod(h6 + n, 6)
        out[..., i] = v - c * np.clip(np.minimum(k, 4 - k), 0, 1)
    return out


def _np_floormod(x, m):
    # np.mod handles signs and infinities at ~10x the cost; these values are finite.
    return x - np.floor(x / m) * m


def _np_adjust_saturation(f, factor):
    """NumPy twin of the composed `adjust_saturation` (one compiled pass with numba,
    bit-identical)."""
    fast = numba_image_color.adjust_saturation(f, factor)
    if fast is not None:
        return fast
    r, g, b = planes = _np_planes(f)
    v = np.maximum(np.maximum(r, g), b)
    d = v - np.minimum(np.minimum(r, g), b)
    ok = (v > 0) & (d > 0)
    ratio = np.maximum(np.minimum(factor.astype(f.dtype), v / (d + ~ok)), 0) * ok
    out = np.empty(f.shape, f.dtype)
    for i, p in enumerate(planes):
        out[..., i] = v - (v - p) * ratio
    return out


def random_saturation(image, lower, upper, seed=None):
    """`tf.image.random_saturation`: a saturation factor drawn from [lower, upper)."""
    return _random_factor(adjust_saturation, image, lower, upper, seed, False, "random_saturation")


def stateless_random_saturation(image, lower, upper, seed):
    """`tf.image.stateless_random_saturation`: a function of the seed pair."""
    return _random_factor(adjust_saturation, image, lower, upper, seed, True,
                          "stateless_random_saturation")


def _random_hue(image, max_delta, seed, stateless, op_name):
    d = _check_max_delta(op_name, max_delta, 0.5)
    return adjust_hue(image, uniform_draw([], -d, d, seed, stateless))


def random_hue(image, max_delta, seed=None):
    """`tf.image.random_hue`: a hue rotation drawn from [-max_delta, max_delta),
    max_delta <= 0.5."""
    return _random_hue(image, max_delta, seed, False, "random_hue")


def stateless_random_hue(image, max_delta, seed):
    """`tf.image.stateless_random_hue`: a function of the seed pair."""
    return _random_hue(image, max_delta, seed, True, "stateless_random_hue")


_GRAY = (0.2989, 0.5870, 0.1140)


def rgb_to_grayscale(images, name=None):
    """`tf.image.rgb_to_grayscale`: ITU-R 601 luma, keeping a last dimension of size 1."""
    x = numeric("rgb_to_grayscale", to_tensor(images))
    if x._value.ndim < 1 or x._value.shape[-1] != 3:
        raise ValueError(f"rgb_to_grayscale: the last dimension of 'images' must be 3 (RGB), "
                         f"got shape {shape_str(x)}")
    orig = x._dtype
    f = x if x._dtype in (dtypes.float32, dtypes.float64) else \
        convert_image_dtype(x, dtypes.float32)
    terms = [math_ops.multiply(_channel(f, i), scalar_like(_GRAY[i], f)) for i in range(3)]
    gray = array_ops.expand_dims(math_ops.add(math_ops.add(terms[0], terms[1]), terms[2]), -1)
    return gray if orig is gray._dtype else convert_image_dtype(gray, orig)


def grayscale_to_rgb(images, name=None):
    """`tf.image.grayscale_to_rgb`: repeats the single channel three times."""
    x = to_tensor(images)
    if x._value.ndim < 2:
        raise ValueError(f"grayscale_to_rgb: 'images' (shape {shape_str(x)}) must be at "
                         f"least two-dimensional")
    if x._value.shape[-1] != 1:
        raise ValueError(f"grayscale_to_rgb: Last dimension of a grayscale image should be "
                         f"size 1, got shape {shape_str(x)}")
    return array_ops.tile(x, [1] * (x._value.ndim - 1) + [3])


def _linear_color(op_name, images, matrix):
    x = float_only(op_name, to_tensor(images))
    _channels(op_name, x)
    m = const_like(matrix, x)  # out[..., j] = sum_i x[..., i] * m[i, j]
    return math_ops.reduce_sum(math_ops.multiply(array_ops.expand_dims(x, -1), m), axis=-2)


def _yuv_matrix():
    # Y = 0.299 R + 0.587 G + 0.114 B; U = 0.492111 (B - Y); V = 0.877283 (R - Y).
    y = np.array([0.299, 0.587, 0.114])
    u = 0.492111 * (np.array([0.0, 0.0, 1.0]) - y)
    v = 0.877283 * (np.array([1.0, 0.0, 0.0]) - y)
    return np.stack([y, u, v], axis=1)


def _yiq_matrix():
    # NTSC YIQ: I and Q are the U/V plane rotated by 33 degrees.
    y = np.array([0.299, 0.587, 0.114])
    i = np.array([0.595716, -0.274453, -0.321263])
    q = np.array([0.211456, -0.522591, 0.311135])
    return np.stack([y, i, q], axis=1)


def rgb_to_yuv(images):
    """`tf.image.rgb_to_yuv`: BT.601 YUV."""
    return _linear_color("rgb_to_yuv", images, _yuv_matrix())


def yuv_to_rgb(images):
    """`tf.image.yuv_to_rgb`: the inverse of `rgb_to_yuv`."""
    return _linear_color("yuv_to_rgb", images, np.linalg.inv(_yuv_matrix()))


def rgb_to_yiq(images):
    """`tf.image.rgb_to_yiq`: NTSC YIQ."""
    return _linear_color("rgb_to_yiq", images, _yiq_matrix())


def yiq_to_rgb(images):
    """`tf.image.yiq_to_rgb`: the inverse of `rgb_to_yiq`."""
    return _linear_color("yiq_to_rgb", images, np.linalg.inv(_yiq_matrix()))
