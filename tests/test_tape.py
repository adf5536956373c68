"""GradientTape: the seeds' examples, TF semantics, higher order, jacobians, explanations."""
import numpy as np
import pytest

import tensorlite as tf


def test_seed002_scalar_square():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x ** 2
    dy_dx = tape.gradient(y, x)
    assert dy_dx.numpy() == 6.0
    assert dy_dx.dtype == tf.float32


def test_seed002_affine_both_gradients_match_finite_differences():
    w = tf.Variable(np.random.default_rng(0).normal(size=(3, 2)), name="w")
    b = tf.Variable(tf.zeros(2, dtype=tf.float64), name="b")
    x = [[1., 2., 3.]]
    with tf.GradientTape() as tape:
        y = x @ w + b
        loss = tf.reduce_mean(y ** 2)
    [dl_dw, dl_db] = tape.gradient(loss, [w, b])
    assert w.shape == (3, 2) and dl_dw.shape == (3, 2) and str(dl_dw.shape) == "(3, 2)"
    xs = np.array(x)

    def f(wv, bv):
        return np.mean((xs @ wv + bv) ** 2)
    eps = 1e-6
    num_w = np.zeros((3, 2))
    for i in range(3):
        for j in range(2):
            d = np.zeros((3, 2))
            d[i, j] = eps
            num_w[i, j] = (f(w.numpy() + d, b.numpy()) - f(w.numpy() - d, b.numpy())) / (2 * eps)
    np.testing.assert_allclose(dl_dw.numpy(), num_w, rtol=1e-6)
    yv = xs @ w.numpy() + b.numpy()
    np.testing.assert_allclose(dl_db.numpy(), (2 * yv / yv.size).sum(0), rtol=1e-6)


class Dense(tf.Module):
    """A Dense-like layer built on tf.Module, as in seed 002's gradient-by-model example."""

    def __init__(self, units, in_dim, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.kernel = tf.Variable(tf.ones([in_dim, units]), name="kernel")
            self.bias = tf.Variable(tf.zeros([units]), name="bias")

    def __call__(self, x):
        return tf.maximum(x @ self.kernel + self.bias, 0.0)


def test_seed002_module_trainable_variables_names_and_grads():
    layer = Dense(2, 3)
    x = tf.constant([[1., 2., 3.]])
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_mean(y ** 2)
    grad = tape.gradient(loss, layer.trainable_variables)
    names = [(v.name, tuple(g.shape)) for v, g in zip(layer.trainable_variables, grad)]
    assert names == [("dense/bias:0", (2,)), ("dense/kernel:0", (3, 2))]


def _seed001_x():
    return tf.constant(np.random.default_rng(1).normal(size=(10, 10)) * 0.3)


def test_seed001_jacobian_loop_equals_jacobian_and_finite_differences():
    x = _seed001_x()
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.exp(tf.matmul(x, x))
        j = []
        for i in range(x.shape[0]):
            jj = []
            for k in range(x.shape[1]):
                jj.append(t.gradient(y[i, k], x))
            j.append(jj)
        looped = tf.stack(j)
    jac = t.jacobian(y, x)
    assert jac.shape == (10, 10, 10, 10)
    np.testing.assert_allclose(looped.numpy(), jac.numpy(), rtol=1e-10)
    theo, num = tf.test.compute_gradient(lambda v: tf.exp(tf.matmul(v, v)), [x])
    np.testing.assert_allclose(theo[0], num[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(jac.numpy().reshape(100, 100), num[0], rtol=1e-5, atol=1e-7)


def test_batch_jacobian_matches_diagonal_blocks():
    x = tf.constant(np.random.default_rng(2).normal(size=(4, 3)))
    w = tf.constant(np.random.default_rng(3).normal(size=(3, 5)))
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.tanh(x @ w)
    bj = t.batch_jacobian(y, x)
    full = t.jacobian(y, x).numpy()
    assert bj.shape == (4, 5, 3)
    for b in range(4):
        np.testing.assert_allclose(bj.numpy()[b], full[b, :, b, :], rtol=1e-12)


def test_nested_structures_in_and_out():
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        loss = {"l": a * b, "m": [a * a]}
    g = tape.gradient(loss, {"x": a, "y": (b,)})
    assert set(g) == {"x", "y"} and isinstance(g["y"], tuple)
    assert g["x"].numpy() == 2.0 + 2.0 and g["y"][0].numpy() == 1.0


def test_persistent_and_non_persistent():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, x)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(y, x).numpy() == 6.0
    assert tape.gradient(z, x).numpy() == 4 * 27.0


def test_unconnected_and_integer_and_unwatched():
    x = tf.constant(2.0)
    y = tf.constant(5.0)
    i = tf.constant(3)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with pytest.warns(UserWarning, match="floating"):
            tape.watch(i)
        z = x * 2.0
        k = i * 2
    assert tape.gradient(z, y) is None
    assert tape.gradient(z, y, unconnected_gradients="zero").numpy() == 0.0
    assert tape.gradient(z, y, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy() == 0
    assert tape.gradient(k, i) is None


def test_output_gradients_and_stop_gradient():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        s = tf.stop_gradient(y) * x
    g = tape.gradient(y, x, output_gradients=tf.constant([10.0, 1.0]))
    np.testing.assert_allclose(g.numpy(), [20.0, 4.0])
    np.testing.assert_allclose(tape.gradient(s, x).numpy(), [1.0, 4.0])


def test_stop_recording_and_reset():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        with tape.stop_recording():
            z = x * x * x
    assert tape.gradient(y, x).numpy() == 4.0
    assert tape.gradient(z, x) is None
    with tf.GradientTape() as tape:
        y = x * x
        tape.reset()
        y = x * x * x
    assert tape.gradient(y, x).numpy() == 12.0


def test_nested_tapes_second_and_third_order():
    x = tf.Variable(1.5, dtype=tf.float64)
    with tf.GradientTape() as t3:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = tf.sin(x) * x
            dy = t1.gradient(y, x)
        d2y = t2.gradient(dy, x)
    d3y = t3.gradient(d2y, x)
    xv = 1.5
    assert np.isclose(dy.numpy(), np.cos(xv) * xv + np.sin(xv))
    assert np.isclose(d2y.numpy(), -np.sin(xv) * xv + 2 * np.cos(xv))
    assert np.isclose(d3y.numpy(), -np.cos(xv) * xv - 3 * np.sin(xv))


def test_watch_accessed_variables_false_and_non_trainable():
    v = tf.Variable(2.0)
    nt = tf.Variable(3.0, trainable=False)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = v * nt
    assert tape.gradient(y, v) is None
    with tf.GradientTape() as tape:
        tape.watch(nt)
        y = v * nt
    gv, gnt = tape.gradient(y, [v, nt])
    assert gv.numpy() == 3.0 and gnt.numpy() == 2.0
    assert [w.name for w in tape.watched_variables()] == ["Variable:0", "Variable:0"]


def test_custom_gradient_replaces_rule():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad
    x = tf.constant(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert tape.gradient(y, x).numpy() == 1.0  # the naive gradient would be nan


def test_custom_gradient_with_variables():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def scaled(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x * 10.0]
        return x * v, grad
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    gx, gv = tape.gradient(y, [x, v])
    assert gx.numpy() == 2.0 and gv.numpy() == 30.0


def test_iteration_and_indexing_are_differentiable():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        rows = [r for r in x]
        y = rows[0][1] * 10.0 + x[1, ::-1][0]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[0, 10], [0, 1]])


def test_check_grads_catches_a_wrong_custom_gradient():
    @tf.custom_gradient
    def bad_square(x):
        return x * x, lambda dy: dy * x  # wrong: should be 2x
    with pytest.raises(AssertionError, match="gradient check failed"):
        tf.test.check_grads(bad_square, [np.array([1.0, 2.0])], order=1)
    tf.test.check_grads(lambda x: x * x, [np.array([1.0, 2.0])], order=2)


# -- errors and explanations ------------------------------------------------------------------
def test_op_without_gradient_rule_is_loud():
    from tensorlite.framework.registry import register
    op = register("TestNoGradOp", lambda x: x * 2)
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = op(x)
    with pytest.raises(LookupError, match="No gradient defined for operation 'TestNoGradOp'.*"
                                          "test_tape.py"):
        tape.gradient(y, x)


def test_explain_unwatched_integer_numpy_break_and_discrete_op():
    x = tf.constant(2.0)
    v = tf.Variable(1.0)
    i = tf.constant(3)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        broken = tf.constant(x.numpy() * 3.0)  # leaves the tape through NumPy
        y = broken * v
        idx = tf.argmax(tf.stack([x, x * 2.0]))
        z = tf.cast(idx, tf.float32) * v
        u = tf.constant(1.0) * 2.0
    text = tape.explain(y, [x, i, u])
    lines = text.splitlines()
    assert "broken" in lines[0] and "test_tape.py" in lines[0] and ".numpy()" in lines[0]
    assert "int32" in lines[1]
    assert "not watched" in lines[2]
    why_z = tape.explain(z, x)
    assert "ArgMax" in why_z and "test_tape.py" in why_z
    assert "connected" in tape.explain(y, v)


def test_gradient_target_must_be_tensor():
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
    with pytest.raises(TypeError, match="target must be a Tensor"):
        tape.gradient(3.0, x)


def test_watch_rejects_non_tensors():
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="not tf.Tensor or tf.Variable"):
            tape.watch([1.0])


def test_gradient_hooks_see_each_final_gradient_during_the_backward_pass():
    from tensorlite.autodiff import tape as tape_lib
    w = [tf.Variable(float(i + 2)) for i in range(3)]
    unused = tf.Variable(1.0)
    x = tf.constant(1.5)
    seen = []

    def hook(sources, i, grad):
        seen.append((i, None if grad is None else float(grad)))
    tape_lib.GRADIENT_HOOKS.append(hook)
    try:
        with tf.GradientTape() as tape:
            y = w[2] * tf.tanh(w[1] * tf.sin(w[0] * x))
        grads = tape.gradient(y, w + [unused])
    finally:
        tape_lib.GRADIENT_HOOKS.remove(hook)
    # the last layer's gradient is final first; the unconnected one is reported last
    assert [i for i, _ in seen] == [2, 1, 0, 3]
    assert seen[3][1] is None
    for i, g in seen[:3]:
        assert g == float(grads[i])   # what the hook saw is the result, not a partial sum


def test_gradient_hooks_wait_for_every_use_of_a_source():
    from tensorlite.autodiff import tape as tape_lib
    v = tf.Variable(2.0)
    seen = []

    def hook(sources, i, grad):
        seen.append(float(grad))
    tape_lib.GRADIENT_HOOKS.append(hook)
    try:
        with tf.GradientTape() as tape:
            y = v * v + tf.sin(v) * v     # v read several times; its gradient sums them all
        g = tape.gradient(y, v)
    finally:
        tape_lib.GRADIENT_HOOKS.remove(hook)
    expected = 2 * 2.0 + np.cos(2.0) * 2.0 + np.sin(2.0)
    assert seen == [pytest.approx(expected)] and float(g) == pytest.approx(expected)


# -- tf.custom_gradient inside tf.function ----------------------------------------------------
@tf.custom_gradient
def _clip_gradients(y):
    return tf.identity(y), lambda dy: tf.clip_by_norm(dy, 0.5)


@tf.custom_gradient
def _scaled_sin(x):
    def backward(dy):  # reads the forward's x: each call's own value must reach it
        return dy * tf.cos(x) * 10.0
    return tf.sin(x), backward


def test_custom_gradient_inside_tf_function_on_every_call():
    """The advanced autodiff guide's clip: a traced graph keeps the supplied gradient for
    tapes over later calls, whether the trace ran under a tape or not."""
    v = tf.Variable(2.0)
    f = tf.function(lambda x: _clip_gradients(x) * 3.0)
    assert float(f(tf.constant(1.0))) == 3.0  # traced without a tape
    for _ in range(2):
        with tf.GradientTape() as tape:
            out = f(v * v)
        assert float(tape.gradient(out, v)) == 2.0  # 3 clipped to 0.5, times dv^2/dv = 4


@pytest.mark.parametrize("tape_inside", [False, True])
def test_custom_gradient_in_a_graph_uses_each_calls_values(tape_inside):
    if tape_inside:  # tape.gradient traced into the graph (a training step)
        @tf.function
        def grad_at(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = _scaled_sin(x)
            return tape.gradient(y, x)
    else:
        h = tf.function(_scaled_sin)

        def grad_at(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = h(x)
            return tape.gradient(y, x)
    for value in (0.0, 1.0, 2.0):
        np.testing.assert_allclose(float(grad_at(tf.constant(value))),
                                   10.0 * np.cos(value), rtol=1e-6)


def test_custom_gradient_for_variables_inside_tf_function():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def scaled(x):
        def backward(dy, variables=None):
            return dy * 2.0, [dy * 100.0]
        return x * w, backward
    f = tf.function(scaled)
    x = tf.constant(1.0)
    for _ in range(2):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        dx, dw = tape.gradient(y, [x, w])
        assert (float(dx), float(dw)) == (2.0, 100.0)
