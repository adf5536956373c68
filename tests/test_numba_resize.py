"""The compiled bilinear resize (ops/numba_resize.py, each input row interpolated along x
once and kept while output rows need it) against TensorFlow's per-pixel formula written in
NumPy: top and bottom rows along x, then between them along y, bit for bit."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import image_resize, numba_backend, numba_resize


def _per_pixel(x, size):
    th = image_resize._taps("bilinear", False, x.shape[-3], size[0], x.dtype.str)
    tw = image_resize._taps("bilinear", False, x.shape[-2], size[1], x.dtype.str)
    (ih, wh), (iw, ww) = th, tw
    y0, y1, fy = ih[:, 0], ih[:, 1], wh[:, 1][:, None, None]
    x0, x1, fx = iw[:, 0], iw[:, 1], ww[:, 1][None, :, None]
    tl, tr = x[..., y0[:, None], x0[None, :], :], x[..., y0[:, None], x1[None, :], :]
    bl, br = x[..., y1[:, None], x0[None, :], :], x[..., y1[:, None], x1[None, :], :]
    top = tl + (tr - tl) * fx
    bottom = bl + (br - bl) * fx
    return top + (bottom - top) * fy, th, tw


@pytest.mark.skipif(not numba_backend.available(), reason="numba (the jit extra) is not "
                                                          "installed")
@pytest.mark.parametrize("shape, size, dtype", [
    ((160, 160, 3), (224, 224), np.float32),  # the augmentation lecture's upscaling
    ((2, 17, 9, 5), (40, 7), np.float64),
    ((3, 50, 40, 3), (13, 9), np.float32),  # downscaling: input rows skipped
    ((1, 1, 1), (3, 4), np.float32), ((4, 6, 2), (4, 6), np.float32)])
def test_compiled_bilinear_is_tensorflows_per_pixel_formula(shape, size, dtype):
    x = np.random.default_rng(sum(shape)).normal(size=shape).astype(dtype)
    want, th, tw = _per_pixel(x, size)
    got = numba_resize.bilinear(x, size, th, tw)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_resize_without_numba_stays_close(monkeypatch):
    x = np.random.default_rng(1).random((2, 20, 30, 3)).astype(np.float32)
    fast = tf.image.resize(x, (31, 17)).numpy()
    monkeypatch.setitem(numba_backend._STATE, "on", False)
    monkeypatch.setattr(numba_backend, "_KERNELS", {})
    assert numba_resize.bilinear(x, (31, 17), *_per_pixel(x, (31, 17))[1:]) is None
    np.testing.assert_allclose(tf.image.resize(x, (31, 17)).numpy(), fast, rtol=1e-6,
                               atol=1e-6)
