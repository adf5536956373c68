"""tf.vectorized_map: every op's batching rule equals a Python loop (one shared check);
fn runs once on the batch, falling back per op (and saying which) where no rule exists;
per-example gradients."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import registry
from tensorlite.graph import vectorize
from tests.vectorize_check import cases, check_batch_rule

BATCHED_OPS = sorted(name for name, op in registry.REGISTRY.items() if op.batch is not None)


def test_many_ops_declare_batching_rules():
    assert len(BATCHED_OPS) > 40
    for name in ("BatchMatMulV2", "AddV2", "Mul", "Relu", "ReluGrad", "Sum", "Mean",
                 "Reshape", "Transpose", "Exp"):
        assert name in BATCHED_OPS


@pytest.mark.parametrize("name", BATCHED_OPS)
def test_batching_rule_equals_python_loop(name):
    op = registry.get(name)
    rng = np.random.default_rng(0)
    found = cases(op, rng)
    assert found, f"{name}: the shared check has no inputs for its rule kind"
    for inputs, attrs in found:
        check_batch_rule(op, inputs, attrs, rng)


def test_vectorized_map_equals_python_loop_and_names_fallbacks():
    rng = np.random.default_rng(1)
    w = tf.constant(rng.normal(size=(4, 3)).astype(np.float32))
    xs = tf.constant(rng.normal(size=(6, 2, 4)).astype(np.float32))

    def fn(x):
        return tf.reduce_sum(tf.nn.relu(tf.matmul(x, w)) * 2.0 + 1.0, axis=0)
    got = tf.vectorized_map(fn, xs)
    want = np.stack([fn(xs[i]).numpy() for i in range(6)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    assert vectorize.LAST["fallback_ops"] == []
    vectorize._WARNED.clear()  # each set of ops warns once per process
    with pytest.warns(UserWarning, match="no batching rule for Cumsum"):
        got = tf.vectorized_map(lambda x: tf.math.cumsum(x[1:], axis=1) * 2.0, xs)
    np.testing.assert_allclose(got.numpy(), np.cumsum(xs.numpy()[:, 1:], axis=2) * 2.0,
                               rtol=1e-6)
    assert vectorize.LAST["fallback_ops"] == ["Cumsum"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="same leading"):
        tf.vectorized_map(lambda a: a[0], (xs, tf.ones([5])))


def _mlp_problem(seed):
    """Two weight variables, a batch of 16 examples, and fn: one example's gradients."""
    rng = np.random.default_rng(seed)
    w1 = tf.Variable(rng.normal(size=(5, 8)).astype(np.float32) * 0.3)
    w2 = tf.Variable(rng.normal(size=(8, 1)).astype(np.float32) * 0.3)
    xs = tf.constant(rng.normal(size=(16, 1, 5)).astype(np.float32))
    ys = tf.constant(rng.normal(size=(16, 1, 1)).astype(np.float32))

    def grads(args):
        x, y = args
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2) - y))
        return tape.gradient(loss, [w1, w2])
    return w1, xs, ys, grads


def _check_per_example(got, grads, xs, ys, rtol):
    for k in range(2):
        want = np.stack([grads((xs[i], ys[i]))[k].numpy() for i in range(16)])
        np.testing.assert_allclose(got[k].numpy(), want, rtol=rtol, atol=1e-6)


def test_per_example_gradients_of_an_mlp():
    _, xs, ys, grads = _mlp_problem(0)
    got = tf.vectorized_map(grads, (xs, ys))
    assert vectorize.LAST["fallback_ops"] == []
    _check_per_example(got, grads, xs, ys, rtol=1e-4)


def test_data_map_vectorization_uses_vectorized_map():
    def scale(x, y):
        return tf.cast(x, tf.float32) * 2.0 + 1.0, y
    options = tf.data.Options()
    options.experimental_optimization.map_vectorization = True
    base = tf.data.Dataset.from_tensor_slices((tf.range(6), tf.range(6) * 10))
    ds = base.map(scale).batch(3).with_options(options)
    assert "through tf.vectorized_map" in ds.explain(print_fn=None)
    got = [(a.numpy().tolist(), b.numpy().tolist()) for a, b in ds]
    assert got == [([1.0, 3.0, 5.0], [0, 10, 20]), ([7.0, 9.0, 11.0], [30, 40, 50])]

    def noisy(x, y):  # random draws: each element keeps its own (no shared draw)
        return tf.cast(x, tf.float32) + tf.random.uniform([]), y
    ds = base.map(noisy).batch(6).with_options(options)
    values = next(iter(ds))[0].numpy()
    assert len(set(np.round(values - np.arange(6), 6))) == 6


def test_seed001_jacobian_by_nested_vectorized_map_under_the_tape():
    x = tf.random.normal([6, 6], seed=1)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.exp(tf.matmul(x, x) * 0.1)
        jacobian = tf.vectorized_map(
            lambda yi: tf.vectorized_map(
                lambda yij: t.gradient(yij, x), yi), y)
    with tf.GradientTape() as t2:
        t2.watch(x)
        y = tf.exp(tf.matmul(x, x) * 0.1)
    want = t2.jacobian(y, x)
    assert jacobian.shape == (6, 6, 6, 6)
    np.testing.assert_allclose(jacobian.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_vectorized_map_under_a_tape_is_differentiable():
    w = tf.Variable(2.0)
    xs = tf.constant([1.0, 2.0, 4.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.vectorized_map(lambda r: r * r * w, xs))
    assert float(tape.gradient(y, w)) == 21.0


def test_vectorized_map_inside_tf_function_is_one_node_and_not_frozen():
    w = tf.constant([[1.0], [2.0]])

    @tf.function
    def f(x):
        return tf.vectorized_map(lambda r: tf.matmul(r[None], w)[0] + tf.reduce_sum(x), x)
    for values in ([[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [0.0, 1.0]]):
        x = np.array(values, np.float32)
        want = x @ w.numpy() + x.sum()
        np.testing.assert_allclose(f(tf.constant(x)).numpy(), want, rtol=1e-6)
    assert f.experimental_get_tracing_count() == 1
    assert f.last_concrete_function.graph.op_counts().get("VectorizedMap") == 1


def test_per_example_gradients_inside_tf_function_follow_variable_updates():
    w1, xs, ys, grads = _mlp_problem(2)
    f = tf.function(lambda a, b: tf.vectorized_map(grads, (a, b)))
    for _ in range(2):
        _check_per_example(f(xs, ys), grads, xs, ys, rtol=1e-5)
        w1.assign(w1 * 2.0)  # the graph reads the variables afresh on every call
    assert f.experimental_get_tracing_count() == 1
