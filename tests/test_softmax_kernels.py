"""Softmax's compiled passes (ops/numba_softmax.py) and its fused gradient op SoftmaxGrad
(ops/nn_ops.py): against the plain NumPy composition in float64 and float32, through
tests/op_check.py (values, gradients of orders 1 and 2, batched jacobians) with the
compiled kernels on and off, for the small one-pass kernel and the large three-pass form
(forced onto small inputs by lowering MAX_SIZE)."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import intra_op_pool
from tensorlite.ops import nn_ops, numba_backend, numba_softmax
from tests.op_check import check_op, rand


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_softmax_grad(y, g, axis=-1):
    return y * (g - (g * y).sum(axis=axis, keepdims=True))


@pytest.fixture(params=["compiled-small", "compiled-large", "numpy"])
def kernels(request, monkeypatch):
    if request.param == "numpy":
        monkeypatch.setitem(numba_backend._STATE, "on", False)
    elif not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    elif request.param == "compiled-large":
        monkeypatch.setattr(numba_softmax, "MAX_SIZE", 0)
    return request.param


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-6)])
def test_large_rows_and_grad_match_numpy(dtype, tol):
    if not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    x = (rand(2, 4, 16, 16, seed=1) * 4).astype(dtype)
    g = rand(2, 4, 16, 16, seed=2).astype(dtype)
    y = numba_softmax.large_rows(x)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, np_softmax(x), rtol=tol, atol=tol)
    dx = numba_softmax.grad_rows(y, g)
    assert dx.dtype == dtype
    np.testing.assert_allclose(dx, np_softmax_grad(y, g), rtol=tol * 10, atol=tol)


def test_kernels_decline_what_they_do_not_cover():
    y = rand(3, 5)
    assert numba_softmax.grad_rows(y, rand(2, 3, 5)) is None       # a batched cotangent
    assert numba_softmax.grad_rows(y, rand(5, 3).T) is None         # not contiguous
    assert numba_softmax.large_rows(np.ones((2, 3), np.int32)) is None
    assert numba_softmax.large_rows(np.ones((0, 3))) is None


def test_nan_and_inf_propagate_as_numpy_does(kernels):
    x = np.array([[1.0, np.nan, 2.0], [np.inf, 0.0, 1.0], [1.0, 2.0, 3.0]], np.float32)
    with np.errstate(invalid="ignore"):
        got = tf.nn.softmax(x).numpy()
        want = np_softmax(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4)])
def test_softmax_op_check(kernels, shape):
    check_op(lambda x: tf.nn.softmax(x), np_softmax, [rand(*shape, seed=3)])
    check_op(lambda x: tf.nn.softmax(x, axis=0), lambda x: np_softmax(x, 0),
             [rand(*shape, seed=4)])


@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4)])
def test_softmax_grad_op_check(kernels, shape):
    """The fused gradient op against the composition it replaces, and its own gradients
    (the second order of softmax) by finite differences."""
    y = np_softmax(rand(*shape, seed=5))
    check_op(lambda y, g: nn_ops.softmax_grad(y, g), np_softmax_grad,
             [y, rand(*shape, seed=6)])
    check_op(lambda y, g: nn_ops.softmax_grad(y, g, axis=-2),
             lambda y, g: np_softmax_grad(y, g, -2), [y, rand(*shape, seed=7)])


def test_attention_scores_shape_under_tape_and_function(kernels):
    """Attention's softmax of [batch, heads, seq, seq] scores: the gradient a tape and a
    tf.function give equals the composition's."""
    x = tf.constant(rand(2, 2, 8, 8, seed=8).astype(np.float32))
    w = tf.constant(rand(2, 2, 8, 8, seed=9).astype(np.float32))

    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.nn.softmax(x) * w)
        return tape.gradient(loss, x)
    want = np_softmax_grad(np_softmax(x.numpy()), w.numpy())
    np.testing.assert_allclose(grad(x).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tf.function(grad)(x).numpy(), want, rtol=1e-5, atol=1e-6)


def test_rows_split_over_threads_give_the_same_bits(monkeypatch):
    """Large softmaxes and their gradients split into runs of rows over the intra-op
    threads equal the one-thread results bit for bit."""
    if not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    monkeypatch.setattr(numba_softmax, "SPLIT_MIN_SIZE", 0)
    monkeypatch.setattr(numba_softmax, "_RUN_ROWS", 3)
    x = (rand(2, 3, 10, 16, seed=10) * 3).astype(np.float32)
    g = rand(2, 3, 10, 16, seed=11).astype(np.float32)
    one = numba_softmax.large_rows(x)
    one_grad = numba_softmax.grad_rows(one, g)
    with intra_op_pool.splitting(2):
        two = numba_softmax.large_rows(x)
        two_grad = numba_softmax.grad_rows(one, g)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one_grad, two_grad)
    np.testing.assert_allclose(one, np_softmax(x), rtol=1e-6, atol=1e-7)
