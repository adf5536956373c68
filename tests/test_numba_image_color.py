"""The compiled colour adjustments (ops/numba_image_color.py) against their NumPy twins in
image_color.py, bit for bit, with numba on and off, and the public ops against TensorFlow's
formulas through the plain composition (`fast_path` off)."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import image_color, numba_backend, numba_image_color

needs_numba = pytest.mark.skipif(not numba_backend.available(),
                                 reason="numba (the jit extra) is not installed")


def _numba_off(monkeypatch):
    monkeypatch.setitem(numba_backend._STATE, "on", False)
    monkeypatch.setattr(numba_backend, "_KERNELS", {})


def _pixels(seed, shape=(2, 37, 29, 3)):
    """Random colours plus the edge cases of the hue/saturation formulas: gray pixels,
    black, ties between channels, values outside [0, 1], negatives, NaN and infinities."""
    rng = np.random.default_rng(seed)
    x = rng.random(shape, dtype=np.float32)
    flat = x.reshape(-1, 3)
    edge = np.array([[0.5, 0.5, 0.5], [0, 0, 0], [1, 1, 0.2], [0.3, 0.9, 0.9],
                     [0.9, 0.3, 0.9], [-0.2, 0.4, 0.1], [1.7, 0.2, 2.5], [-1, -2, -3],
                     [np.nan, 0.2, 0.3], [np.inf, 0.1, 0.2], [0.2, -np.inf, 0.1],
                     [1e-30, 0, 0], [0, 1e-38, 2e-38], [0.25, 0.75, 0.5]], np.float32)
    flat[:len(edge)] = edge
    flat[len(edge):200] = np.round(flat[len(edge):200] * 4) / 4  # many exact ties
    return x


@needs_numba
@pytest.mark.parametrize("delta", [0.0, 0.05, -0.31, 0.5, -1.0, 0.999])
def test_compiled_hue_is_the_numpy_twins_bit_for_bit(delta, monkeypatch):
    x = _pixels(1)
    got = numba_image_color.adjust_hue(x, np.asarray(delta))
    assert got is not None
    _numba_off(monkeypatch)
    with np.errstate(all="ignore"):
        want = image_color._np_adjust_hue(x, np.asarray(delta))
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got[~np.isnan(got)]).sum() == np.signbit(want[~np.isnan(want)]).sum()


@needs_numba
@pytest.mark.parametrize("factor", [0.0, 0.8, 1.0, 1.2, 7.5])
def test_compiled_saturation_is_the_numpy_twins_bit_for_bit(factor, monkeypatch):
    x = _pixels(2, (3, 64, 70, 3))
    got = numba_image_color.adjust_saturation(x, np.asarray(factor))
    assert got is not None
    _numba_off(monkeypatch)
    with np.errstate(all="ignore"):
        want = image_color._np_adjust_saturation(x, np.asarray(factor))
    np.testing.assert_array_equal(got, want)


@needs_numba
@pytest.mark.parametrize("shape", [(31, 17, 3), (2, 8, 9, 4)])
def test_compiled_contrast_is_the_numpy_twins_bit_for_bit(shape, monkeypatch):
    x = np.random.default_rng(3).normal(size=shape).astype(np.float32)
    got = image_color._np_adjust_contrast(x, np.asarray(1.3))
    _numba_off(monkeypatch)
    np.testing.assert_array_equal(got, image_color._np_adjust_contrast(x, np.asarray(1.3)))


def test_kernels_decline_what_they_do_not_cover(monkeypatch):
    x64 = np.random.default_rng(4).random((5, 6, 3))
    assert numba_image_color.adjust_hue(x64, np.asarray(0.1)) is None  # float64: NumPy's
    assert numba_image_color.adjust_saturation(x64[..., :2].astype(np.float32),
                                               np.asarray(1.1)) is None
    _numba_off(monkeypatch)
    assert numba_image_color.adjust_hue(x64.astype(np.float32), np.asarray(0.1)) is None


@pytest.mark.parametrize("numba", ["on", "off"])
def test_adjust_ops_match_the_plain_composition(numba, monkeypatch):
    # the fast paths (compiled, or the NumPy twins) against the ops composed from
    # tf.math as TensorFlow writes them (fast_path switched off)
    if numba == "on" and not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    if numba == "off":
        _numba_off(monkeypatch)
    images = tf.constant(np.random.default_rng(5).random((2, 9, 11, 3), dtype=np.float32))
    ops = [lambda x: tf.image.adjust_hue(x, 0.2), lambda x: tf.image.adjust_saturation(x, 1.4),
           lambda x: tf.image.adjust_contrast(x, 0.7)]
    fast = [op(images).numpy() for op in ops]
    for op, got in zip(ops, fast):
        np.testing.assert_allclose(got, _composed(op, images), rtol=1e-5, atol=1e-6)


def _composed(op, images):
    """The op's plain tf.math composition: run under a GradientTape watching the input,
    which takes the differentiable path instead of the fast one."""
    with tf.GradientTape() as tape:
        tape.watch(images)
        return op(images).numpy()


@needs_numba
def test_compiled_float32_to_uint8_is_numpys_cast(monkeypatch):
    from tensorlite.ops import image_convert, numba_image_dtype  # noqa: PLC0415
    rng = np.random.default_rng(6)
    x = rng.uniform(-0.5, 1.5, size=(33, 41, 3)).astype(np.float32)
    edge = np.array([0, 1, 0.5, 1 / 255, 254.5 / 255.5, 255 / 255.5, -0.0, 1e-9, -1e-9,
                     np.nan, np.inf, -np.inf, 2.0, 0.998], np.float32)
    x.reshape(-1)[:len(edge)] = edge
    got = numba_image_dtype.float32_to_uint8(x)
    _numba_off(monkeypatch)
    with np.errstate(invalid="ignore"):
        want = image_convert._float_to_int(x, np.uint8)
    np.testing.assert_array_equal(got, want)
    assert numba_image_dtype.float32_to_uint8(x) is None  # off: NumPy's own cast
