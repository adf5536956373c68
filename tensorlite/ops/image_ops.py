"""Image ops (`tf.image.*`): dtype conversion, flips and rotations, colour adjustments, colour
spaces, resizing, crops and pads, standardisation and random augmentation.

Images are `[height, width, channels]` or batched `[batch, height, width, channels]`; ops act
on the last three dimensions, so every rule here also accepts extra leading dimensions.

Most ops are composed from differentiable tensorlite ops (flips, crops, colour adjustments,
HSV conversions), so their gradients follow. Resizing is one registered op per method family
(`ResizeBilinear`, `ResizeBicubic`, `ResizeArea`, `ScaleAndTranslate`): a separable linear map
applied tap by tap; its gradient op applies the transposed map, and the gradient of that is
the resize again. Random ops draw through `tf.random.uniform` / `stateless_uniform`, so they
follow TF's global/op seed rules.

Deviations from TensorFlow, on purpose:
- float64 images stay float64 in ops that TF computes in float32 (resize, colour adjustments,
  grayscale, standardisation): TF returns float32 from resize/standardisation and rounds other
  float64 adjustments through float32; keeping float64 keeps gradients checkable.
- bicubic weights are exact Keys-cubic values (TF looks them up in a 1024-entry table), so
  results differ from TF's in the 4th significant digit at most.
- converting floats to integers clips even with `saturate=False` (TF's result is undefined).

Example:
    >>> tf.image.flip_left_right(tf.constant([[[1], [2]]])).numpy()[..., 0]
    array([[2, 1]], dtype=int32)
"""
import builtins
import functools
import math

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import array_ops, math_ops, numba_resize, random_ops
from tensorlite.ops.common import DECLINED, fast_path, int_list, to_tensor
from tensorlite.ops.slice_ops import getitem

__all__ = []  # TensorFlow exports these under tf.image only

_ALL = builtins.slice(None)
_IMAGE_KINDS = "fiu"


# -- argument checks ---------------------------------------------------------------------------
def _shape_str(x):
    return list(x._value.shape)


def _image(op_name, image, ranks=(3, 4), arg="image"):
    """Converts `image` and checks its rank (ValueError, as TF's static shape checks)."""
    x = to_tensor(image)
    nd = x._value.ndim
    if ranks is None:
        if nd < 3:
            raise ValueError(f"{op_name}: '{arg}' (shape {_shape_str(x)}) must be at least "
                             f"three-dimensional: [height, width, channels] or "
                             f"[..., height, width, channels]")
    elif nd not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise ValueError(f"{op_name}: '{arg}' (shape {_shape_str(x)}) must have {want} "
                         f"dimensions: [height, width, channels] or [batch, height, width, "
                         f"channels]; use tf.expand_dims or tf.reshape")
    if any(d == 0 for d in x._value.shape[-3:]):
        raise ValueError(f"{op_name}: all dims of '{arg}.shape' must be > 0, got "
                         f"{_shape_str(x)}")
    return x


def _at_least_3d(op_name, x, channels=None):
    """The kernel-side checks of TF's colour ops (InvalidArgumentError)."""
    if x._value.ndim < 3:
        raise invalid(op_name, f"{op_name}: input must be at least 3-D, got shape "
                      f"{_shape_str(x)}")
    if channels is not None and x._value.shape[-1] != channels:
        raise invalid(op_name, f"{op_name}: input must have {channels} channels but input only "
                      f"has {x._value.shape[-1]} channels (shape {_shape_str(x)})")
    return x


def _numeric(op_name, x):
    if x._dtype.kind not in _IMAGE_KINDS:
        raise TypeError(f"{op_name}: images must be of an integer or floating dtype, got "
                        f"{x._dtype.name}")
    return x


def _float_only(op_name, x):
    if not x._dtype.is_floating:
        raise TypeError(f"{op_name}: Value passed to parameter 'images' has DataType "
                        f"{x._dtype.name} not in list of allowed values: float16, bfloat16, "
                        f"float32, float64; convert it with tf.image.convert_image_dtype")
    return x


def _int_arg(v, what):
    if isinstance(v, Tensor) or getattr(v, "_is_variable", False):
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        if v.ndim != 0 or v.dtype.kind not in "iu":
            raise TypeError(f"{what} must be an integer scalar, got {v.dtype} of shape "
                            f"{list(v.shape)}")
        v = v.item()
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {v!r}")
    return int(v)


def _float_arg(v, what):
    if isinstance(v, Tensor) or getattr(v, "_is_variable", False):
        v = np.asarray(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, got {v!r}") from None


def _scalar_like(v, x):
    """`v` as a tensor of `x`'s dtype: Python numbers convert directly (no float32 detour),
    tensors are cast (differentiably)."""
    if isinstance(v, Tensor) or getattr(v, "_is_variable", False):
        return math_ops.cast(v, x._dtype)
    return to_tensor(v, dtype=x._dtype)


def _const(values, x):
    return wrap(np.asarray(values, dtype=x._value.dtype))


# -- convert_image_dtype -----------------------------------------------------------------------
def _float_to_int(x, np_dtype):
    info = np.iinfo(np_dtype)
    scaled = x * x.dtype.type(info.max + 0.5)
    return np.clip(scaled.astype(np.float64), info.min, info.max).astype(np_dtype)


def _int_to_int(x, np_dtype, saturate):
    imax, omax = int(np.iinfo(x.dtype).max), int(np.iinfo(np_dtype).max)
    info = np.iinfo(np_dtype)
    if imax > omax:  # scale down first, then cast
        y = x // ((imax + 1) // (omax + 1))
        return (np.clip(y, info.min, info.max) if saturate else y).astype(np_dtype)
    y = np.clip(x, max(info.min, int(np.iinfo(x.dtype).min)), info.max) if saturate else x
    return y.astype(np_dtype) * np_dtype((omax + 1) // (imax + 1))


def _convert_fwd(x, dtype, saturate):
    np_dtype = dtype.as_numpy_dtype
    if x.dtype.kind in "iu":
        if dtype.is_integer:
            return _int_to_int(x, np_dtype, saturate)
        return x.astype(np_dtype) * np_dtype(1.0 / np.iinfo(x.dtype).max)
    return _float_to_int(x, np_dtype)


# Integer on one side at least: nothing to differentiate (float->float is a tf.cast).
CONVERT = register(
    "ConvertImageDtype", _convert_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda x, dtype, saturate: Spec(x.shape, dtype),
    unsupported="tf onnx tflite batch tf_import")


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """`tf.image.convert_image_dtype`: converts, scaling integers' [0, MAX] to floats' [0, 1].

    >>> tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32).numpy()
    array([0., 1.], dtype=float32)"""
    x = to_tensor(image)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError(f"convert_image_dtype: dtype must be either floating point or "
                             f"integer, got {dtype.name}")
    if not (x._dtype.is_floating or x._dtype.is_integer):
        raise AttributeError(f"convert_image_dtype: image dtype must be either floating point "
                             f"or integer, got {x._dtype.name}")
    if x._dtype is dtype:
        return x
    if x._dtype.is_floating and dtype.is_floating:
        return math_ops.cast(x, dtype)
    return execute(CONVERT, (x,), {"dtype": dtype, "saturate": bool(saturate)})


def _to_float(x):
    """The working image of TF's colour adjustments: floats as they are, integers scaled to
    float32 [0, 1]."""
    return x if x._dtype.is_floating else convert_image_dtype(x, dtypes.float32)


def _from_float(y, orig):
    return y if y._dtype is orig else convert_image_dtype(y, orig, saturate=True)


# -- flips, rotations, transpose ---------------------------------------------------------------
def flip_left_right(image, name=None):
    """`tf.image.flip_left_right`: mirrors the width dimension.

    >>> tf.image.flip_left_right(tf.zeros([4, 5, 3])).shape
    TensorShape([4, 5, 3])"""
    x = _image("flip_left_right", image)
    return array_ops.reverse(x, [-2])


def flip_up_down(image, name=None):
    """`tf.image.flip_up_down`: mirrors the height dimension."""
    x = _image("flip_up_down", image)
    return array_ops.reverse(x, [-3])


def transpose(image, name=None):
    """`tf.image.transpose`: swaps height and width."""
    x = _image("transpose", image)
    return array_ops.transpose(x, [0, 2, 1, 3] if x._value.ndim == 4 else [1, 0, 2])


def rot90(image, k=1, name=None):
    """`tf.image.rot90`: rotates counter-clockwise by `k` quarter turns.

    >>> tf.image.rot90(tf.reshape(tf.range(4), [2, 2, 1])).numpy()[..., 0]
    array([[1, 3],
           [0, 2]], dtype=int32)"""
    x = _image("rot90", image)
    k = _int_arg(k, "rot90: k") % 4
    if k == 0:
        return x
    if k == 2:
        return array_ops.reverse(x, [-3, -2])
    swapped = transpose(x)
    return array_ops.reverse(swapped, [-3] if k == 1 else [-2])


def _random_flip_fast(op_name, image, axis, seed, stateless):
    # eager, one image: no select, at most a view
    x = _image(op_name, image)
    if x._value.ndim != 3:
        return DECLINED
    u = _uniform([], 0.0, 1.0, seed, stateless)
    return array_ops.reverse(x, [axis]) if u._value < 0.5 else x


@fast_path(_random_flip_fast)
def _random_flip(op_name, image, axis, seed, stateless):
    x = _image(op_name, image)
    if x._value.ndim == 3:
        u = _uniform([], 0.0, 1.0, seed, stateless)
        return math_ops.where(math_ops.less(u, 0.5), array_ops.reverse(x, [axis]), x)
    n = x._value.shape[0]
    u = _uniform([n], 0.0, 1.0, seed, stateless)
    mask = array_ops.reshape(math_ops.less(u, 0.5), (n, 1, 1, 1))
    return math_ops.where(mask, array_ops.reverse(x, [axis]), x)


def random_flip_left_right(image, seed=None):
    """`tf.image.random_flip_left_right`: mirrors each image's width with probability 1/2."""
    return _random_flip("random_flip_left_right", image, -2, seed, False)


def random_flip_up_down(image, seed=None):
    """`tf.image.random_flip_up_down`: mirrors each image's height with probability 1/2."""
    return _random_flip("random_flip_up_down", image, -3, seed, False)


def stateless_random_flip_left_right(image, seed):
    """`tf.image.stateless_random_flip_left_right`: a function of the seed pair."""
    return _random_flip("stateless_random_flip_left_right", image, -2, seed, True)


def stateless_random_flip_up_down(image, seed):
    """`tf.image.stateless_random_flip_up_down`: a function of the seed pair."""
    return _random_flip("stateless_random_flip_up_down", image, -3, seed, True)


def _uniform(shape, lo, hi, seed, stateless, dtype=dtypes.float32):
    if stateless:
        return random_ops.stateless_uniform(shape, seed, minval=lo, maxval=hi, dtype=dtype)
    return random_ops.uniform(shape, minval=lo, maxval=hi, dtype=dtype, seed=seed)


# -- brightness, contrast, gamma ---------------------------------------------------------------
def adjust_brightness(image, delta):
    """`tf.image.adjust_brightness`: adds `delta` (in [0, 1] units for integer images).

    >>> tf.image.adjust_brightness(tf.constant([[[0.5]]]), 0.25).numpy().item()
    0.75"""
    x = _numeric("adjust_brightness", to_tensor(image))
    orig = x._dtype
    f = _to_float(x)
    return _from_float(math_ops.add(f, _scalar_like(delta, f)), orig)


def _contrast_input(images):
    x = _at_least_3d("AdjustContrastv2", _numeric("adjust_contrast", to_tensor(images)))
    return _to_float(x), x._dtype


def _adjust_contrast_fast(images, contrast_factor):
    f, orig = _contrast_input(images)
    return _from_float(wrap(_np_adjust_contrast(f._value, np.asarray(contrast_factor))), orig)


@fast_path(_adjust_contrast_fast)
def adjust_contrast(images, contrast_factor):
    """`tf.image.adjust_contrast`: `(x - mean) * contrast_factor + mean`, the mean taken per
    image and channel over height and width."""
    f, orig = _contrast_input(images)
    mean = math_ops.reduce_mean(f, axis=[-3, -2], keepdims=True)
    out = math_ops.add(math_ops.multiply(math_ops.subtract(f, mean),
                                         _scalar_like(contrast_factor, f)), mean)
    return _from_float(out, orig)


def _np_adjust_contrast(f, factor):
    """NumPy twin of the composed `adjust_contrast`; the per-channel mean is a product with
    a ones vector (NumPy's own reduction over [H, W] with 3 channels is ~20x slower)."""
    h, w, c = f.shape[-3:]
    lead = f.shape[:-3]
    ones = np.full((1, h * w), 1.0 / (h * w), dtype=f.dtype)
    mean = np.matmul(ones, f.reshape(lead + (h * w, c))).reshape(lead + (1, 1, c))
    factor = factor.astype(f.dtype)
    out = np.empty(f.shape, f.dtype)
    for i in range(c):  # per channel plane (see _np_planes)
        m = mean[..., i]
        out[..., i] = (f[..., i] - m) * factor + m
    return out


def adjust_gamma(image, gamma=1, gain=1):
    """`tf.image.adjust_gamma`: `gain * image ** gamma` (integer images in [0, 1] units)."""
    x = _numeric("adjust_gamma", to_tensor(image))
    g = np.asarray(gamma)
    if np.any(g < 0):
        raise ValueError(f"adjust_gamma: Gamma should be a non-negative real number, got "
                         f"{g.tolist()}")
    orig = x._dtype
    f = _to_float(x)
    out = math_ops.multiply(_scalar_like(gain, f), math_ops.pow(f, _scalar_like(gamma, f)))
    return _from_float(out, orig)


def _check_range_args(op_name, lower, upper):
    lo, hi = _float_arg(lower, f"{op_name}: lower"), _float_arg(upper, f"{op_name}: upper")
    if hi <= lo:
        raise ValueError(f"{op_name}: upper must be > lower, got lower={lo}, upper={hi}")
    if lo < 0:
        raise ValueError(f"{op_name}: lower must be non-negative, got lower={lo}")
    return lo, hi


def _check_max_delta(op_name, max_delta, limit=None):
    d = _float_arg(max_delta, f"{op_name}: max_delta")
    if d < 0:
        raise ValueError(f"{op_name}: max_delta must be non-negative, got {d}")
    if limit is not None and d > limit:
        raise ValueError(f"{op_name}: max_delta must be <= {limit}, got {d}")
    return d


def _random_brightness(image, max_delta, seed, stateless, op_name):
    d = _check_max_delta(op_name, max_delta)
    return adjust_brightness(image, _uniform([], -d, d, seed, stateless))


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
    return adjust(image, _uniform([], lo, hi, seed, stateless))


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
                                       _const([5.0, 3.0, 1.0], x)), 6.0)
    tri = math_ops.minimum(k, math_ops.subtract(4.0, k))
    return math_ops.maximum(math_ops.minimum(tri, 1.0), 0.0)


def rgb_to_hsv(images, name=None):
    """`tf.image.rgb_to_hsv`: hue, saturation, value in [0, 1] for RGB in [0, 1].

    >>> tf.image.rgb_to_hsv(tf.constant([[[1.0, 0.0, 0.0]]])).numpy().tolist()
    [[[0.0, 1.0, 1.0]]]"""
    x = _float_only("rgb_to_hsv", to_tensor(images))
    _channels("RGBToHSV", x)
    h, v, d = _hue_value_range(x)
    s = _safe_divide(d, v, math_ops.greater(v, 0.0))
    return array_ops.stack([h, s, v], axis=-1)


def hsv_to_rgb(images, name=None):
    """`tf.image.hsv_to_rgb`: the inverse of `rgb_to_hsv`."""
    x = _float_only("hsv_to_rgb", to_tensor(images))
    _channels("HSVToRGB", x)
    h, s, v = _channel(x, 0), _channel(x, 1), _channel(x, 2)
    c = array_ops.expand_dims(math_ops.multiply(v, s), -1)
    return math_ops.subtract(array_ops.expand_dims(v, -1),
                             math_ops.multiply(c, _hue_weights(h, x)))


def _channels(op_name, x, n=3):
    if x._value.ndim < 1 or x._value.shape[-1] != n:
        raise invalid(op_name, f"{op_name}: input must have {n} channels but input has shape "
                      f"{_shape_str(x)}")


def _hue_input(image, delta):
    x = _at_least_3d("AdjustHue", _numeric("adjust_hue", to_tensor(image)), 3)
    dv = np.asarray(delta)
    if dv.size and np.any(np.abs(dv) > 1):
        raise ValueError(f"adjust_hue: delta must be in the interval [-1, 1], got "
                         f"{dv.tolist()}")
    return _to_float(x), x._dtype


def _adjust_hue_fast(image, delta, name=None):
    # the same formulas on plain NumPy arrays
    f, orig = _hue_input(image, delta)
    return _from_float(wrap(_np_adjust_hue(f._value, np.asarray(delta))), orig)


@fast_path(_adjust_hue_fast)
def adjust_hue(image, delta, name=None):
    """`tf.image.adjust_hue`: rotates the hue by `delta` (in turns, within [-1, 1]).

    >>> tf.image.adjust_hue(tf.constant([[[1.0, 2.0, 3.0]]]), 0.2).numpy().round(4).tolist()
    [[[2.4, 1.0, 3.0]]]"""
    f, orig = _hue_input(image, delta)
    h, v, d = _hue_value_range(f)
    # s * v is the range where v > 0; TF's saturation is 0 (a gray pixel) where v <= 0.
    c = math_ops.where(math_ops.greater(v, 0.0), d, array_ops.zeros_like(d))
    w = _hue_weights(math_ops.add(h, _scalar_like(delta, f)), f)
    out = math_ops.subtract(array_ops.expand_dims(v, -1),
                            math_ops.multiply(array_ops.expand_dims(c, -1), w))
    return _from_float(out, orig)


def _saturation_input(image):
    x = _at_least_3d("AdjustSaturation", _numeric("adjust_saturation", to_tensor(image)), 3)
    return _to_float(x), x._dtype


def _adjust_saturation_fast(image, saturation_factor, name=None):
    # the same formulas on plain NumPy arrays
    f, orig = _saturation_input(image)
    return _from_float(wrap(_np_adjust_saturation(f._value, np.asarray(saturation_factor))),
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
    factor = _scalar_like(saturation_factor, f)
    ratio = math_ops.where(ok, math_ops.maximum(math_ops.minimum(factor, inv_s), 0.0),
                           array_ops.zeros_like(inv_s))
    out = math_ops.subtract(v, math_ops.multiply(math_ops.subtract(v, f), ratio))
    return _from_float(out, orig)


def _np_planes(f):
    # NumPy broadcasting along a last axis of size 3 runs ~3x slower than whole planes:
    # the twins below work on contiguous channel planes and interleave once at the end.
    return [np.ascontiguousarray(f[..., i]) for i in range(f.shape[-1])]


def _np_adjust_hue(f, delta):
    """NumPy twin of the composed `adjust_hue` (same formulas; selects by multiplying with
    masks, since np.where on unpredictable masks costs ~10x an arithmetic pass)."""
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
    """NumPy twin of the composed `adjust_saturation`."""
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
    return adjust_hue(image, _uniform([], -d, d, seed, stateless))


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
    x = _numeric("rgb_to_grayscale", to_tensor(images))
    if x._value.ndim < 1 or x._value.shape[-1] != 3:
        raise ValueError(f"rgb_to_grayscale: the last dimension of 'images' must be 3 (RGB), "
                         f"got shape {_shape_str(x)}")
    orig = x._dtype
    f = x if x._dtype in (dtypes.float32, dtypes.float64) else \
        convert_image_dtype(x, dtypes.float32)
    terms = [math_ops.multiply(_channel(f, i), _scalar_like(_GRAY[i], f)) for i in range(3)]
    gray = array_ops.expand_dims(math_ops.add(math_ops.add(terms[0], terms[1]), terms[2]), -1)
    return gray if orig is gray._dtype else convert_image_dtype(gray, orig)


def grayscale_to_rgb(images, name=None):
    """`tf.image.grayscale_to_rgb`: repeats the single channel three times."""
    x = to_tensor(images)
    if x._value.ndim < 2:
        raise ValueError(f"grayscale_to_rgb: 'images' (shape {_shape_str(x)}) must be at "
                         f"least two-dimensional")
    if x._value.shape[-1] != 1:
        raise ValueError(f"grayscale_to_rgb: Last dimension of a grayscale image should be "
                         f"size 1, got shape {_shape_str(x)}")
    return array_ops.tile(x, [1] * (x._value.ndim - 1) + [3])


def _linear_color(op_name, images, matrix):
    x = _float_only(op_name, to_tensor(images))
    _channels(op_name, x)
    m = _const(matrix, x)  # out[..., j] = sum_i x[..., i] * m[i, j]
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


# -- resize ------------------------------------------------------------------------------------
class ResizeMethod:
    """`tf.image.ResizeMethod`: the names `tf.image.resize` accepts."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
            "mitchellcubic")


def _keys_cubic(x, a=-0.5):
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _mitchell(x, b=1 / 3, c=1 / 3):
    x = np.abs(x)
    near = ((12 - 9 * b - 6 * c) * x ** 3 + (-18 + 12 * b + 6 * c) * x ** 2 + (6 - 2 * b)) / 6
    far = ((-b - 6 * c) * x ** 3 + (6 * b + 30 * c) * x ** 2 + (-12 * b - 48 * c) * x
           + (8 * b + 24 * c)) / 6
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _lanczos(n):
    return lambda x: np.where(np.abs(x) < n, np.sinc(x) * np.sinc(x / n), 0.0)


# name -> (kernel function, radius)
_KERNELS = {
    "bilinear": (lambda x: np.maximum(0.0, 1.0 - np.abs(x)), 1.0),
    "bicubic": (_keys_cubic, 2.0),
    "lanczos3": (_lanczos(3), 3.0),
    "lanczos5": (_lanczos(5), 5.0),
    "gaussian": (lambda x: np.where(np.abs(x) < 1.5, np.exp(-x * x / (2 * 0.5 ** 2)), 0.0), 1.5),
    "mitchellcubic": (_mitchell, 2.0),
}


def _bilinear_taps(n_in, n_out, np_dtype):
    """TF's half-pixel bilinear sampling, in the image's float precision."""
    f = np_dtype.type
    pos = (np.arange(n_out, dtype=np_dtype) + f(0.5)) * (f(n_in) / f(n_out)) - f(0.5)
    low = np.floor(pos)
    frac = pos - low
    lo = np.maximum(low, 0).astype(np.intp)
    hi = np.minimum(np.ceil(pos), n_in - 1).astype(np.intp)
    return np.stack([lo, hi], 1), np.stack([1 - frac, frac], 1)


def _area_taps(n_in, n_out):
    """Each output averages the input span [i * s, (i + 1) * s) by overlap (TF's area)."""
    s = n_in / n_out
    start = np.arange(n_out) * s
    end = start + s
    first = np.floor(start).astype(np.intp)
    idx = first[:, None] + np.arange(int(math.ceil(s)) + 1)
    overlap = np.minimum(idx + 1, end[:, None]) - np.maximum(idx, start[:, None])
    w = np.clip(overlap, 0, None) / s
    return np.minimum(idx, n_in - 1), w


def _kernel_taps(method, antialias, n_in, n_out):
    """TF's scale-and-translate sampling: kernel taps at input pixel centres, stretched by
    the downscale factor when antialiasing, out-of-image taps dropped, weights normalised."""
    kernel, radius = _KERNELS[method]
    inv_scale = n_in / n_out
    ks = max(inv_scale, 1.0) if antialias else 1.0
    centre = (np.arange(n_out) + 0.5) * inv_scale
    start = np.ceil(centre - radius * ks - 0.5).astype(np.intp)
    idx = start[:, None] + np.arange(int(math.ceil(2 * radius * ks)) + 1)
    dist = (idx + 0.5 - centre[:, None]) / ks
    w = np.where((idx >= 0) & (idx < n_in) & (np.abs(dist) <= radius), kernel(dist), 0.0)
    total = w.sum(1, keepdims=True)
    w = np.where(np.abs(total) >= 1000 * np.finfo(np.float32).tiny, w / np.where(
        total == 0, 1, total), 0.0)
    return np.clip(idx, 0, n_in - 1), w


@functools.lru_cache(maxsize=256)
def _taps(method, antialias, n_in, n_out, dtype_str):
    """(indices [n_out, T], weights [n_out, T]) of resampling one axis."""
    np_dtype = np.dtype(dtype_str)
    if method == "bilinear" and not antialias:
        idx, w = _bilinear_taps(n_in, n_out, np_dtype)
    elif method == "area":
        idx, w = _area_taps(n_in, n_out)
    else:
        idx, w = _kernel_taps(method, antialias, n_in, n_out)
    w = w.astype(np_dtype)
    idx.flags.writeable = w.flags.writeable = False
    return idx, w


@functools.lru_cache(maxsize=256)
def _dense(method, antialias, n_in, n_out, dtype_str):
    """The same resampling as a dense [n_out, n_in] matrix (for the transposed map)."""
    idx, w = _taps(method, antialias, n_in, n_out, dtype_str)
    m = np.zeros((n_out, n_in), dtype=w.dtype)
    np.add.at(m, (np.repeat(np.arange(n_out), idx.shape[1]), idx.reshape(-1)), w.reshape(-1))
    m.flags.writeable = False
    return m


def _apply_taps(x, idx, w, axis):
    shape = [1] * x.ndim
    shape[axis] = -1
    out = None
    for t in range(idx.shape[1]):  # a handful of taps; each is one vectorised pass
        term = np.take(x, idx[:, t], axis=axis)
        term *= w[:, t].reshape(shape)
        if out is None:
            out = term
        else:
            out += term
    return out


def _resize_fwd(x, size, method, antialias):
    ih, iw = x.shape[-3], x.shape[-2]
    oh, ow = size
    th = _taps(method, antialias, ih, oh, x.dtype.str)
    tw = _taps(method, antialias, iw, ow, x.dtype.str)
    if method == "bilinear" and not antialias:
        fast = numba_resize.bilinear(x, size, th, tw)
        if fast is not None:
            return fast
    # Gathering whole rows (axis -3) is ~5x cheaper per element than gathering columns
    # (axis -2): choose the order that does the least column work.
    if 2 * ih * ow < oh * iw + oh * ow:
        return _apply_taps(_apply_taps(x, *tw, -2), *th, -3)
    return _apply_taps(_apply_taps(x, *th, -3), *tw, -2)


def _resize_transposed(g, in_size, method, antialias):
    oh, ow, c = g.shape[-3:]
    ih, iw = in_size
    mh = _dense(method, antialias, ih, oh, g.dtype.str)
    mw = _dense(method, antialias, iw, ow, g.dtype.str)
    lead = g.shape[:-3]
    t = np.matmul(mh.T, g.reshape(lead + (oh, ow * c))).reshape(lead + (ih, ow, c))
    return np.matmul(mw.T, t)


def _def_resize(name):
    """A resize op and its gradient op (the transposed map); each is the other's gradient."""
    def grad(g, ans, x, size, method, antialias):
        return execute(grad_op, (g,), {"in_size": tuple(x._value.shape[-3:-1]),
                                       "method": method, "antialias": antialias})

    def grad_grad(gg, ans, g, in_size, method, antialias):
        return execute(op, (gg,), {"size": tuple(g._value.shape[-3:-1]), "method": method,
                                   "antialias": antialias})

    # no exporter or batching rule for resizing yet: declared unsupported
    op = register(name, _resize_fwd, grad=grad, unsupported="tf onnx tflite batch tf_import",
                  shape=lambda x, size, method, antialias: Spec(
                      tuple(x.shape[:-3]) + tuple(size) + (x.shape[-1],), x.dtype))
    grad_op = register(name + "Grad", _resize_transposed, grad=grad_grad,
                       unsupported="tf onnx tflite batch tf_import",
                       shape=lambda g, in_size, method, antialias: Spec(
                           tuple(g.shape[:-3]) + tuple(in_size) + (g.shape[-1],), g.dtype))
    return op


RESIZE_BILINEAR = _def_resize("ResizeBilinear")
RESIZE_BICUBIC = _def_resize("ResizeBicubic")
RESIZE_AREA = _def_resize("ResizeArea")
SCALE_AND_TRANSLATE = _def_resize("ScaleAndTranslate")
_RESIZE_OPS = {"bilinear": RESIZE_BILINEAR, "bicubic": RESIZE_BICUBIC, "area": RESIZE_AREA}


def _nearest(x, oh, ow):
    """TF2's half-pixel nearest neighbour: floor((i + 0.5) * in / out), computed in float32."""
    def index(n_in, n_out):
        scale = np.float32(n_in) / np.float32(n_out)
        pos = np.floor((np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * scale)
        return wrap(np.minimum(pos, n_in - 1).astype(np.int32))
    ih, iw = x._value.shape[-3:-1]
    nd = x._value.ndim
    y = array_ops.gather(x, index(ih, oh), axis=nd - 3)
    return array_ops.gather(y, index(iw, ow), axis=nd - 2)


def _size_arg(op_name, size):
    if isinstance(size, (Tensor, np.ndarray)) or getattr(size, "_is_variable", False):
        arr = np.asarray(size)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{op_name}: 'size' must be an integer tensor, got {arr.dtype}")
        vals = arr.reshape(-1).tolist() if arr.ndim == 1 else None
    else:
        try:
            vals = list(size)
        except TypeError:
            vals = None
        if vals is not None and any(isinstance(v, (float, np.floating)) for v in vals):
            raise TypeError(f"{op_name}: 'size' must hold integers, got {size!r}")
    if vals is None or len(vals) != 2:
        raise ValueError(f"{op_name}: 'size' must be a 1-D Tensor of 2 elements: new_height, "
                         f"new_width; got {size!r}")
    return [_int_arg(v, f"{op_name}: size") for v in vals]


def _aspect_size(h, w, nh, nw):
    f32 = np.float32
    scale = min(f32(nh) / f32(h), f32(nw) / f32(w))
    return int(np.round(f32(scale) * f32(h))), int(np.round(f32(scale) * f32(w)))


def _resize_float(x):
    """Resized images are float32 as in TF (float64 kept; see the module notes)."""
    return x if x._dtype in (dtypes.float32, dtypes.float64) else \
        math_ops.cast(x, dtypes.float32)


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False,
           antialias=False, name=None):
    """`tf.image.resize`: resamples height and width with TF2's half-pixel centres; float32
    out except for 'nearest', which keeps the dtype.

    >>> tf.image.resize(tf.zeros([64, 48, 3], tf.uint8), (224, 224)).dtype
    tf.float32"""
    x = _image("resize", images, arg="images")
    _numeric("resize", x)
    method = str(getattr(method, "value", method)).lower()
    if method not in _METHODS:
        raise ValueError(f"resize: Resize method is not implemented: [{method}]; use one of "
                         f"{list(_METHODS)}")
    oh, ow = _size_arg("resize", size)
    ih, iw = x._value.shape[-3:-1]
    if preserve_aspect_ratio:
        oh, ow = _aspect_size(ih, iw, oh, ow)
    if oh <= 0 or ow <= 0:
        raise invalid("ResizeBilinear" if method == "bilinear" else "Resize",
                      f"resize: output dimensions must be positive, got size [{oh}, {ow}]")
    if method == "nearest":
        return _nearest(x, oh, ow)
    op = SCALE_AND_TRANSLATE if antialias and method == "bicubic" else \
        _RESIZE_OPS.get(method, SCALE_AND_TRANSLATE)
    return execute(op, (_resize_float(x),), {"size": (oh, ow), "method": method,
                                             "antialias": bool(antialias)})


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR,
                    antialias=False):
    """`tf.image.resize_with_pad`: resizes keeping the aspect ratio, then pads with zeros
    to the target size, centred."""
    x = _image("resize_with_pad", image)
    th = _int_arg(target_height, "resize_with_pad: target_height")
    tw = _int_arg(target_width, "resize_with_pad: target_width")
    if th <= 0 or tw <= 0:
        raise ValueError(f"resize_with_pad: target_height and target_width must be > 0, got "
                         f"{th}, {tw}")
    h, w = (np.float32(d) for d in x._value.shape[-3:-1])
    ratio = max(w / np.float32(tw), h / np.float32(th))
    rh, rw = h / ratio, w / ratio
    resized = resize(x, [int(np.floor(rh)), int(np.floor(rw))], method=method,
                     antialias=antialias)
    ph = max(0, int(np.floor((np.float32(th) - rh) / 2)))
    pw = max(0, int(np.floor((np.float32(tw) - rw) / 2)))
    return pad_to_bounding_box(resized, ph, pw, th, tw)


# -- crops and pads ----------------------------------------------------------------------------
def _hw_key(top, height, left, width):
    return (Ellipsis, builtins.slice(top, top + height), builtins.slice(left, left + width),
            _ALL)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`tf.image.crop_to_bounding_box`: the box with top-left corner (offset_height,
    offset_width) and the target size."""
    op = "crop_to_bounding_box"
    x = _image(op, image)
    oh, ow = _int_arg(offset_height, "offset_height"), _int_arg(offset_width, "offset_width")
    th, tw = _int_arg(target_height, "target_height"), _int_arg(target_width, "target_width")
    h, w = x._value.shape[-3:-1]
    for ok, msg in ((ow >= 0, f"offset_width must be >= 0, got {ow}"),
                    (oh >= 0, f"offset_height must be >= 0, got {oh}"),
                    (tw > 0, f"target_width must be > 0, got {tw}"),
                    (th > 0, f"target_height must be > 0, got {th}"),
                    (w >= tw + ow, f"width must be >= target + offset: image width {w} < "
                                   f"target_width {tw} + offset_width {ow}"),
                    (h >= th + oh, f"height must be >= target + offset: image height {h} < "
                                   f"target_height {th} + offset_height {oh}")):
        if not ok:
            raise ValueError(f"{op}: {msg} (image shape {_shape_str(x)})")
    return getitem(x, _hw_key(oh, th, ow, tw))


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`tf.image.pad_to_bounding_box`: zero-pads so the image sits at (offset_height,
    offset_width) inside a target-sized canvas."""
    op = "pad_to_bounding_box"
    x = _image(op, image)
    oh, ow = _int_arg(offset_height, "offset_height"), _int_arg(offset_width, "offset_width")
    th, tw = _int_arg(target_height, "target_height"), _int_arg(target_width, "target_width")
    h, w = x._value.shape[-3:-1]
    after_h, after_w = th - oh - h, tw - ow - w
    for ok, msg in ((oh >= 0, f"offset_height must be >= 0, got {oh}"),
                    (ow >= 0, f"offset_width must be >= 0, got {ow}"),
                    (after_w >= 0, f"width must be <= target - offset: image width {w} > "
                                   f"target_width {tw} - offset_width {ow}"),
                    (after_h >= 0, f"height must be <= target - offset: image height {h} > "
                                   f"target_height {th} - offset_height {oh}")):
        if not ok:
            raise ValueError(f"{op}: {msg} (image shape {_shape_str(x)})")
    pads = [[oh, after_h], [ow, after_w], [0, 0]]
    if x._value.ndim == 4:
        pads = [[0, 0]] + pads
    return array_ops.pad(x, pads)


def resize_with_crop_or_pad(image, target_height, target_width):
    """`tf.image.resize_with_crop_or_pad`: centrally crops and/or zero-pads to the target."""
    op = "resize_with_crop_or_pad"
    x = _image(op, image)
    th, tw = _int_arg(target_height, "target_height"), _int_arg(target_width, "target_width")
    if tw <= 0 or th <= 0:
        raise ValueError(f"{op}: target_width and target_height must be > 0, got "
                         f"target_height={th}, target_width={tw}")
    h, w = x._value.shape[-3:-1]
    dh, dw = th - h, tw - w
    cropped = crop_to_bounding_box(x, max(-dh // 2, 0), max(-dw // 2, 0), min(th, h),
                                   min(tw, w))
    return pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), th, tw)


def central_crop(image, central_fraction):
    """`tf.image.central_crop`: keeps the central `central_fraction` of height and width.

    >>> tf.image.central_crop(tf.zeros([224, 224, 3]), 0.5).shape
    TensorShape([112, 112, 3])"""
    x = _image("central_crop", image)
    f = _float_arg(central_fraction, "central_crop: central_fraction")
    if not 0.0 < f <= 1.0:
        raise ValueError(f"central_crop: central_fraction must be within (0, 1], got {f}")
    if f == 1.0:
        return x
    h, w = x._value.shape[-3:-1]
    offset = int(1 / ((1 - f) / 2.0))  # TF's integer arithmetic for static shapes
    top, left = h // offset, w // offset
    return getitem(x, _hw_key(top, h - 2 * top, left, w - 2 * left))


def _random_crop(value, size, seed, stateless, op_name):
    x = to_tensor(value)
    shape = x._value.shape
    sz = int_list(size, f"{op_name}: size")
    if len(sz) != len(shape) or any(s is None or s < 0 for s in sz) or \
            any(s > d for s, d in zip(sz, shape)):
        raise invalid(op_name, f"{op_name}: Need value.shape >= size, got value shape "
                      f"{list(shape)} and size {sz}; size needs one non-negative entry per "
                      f"dimension of value")
    if not sz:
        return x
    draw = _uniform([len(sz)], 0, np.iinfo(np.int32).max, seed, stateless, dtypes.int32)
    limit = np.array(shape) - np.array(sz) + 1
    offset = draw._value.astype(np.int64) % limit
    return getitem(x, tuple(builtins.slice(int(o), int(o) + s) for o, s in zip(offset, sz)))


def random_crop(value, size, seed=None, name=None):
    """`tf.image.random_crop`: a slice of shape `size` at a uniformly random offset."""
    return _random_crop(value, size, seed, False, "random_crop")


def stateless_random_crop(value, size, seed, name=None):
    """`tf.image.stateless_random_crop`: a function of the seed pair."""
    return _random_crop(value, size, seed, True, "stateless_random_crop")


# -- statistics and filters --------------------------------------------------------------------
def per_image_standardization(image):
    """`tf.image.per_image_standardization`: `(x - mean) / max(stddev, 1/sqrt(N))` per image;
    float32 out (float64 kept)."""
    x = _numeric("per_image_standardization", _image("per_image_standardization", image,
                                                     ranks=None))
    f = x if x._dtype is dtypes.float64 else math_ops.cast(x, dtypes.float32)
    axes = [-3, -2, -1]
    n = int(np.prod(x._value.shape[-3:]))
    mean = math_ops.reduce_mean(f, axis=axes, keepdims=True)
    std = math_ops.reduce_std(f, axis=axes, keepdims=True)
    adjusted = math_ops.maximum(std, 1.0 / math.sqrt(n))
    return math_ops.divide(math_ops.subtract(f, mean), adjusted)


def total_variation(images, name=None):
    """`tf.image.total_variation`: sum of absolute differences of neighbouring pixels, per
    image (a scalar for one image, [batch] for a batch)."""
    x = _image("total_variation", images, arg="images")
    dy = math_ops.subtract(getitem(x, (Ellipsis, builtins.slice(1, None), _ALL, _ALL)),
                           getitem(x, (Ellipsis, builtins.slice(None, -1), _ALL, _ALL)))
    dx = math_ops.subtract(getitem(x, (Ellipsis, builtins.slice(1, None), _ALL)),
                           getitem(x, (Ellipsis, builtins.slice(None, -1), _ALL)))
    axes = [-3, -2, -1]
    return math_ops.add(math_ops.reduce_sum(math_ops.abs(dy), axis=axes),
                        math_ops.reduce_sum(math_ops.abs(dx), axis=axes))


def image_gradients(image):
    """`tf.image.image_gradients`: (dy, dx) forward differences, zero in the last row /
    column; `image` is [batch, height, width, depth]."""
    x = to_tensor(image)
    if x._value.ndim != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"shape {_shape_str(x)}")
    dy = math_ops.subtract(getitem(x, (_ALL, builtins.slice(1, None))),
                           getitem(x, (_ALL, builtins.slice(None, -1))))
    dx = math_ops.subtract(getitem(x, (_ALL, _ALL, builtins.slice(1, None))),
                           getitem(x, (_ALL, _ALL, builtins.slice(None, -1))))
    return (array_ops.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]]),
            array_ops.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]]))


def sobel_edges(image):
    """`tf.image.sobel_edges`: [batch, h, w, d, 2] with the vertical (dy) then horizontal (dx)
    3x3 Sobel responses, reflect-padded."""
    x = to_tensor(image)
    if x._value.ndim != 4:
        raise ValueError(f"sobel_edges expects a 4D tensor [batch, h, w, d], not shape "
                         f"{_shape_str(x)}")
    h, w = x._value.shape[1:3]
    p = array_ops.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")

    def shifted(i, j):
        return getitem(p, (_ALL, builtins.slice(i, i + h), builtins.slice(j, j + w)))
    smooth = (1.0, 2.0, 1.0)
    dy = math_ops.add_n([math_ops.multiply(math_ops.subtract(shifted(2, j), shifted(0, j)),
                                           smooth[j]) for j in range(3)])
    dx = math_ops.add_n([math_ops.multiply(math_ops.subtract(shifted(i, 2), shifted(i, 0)),
                                           smooth[i]) for i in range(3)])
    return array_ops.stack([dy, dx], axis=-1)


def psnr(a, b, max_val, name=None):
    """`tf.image.psnr`: peak signal-to-noise ratio per image, in dB."""
    a, b = to_tensor(a), to_tensor(b)
    if a._dtype is not b._dtype:
        raise invalid("psnr", f"psnr: a and b must have the same dtype, got {a._dtype.name} "
                      f"and {b._dtype.name}")
    fa, fb = _to_float_keep64(a), _to_float_keep64(b)
    mv = _to_float_keep64(math_ops.cast(max_val, a._dtype))
    mse = math_ops.reduce_mean(math_ops.squared_difference(fa, fb), axis=[-3, -2, -1])
    ten_over_ln10 = 10.0 / math.log(10.0)
    return math_ops.subtract(math_ops.multiply(math_ops.log(mv), 2 * ten_over_ln10),
                             math_ops.multiply(math_ops.log(mse), ten_over_ln10))


def _to_float_keep64(x):
    return x if x._dtype is dtypes.float64 else convert_image_dtype(x, dtypes.float32)


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """`tf.image.extract_patches`: [batch, out_rows, out_cols, ksize_rows * ksize_cols *
    depth], each patch flattened row by row."""
    op = "ExtractImagePatches"
    x = to_tensor(images)
    if x._value.ndim != 4:
        raise ValueError(f"{op}: images must be 4-D [batch, rows, cols, depth], got shape "
                         f"{_shape_str(x)}")
    k, s, r = (int_list(v, a) for v, a in ((sizes, "sizes"), (strides, "strides"),
                                           (rates, "rates")))
    for v, a in ((k, "sizes"), (s, "strides"), (r, "rates")):
        if len(v) != 4 or v[0] != 1 or v[3] != 1 or min(v) < 1:
            raise invalid(op, f"{op}: {a} must be [1, rows, cols, 1] with positive entries, "
                          f"got {v}")
    padding = str(padding).upper()
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"{op}: padding must be 'VALID' or 'SAME', got {padding!r}")
    n, h, w, c = x._value.shape
    plans = [_patch_plan(d, k[i + 1], s[i + 1], r[i + 1], padding) for i, d in
             enumerate((h, w))]
    pads = [[0, 0]] + [[lo, hi] for _, lo, hi in plans] + [[0, 0]]
    if any(lo or hi for lo, hi in pads):
        x = array_ops.pad(x, pads)
    y = array_ops.gather(x, wrap(plans[0][0]), axis=1)  # [n, oh, kh, w', c]
    y = array_ops.gather(y, wrap(plans[1][0]), axis=3)  # [n, oh, kh, ow, kw, c]
    y = array_ops.transpose(y, [0, 1, 3, 2, 4, 5])
    oh, ow = plans[0][0].shape[0], plans[1][0].shape[0]
    return array_ops.reshape(y, (n, oh, ow, k[1] * k[2] * c))


def _patch_plan(size, k, stride, rate, padding):
    """(indices [out, k] into the padded axis, pad before, pad after) of one spatial axis."""
    span = (k - 1) * rate + 1
    if padding == "VALID":
        out = max((size - span) // stride + 1, 0)
        lo = hi = 0
    else:
        out = -(-size // stride)
        total = max((out - 1) * stride + span - size, 0)
        lo, hi = total // 2, total - total // 2
    idx = np.arange(out)[:, None] * stride + np.arange(k)[None, :] * rate
    return idx.astype(np.int32).reshape(out, k), lo, hi
