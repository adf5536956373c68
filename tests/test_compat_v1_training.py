"""TF1 programs as TF 1.x code wrote them (seed 002's "Tensorflow 1.x" cell style) inside
`with tf.Graph().as_default():`: training with tf.compat.v1.train optimizers in a Session,
checked step for step against NumPy."""
import numpy as np
import pytest

import tensorlite as tf


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def _linear_model(optimizer):
    x = tf.compat.v1.placeholder(tf.float32, shape=(None, 3), name="x")
    y = tf.compat.v1.placeholder(tf.float32, shape=(None, 1), name="y")
    with tf.compat.v1.variable_scope("linear", reuse=tf.compat.v1.AUTO_REUSE):
        W = tf.compat.v1.get_variable("W", initializer=tf.zeros((3, 1)))  # noqa: N806
        b = tf.compat.v1.get_variable("b", initializer=tf.zeros((1,)))
    pred = tf.matmul(x, W) + b
    loss = tf.reduce_mean(tf.square(pred - y))
    step = tf.compat.v1.train.get_or_create_global_step()
    train_op = optimizer.minimize(loss, global_step=step)
    return x, y, W, b, loss, step, train_op


def _numpy_grads(X, Y, w, b):  # noqa: N803
    err = X @ w + b - Y
    return 2 * X.T @ err / len(X), 2 * err.sum(0) / len(X), float(np.mean(err ** 2))


def test_tf1_linear_regression_with_gradient_descent_matches_numpy():
    X, Y = _data()  # noqa: N806
    with tf.Graph().as_default() as g:
        assert not tf.executing_eagerly()
        x, y, W, b, loss, step, train_op = _linear_model(
            tf.compat.v1.train.GradientDescentOptimizer(0.1))
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            w_np, b_np = np.zeros((3, 1), np.float32), np.zeros((1,), np.float32)
            for i in range(20):
                gw, gb, loss_np = _numpy_grads(X, Y, w_np, b_np)
                _, loss_tl = sess.run([train_op, loss], feed_dict={x: X, y: Y})
                w_np, b_np = w_np - 0.1 * gw, b_np - 0.1 * gb
                np.testing.assert_allclose(sess.run(W), w_np, rtol=1e-4, atol=1e-6)
                np.testing.assert_allclose(sess.run(b), b_np, rtol=1e-4, atol=1e-6)
            assert sess.run(step) == 20
            assert sess.run(loss, {x: X, y: Y}) < 0.1
    assert g.get_collection(tf.compat.v1.GraphKeys.GLOBAL_STEP) == [step]
    assert tf.executing_eagerly()


def test_momentum_and_adam_match_tf1_update_rules():
    X, Y = _data()  # noqa: N806
    for make, update in [
        (lambda: tf.compat.v1.train.MomentumOptimizer(0.05, 0.9), "momentum"),
        (lambda: tf.compat.v1.train.AdamOptimizer(0.1), "adam")]:
        with tf.Graph().as_default():
            x, y, W, b, loss, step, train_op = _linear_model(make())
            with tf.compat.v1.Session() as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                w, bb = np.zeros((3, 1)), np.zeros((1,))
                state = {"aw": 0 * w, "ab": 0 * bb, "mw": 0 * w, "mb": 0 * bb, "vw": 0 * w,
                         "vb": 0 * bb, "t": 0}
                for _ in range(5):
                    gw, gb, _ = _numpy_grads(X, Y, w, bb)
                    state["t"] += 1
                    if update == "momentum":
                        state["aw"] = 0.9 * state["aw"] + gw
                        state["ab"] = 0.9 * state["ab"] + gb
                        w, bb = w - 0.05 * state["aw"], bb - 0.05 * state["ab"]
                    else:
                        t = state["t"]
                        lr_t = 0.1 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
                        for k, gk in (("w", gw), ("b", gb)):
                            state["m" + k] = 0.9 * state["m" + k] + 0.1 * gk
                            state["v" + k] = 0.999 * state["v" + k] + 0.001 * gk * gk
                        w = w - lr_t * state["mw"] / (np.sqrt(state["vw"]) + 1e-8)
                        bb = bb - lr_t * state["mb"] / (np.sqrt(state["vb"]) + 1e-8)
                    sess.run(train_op, {x: X, y: Y})
                    np.testing.assert_allclose(sess.run(W), w, rtol=1e-3, atol=1e-5)
                    np.testing.assert_allclose(sess.run(b), bb, rtol=1e-3, atol=1e-5)
                assert sess.run(step) == 5


def test_tf_gradients_in_a_graph():
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [])
        w = tf.compat.v1.get_variable("w", initializer=tf.constant(2.0))
        y = x * x * w
        dx, dw = tf.gradients(y, [x, w])
        with tf.compat.v1.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
                sess.run(dw, {x: 3.0})
            sess.run(tf.compat.v1.global_variables_initializer())
            assert sess.run([dx, dw], {x: 3.0}) == [12.0, 9.0]
    with pytest.raises(RuntimeError, match="GradientTape"):
        tf.compat.v1.gradients(tf.constant(1.0), [tf.constant(1.0)])


def test_updates_persist_across_session_runs_and_sessions_are_separate():
    with tf.Graph().as_default():
        v = tf.compat.v1.get_variable("v", initializer=tf.constant(1.0))
        inc = tf.compat.v1.assign_add(v, 1.0)
        init = tf.compat.v1.global_variables_initializer()
        with tf.compat.v1.Session() as s1, tf.compat.v1.Session() as s2:
            s1.run(init)
            s2.run(init)
            for _ in range(3):
                s1.run(inc)
            assert s1.run(v) == 4.0 and s2.run(v) == 1.0


def test_layers_dense_nn_aliases_and_saver(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(8, 3)).astype(np.float32)  # noqa: N806
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3])
        h = tf.compat.v1.layers.dense(x, 4, activation=tf.compat.v1.nn.relu, name="fc1")
        out = tf.compat.v1.layers.dense(h, 1, name="fc2")
        assert h.shape.as_list() == [None, 4] and out.shape.as_list() == [None, 1]
        names = sorted(v.name for v in tf.compat.v1.trainable_variables())
        assert names == ["fc1/bias:0", "fc1/kernel:0", "fc2/bias:0", "fc2/kernel:0"]
        kernel = [v for v in tf.compat.v1.trainable_variables() if v.name == "fc1/kernel:0"][0]
        bias = [v for v in tf.compat.v1.trainable_variables() if v.name == "fc1/bias:0"][0]
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            k, b = sess.run([kernel, bias])
            assert np.allclose(b, 0) and np.abs(k).max() <= np.sqrt(6 / 7) + 1e-6
            np.testing.assert_allclose(sess.run(h, {x: X}), np.maximum(X @ k + b, 0),
                                       rtol=1e-5, atol=1e-6)
            want = sess.run(out, {x: X})
            path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=7)
            assert path.endswith("model.ckpt-7")
        with tf.compat.v1.Session() as sess2:
            with pytest.raises(tf.errors.FailedPreconditionError):
                sess2.run(out, {x: X})
            saver.restore(sess2, path)
            np.testing.assert_allclose(sess2.run(out, {x: X}), want, rtol=1e-6)
        with tf.compat.v1.Session() as sess3:
            with pytest.raises(tf.errors.NotFoundError):
                saver.restore(sess3, str(tmp_path / "missing.ckpt"))
    d = tf.compat.v1.nn.dropout(tf.ones([1000]), keep_prob=0.5)
    assert set(np.unique(d.numpy())) <= {0.0, 2.0}
