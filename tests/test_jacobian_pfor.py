"""tape.jacobian / batch_jacobian with experimental_use_pfor=True: the backward pass of one
output row, vectorized over all rows by the ops' batching rules (graph/vectorize.py), gives
the loop's answers (experimental_use_pfor=False) and finite differences'; ops without a rule
run per row with a warning naming them; per-example gradients by vectorized_map over a
function that opens a GradientTape (seed 001)."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.graph import vectorize

RNG = np.random.default_rng(0)


def _var(*shape):
    return tf.Variable(RNG.normal(size=shape).astype(np.float64) * 0.5)


X = _var(2, 5, 5, 3)
K = _var(3, 3, 3, 4)
W = _var(4, 6)
V = _var(3, 4)


def _mlp():
    return tf.reduce_sum(tf.nn.relu(tf.matmul(V, W)) ** 2, axis=0)


def _cnn():
    h = tf.nn.max_pool2d(tf.nn.conv2d(X, K, 1, "SAME"), 2, 2, "VALID")
    return tf.reshape(tf.reduce_mean(h, axis=[1, 2]), [-1])


def _softmax():
    return tf.reshape(tf.nn.softmax(tf.matmul(V, W)) + tf.nn.log_softmax(V[:, :2], axis=0)
                      [:, :1], [-1])


def _reductions():
    return tf.stack([tf.reduce_max(V), tf.reduce_logsumexp(V), tf.reduce_prod(V[0]),
                     tf.reduce_mean(tf.square(W), axis=None)])


CASES = {"matmul": (_mlp, [V, W]), "conv2d": (_cnn, [X, K]), "softmax": (_softmax, [V, W]),
         "reductions": (_reductions, [V, W])}


def _numeric(fn, var, eps=1e-6):
    base = var.numpy().copy()
    cols = []
    for i in range(base.size):
        d = np.zeros(base.size)
        d[i] = eps
        var.assign(base + d.reshape(base.shape))
        up = fn().numpy()
        var.assign(base - d.reshape(base.shape))
        down = fn().numpy()
        cols.append((up - down) / (2 * eps))
    var.assign(base)
    return np.stack(cols, axis=-1).reshape(up.shape + base.shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pfor_jacobian_equals_loop_and_finite_differences(name):
    fn, sources = CASES[name]
    with tf.GradientTape(persistent=True) as tape:
        y = fn()
    vectorize.LAST["fallback_ops"] = None
    got = tape.jacobian(y, sources, experimental_use_pfor=True)
    assert vectorize.LAST["fallback_ops"] == []  # the pfor path ran, with no per-row op
    loop = tape.jacobian(y, sources, experimental_use_pfor=False)
    for g, want, s in zip(got, loop, sources):
        assert g.shape == y.shape + s.shape
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    if name != "conv2d":  # conv's finite differences: compared on the loop in test_tape
        for g, s in zip(got, sources):
            np.testing.assert_allclose(g.numpy(), _numeric(fn, s), rtol=1e-5, atol=1e-6)


def test_pfor_batch_jacobian_equals_loop():
    x = tf.constant(RNG.normal(size=(5, 4)))
    w = tf.constant(RNG.normal(size=(4, 3)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.softmax(tf.matmul(tf.tanh(x), w))
    got = tape.batch_jacobian(y, x)
    assert got.shape == (5, 3, 4)
    want = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
    full = tape.jacobian(y, x).numpy()
    np.testing.assert_allclose(got.numpy(), np.stack([full[b, :, b] for b in range(5)]),
                               rtol=1e-10)


def test_pfor_jacobian_runs_ops_without_a_rule_per_row_and_names_them():
    x = tf.constant(RNG.normal(size=(4,)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.math.cumsum(x * x)
    vectorize._WARNED.clear()  # each set of ops warns once per process
    with pytest.warns(UserWarning, match=r"tape.jacobian: no batching rule for Cumsum"):
        got = tape.jacobian(y, x)
    assert "Cumsum" in vectorize.LAST["fallback_ops"]
    xv = x.numpy()
    np.testing.assert_allclose(got.numpy(), np.tril(np.ones((4, 4))) * 2 * xv, rtol=1e-12)


def test_jacobian_under_an_outer_tape_stays_differentiable():
    x = tf.Variable([0.3, -0.7, 1.1], dtype=tf.float64)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.sin(x) * x
        j = inner.jacobian(y, x)  # recorded by the outer tape: not the NumPy pfor run
        s = tf.reduce_sum(j)
    g = outer.gradient(s, x).numpy()
    xv = x.numpy()
    np.testing.assert_allclose(g, 2 * np.cos(xv) - xv * np.sin(xv), rtol=1e-12)


def test_per_example_gradients_of_a_cnn_with_vectorized_map():
    k = tf.Variable(RNG.normal(size=(3, 3, 1, 2)).astype(np.float32) * 0.3)
    w = tf.Variable(RNG.normal(size=(8, 3)).astype(np.float32) * 0.3)
    images = tf.constant(RNG.normal(size=(6, 1, 4, 4, 1)).astype(np.float32))
    labels = tf.constant(RNG.integers(0, 3, size=(6, 1)).astype(np.int32))

    def grads(args):
        x, y = args
        with tf.GradientTape() as tape:
            h = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(x, k, 1, "SAME")), 2, 2, "VALID")
            logits = tf.matmul(tf.reshape(h, [1, 8]), w)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
                                  + 0.1 * tf.reduce_sum(tf.nn.softmax(logits) ** 2))
        return tape.gradient(loss, [k, w])
    got = tf.vectorized_map(grads, (images, labels))
    for i in range(6):
        want = grads((images[i], labels[i]))
        for g, wv in zip(got, want):
            np.testing.assert_allclose(g.numpy()[i], wv.numpy(), rtol=2e-4, atol=1e-6)
