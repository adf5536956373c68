"""tf.keras.mixed_precision: layers compute in float16 and keep float32 variables, the
gradient reaches those variables through the read casts, and loss scaling skips steps
with non-finite gradients, as the TF 2 mixed precision guide describes."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras import mixed_precision


@pytest.fixture
def mixed():
    mixed_precision.set_global_policy("mixed_float16")
    yield
    mixed_precision.set_global_policy(None)


def test_policy_names_and_dtypes():
    policy = mixed_precision.Policy("mixed_float16")
    assert (policy.name, policy.compute_dtype, policy.variable_dtype) == \
        ("mixed_float16", "float16", "float32")
    assert mixed_precision.Policy("float64").compute_dtype == "float64"
    with pytest.raises(ValueError, match="mixed precision Policy"):
        mixed_precision.Policy("mixed_int8")
    assert mixed_precision.global_policy().name == "float32"


def test_guide_model_trains_with_float32_variables_and_float16_compute(mixed):
    inputs = tf.keras.Input(shape=(20,), name="digits")
    dense = tf.keras.layers.Dense(16, activation="relu", name="dense_1")
    x = dense(inputs)
    assert dense.compute_dtype == "float16" and dense.variable_dtype == "float32"
    assert x.dtype == tf.float16
    x = tf.keras.layers.Dense(3, name="dense_logits")(x)
    outputs = tf.keras.layers.Activation("softmax", dtype="float32", name="predictions")(x)
    assert outputs.dtype == tf.float32
    model = tf.keras.Model(inputs, outputs)
    model.compile(loss="sparse_categorical_crossentropy", optimizer="sgd")
    assert isinstance(model.optimizer, mixed_precision.LossScaleOptimizer)
    rng = np.random.default_rng(0)
    xs = rng.random((256, 20)).astype("float32")
    ys = xs[:, :3].argmax(1)
    before = [w.numpy().copy() for w in model.trainable_weights]
    history = model.fit(xs, ys, batch_size=32, epochs=4, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert all(w.dtype == tf.float32 for w in model.weights)
    assert any(not np.array_equal(b, w.numpy()) for b, w in zip(before, model.trainable_weights))
    assert dense(xs[:2]).dtype == tf.float16


def test_float16_forward_matches_float32_within_half_precision(mixed):
    layer = tf.keras.layers.Dense(8)
    x = np.random.default_rng(1).random((4, 5)).astype("float32")
    y16 = layer(x)
    reference = x @ layer.kernel.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(y16.numpy().astype("float32"), reference, rtol=2e-2, atol=2e-2)


def test_gradient_reaches_the_float32_variable_through_the_cast(mixed):
    layer = tf.keras.layers.Dense(1, use_bias=False, kernel_initializer="ones")
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_sum(tf.cast(y, tf.float32))
    grad = tape.gradient(loss, layer.kernel)
    assert grad.dtype == tf.float32
    np.testing.assert_allclose(grad.numpy(), [[1.0], [2.0]])


def test_loss_scale_optimizer_skips_non_finite_steps_and_grows():
    var = tf.Variable([1.0])
    opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), initial_scale=8.0,
                                             dynamic_growth_steps=2)
    assert float(opt.get_scaled_loss(tf.constant(2.0))) == 16.0
    assert float(opt.get_unscaled_gradients([tf.constant(16.0)])[0]) == 2.0
    opt.apply_gradients([(tf.constant([np.inf]), var)])
    assert var.numpy().tolist() == [1.0] and float(opt.loss_scale) == 4.0
    opt.apply_gradients([(tf.constant([0.5]), var)])
    opt.apply_gradients([(tf.constant([0.5]), var)])
    assert var.numpy().tolist() == [0.0] and float(opt.loss_scale) == 8.0
    fixed = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), dynamic=False,
                                               initial_scale=4.0)
    assert fixed.dynamic_growth_steps is None and float(fixed.loss_scale) == 4.0
    assert float(fixed.learning_rate) == pytest.approx(0.1)


def test_mixed_layer_config_round_trips(mixed):
    layer = tf.keras.layers.Dense(2)
    config = layer.get_config()
    assert config["dtype"] == {"class_name": "Policy", "config": {"name": "mixed_float16"}}
    mixed_precision.set_global_policy(None)
    again = tf.keras.layers.Dense.from_config(config)
    assert again.compute_dtype == "float16" and again.variable_dtype == "float32"


def test_mixed_bfloat16_computes_in_bfloat16_without_loss_scaling():
    mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        layer = tf.keras.layers.Dense(3)
        assert layer(np.ones((2, 4), np.float32)).dtype == tf.bfloat16
        model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,)),
                                     tf.keras.layers.Dense(1, dtype="float32")])
        model.compile("adam", "mse")
        assert not isinstance(model.optimizer, mixed_precision.LossScaleOptimizer)
        history = model.fit(np.ones((8, 3)), np.ones((8, 1)), epochs=3, verbose=0)
        assert history.history["loss"][-1] < history.history["loss"][0]
    finally:
        mixed_precision.set_global_policy(None)


def test_guide_custom_training_loop_in_tf_function(mixed):
    """The mixed precision guide's custom loop: scaled loss, unscaled gradients and
    apply_gradients inside @tf.function; a step with an inf gradient is skipped and halves
    the scale at run time, on every call of the graph."""
    inputs = tf.keras.Input(shape=(8,))
    x = tf.keras.layers.Dense(16, activation="relu")(inputs)
    x = tf.keras.layers.Dense(3)(x)
    outputs = tf.keras.layers.Activation("softmax", dtype="float32")(x)
    model = tf.keras.Model(inputs, outputs)
    optimizer = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5),
                                                   initial_scale=1024.0,
                                                   dynamic_growth_steps=2)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_object(y, model(x))
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled = tape.gradient(scaled_loss, model.trainable_variables)
        optimizer.apply_gradients(zip(optimizer.get_unscaled_gradients(scaled),
                                      model.trainable_variables))
        return loss

    rng = np.random.default_rng(0)
    xs = rng.random((32, 8)).astype("float32")
    ys = xs[:, :3].argmax(1)
    first = float(train_step(xs, ys))
    train_step(xs, ys)
    assert float(optimizer.loss_scale) == 2048.0  # grown after two good steps
    kernel = model.trainable_variables[0]
    before = kernel.numpy().copy()
    bad = xs.copy()
    bad[0, 0] = np.inf
    train_step(bad, ys)
    np.testing.assert_array_equal(kernel.numpy(), before)  # skipped
    assert float(optimizer.loss_scale) == 1024.0  # halved
    for _ in range(5):
        last = float(train_step(xs, ys))
    assert last < first


def _cnn_run(policy, optimizer):
    mixed_precision.set_global_policy(policy)
    try:
        tf.keras.utils.set_random_seed(0)
        model = tf.keras.Sequential([
            tf.keras.Input((12, 12, 1)), tf.keras.layers.Conv2D(4, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(), tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Flatten(), tf.keras.layers.Dense(3),
            tf.keras.layers.Activation("softmax", dtype="float32")])
        model.compile(optimizer, "sparse_categorical_crossentropy")
        rng = np.random.default_rng(1)
        x = rng.random((128, 12, 12, 1)).astype("float32")
        y = (x.mean((1, 2, 3)) * 3).astype(int) % 3
        history = model.fit(x, y, epochs=3, batch_size=32, verbose=0, shuffle=False)
        return model, history.history["loss"], model.predict(x[:16], verbose=0)
    finally:
        mixed_precision.set_global_policy(None)


def test_cnn_trains_under_mixed_float16_like_float32():
    """A CNN (Conv2D, BatchNormalization) under mixed_float16: float32 variables (moving
    statistics included), float16 compute, and with a fixed loss scale its training
    follows float32's step for step within half precision."""
    _, loss32, out32 = _cnn_run("float32", tf.keras.optimizers.SGD(0.05))
    model, loss16, out16 = _cnn_run("mixed_float16", mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.05), dynamic=False, initial_scale=128))
    assert all(w.dtype == tf.float32 for w in model.weights)
    assert model.layers[0].compute_dtype == "float16"
    np.testing.assert_allclose(loss16, loss32, rtol=0.02)
    np.testing.assert_allclose(out16, out32, atol=0.02)
    # the default dynamic scale skips the first steps whose float16 gradients overflow,
    # as TensorFlow's does, then trains
    model, losses, _ = _cnn_run("mixed_float16", tf.keras.optimizers.SGD(0.05))
    assert float(model.optimizer.loss_scale) < 2 ** 15 and losses[-1] < losses[0]
