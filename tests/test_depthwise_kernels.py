"""The compiled depthwise convolution (ops/numba_depthwise.py) against the NumPy forms it
replaces and a direct loop reference: forward, input and filter gradients in float64 and
float32 over MobileNet's geometries (3x3 SAME at strides 1 and 2), dilations, uneven and
explicit padding; gradients of orders 1 and 2 by finite differences with the kernel on
and off; images split over the intra-op threads give the same sums."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import intra_op_pool
from tensorlite.ops import conv_kernels, numba_backend, numba_depthwise
from tests.op_check import check_op, rand
from tests.test_conv_ops import ref_depthwise

pytestmark = pytest.mark.skipif(not numba_backend.available(),
                                reason="numba (the jit extra) is not installed")

GEOMETRIES = [  # (input shape, filter hw, strides, pads, dilations)
    ((2, 9, 9, 8), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((3, 12, 12, 16), (3, 3), (2, 2), (0, 1, 0, 1), (1, 1)),  # SAME at stride 2
    ((1, 7, 10, 5), (5, 3), (1, 2), (2, 2, 1, 1), (1, 1)),
    ((2, 11, 9, 4), (3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),
    ((2, 6, 6, 3), (2, 2), (1, 1), (0, 0, 0, 0), (1, 1)),
]


@pytest.fixture
def numpy_forms(monkeypatch):
    """Calls the NumPy forms of conv_kernels with the compiled kernel switched off."""
    def call(fn, *args):
        with monkeypatch.context() as m:
            m.setitem(numba_backend._STATE, "on", False)
            return fn(*args)
    return call


@pytest.mark.parametrize("xs, khw, strides, pads, dil", GEOMETRIES)
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_kernels_match_numpy_forms(numpy_forms, xs, khw, strides, pads, dil, dtype, tol):
    x = rand(*xs, seed=1).astype(dtype)
    w = rand(*khw, xs[-1], 1, seed=2).astype(dtype)
    y = numba_depthwise.forward(x, w, strides, dil, pads)
    np.testing.assert_allclose(y, numpy_forms(conv_kernels.dw_fwd, x, w, strides, dil, pads),
                               rtol=tol, atol=tol)
    assert y.dtype == dtype
    g = rand(*y.shape, seed=3).astype(dtype)
    dx = numba_depthwise.input_grad(g, w, xs[1:3], strides, dil, pads)
    np.testing.assert_allclose(dx, numpy_forms(conv_kernels.dw_bi_fwd, g, w, xs[1:3], strides,
                                               dil, pads), rtol=tol, atol=tol)
    dw = numba_depthwise.filter_grad(x, g, khw, strides, dil, pads)
    np.testing.assert_allclose(dw, numpy_forms(conv_kernels.dw_bf_fwd, x, g, khw, strides, dil,
                                               pads), rtol=tol, atol=tol * 10)
    assert dx.shape == x.shape and dw.shape == w.shape


def test_split_over_threads_gives_the_same_sums():
    x, w = rand(6, 10, 10, 8, seed=4), rand(3, 3, 8, 1, seed=5)
    g = rand(6, 10, 10, 8, seed=6)
    one = [numba_depthwise.forward(x, w, (1, 1), (1, 1), (1, 1, 1, 1)),
           numba_depthwise.input_grad(g, w, (10, 10), (1, 1), (1, 1), (1, 1, 1, 1)),
           numba_depthwise.filter_grad(x, g, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1))]
    with intra_op_pool.splitting(2):
        two = [numba_depthwise.forward(x, w, (1, 1), (1, 1), (1, 1, 1, 1)),
               numba_depthwise.input_grad(g, w, (10, 10), (1, 1), (1, 1), (1, 1, 1, 1)),
               numba_depthwise.filter_grad(x, g, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1))]
    for a, b in zip(one, two):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_kernels_decline_what_they_do_not_cover():
    x = rand(1, 5, 5, 2)
    assert numba_depthwise.forward(x, rand(3, 3, 2, 2), (1, 1), (1, 1), (1, 1, 1, 1)) is None
    assert numba_depthwise.forward(x[None], rand(3, 3, 2, 1), (1, 1), (1, 1),
                                   (1, 1, 1, 1)) is None  # leading batch dims
    assert numba_depthwise.forward(x.astype(np.int32), np.ones((3, 3, 2, 1), np.int32),
                                   (1, 1), (1, 1), (1, 1, 1, 1)) is None


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("strides, padding", [([1, 1, 1, 1], "SAME"), ([1, 2, 2, 1], "SAME"),
                                              ([1, 1, 1, 1], "VALID")])
def test_gradients_of_orders_one_and_two(monkeypatch, compiled, strides, padding):
    if not compiled:
        monkeypatch.setitem(numba_backend._STATE, "on", False)
    s = tuple(strides[1:3])
    check_op(lambda x, w: tf.nn.depthwise_conv2d(x, w, strides, padding),
             lambda x, w: ref_depthwise(x, w, s, padding),
             [rand(2, 6, 7, 3, seed=8), rand(3, 3, 3, 1, seed=9)])
