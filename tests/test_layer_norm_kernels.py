"""The fused LayerNorm / LayerNormGrad ops (ops/layer_norm_ops.py, compiled rows in
ops/numba_layer_norm.py) against the plain composition keras' LayerNormalization used
(moments + batch_normalization) in float64: values and gradients of orders 1 and 2 through
tests/op_check.py, for the forward and for each output of the backward, with the compiled
kernels on and off; and the layer's training path against its inference path."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import layer_norm_ops, numba_backend, numba_layer_norm
from tensorlite.framework import dispatch
from tests.op_check import _ShapeRuleObserver, check_op, rand

EPS = 1e-3


def np_layer_norm(x, gamma, beta):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + EPS) * gamma + beta


def composition_grads(x, gamma, g):
    """(dx, dgamma, dbeta) of the composition the layer runs at inference, by the tape."""
    xt, gt = tf.constant(x), tf.constant(gamma)
    bt = tf.zeros([x.shape[-1]], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([xt, gt, bt])
        mean, var = tf.nn.moments(xt, [-1], keepdims=True)
        y = tf.nn.batch_normalization(xt, mean, var, bt, gt, EPS)
    return [t.numpy() for t in tape.gradient(y, [xt, gt, bt], output_gradients=tf.constant(g))]


@pytest.fixture(params=["compiled", "numpy"])
def kernels(request, monkeypatch):
    if request.param == "numpy":
        monkeypatch.setitem(numba_backend._STATE, "on", False)
    elif not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    return request.param


@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 5)])
def test_forward_op_check(kernels, shape):
    check_op(lambda x, g, b: layer_norm_ops.layer_norm(x, g, b, EPS), np_layer_norm,
             [rand(*shape, seed=1), rand(shape[-1], seed=2), rand(shape[-1], seed=3)])


@pytest.mark.parametrize("output", [0, 1, 2], ids=["dx", "dgamma", "dbeta"])
def test_backward_op_check(kernels, output):
    """Each output of LayerNormGrad against the composition's tape gradient; its own
    gradients (LayerNorm's second and third order) by finite differences."""
    x, gamma, g = rand(2, 3, 5, seed=4), rand(5, seed=5), rand(2, 3, 5, seed=6)
    check_op(lambda x, gamma, g: layer_norm_ops.layer_norm_grad(x, gamma, g, EPS)[output],
             lambda *a: composition_grads(*a)[output], [x, gamma, g])


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-11), (np.float32, 2e-5)])
def test_compiled_rows_match_numpy_forms(dtype, tol):
    if not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    x = (rand(6, 7, 32, seed=7) * 3 + 1).astype(dtype)
    gamma, beta, g = (rand(32, seed=8).astype(dtype), rand(32, seed=9).astype(dtype),
                      rand(6, 7, 32, seed=10).astype(dtype))
    y = numba_layer_norm.forward(x, gamma, beta, EPS)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, np_layer_norm(x.astype(np.float64), gamma, beta),
                               rtol=tol, atol=tol)
    dx, dgamma, dbeta = numba_layer_norm.backward(x, gamma, g, EPS)
    want = composition_grads(x.astype(np.float64), gamma.astype(np.float64),
                             g.astype(np.float64))
    for got, w in zip((dx, dgamma, dbeta), want):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, w, rtol=tol * 10, atol=tol * 10)


def test_compiled_rows_take_strided_operands():
    if not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    x, g = rand(4, 3, seed=14), rand(4, 3, seed=15)
    gamma, beta = rand(8, seed=16)[::2], rand(4, seed=17)
    np.testing.assert_allclose(numba_layer_norm.forward(x.T, gamma, beta, EPS),
                               np_layer_norm(x.T, gamma, beta), rtol=1e-12)
    want = composition_grads(x.T, gamma, g.T)
    for got, w in zip(numba_layer_norm.backward(x.T, gamma, g.T, EPS), want):
        np.testing.assert_allclose(got, w, rtol=1e-10, atol=1e-12)


def test_compiled_rows_decline_other_layouts():
    x = rand(3, 4)
    assert numba_layer_norm.forward(x, rand(4).astype(np.float32), rand(4), EPS) is None
    assert numba_layer_norm.backward(x, rand(4), rand(2, 3, 4), EPS) is None  # batched g


def test_layer_trains_on_the_fused_ops_with_the_composition_s_values(kernels):
    """LayerNormalization while training (the fused ops) and at inference (moments and
    batch_normalization): the same outputs and weight gradients, eagerly and in a
    tf.function, and a Keras fit step runs through them."""
    layer = tf.keras.layers.LayerNormalization()
    x = tf.constant(rand(4, 5, 8, seed=11).astype(np.float32))
    w = tf.constant(rand(4, 5, 8, seed=12).astype(np.float32))
    layer(x)
    layer.gamma.assign(rand(8, seed=13).astype(np.float32))

    def step(training):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(layer(x, training=training) * w)
        return [loss] + tape.gradient(loss, [x] + layer.trainable_variables)
    seen = _ShapeRuleObserver()
    dispatch.OBSERVERS.append(seen)
    try:
        fused = step(True)
    finally:
        dispatch.OBSERVERS.remove(seen)
    assert {"LayerNorm", "LayerNormGrad"} <= {op.name for op, *_ in seen.seen}
    plain = step(False)
    traced = tf.function(lambda: step(True))()
    for a, b, c in zip(fused, plain, traced):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(c.numpy(), b.numpy(), rtol=2e-5, atol=2e-5)
    model = tf.keras.Sequential([tf.keras.Input((5, 8)), tf.keras.layers.LayerNormalization(),
                                 tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer="adam")
    losses = [model.train_on_batch(x.numpy(), np.ones((4, 5, 1), np.float32))
              for _ in range(3)]
    assert np.isfinite(losses).all() and losses[-1] < losses[0]


def test_nan_and_inf_rows_propagate_as_the_composition(kernels):
    x = np.array([[1.0, np.nan, 2.0, 0.5], [np.inf, 0.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]],
                 np.float32)
    gamma, beta = np.ones(4, np.float32), np.zeros(4, np.float32)
    with np.errstate(invalid="ignore"):
        got = layer_norm_ops.layer_norm(x, gamma, beta, EPS).numpy()
        want = np_layer_norm(x, gamma, beta)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5)


def test_vectorized_map_and_jacobian_use_the_batch_rules(kernels):
    """tf.vectorized_map over examples (each [seq, features]) gives the per-example
    results, forward and backward; a jacobian through the layer needs no per-example loop."""
    x, g = rand(3, 4, 5, seed=18), rand(3, 4, 5, seed=19)
    gamma, beta = tf.constant(rand(5, seed=20)), tf.constant(rand(5, seed=21))
    fwd = tf.vectorized_map(lambda t: layer_norm_ops.layer_norm(t, gamma, beta, EPS),
                            tf.constant(x))
    np.testing.assert_allclose(fwd.numpy(), np_layer_norm(x, gamma.numpy(), beta.numpy()),
                               rtol=1e-12)
    bwd = tf.vectorized_map(
        lambda a: layer_norm_ops.layer_norm_grad(a[0], gamma, a[1], EPS),
        (tf.constant(x), tf.constant(g)))
    for i in range(3):
        want = composition_grads(x[i], gamma.numpy(), g[i])
        for got, w in zip(bwd, want):
            np.testing.assert_allclose(got.numpy()[i], w, rtol=1e-10, atol=1e-12)
    import warnings  # noqa: PLC0415
    xt = tf.constant(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "no batching rule ...: ran once per example"
        with tf.GradientTape() as tape:
            tape.watch(xt)
            y = layer_norm_ops.layer_norm(xt, gamma, beta, EPS)
        jac = tape.jacobian(y, xt)
    assert jac.shape == (3, 4, 5, 3, 4, 5)
