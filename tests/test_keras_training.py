"""Keras models end to end: the seeds' models run as written, learning is real, saving is
crash-safe, bad input gets clear errors."""
import os

import numpy as np
import pytest

import tensorlite as tf
from examples.seed_models import SequentialModel, generate_model


@pytest.fixture(scope="module")
def digits():
    pytest.importorskip("sklearn")
    (x, y), (xt, yt) = tf.keras.datasets.digits.load_data()
    return (x.astype("float32") / 255.0, y.astype("int64")), (xt.astype("float32") / 255.0,
                                                              yt.astype("int64"))


def test_seed002_sequential_model_eager_and_graph():
    input_data = tf.random.uniform([60, 28, 28])
    eager_model = SequentialModel()
    graph_model = tf.function(eager_model)
    out_e, out_g = eager_model(input_data), graph_model(input_data)
    assert out_e.shape == (60, 10)
    # float32 graph and eager kernels may sum in different orders: outputs near zero differ
    # by a few ulps of the larger terms, hence the absolute tolerance
    np.testing.assert_allclose(out_e.numpy(), out_g.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(graph_model(input_data).numpy(), out_e.numpy(), rtol=1e-5,
                               atol=1e-6)
    assert len(eager_model.trainable_variables) == 4


def test_seed002_cifar_cnn_compiles_and_fits_on_cifar_shaped_data():
    rng = np.random.default_rng(0)
    x_train = rng.integers(0, 255, (64, 32, 32, 3)).astype('float32') / 256
    y_train = tf.keras.utils.to_categorical(rng.integers(0, 10, (64, 1)), num_classes=10)
    x_test, y_test = x_train[:16], y_train[:16]
    model = generate_model(x_train.shape[1:])
    opt = tf.keras.optimizers.RMSprop(lr=0.0001, decay=1e-6)
    model.compile(loss='categorical_crossentropy', optimizer=opt, metrics=['accuracy'])
    history = model.fit(x_train, y_train, batch_size=32, epochs=2,
                        validation_data=(x_test, y_test), shuffle=True, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()
    assert model.count_params() == 1250858  # the CIFAR-10 CNN's parameter count


def test_mlp_learns_digits_with_fit(digits):
    (x, y), (xt, yt) = digits
    tf.random.set_seed(1)
    model = tf.keras.Sequential([tf.keras.layers.Flatten(input_shape=(8, 8)),
                                 tf.keras.layers.Dense(64, activation="relu"),
                                 tf.keras.layers.Dense(10)])
    model.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=15, verbose=0, validation_split=0.1)
    loss, acc = model.evaluate(xt, yt, verbose=0)
    assert acc > 0.93, acc  # a broken gradient stays near 0.1


def test_cnn_learns_digits_through_tf_data(digits):
    (x, y), (xt, yt) = digits
    tf.random.set_seed(2)
    train = tf.data.Dataset.from_tensor_slices((x[..., None], y)).shuffle(2000, seed=0) \
        .batch(32).prefetch(tf.data.AUTOTUNE)
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu", input_shape=(8, 8, 1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.Adam(3e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(train, epochs=8, verbose=0)
    acc = model.evaluate(xt[..., None], yt, verbose=0, return_dict=True)["accuracy"]
    assert acc > 0.9, acc


def test_seed001_custom_train_step_and_metrics():
    class CustomModel(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = tf.keras.layers.Dense(16, activation="relu")
            self.d2 = tf.keras.layers.Dense(3)

        def call(self, x):
            return self.d2(self.d1(x))

        def train_step(self, data):
            x, y = data[0], data[1]
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            trainable_variables = self.trainable_variables
            gradients = tape.gradient(loss, trainable_variables)
            self.optimizer.apply_gradients(zip(gradients, trainable_variables))
            self.compiled_metrics.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 4)).astype("float32")
    y = np.argmax(x[:, :3], axis=1).astype("int64")  # linearly separable
    model = CustomModel()
    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.Adam(0.01), metrics=["accuracy"])
    history = model.fit(x, y, batch_size=16, epochs=30, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.8
    assert [m.name for m in model.metrics] == ["loss", "accuracy"]


def test_functional_model_save_load_and_weights(tmp_path):
    inputs = tf.keras.Input(shape=(4,))
    h = tf.keras.layers.Dense(8, activation="relu")(inputs)
    outputs = tf.keras.layers.Dense(2)(h)
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer="sgd", loss="mse")
    x = np.random.default_rng(0).normal(size=(10, 4)).astype("float32")
    path = str(tmp_path / "model")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)
    weights = str(tmp_path / "w" / "ckpt")
    model.save_weights(weights)
    assert os.path.exists(weights + ".index")
    clone = tf.keras.models.clone_model(model)
    clone.load_weights(weights)
    np.testing.assert_allclose(clone.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)


def test_save_is_atomic_a_failed_write_keeps_the_old_model(tmp_path, monkeypatch):
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    path = str(tmp_path / "m.keras")
    model.save(path)
    before = open(path, "rb").read()
    model.layers[0].kernel.assign(tf.ones([3, 2]))
    import os as _os

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(_os, "fsync", boom)
    with pytest.raises(OSError):
        model.save(path)
    assert open(path, "rb").read() == before
    assert _os.listdir(tmp_path) == ["m.keras"]  # no temporary file left behind
    monkeypatch.undo()
    tf.keras.models.load_model(path)


def test_callbacks_history_early_stopping_checkpoint(tmp_path):
    x = np.random.default_rng(0).normal(size=(40, 3)).astype("float32")
    y = x.sum(1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss="mse")
    ckpt = str(tmp_path / "best.keras")
    h = model.fit(x, y, epochs=10, verbose=0, validation_data=(x, y), callbacks=[
        tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=2),
        tf.keras.callbacks.ModelCheckpoint(ckpt, save_best_only=True)])
    assert len(h.history["loss"]) == 3  # lr 0: no improvement after the first epoch
    assert os.path.exists(ckpt)


def test_bad_input_errors():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    with pytest.raises(ValueError, match='layer "dense.*expected axis -1 of input shape to '
                                         'have value 3'):
        model(tf.ones([4, 5]))
    with pytest.raises(ValueError, match="Unknown loss function|Unknown"):
        model.compile(optimizer="sgd", loss="not_a_loss")
    with pytest.raises(ValueError, match="optimizer|Unknown"):
        model.compile(optimizer="not_an_optimizer", loss="mse")
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with pytest.raises(tf.errors.InvalidArgumentError, match="label value of 7"):
        model.fit(np.ones((4, 3), "float32"), np.array([0, 1, 7, 1]), verbose=0)
    model.compile(optimizer="sgd", loss="mse")
    empty = tf.data.Dataset.from_tensor_slices((np.zeros((0, 3), "float32"),
                                                np.zeros((0, 2), "float32"))).batch(2)
    with pytest.raises(ValueError, match="no batch|empty|Empty"):
        model.fit(empty, verbose=0)
    with pytest.raises(RuntimeError, match="compile"):
        tf.keras.Sequential([tf.keras.layers.Dense(1)]).fit(np.ones((2, 1)), np.ones((2, 1)))


def test_progress_bar_and_summary(capsys):
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((64, 3), "float32"), np.ones((64, 2), "float32"), batch_size=32,
              epochs=2, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out and "2/2 [" in out and "loss:" in out
    model.summary()
    out = capsys.readouterr().out
    assert "Total params: 8" in out and "dense" in out


@pytest.mark.parametrize("loss", ["sparse_categorical_crossentropy", "mse"])
def test_graph_compiled_fit_equals_run_eagerly(loss):
    """fit runs the built-in step as a traced graph (as Keras does); it must train exactly
    like run_eagerly=True, batch after batch (no labels or weights frozen into the graph)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(70, 6)).astype("float32")
    if loss == "mse":
        y = rng.normal(size=(70, 3)).astype("float32")
    else:
        y = rng.integers(0, 3, 70)
    finals = []
    for run_eagerly in (False, True):
        tf.random.set_seed(0)
        tf.keras.backend.clear_session()
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Dense(3, activation="softmax" if loss != "mse" else None)])
        model.compile(optimizer="adam", loss=loss, metrics=["accuracy"] if loss != "mse"
                      else None, run_eagerly=run_eagerly)
        h = model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False)
        finals.append(([w.numpy() for w in model.weights], h.history["loss"]))
    (w_graph, loss_graph), (w_eager, loss_eager) = finals
    np.testing.assert_allclose(loss_graph, loss_eager, rtol=1e-5)
    for a, b in zip(w_graph, w_eager):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_fit_with_generator_class_weight_initial_epoch_and_steps():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])
    model.compile(optimizer="sgd",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    def batches():
        while True:
            for i in range(0, 64, 16):
                yield x[i:i + 16], y[i:i + 16]
    h = model.fit(batches(), steps_per_epoch=4, epochs=3, initial_epoch=1, verbose=0)
    assert len(h.history["loss"]) == 2
    h = model.fit(x, y, batch_size=16, epochs=1, verbose=0, class_weight={0: 1.0, 1: 3.0})
    assert np.isfinite(h.history["loss"][0])
    with pytest.raises(ValueError, match="class_weight"):
        model.fit(x, y, epochs=1, verbose=0, class_weight={0: 1.0})


def test_per_output_metric_lists_and_dicts_with_loss_weights():
    """compile(metrics=[["mae"], ["accuracy"]]) and metrics={"out_a": [...]}: one list per
    output (a flat list would apply to every output), with per-output loss weights."""
    inp = tf.keras.Input((4,))
    a = tf.keras.layers.Dense(1, name="out_a")(inp)
    b = tf.keras.layers.Dense(3, activation="softmax", name="out_b")(inp)
    model = tf.keras.Model(inp, [a, b])
    rng = np.random.default_rng(0)
    x = rng.random((32, 4)).astype("float32")
    ya, yb = rng.random((32, 1)), rng.integers(0, 3, (32,))
    for metrics in ([["mae"], ["accuracy"]], {"out_a": ["mae"], "out_b": "accuracy"}):
        model.compile("adam", loss=["mse", "sparse_categorical_crossentropy"],
                      loss_weights=[1.0, 0.5], metrics=metrics)
        result = model.evaluate(x, [ya, yb], verbose=0, return_dict=True)
        assert sorted(result) == ["loss", "out_a_loss", "out_a_mae", "out_b_accuracy",
                                  "out_b_loss"]
        assert result["loss"] == pytest.approx(result["out_a_loss"] + 0.5 * result["out_b_loss"],
                                               rel=1e-5)
        pa, pb = model.predict(x, verbose=0)
        assert result["out_a_mae"] == pytest.approx(np.abs(pa - ya).mean(), rel=1e-4)
        assert result["out_b_accuracy"] == pytest.approx((pb.argmax(1) == yb).mean())
    model.compile("adam", loss={"out_a": "mse", "out_b": "sparse_categorical_crossentropy"},
                  loss_weights={"out_a": 2.0, "out_b": 0.5})
    result = model.evaluate(x, {"out_a": ya, "out_b": yb}, verbose=0, return_dict=True)
    assert result["loss"] == pytest.approx(2 * result["out_a_loss"] + 0.5 * result["out_b_loss"],
                                           rel=1e-5)
    with pytest.raises(ValueError, match="one entry per model output"):
        model.compile("adam", loss=["mse", "sparse_categorical_crossentropy"],
                      metrics=[["mae"], ["mae"], ["mae"]])
        model.evaluate(x, [ya, yb], verbose=0)


def test_one_feature_regression_from_pandas_as_the_tf2_regression_tutorial():
    """The TF 2 'Basic regression' tutorial: a 1-D pandas column feeds a Sequential whose
    input is (None, 1) (tf.keras 2's functional models add the size-1 dimension), with
    validation_split taking pandas data."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    hp = rng.uniform(50, 200, 200)
    features = pd.DataFrame({"Horsepower": hp})
    labels = pd.Series(40 - 0.15 * hp + rng.normal(0, 0.5, 200))
    norm = tf.keras.layers.Normalization(input_shape=[1, ], axis=None)
    norm.adapt(np.array(features["Horsepower"]))
    model = tf.keras.Sequential([norm, tf.keras.layers.Dense(units=1)])
    assert model.predict(np.array(features["Horsepower"])[:10], verbose=0).shape == (10, 1)
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=0.1),
                  loss="mean_absolute_error")
    history = model.fit(features["Horsepower"], labels, epochs=30, verbose=0,
                        validation_split=0.2)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert len(history.history["val_loss"]) == 30
    assert model.predict(tf.linspace(0.0, 250, 251), verbose=0).shape == (251, 1)
    with pytest.raises(ValueError):  # a rank off by more than the size-1 dimension
        model.predict(np.zeros((4, 3, 2)), verbose=0)


def test_custom_train_step_looping_over_self_metrics_as_the_keras3_guide():
    """"Customizing what happens in fit()" (Keras 3 guide): a train_step that calls
    compute_loss and updates every metric in `self.metrics`; the compiled "mae" must be
    updated and logged (Keras 3 lists the compiled metrics as one "compile_metrics" until
    they are built), in fit's history and in evaluate's dict."""
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    rng = np.random.RandomState(0)
    x, y = rng.rand(64, 8).astype("float32"), rng.rand(64, 1).astype("float32")
    inputs = tf.keras.Input(shape=(8,))
    model = CustomModel(inputs, tf.keras.layers.Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    history = model.fit(x, y, batch_size=16, epochs=2, verbose=0).history
    assert sorted(history) == ["loss", "mae"] and len(history["mae"]) == 2
    assert model.metrics_names == ["loss", "mae"]
    expected = float(np.mean(np.abs(model.predict(x, verbose=0) - y)))
    result = model.evaluate(x, y, batch_size=64, return_dict=True, verbose=0)
    np.testing.assert_allclose(result["mae"], expected, rtol=1e-5)


def test_sequential_whose_first_layer_is_a_sequential_with_an_input_shape():
    """The image-classification tutorial: `data_augmentation` (a Sequential given
    input_shape=) first in the model; the model is built at once, so summary() works before
    fit, and its input is the inner model's."""
    layers = tf.keras.layers
    data_augmentation = tf.keras.Sequential([
        layers.RandomFlip("horizontal", input_shape=(12, 12, 3)),
        layers.RandomRotation(0.1), layers.RandomZoom(0.1)])
    model = tf.keras.Sequential([data_augmentation, layers.Rescaling(1. / 255),
                                 layers.Conv2D(4, 3, padding="same", activation="relu"),
                                 layers.MaxPooling2D(), layers.Flatten(),
                                 layers.Dense(3, name="outputs")])
    assert model.built and model.input_shape == (None, 12, 12, 3)
    assert model.output_shape == (None, 3)
    model.summary(print_fn=lambda *a, **k: None)
    assert model.count_params() == 3 * 3 * 3 * 4 + 4 + 6 * 6 * 4 * 3 + 3


def test_sequential_whose_first_layer_is_a_functional_base_model():
    """Transfer learning's `Sequential([base_model, GlobalAveragePooling2D(), Dense(1)])`:
    the functional base brings its input, so the model is built at once."""
    base_model = tf.keras.applications.MobileNetV2(input_shape=(32, 32, 3),
                                                   include_top=False, weights=None)
    model = tf.keras.Sequential([base_model, tf.keras.layers.GlobalAveragePooling2D(),
                                 tf.keras.layers.Dense(1)])
    assert model.built and model.input_shape == (None, 32, 32, 3)
    assert model.output_shape == (None, 1)


def test_one_layer_repeated_in_a_sequential_shares_its_weights():
    """Hands-On ML ch. 12: `Sequential([Dense, block1, block1, block1, block1, ...])` applies
    one residual block four times (Keras 3 lists it each time); its weights count once."""
    class ResidualBlock(tf.keras.layers.Layer):
        def __init__(self, n_layers, n_neurons, **kwargs):
            super().__init__(**kwargs)
            self.hidden = [tf.keras.layers.Dense(n_neurons, activation="relu",
                                                 kernel_initializer="he_normal")
                           for _ in range(n_layers)]

        def call(self, inputs):
            Z = inputs
            for layer in self.hidden:
                Z = layer(Z)
            return inputs + Z

    block1 = ResidualBlock(2, 3)
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(3, activation="relu", kernel_initializer="he_normal"),
        block1, block1, block1, block1, tf.keras.layers.Dense(1)])
    x = np.random.default_rng(0).random((4, 8)).astype(np.float32)
    out = model(x).numpy()
    assert [layer is block1 for layer in model.layers] == [False, True, True, True, True, False]
    assert len(model.trainable_variables) == 2 + 4 + 2
    h = model.layers[0](x).numpy()
    for _ in range(4):
        z = h
        for dense in block1.hidden:
            z = np.maximum(z @ dense.kernel.numpy() + dense.bias.numpy(), 0)
        h = h + z
    expected = h @ model.layers[-1].kernel.numpy() + model.layers[-1].bias.numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    model.compile(loss="mse", optimizer="nadam")
    model.fit(x, np.ones((4, 1)), epochs=1, verbose=0)
