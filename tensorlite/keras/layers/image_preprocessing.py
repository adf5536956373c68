"""Keras's image preprocessing and augmentation layers: Rescaling, Resizing, CenterCrop,
RandomFlip, RandomRotation, RandomZoom, RandomCrop, RandomContrast.

Inputs are [height, width, channels] images or [batch, height, width, channels] batches.
The random layers act only when training (fit, or `training=True`) and pass inputs through
otherwise. Flips and contrast are registry ops (random ops are graph nodes); rotations,
zooms and crops resample on NumPy through one `tf.numpy_function` node per call, so inside
a tf.function (fit's graph step) every call draws anew. Rotation and zoom fill the area
outside the image as Keras does: 'reflect' (d c b a | a b c d | d c b a), 'wrap',
'nearest' or 'constant' (fill_value), with bilinear or nearest interpolation.

Example:
    >>> aug = tf.keras.Sequential([tf.keras.layers.RandomFlip("horizontal"),
    ...                            tf.keras.layers.RandomRotation(0.1)])
    >>> aug(tf.zeros([2, 8, 8, 3]), training=True).shape
    TensorShape([2, 8, 8, 3])
"""
import math

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, image_ops, image_resize, math_ops, random_ops
from tensorlite.ops.script_ops import numpy_function

_FILL_MODES = ("reflect", "wrap", "constant", "nearest")


def _as_float(layer, x):
    dt = dtypes.as_dtype(layer.dtype or "float32")
    return x if x.dtype is dt else math_ops.cast(x, dt)


class Rescaling(Layer):
    """`tf.keras.layers.Rescaling`: inputs * scale + offset (e.g. 1/255 for pixels)."""

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs):
        x = _as_float(self, inputs)
        return math_ops.add(math_ops.multiply(x, math_ops.cast(self.scale, x.dtype)),
                            math_ops.cast(self.offset, x.dtype))

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class Resizing(Layer):
    """`tf.keras.layers.Resizing`: images resized to (height, width); with
    crop_to_aspect_ratio the largest centred window of the target's aspect ratio first."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 **kwargs):
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = crop_to_aspect_ratio

    def call(self, inputs):
        x = inputs
        if self.crop_to_aspect_ratio:
            h, w = x.shape.as_list()[-3:-1]
            ch = min(h, int(round(w * self.height / self.width)))
            cw = min(w, int(round(h * self.width / self.height)))
            x = image_ops.crop_to_bounding_box(x, (h - ch) // 2, (w - cw) // 2, ch, cw)
        out = image_resize.resize(x, (self.height, self.width), method=self.interpolation)
        return _as_float(self, out)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation,
                "crop_to_aspect_ratio": self.crop_to_aspect_ratio}


def _center_crop(layer, x, height, width):
    h, w = x.shape.as_list()[-3:-1]
    if h < height or w < width:  # smaller than the target: resized to it, as Keras does
        return Resizing(height, width, crop_to_aspect_ratio=True, dtype=layer.dtype)(x)
    out = image_ops.crop_to_bounding_box(x, (h - height) // 2, (w - width) // 2, height,
                                         width)
    return _as_float(layer, out)


class CenterCrop(Layer):
    """`tf.keras.layers.CenterCrop`: the central height x width window."""

    def __init__(self, height, width, **kwargs):
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)

    def call(self, inputs):
        return _center_crop(self, inputs, self.height, self.width)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width}


class _RandomLayer(Layer):
    """A random augmentation: acts only when training; owns a NumPy generator seeded by
    `seed` for the resampling layers."""

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    def call(self, inputs, training=None):
        if not training:
            return self._inference(inputs)
        return self._augment(inputs)

    def _inference(self, inputs):
        # the layer's dtype in both phases, as Keras casts first: a Map of a uint8 mask
        # through RandomFlip (the segmentation tutorial's Augment) keeps one element spec
        return _as_float(self, inputs)

    def get_config(self):
        return {**super().get_config(), "seed": self.seed}


def _per_image(x, fn):
    """Applies fn(image) to each [h, w, c] image of a batch (or the single image)."""
    return fn(x) if x.ndim == 3 else np.stack([fn(img) for img in x])


class RandomFlip(_RandomLayer):
    """`tf.keras.layers.RandomFlip`: mode 'horizontal', 'vertical' or
    'horizontal_and_vertical' (each axis flipped with probability 1/2 per image)."""

    def __init__(self, mode="horizontal_and_vertical", seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if mode not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode "
                             f"argument {mode}")
        self.mode = mode

    def _augment(self, inputs):
        x = inputs
        if self.mode != "vertical":
            x = image_ops.random_flip_left_right(x, seed=self.seed)
        if self.mode != "horizontal":
            x = image_ops.random_flip_up_down(x, seed=self.seed)
        return _as_float(self, x)

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


def _factor_range(factor, name, symmetric=True):
    if isinstance(factor, (tuple, list)):
        lo, hi = float(factor[0]), float(factor[1])
    else:
        lo, hi = (-abs(float(factor)), abs(float(factor))) if symmetric else \
            (1 - float(factor), 1 + float(factor))
    if lo > hi:
        raise ValueError(f"{name}: the lower bound {lo} is above the upper bound {hi}")
    return lo, hi


def _fold(i, n, mode):
    """Integer pixel indices mapped into [0, n) by the fill mode (None: constant)."""
    if mode == "reflect":
        m = np.mod(i, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m)
    if mode == "wrap":
        return np.mod(i, n)
    return np.clip(i, 0, n - 1)


def _sample(img, ys, xs, fill_mode, fill_value, interpolation):
    """img [h, w, c] sampled at float coordinates ys, xs (pixel centres at integers)."""
    h, w = img.shape[:2]
    if interpolation == "nearest":
        corners = [(np.floor(ys + 0.5).astype(np.int64), np.floor(xs + 0.5).astype(np.int64),
                    1.0)]
    else:
        y0, x0 = np.floor(ys).astype(np.int64), np.floor(xs).astype(np.int64)
        dy, dx = ys - y0, xs - x0
        corners = [(y0, x0, (1 - dy) * (1 - dx)), (y0, x0 + 1, (1 - dy) * dx),
                   (y0 + 1, x0, dy * (1 - dx)), (y0 + 1, x0 + 1, dy * dx)]
    out = np.zeros(ys.shape + img.shape[2:], np.float64)
    for yi, xi, wt in corners:
        vals = img[_fold(yi, h, fill_mode), _fold(xi, w, fill_mode)].astype(np.float64)
        if fill_mode == "constant":
            inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
            vals = np.where(inside[..., None], vals, fill_value)
        out += np.asarray(wt)[..., None] * vals
    return out.astype(img.dtype if img.dtype.kind == "f" else np.float32)


def _transform(img, matrix, fill_mode, fill_value, interpolation):
    """Output pixel (y, x) takes the input at matrix @ (y - cy, x - cx) + (cy, cx)."""
    h, w = img.shape[:2]
    cy, cx = (h - 1) / 2, (w - 1) / 2
    yy, xx = np.meshgrid(np.arange(h) - cy, np.arange(w) - cx, indexing="ij")
    ys = matrix[0, 0] * yy + matrix[0, 1] * xx + cy
    xs = matrix[1, 0] * yy + matrix[1, 1] * xx + cx
    return _sample(img, ys, xs, fill_mode, fill_value, interpolation)


class _Resampling(_RandomLayer):
    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if fill_mode not in _FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Only {_FILL_MODES} "
                                      f"are supported.")
        if interpolation not in ("bilinear", "nearest"):
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Only "
                                      f"'bilinear' and 'nearest' are supported.")
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, \
            fill_value

    def _augment(self, inputs):
        x = _as_float(self, inputs)

        def run(a):
            return _per_image(a, lambda img: _transform(img, self._matrix(), self.fill_mode,
                                                        self.fill_value, self.interpolation))
        return array_ops.ensure_shape(numpy_function(run, [x], x.dtype), x.shape)

    def get_config(self):
        return {**super().get_config(), "fill_mode": self.fill_mode,
                "interpolation": self.interpolation, "fill_value": self.fill_value}


class RandomRotation(_Resampling):
    """`tf.keras.layers.RandomRotation`: rotates each image by a random angle of
    factor * 2 pi (factor a float f for [-f, f], or a (lower, upper) pair)."""

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.factor = factor
        self._range = _factor_range(factor, "RandomRotation factor")

    def _matrix(self):
        a = self._rng.uniform(*self._range) * 2 * math.pi
        c, s = math.cos(a), math.sin(a)
        return np.array([[c, -s], [s, c]])

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class RandomZoom(_Resampling):
    """`tf.keras.layers.RandomZoom`: zooms each image by 1 + a factor drawn from
    height_factor (negative: zoom in, positive: zoom out); width_factor None keeps the
    aspect ratio."""

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._h = _factor_range(height_factor, "RandomZoom height_factor")
        self._w = None if width_factor is None else \
            _factor_range(width_factor, "RandomZoom width_factor")
        if self._h[0] < -1 or (self._w is not None and self._w[0] < -1):
            raise ValueError(f"RandomZoom factors must be >= -1, got {height_factor}, "
                             f"{width_factor}")

    def _matrix(self):
        zy = 1 + self._rng.uniform(*self._h)
        zx = zy if self._w is None else 1 + self._rng.uniform(*self._w)
        return np.array([[zy, 0.0], [0.0, zx]])

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


class RandomCrop(_RandomLayer):
    """`tf.keras.layers.RandomCrop`: a random height x width window when training; the
    central one otherwise (images smaller than the target are resized)."""

    def __init__(self, height, width, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.height, self.width = int(height), int(width)

    def _inference(self, inputs):
        return _center_crop(self, inputs, self.height, self.width)

    def _augment(self, inputs):
        h, w = inputs.shape.as_list()[-3:-1]
        if h < self.height or w < self.width:
            return self._inference(inputs)
        x = _as_float(self, inputs)

        def crop(img):
            top = self._rng.integers(0, h - self.height + 1)
            left = self._rng.integers(0, w - self.width + 1)
            return img[top:top + self.height, left:left + self.width]
        return numpy_function(lambda a: _per_image(a, crop), [x], x.dtype)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width}


class RandomContrast(_RandomLayer):
    """`tf.keras.layers.RandomContrast`: per image, (x - mean) * f + mean per channel with
    f drawn from [1 - lower, 1 + upper] (factor a float for both), clipped to [0, 255]."""

    def __init__(self, factor, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = factor
        lo, hi = factor if isinstance(factor, (tuple, list)) else (factor, factor)
        if not (0 <= lo <= 1 and hi >= 0):
            raise ValueError(f"Factor cannot have negative values or greater than 1.0, got "
                             f"{factor}")
        self._lower, self._upper = 1.0 - lo, 1.0 + hi

    def _augment(self, inputs):
        x = _as_float(self, inputs)
        batched = x.shape.rank == 4
        shape = [x.shape[0], 1, 1, 1] if batched else [1, 1, 1]
        f = random_ops.uniform(shape, self._lower, self._upper, dtype=x.dtype, seed=self.seed)
        mean = math_ops.reduce_mean(x, axis=[-3, -2], keepdims=True)
        out = math_ops.add(math_ops.multiply(math_ops.subtract(x, mean), f), mean)
        return math_ops.clip_by_value(out, 0.0, 255.0)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}
