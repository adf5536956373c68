"""Bounding-box image ops: `tf.image.sample_distorted_bounding_box` (the Inception-style
random crop) and `tf.image.draw_bounding_boxes`.

Boxes are [ymin, xmin, ymax, xmax] in [0, 1] (fractions of height and width), as in TF.
The sampler is one op whose attribute holds a NumPy generator (graph passes treat it as
random: never folded or merged), seeded by `seed` for repeatable crops.

Example:
    >>> begin, size, box = tf.image.sample_distorted_bounding_box(
    ...     [64, 64, 3], tf.constant([[[0.1, 0.1, 0.9, 0.9]]]), min_object_covered=0.5)
    >>> crop = tf.slice(image, begin, size)
"""
import math

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.ops.common import to_tensor

__all__ = ["sample_distorted_bounding_box", "draw_bounding_boxes"]


def _coverage(y, x, h, w, boxes, height, width):
    """Fraction of each box's area that the window covers."""
    by0, bx0 = boxes[:, 0] * height, boxes[:, 1] * width
    by1, bx1 = boxes[:, 2] * height, boxes[:, 3] * width
    iy = np.clip(np.minimum(by1, y + h) - np.maximum(by0, y), 0, None)
    ix = np.clip(np.minimum(bx1, x + w) - np.maximum(bx0, x), 0, None)
    area = np.maximum((by1 - by0) * (bx1 - bx0), 1e-12)
    return iy * ix / area


def _sample_fwd(image_size, boxes, rng, min_object_covered, aspect_ratio_range, area_range,
                max_attempts):
    height, width = int(image_size[0]), int(image_size[1])
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    if boxes.size == 0:
        boxes = np.array([[0.0, 0.0, 1.0, 1.0]])
    for _ in range(max_attempts):
        area = rng.uniform(*area_range) * height * width
        ratio = rng.uniform(*aspect_ratio_range)
        h = int(round(math.sqrt(area / ratio)))
        w = int(round(h * ratio))
        if not (0 < h <= height and 0 < w <= width):
            continue
        y, x = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
        if (_coverage(y, x, h, w, boxes, height, width) >= min_object_covered).any():
            break
    else:  # no window met the constraints: the whole image, as TF falls back
        y, x, h, w = 0, 0, height, width
    begin = np.array([y, x, 0], np.asarray(image_size).dtype)
    size = np.array([h, w, -1], np.asarray(image_size).dtype)
    box = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]],
                   np.float32)
    return begin, size, box


def _sample_shape(image_size, boxes, **attrs):
    return [Spec((3,), image_size.dtype), Spec((3,), image_size.dtype),
            Spec((1, 1, 4), dtypes.float32)]


SAMPLE_BOX = register(
    "SampleDistortedBoundingBoxV2", _sample_fwd, grad=NOT_DIFFERENTIABLE, shape=_sample_shape,
    multi_output=True, unsupported="tf onnx tflite batch tf_import")


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """`tf.image.sample_distorted_bounding_box`: (begin, size, bboxes) of a random window
    with an aspect ratio and area in the given ranges covering at least
    `min_object_covered` of some box; the whole image when `max_attempts` all fail."""
    size = to_tensor(image_size)
    boxes = to_tensor(bounding_boxes, dtypes.float32)
    if size.shape.as_list() != [3] or not size.dtype.is_integer:
        raise errors.InvalidArgumentError(None, None, f"image_size must be 1-D with 3 integer "
                                          f"elements [height, width, channels], got "
                                          f"{size.dtype.name}{size.shape.as_list()}")
    if boxes.shape.rank != 3 or boxes.shape[-1] != 4:
        raise errors.InvalidArgumentError(None, None, f"bounding_boxes must be 3-D [batch, "
                                          f"N, 4], got shape {boxes.shape.as_list()}")
    if boxes._value.size == 0 and not use_image_if_no_bounding_boxes:
        raise errors.InvalidArgumentError(None, None, "No bounding boxes provided as input; "
                                          "pass use_image_if_no_bounding_boxes=True to "
                                          "sample from the whole image")
    attrs = {"rng": np.random.default_rng(seed), "min_object_covered": float(
        min_object_covered), "aspect_ratio_range": tuple(aspect_ratio_range or (0.75, 1.33)),
        "area_range": tuple(area_range or (0.05, 1.0)), "max_attempts": int(max_attempts or 100)}
    return execute(SAMPLE_BOX, (size, boxes), attrs)


# TF's default palette (RGBA), cycled over the boxes of an image
_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1],
                    [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1],
                    [0, 1, 1, 1], [1, 0, 1, 1]], np.float32)


def _draw_fwd(images, boxes, colors):
    out = np.array(images, copy=True)
    _, height, width, channels = out.shape
    palette = _COLORS if colors is None else np.asarray(colors, np.float32)
    for b in range(out.shape[0]):
        for i, (y0, x0, y1, x1) in enumerate(boxes[b]):
            color = palette[i % len(palette)]
            color = np.resize(color, channels) if channels > len(color) else color[:channels]
            r0, r1 = int(y0 * (height - 1)), int(y1 * (height - 1))
            c0, c1 = int(x0 * (width - 1)), int(x1 * (width - 1))
            if r0 > r1 or c0 > c1 or r1 < 0 or c1 < 0 or r0 >= height or c0 >= width:
                continue
            rows = slice(max(r0, 0), min(r1, height - 1) + 1)
            cols = slice(max(c0, 0), min(c1, width - 1) + 1)
            for r in (r0, r1):
                if 0 <= r < height:
                    out[b, r, cols] = color
            for c in (c0, c1):
                if 0 <= c < width:
                    out[b, rows, c] = color
    return out


DRAW_BOXES = register(
    "DrawBoundingBoxesV2", _draw_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda images, boxes, colors: Spec(images.shape, images.dtype),
    unsupported="tf onnx tflite batch tf_import")


def draw_bounding_boxes(images, boxes, colors=None, name=None):
    """`tf.image.draw_bounding_boxes`: 1-pixel box outlines on float images
    [batch, height, width, channels] (boxes [batch, N, 4]), colours cycled from `colors`
    (RGBA rows) or TF's default palette."""
    x = to_tensor(images)
    if x.shape.rank != 4 or not x.dtype.is_floating:
        raise errors.InvalidArgumentError(None, None, f"images must be a float 4-D tensor "
                                          f"[batch, height, width, depth], got "
                                          f"{x.dtype.name}{x.shape.as_list()}")
    b = to_tensor(boxes, dtypes.float32)
    if b.shape.rank != 3 or b.shape[0] != x.shape[0] or b.shape[-1] != 4:
        raise errors.InvalidArgumentError(None, None, f"boxes must be [batch, N, 4] with the "
                                          f"images' batch {x.shape[0]}, got "
                                          f"{b.shape.as_list()}")
    c = None if colors is None else np.asarray(to_tensor(colors, dtypes.float32)._value)
    return execute(DRAW_BOXES, (x, b), {"colors": c})
