"""The compiled bilinear resize (ops/numba_resize.py) against the NumPy separable form it
replaces and a direct reference of TF2's half-pixel bilinear sampling, up and down, single
images and batches, float32 and float64; gradients by finite differences with it on."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import numba_backend
from tests.op_check import check_op, rand

pytestmark = pytest.mark.skipif(not numba_backend.available(),
                                reason="numba (the jit extra) is not installed")


def reference(x, oh, ow):
    """Direct loops: TF's half-pixel centres, lerp along x then y."""
    h, w = x.shape[-3:-1]
    out = np.empty(x.shape[:-3] + (oh, ow, x.shape[-1]), np.float64)
    for i in range(oh):
        fy = (i + 0.5) * h / oh - 0.5
        y0, y1 = max(int(np.floor(fy)), 0), min(int(np.ceil(fy)), h - 1)
        wy = fy - np.floor(fy)
        for j in range(ow):
            fx = (j + 0.5) * w / ow - 0.5
            x0, x1 = max(int(np.floor(fx)), 0), min(int(np.ceil(fx)), w - 1)
            wx = fx - np.floor(fx)
            top = x[..., y0, x0, :] + (x[..., y0, x1, :] - x[..., y0, x0, :]) * wx
            bottom = x[..., y1, x0, :] + (x[..., y1, x1, :] - x[..., y1, x0, :]) * wx
            out[..., i, j, :] = top + (bottom - top) * wy
    return out


@pytest.mark.parametrize("shape, size", [((9, 13, 3), (20, 17)), ((2, 21, 8, 2), (7, 5)),
                                         ((1, 6, 6, 1), (6, 6)), ((3, 5, 4, 3), (15, 2))])
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-6), (np.float64, 1e-12)])
def test_matches_reference_and_numpy_form(monkeypatch, shape, size, dtype, tol):
    x = rand(*shape, seed=3).astype(dtype)
    got = tf.image.resize(x, size).numpy()
    assert got.dtype == dtype
    np.testing.assert_allclose(got, reference(x.astype(np.float64), *size), rtol=tol,
                               atol=tol * 4)
    monkeypatch.setitem(numba_backend._STATE, "on", False)
    np.testing.assert_allclose(tf.image.resize(x, size).numpy(), got, rtol=tol, atol=tol * 4)


def test_uint8_images_resize_to_float32():
    x = np.random.default_rng(0).integers(0, 256, (16, 12, 3)).astype(np.uint8)
    got = tf.image.resize(x, (24, 30))
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), reference(x.astype(np.float64), 24, 30),
                               rtol=1e-5, atol=1e-4)


def test_gradients():
    check_op(lambda x: tf.image.resize(x, (7, 5)), lambda x: reference(x, 7, 5),
             [rand(1, 4, 6, 2, seed=4)])
