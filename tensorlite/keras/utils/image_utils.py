"""Keras's image file helpers: `load_img`, `img_to_array`, `array_to_img`, `save_img`
(`tf.keras.utils.*`, also `tf.keras.preprocessing.image.*`), on Pillow (the `images`
extra) as Keras has them: `load_img` returns a PIL image, the others convert between PIL
images and float32 arrays in the channels-last (or channels-first) layout.

Example:
    >>> img = tf.keras.utils.load_img("cat.jpg", target_size=(224, 224))  # doctest: +SKIP
    >>> tf.keras.utils.img_to_array(img).shape                              # doctest: +SKIP
    (224, 224, 3)
"""
import io
import os
import warnings

import numpy as np

from tensorlite.keras import backend
from tensorlite.ops.image_codecs import _pil

_COLOR_MODES = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}
_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def _data_format(data_format):
    data_format = data_format or backend.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def load_img(path, grayscale=False, color_mode="rgb", target_size=None,
             interpolation="nearest", keep_aspect_ratio=False):
    """Loads an image file (a path, pathlib.Path or file-like of bytes) as a PIL image in
    `color_mode` ("grayscale", "rgb", "rgba"), resized to `target_size` (height, width)
    with `interpolation`; `keep_aspect_ratio` crops the centre to the target's aspect
    ratio first."""
    image_module = _pil()
    if grayscale:
        warnings.warn("grayscale is deprecated. Please use color_mode = 'grayscale'",
                      stacklevel=2)
        color_mode = "grayscale"
    if color_mode not in _COLOR_MODES:
        raise ValueError(f'color_mode must be "grayscale", "rgb", or "rgba", got {color_mode!r}')
    if isinstance(path, io.BytesIO):
        img = image_module.open(path)
    elif isinstance(path, (str, bytes, os.PathLike)):
        with open(os.fspath(path), "rb") as f:
            img = image_module.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    if img.mode != _COLOR_MODES[color_mode]:
        img = img.convert(_COLOR_MODES[color_mode])
    if target_size is not None:
        height, width = target_size
        if img.size != (width, height):
            if interpolation not in _INTERPOLATIONS:
                raise ValueError(f"Invalid interpolation method {interpolation!r}; supported "
                                 f"methods are {', '.join(_INTERPOLATIONS)}")
            resample = getattr(image_module, "Resampling", image_module)
            resample = getattr(resample, interpolation.upper())
            box = None
            if keep_aspect_ratio:
                w, h = img.size
                crop_w = min(w, int(round(h * width / height)))
                crop_h = min(h, int(round(w * height / width)))
                left, top = (w - crop_w) // 2, (h - crop_h) // 2
                box = (left, top, left + crop_w, top + crop_h)
            img = img.resize((width, height), resample, box=box)
    return img


def img_to_array(img, data_format=None, dtype=None):
    """A PIL image as a 3-D NumPy array (float32 unless `dtype`): (height, width, channels)
    for channels_last, grayscale with one channel."""
    data_format = _data_format(data_format)
    x = np.asarray(img, dtype=dtype or backend.floatx())
    if x.ndim == 2:
        x = x[..., np.newaxis]
    elif x.ndim != 3:
        raise ValueError(f"Unsupported image shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(2, 0, 1)
    return x


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A 3-D array (1, 3 or 4 channels) as a PIL image; `scale` maps its range to 0-255."""
    image_module = _pil()
    data_format = _data_format(data_format)
    x = np.asarray(x, dtype=dtype or backend.floatx())
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array "
                         f"with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x = x / top
        x = x * 255
    channels = x.shape[2]
    if channels not in (1, 3, 4):
        raise ValueError(f"Unsupported channel number: {channels}")
    x = np.clip(x, 0, 255).astype("uint8")
    if channels == 1:
        return image_module.fromarray(x[:, :, 0], "L")
    return image_module.fromarray(x, "RGB" if channels == 3 else "RGBA")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Saves a 3-D array as an image file; the format comes from `file_format` or the
    path's extension. An RGBA image saved as JPEG drops its alpha channel, with a warning."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and (file_format == "jpg" or file_format == "jpeg" or (
            file_format is None and str(path).lower().endswith((".jpg", ".jpeg")))):
        warnings.warn("The JPG format does not support RGBA images, converting to RGB.",
                      stacklevel=2)
        img = img.convert("RGB")
    if file_format == "jpg":
        file_format = "jpeg"
    img.save(path, format=file_format, **kwargs)
