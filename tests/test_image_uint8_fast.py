"""uint8 images through the colour adjustments' compiled one-pass forms
(numba_image_color's *_uint8: conversions to float32 and back inside the pass) and the
compiled left-right flip, against the plain composition (convert_image_dtype, the float
formulas, convert back saturating) that runs when an observer (a tape or trace) is active,
bit for bit; and with numba off."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import dispatch
from tensorlite.ops import numba_backend, numba_image_color, numba_image_flip

needs_numba = pytest.mark.skipif(not numba_backend.available(),
                                 reason="numba (the jit extra) is not installed")


class _Watcher:
    def __init__(self):
        self.ops = []

    def record(self, op, inputs, attrs, outputs):
        self.ops.append(op.name)


def _composed(fn, *args):
    watcher = _Watcher()
    dispatch.OBSERVERS.append(watcher)
    try:
        return fn(*args).numpy(), watcher.ops
    finally:
        dispatch.OBSERVERS.remove(watcher)


def _image(shape=(2, 23, 19, 3)):
    x = np.random.default_rng(4).integers(0, 256, shape).astype(np.uint8)
    flat = x.reshape(-1, 3)
    flat[:8] = [[0, 0, 0], [255, 255, 255], [9, 9, 9], [255, 0, 0], [0, 255, 255],
                [3, 200, 3], [128, 128, 127], [1, 0, 0]]  # grays, primaries, ties
    return x


ADJUST = {"brightness": (tf.image.adjust_brightness, [0.0, 0.07, -0.1, 0.6, -1.0]),
          "contrast": (tf.image.adjust_contrast, [0.8, 1.2, 0.0, 3.0, -1.0]),
          "saturation": (tf.image.adjust_saturation, [0.8, 1.2, 0.0, 5.0]),
          "hue": (tf.image.adjust_hue, [0.05, -0.05, 0.5, -1.0, 1.0])}


@needs_numba
@pytest.mark.parametrize("name", list(ADJUST))
@pytest.mark.parametrize("shape", [(2, 23, 19, 3), (17, 9, 3)])
def test_uint8_adjustments_are_the_composition_bit_for_bit(name, shape):
    fn, params = ADJUST[name]
    x = _image(shape)
    for p in params:
        for param in (p, tf.constant(p, tf.float32), tf.constant(p, tf.float64)):
            fast = fn(tf.constant(x), param)
            want, ops = _composed(fn, tf.constant(x), param)
            assert "ConvertImageDtype" in ops  # the composition ran
            assert fast.dtype == tf.uint8
            np.testing.assert_array_equal(fast.numpy(), want)


@needs_numba
def test_uint8_kernels_run_on_uint8_images():
    x = _image()
    assert numba_image_color.adjust_hue_uint8(x, np.float32(0.1)) is not None
    assert numba_image_color.adjust_saturation_uint8(x, np.float32(1.1)) is not None
    assert numba_image_color.adjust_brightness_uint8(x, np.float32(0.1)) is not None
    assert numba_image_color.adjust_hue_uint8(x.astype(np.float32), 0.1) is None
    assert numba_image_color.adjust_brightness_uint8(x, np.zeros(2)) is None  # per image


def test_uint8_adjustments_without_numba(monkeypatch):
    monkeypatch.setitem(numba_backend._STATE, "on", False)
    monkeypatch.setattr(numba_backend, "_KERNELS", {})
    x = _image()
    assert numba_image_color.adjust_hue_uint8(x, 0.1) is None
    for fn, params in ADJUST.values():
        fast = fn(tf.constant(x), params[1])
        np.testing.assert_array_equal(fast.numpy(), _composed(fn, tf.constant(x), params[1])[0])


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int32])
@pytest.mark.parametrize("shape", [(5, 7, 3), (2, 4, 6, 1), (3, 8, 5)])
def test_flip_width_is_a_contiguous_np_flip(dtype, shape):
    x = np.random.default_rng(1).integers(0, 200, shape).astype(dtype)
    got = numba_image_flip.flip_width(x)
    if not numba_backend.available():
        assert got is None
        return
    assert got.flags.c_contiguous and got.dtype == dtype
    np.testing.assert_array_equal(got, np.flip(x, -2))
    assert numba_image_flip.flip_width(x[..., ::2, :]) is None  # not contiguous: NumPy's


def test_random_flip_left_right_flips_or_keeps_the_image():
    x = _image((11, 13, 3))
    seen = set()
    for _ in range(40):
        y = tf.image.random_flip_left_right(tf.constant(x)).numpy()
        if np.array_equal(y, x):
            seen.add("kept")
        else:
            np.testing.assert_array_equal(y, x[:, ::-1])
            seen.add("flipped")
    assert seen == {"kept", "flipped"}


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("shape, size", [((13, 11, 3), (20, 7)), ((2, 9, 9, 1), [4, 17]),
                                         ((160, 160, 3), (224, 224))])
def test_eager_bilinear_resize_shortcut_is_the_op(dtype, shape, size):
    # the eager shortcut (uint8/float32, two Python ints) against the op's path
    x = np.random.default_rng(2).integers(0, 256, shape).astype(dtype)
    fast = tf.image.resize(tf.constant(x), size)
    want, ops = _composed(tf.image.resize, tf.constant(x), size)
    assert "ResizeBilinear" in ops
    assert fast.dtype == tf.float32 and fast.shape == want.shape
    np.testing.assert_array_equal(fast.numpy(), want)
    with pytest.raises(tf.errors.InvalidArgumentError, match="positive"):  # checks kept
        tf.image.resize(tf.constant(x), (0, 3))
