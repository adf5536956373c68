"""BatchNorm folding (graph/passes/fold_batch_norm.py): an inference BatchNormalization's
scale moves into the filter of the Conv2D / DepthwiseConv2dNative / matrix product before
it, in tf.function graphs (the scaled filter computed from the variables on each call) and
in frozen export graphs (a folded constant). Which ops qualify is the registry property
`linear_filter`."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import registry
from tensorlite.graph import passes
from tensorlite.js.graph_trace import trace_function

RNG = np.random.default_rng(0)


@pytest.fixture
def options():
    before = tf.config.optimizer.get_experimental_options()
    yield tf.config.optimizer.set_experimental_options
    tf.config.optimizer.set_experimental_options(before)


def _model():
    inp = tf.keras.Input((8, 8, 3))
    x = tf.keras.layers.Conv2D(6, 3, padding="same")(inp)  # with a bias between
    x = tf.keras.layers.BatchNormalization()(x)
    x = tf.keras.layers.ReLU(6.0)(x)
    x = tf.keras.layers.DepthwiseConv2D(3, depth_multiplier=2, use_bias=False)(x)
    x = tf.keras.layers.BatchNormalization()(x)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    x = tf.keras.layers.Dense(4, use_bias=False)(x)
    x = tf.keras.layers.BatchNormalization()(x)
    model = tf.keras.Model(inp, x)
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            layer.set_weights([RNG.uniform(0.5, 1.5, w.shape).astype("float32")
                               for w in layer.get_weights()])
    return model


def _folded(before):
    return passes.COUNTERS.get("fold_batch_norm", 0) - before


def test_registry_declares_the_linear_filters():
    assert registry.get("Conv2D").linear_filter == (1, 1)
    assert registry.get("DepthwiseConv2dNative").linear_filter == (1, 2)
    matmul = registry.get("BatchMatMulV2").linear_filter
    assert matmul({"transpose_b": False}) == (1, 1) and matmul({"transpose_b": True}) is None
    assert registry.get("AddV2").linear_filter is None


def test_tf_function_inference_folds_and_follows_assignments(capsys, options):
    model = _model()
    x = RNG.normal(size=(2, 8, 8, 3)).astype("float32")
    f = tf.function(lambda v: model(v, training=False))
    options({"report": True})
    before = passes.COUNTERS.get("fold_batch_norm", 0)
    f(x)
    out = f(x).numpy()  # the optimised graph
    assert "fold_batch_norm: folded 3 nodes (Mul into Conv2D, Mul into " \
        "DepthwiseConv2dNative, Mul into BatchMatMulV2)" in capsys.readouterr().out
    assert _folded(before) == 3
    np.testing.assert_allclose(out, model(x, training=False).numpy(), rtol=1e-5, atol=1e-5)
    bn = model.layers[2]
    bn.moving_variance.assign(bn.moving_variance * 4.0)  # no retrace: read on each call
    model.layers[5].gamma.assign(-model.layers[5].gamma)
    np.testing.assert_allclose(f(x).numpy(), model(x, training=False).numpy(), rtol=1e-5,
                               atol=1e-5)


def test_training_graph_is_not_folded_and_its_gradients_are_exact(options):
    model = _model()
    x = RNG.normal(size=(2, 8, 8, 3)).astype("float32")

    @tf.function
    def step(v):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(model(v, training=False) ** 2)
        return tape.gradient(y, model.trainable_variables)

    step(x)
    got = step(x)
    options({"disable_meta_optimizer": True})
    want = tf.function(step.python_function)(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["transpose_b", "per_row_scale", "scale_used_twice"])
def test_what_must_not_fold(case):
    w = tf.Variable(RNG.normal(size=(4, 3)).astype("float32"))
    s = tf.Variable(RNG.uniform(0.5, 1.5, (3,)).astype("float32"))

    def fn(v):
        if case == "transpose_b":
            return tf.matmul(v, tf.transpose(w), transpose_b=True) * s
        if case == "per_row_scale":
            return tf.matmul(v, w) * tf.reshape(s[:2], [2, 1])
        y = tf.matmul(v, w)
        return y * s, y  # the product has another use: it must stay as it is

    x = RNG.normal(size=(2, 4)).astype("float32")
    f = tf.function(fn)
    before = passes.COUNTERS.get("fold_batch_norm", 0)
    f(x)
    got = f(x)
    assert _folded(before) == 0
    for g, want in zip(tf.nest.flatten(got), tf.nest.flatten(fn(tf.constant(x)))):
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-6)


def test_frozen_export_graph_folds_into_constant_filters():
    model = _model()
    traced = trace_function(model)
    assert sum("fold_batch_norm: folded Mul into" in line
               for line in traced.graph.pass_report) == 3
    assert "Mul" not in traced.graph.op_counts()
    x = RNG.normal(size=(2, 8, 8, 3)).astype("float32")
    from tensorlite.graph.capture import run_graph  # noqa: PLC0415
    values, _ = run_graph(traced.graph, [x])
    np.testing.assert_allclose(values[traced.graph.output_slots()[0]],
                               model(x, training=False).numpy(), rtol=1e-5, atol=1e-5)


def test_no_fold_across_a_random_draw():
    """The product would move to the Mul's place, past the draw: pass rules forbid it."""
    w = tf.constant(RNG.normal(size=(4, 3)).astype("float32"))
    s = tf.constant(RNG.uniform(0.5, 1.5, (3,)).astype("float32"))

    @tf.function
    def f(v):
        y = tf.matmul(v, w)
        noise = tf.random.uniform([2, 3])
        return y * s, noise
    x = RNG.normal(size=(2, 4)).astype("float32")
    before = passes.COUNTERS.get("fold_batch_norm", 0)
    f(x)
    out, _ = f(x)
    assert _folded(before) == 0
    np.testing.assert_allclose(out.numpy(), (x @ w.numpy()) * s.numpy(), rtol=1e-5)


def test_model_predict_folds_and_sees_assigned_weights():
    """model.predict runs a compiled predict function (as Keras's predict_function): its
    optimised graph folds the BatchNormalizations, and an assignment between calls (a
    fine-tuning step, set_weights) is seen by the next call."""
    model = _model()
    x = RNG.normal(size=(5, 8, 8, 3)).astype("float32")
    before = passes.COUNTERS.get("fold_batch_norm", 0)
    np.testing.assert_allclose(model.predict(x, batch_size=5, verbose=0),
                               model(x, training=False).numpy(), rtol=1e-5, atol=1e-5)
    model.predict(x, batch_size=5, verbose=0)  # the optimised graph runs from the 2nd call
    assert _folded(before) == 3
    bn = model.layers[5]
    bn.set_weights([w * 1.5 for w in bn.get_weights()])
    np.testing.assert_allclose(model.predict(x, batch_size=5, verbose=0),
                               model(x, training=False).numpy(), rtol=1e-5, atol=1e-5)


def test_frozen_graph_folds_a_filter_larger_than_constant_foldings_limit():
    """A 3x3x512x512 filter (2.4M values, over constant folding's 1M) is folded too: the
    frozen graph holds the scaled filter, not a Mul of two constants run at each call."""
    inp = tf.keras.Input((4, 4, 512))
    x = tf.keras.layers.Conv2D(512, 3, use_bias=False)(inp)
    model = tf.keras.Model(inp, tf.keras.layers.BatchNormalization()(x))
    bn = model.layers[-1]
    bn.set_weights([RNG.uniform(0.5, 1.5, 512).astype("float32") for _ in range(4)])
    traced = trace_function(model)
    assert "Mul" not in traced.graph.op_counts()
    x = RNG.normal(size=(2, 4, 4, 512)).astype("float32")
    from tensorlite.graph.capture import run_graph  # noqa: PLC0415
    values, _ = run_graph(traced.graph, [x])
    np.testing.assert_allclose(values[traced.graph.output_slots()[0]],
                               model(x, training=False).numpy(), rtol=1e-4, atol=1e-4)
