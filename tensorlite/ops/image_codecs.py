"""PNG and JPEG: `tf.io.decode_png`/`decode_jpeg`/`decode_image` and `encode_png`/
`encode_jpeg` (also under tf.image), through Pillow (the optional `images` extra).

Decoding parses the bytes with Pillow's codecs only (no code in a file is ever run); bytes
that are not a valid image are an InvalidArgumentError naming what was expected. Each is
one registered op, so it is one node in a Dataset.map or a tf.function.

Example:
    >>> png = tf.io.encode_png(tf.zeros([2, 2, 3], tf.uint8))
    >>> tf.io.decode_png(png).shape
    TensorShape([2, 2, 3])
"""
import io

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.ops.common import to_tensor

__all__ = ["decode_png", "decode_jpeg", "decode_image", "encode_png", "encode_jpeg",
           "is_jpeg"]

_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _pil():
    try:
        from PIL import Image  # noqa: PLC0415
    except ImportError:
        raise ImportError("PNG/JPEG coding needs Pillow: pip install pillow (or "
                          "tensorlite[images])") from None
    return Image


def _bytes(contents, what):
    v = np.asarray(contents)
    if v.ndim != 0:
        raise errors.InvalidArgumentError(None, None, f"{what}: contents must be a scalar "
                                          f"string, got shape {list(v.shape)}")
    v = v[()]
    return v if isinstance(v, bytes) else str(v).encode("latin-1")


def _decode_fwd(contents, channels, dtype, fmt):
    Image = _pil()
    data = _bytes(contents, f"decode_{fmt}")
    try:
        img = Image.open(io.BytesIO(data))
        if fmt != "image" and img.format.lower() != {"jpeg": "jpeg", "png": "png"}[fmt] \
                and not (fmt == "jpeg" and img.format == "JPEG"):
            raise ValueError(f"the data is {img.format}, not {fmt.upper()}")
        img.load()
    except Exception as e:  # noqa: BLE001 - Pillow's errors vary by codec
        kind = "PNG, JPEG, GIF or BMP" if fmt == "image" else fmt.upper()
        raise errors.InvalidArgumentError(
            None, None, f"decode_{fmt}: the contents are not a valid {kind} image "
            f"({len(data)} bytes): {e}") from None
    high = img.mode.startswith("I;16") or img.mode == "I"
    if channels:
        img = img.convert(_MODES[channels]) if not high else img
    elif img.mode not in ("L", "LA", "RGB", "RGBA") and not high:
        img = img.convert("RGBA" if "A" in img.getbands() else "RGB")
    a = np.asarray(img)
    if a.ndim == 2:
        a = a[:, :, None]
    target = np.dtype(dtype)
    if high and target == np.uint8:
        a = (a.astype(np.uint32) >> 8).astype(np.uint8)
    elif not high and target == np.uint16:
        a = a.astype(np.uint16) * 257
    elif target.kind == "f":
        a = a.astype(target) / (65535.0 if high else 255.0)
    return np.ascontiguousarray(a.astype(target))


def _decode_shape(contents, channels, dtype, fmt):
    return Spec((None, None, channels or None), dtypes.as_dtype(dtype))


DECODE_IMAGE = register("DecodeImage", _decode_fwd, grad=NOT_DIFFERENTIABLE,
                        shape=_decode_shape, unsupported="tf onnx tflite batch tf_import")


def _decode(contents, channels, dtype, fmt):
    if channels not in (0, 1, 2, 3, 4) and channels is not None:
        raise errors.InvalidArgumentError(None, None, f"channels must be 0, 1, 3 or 4, got "
                                          f"{channels}")
    t = to_tensor(contents, dtypes.string)
    return execute(DECODE_IMAGE, (t,), {"channels": int(channels or 0), "dtype":
                                        dtypes.as_dtype(dtype).as_numpy_dtype, "fmt": fmt})


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """`tf.io.decode_png`: [height, width, channels] uint8 (or uint16)."""
    return _decode(contents, channels, dtype, "png")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """`tf.io.decode_jpeg`: [height, width, channels] uint8."""
    return _decode(contents, channels, dtypes.uint8, "jpeg")


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None,
                 expand_animations=True):
    """`tf.io.decode_image`: PNG, JPEG, GIF (first frame) or BMP, by content."""
    return _decode(contents, channels, dtype, "image")


def is_jpeg(contents, name=None):
    """`tf.io.is_jpeg`: whether the bytes start with JPEG's marker."""
    from tensorlite.framework.tensor import wrap  # noqa: PLC0415
    return wrap(np.asarray(_bytes(to_tensor(contents)._value, "is_jpeg")[:3] ==
                           b"\xff\xd8\xff"))


def _encode_fwd(image, fmt, params):
    Image = _pil()
    a = np.asarray(image)
    if a.ndim != 3 or a.shape[-1] not in _MODES:
        raise errors.InvalidArgumentError(None, None, f"encode_{fmt}: image must be 3-D "
                                          f"[height, width, channels] with 1-4 channels, "
                                          f"got shape {list(a.shape)}")
    if fmt == "jpeg" and (a.dtype != np.uint8 or a.shape[-1] not in (1, 3)):
        raise errors.InvalidArgumentError(None, None, "encode_jpeg: image must be uint8 with "
                                          f"1 or 3 channels, got {a.dtype}{list(a.shape)}")
    if a.dtype == np.uint16:
        if a.shape[-1] != 1:
            raise errors.InvalidArgumentError(None, None, "encode_png: uint16 images are "
                                              "written as 1-channel here; convert to uint8 "
                                              "for colour")
        img = Image.fromarray(a[:, :, 0], mode="I;16")
    else:
        img = Image.fromarray(a[:, :, 0] if a.shape[-1] == 1 else a, _MODES[a.shape[-1]])
    buf = io.BytesIO()
    img.save(buf, format=fmt.upper(), **params)
    return np.array(buf.getvalue(), dtype=object)


ENCODE_IMAGE = register(
    "EncodeImage", _encode_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda image, fmt, params: Spec((), dtypes.string),
    unsupported="tf onnx tflite batch tf_import")


def encode_png(image, compression=-1, name=None):
    """`tf.io.encode_png`: a PNG string of a uint8/uint16 [h, w, c] image."""
    level = 6 if compression is None or compression < 0 else int(compression)
    return execute(ENCODE_IMAGE, (to_tensor(image),), {"fmt": "png",
                                                        "params": {"compress_level": level}})


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """`tf.io.encode_jpeg`: a JPEG string of a uint8 [h, w, 1 or 3] image."""
    params = {"quality": int(quality), "progressive": bool(progressive),
              "optimize": bool(optimize_size), "dpi": (x_density, y_density)}
    if not chroma_downsampling:
        params["subsampling"] = 0
    return execute(ENCODE_IMAGE, (to_tensor(image),), {"fmt": "jpeg", "params": params})
