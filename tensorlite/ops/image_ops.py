"""Image ops (`tf.image.*`): dtype conversion, flips and rotations, crops and pads,
standardisation, filters and patches. Colour adjustments and colour spaces are in
image_color.py, resizing in image_resize.py, dtype conversion in image_convert.py, and the
argument checks every image op shares in image_args.py.

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
import math

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import invalid
from tensorlite.framework.tensor import wrap
from tensorlite.ops import array_ops, gather_ops, math_ops, numba_image_flip
from tensorlite.ops.common import DECLINED, fast_path, int_list, to_tensor
from tensorlite.ops.image_args import (float_arg, image_arg, int_arg, numeric, shape_str,
                                       uniform_draw)
from tensorlite.ops.image_convert import convert_image_dtype
from tensorlite.ops.slice_ops import getitem

__all__ = []  # TensorFlow exports these under tf.image only

_ALL = builtins.slice(None)


# -- flips, rotations, transpose ---------------------------------------------------------------
def flip_left_right(image, name=None):
    """`tf.image.flip_left_right`: mirrors the width dimension.

    >>> tf.image.flip_left_right(tf.zeros([4, 5, 3])).shape
    TensorShape([4, 5, 3])"""
    x = image_arg("flip_left_right", image)
    return array_ops.reverse(x, [-2])


def flip_up_down(image, name=None):
    """`tf.image.flip_up_down`: mirrors the height dimension."""
    x = image_arg("flip_up_down", image)
    return array_ops.reverse(x, [-3])


def transpose(image, name=None):
    """`tf.image.transpose`: swaps height and width."""
    x = image_arg("transpose", image)
    return array_ops.transpose(x, [0, 2, 1, 3] if x._value.ndim == 4 else [1, 0, 2])


def rot90(image, k=1, name=None):
    """`tf.image.rot90`: rotates counter-clockwise by `k` quarter turns.

    >>> tf.image.rot90(tf.reshape(tf.range(4), [2, 2, 1])).numpy()[..., 0]
    array([[1, 3],
           [0, 2]], dtype=int32)"""
    x = image_arg("rot90", image)
    k = int_arg(k, "rot90: k") % 4
    if k == 0:
        return x
    if k == 2:
        return array_ops.reverse(x, [-3, -2])
    swapped = transpose(x)
    return array_ops.reverse(swapped, [-3] if k == 1 else [-2])


def _random_flip_fast(op_name, image, axis, seed, stateless):
    # eager, one image: no select, at most a view
    x = image_arg(op_name, image)
    if x._value.ndim != 3:
        return DECLINED
    u = uniform_draw([], 0.0, 1.0, seed, stateless)
    if u._value >= 0.5:
        return x
    if axis == -2:  # a contiguous copy: a reversed view would slow every later op
        out = numba_image_flip.flip_width(x._value)
        if out is not None:
            return wrap(out)
    return array_ops.reverse(x, [axis])


@fast_path(_random_flip_fast)
def _random_flip(op_name, image, axis, seed, stateless):
    x = image_arg(op_name, image)
    if x._value.ndim == 3:
        u = uniform_draw([], 0.0, 1.0, seed, stateless)
        return math_ops.where(math_ops.less(u, 0.5), array_ops.reverse(x, [axis]), x)
    n = x._value.shape[0]
    u = uniform_draw([n], 0.0, 1.0, seed, stateless)
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


# -- crops and pads ----------------------------------------------------------------------------
def _hw_key(top, height, left, width):
    return (Ellipsis, builtins.slice(top, top + height), builtins.slice(left, left + width),
            _ALL)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`tf.image.crop_to_bounding_box`: the box with top-left corner (offset_height,
    offset_width) and the target size."""
    op = "crop_to_bounding_box"
    x = image_arg(op, image)
    oh, ow = int_arg(offset_height, "offset_height"), int_arg(offset_width, "offset_width")
    th, tw = int_arg(target_height, "target_height"), int_arg(target_width, "target_width")
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
            raise ValueError(f"{op}: {msg} (image shape {shape_str(x)})")
    return getitem(x, _hw_key(oh, th, ow, tw))


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`tf.image.pad_to_bounding_box`: zero-pads so the image sits at (offset_height,
    offset_width) inside a target-sized canvas."""
    op = "pad_to_bounding_box"
    x = image_arg(op, image)
    oh, ow = int_arg(offset_height, "offset_height"), int_arg(offset_width, "offset_width")
    th, tw = int_arg(target_height, "target_height"), int_arg(target_width, "target_width")
    h, w = x._value.shape[-3:-1]
    after_h, after_w = th - oh - h, tw - ow - w
    for ok, msg in ((oh >= 0, f"offset_height must be >= 0, got {oh}"),
                    (ow >= 0, f"offset_width must be >= 0, got {ow}"),
                    (after_w >= 0, f"width must be <= target - offset: image width {w} > "
                                   f"target_width {tw} - offset_width {ow}"),
                    (after_h >= 0, f"height must be <= target - offset: image height {h} > "
                                   f"target_height {th} - offset_height {oh}")):
        if not ok:
            raise ValueError(f"{op}: {msg} (image shape {shape_str(x)})")
    pads = [[oh, after_h], [ow, after_w], [0, 0]]
    if x._value.ndim == 4:
        pads = [[0, 0]] + pads
    return array_ops.pad(x, pads)


def resize_with_crop_or_pad(image, target_height, target_width):
    """`tf.image.resize_with_crop_or_pad`: centrally crops and/or zero-pads to the target."""
    op = "resize_with_crop_or_pad"
    x = image_arg(op, image)
    th, tw = int_arg(target_height, "target_height"), int_arg(target_width, "target_width")
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
    x = image_arg("central_crop", image)
    f = float_arg(central_fraction, "central_crop: central_fraction")
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
    draw = uniform_draw([len(sz)], 0, np.iinfo(np.int32).max, seed, stateless, dtypes.int32)
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
    x = numeric("per_image_standardization", image_arg("per_image_standardization", image,
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
    x = image_arg("total_variation", images, arg="images")
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
                         f"shape {shape_str(x)}")
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
                         f"{shape_str(x)}")
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
                         f"{shape_str(x)}")
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
    y = gather_ops.gather(x, wrap(plans[0][0]), axis=1)  # [n, oh, kh, w', c]
    y = gather_ops.gather(y, wrap(plans[1][0]), axis=3)  # [n, oh, kh, ow, kw, c]
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
