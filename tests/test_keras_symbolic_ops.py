"""TF functions and operators on tf.keras.Input tensors become layers (TFOpLambda), and
functional models take symbolic losses and metrics, as TF 2's Keras does: code from the TF 2
guides mixes layers with `tf.concat`, `tf.nn.relu`, `x[:, :2]`, `model.add_loss(...)`."""
import json
import os
import zipfile

import numpy as np
import pytest

import tensorlite as tf
from tensorlite import keras
from tensorlite.keras import layers


def _ops_model():
    x = keras.Input(shape=(4,))
    y = tf.concat([tf.nn.relu(x), x[:, :2] * 2.0], axis=-1)
    z = tf.reduce_mean(y, axis=1, keepdims=True) - y
    a, b = tf.split(z, 2, axis=1)
    return keras.Model(x, [a, -b, tf.cast(y > 0.5, tf.int32), 1.0 - tf.expand_dims(a, -1)])


def _expected(data):
    y = np.concatenate([np.maximum(data, 0), data[:, :2] * 2], -1)
    z = y.mean(1, keepdims=True) - y
    return [z[:, :3], -z[:, 3:], (y > 0.5).astype(np.int32), 1.0 - z[:, :3, None]]


DATA = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


def test_tf_functions_and_operators_on_inputs_become_layers():
    keras.backend.clear_session()  # layer names count from here
    model = _ops_model()
    # tf.keras 2's order (checked against TensorFlow 2.21, which names the mean layer
    # tf.math.reduce_mean: its canonical path)
    assert [layer.name for layer in model.layers] == [
        model.input.name, "tf.__operators__.getitem", "tf.nn.relu", "tf.math.multiply",
        "tf.concat", "tf.reduce_mean", "tf.math.subtract", "tf.split", "tf.math.greater",
        "tf.expand_dims", "tf.math.negative", "tf.cast", "tf.math.subtract_1"]
    assert {type(layer).__name__ for layer in model.layers} == {
        "InputLayer", "TFOpLambda", "SlicingOpLambda"}
    assert [t.shape.as_list() for t in model.outputs] == [[None, 3], [None, 3], [None, 6],
                                                          [None, 3, 1]]
    for got, want in zip(model(DATA), _expected(DATA)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    lines = []
    model.summary(print_fn=lines.append)
    assert any("tf.concat (TFOpLambda)" in line for line in lines)


def test_op_layers_save_by_function_name_and_reload_in_safe_mode(tmp_path):
    keras.backend.clear_session()
    model = _ops_model()
    path = str(tmp_path / "ops.keras")
    model.save(path)
    with zipfile.ZipFile(path) as z:
        config = json.loads(z.read("config.json"))
    entries = {e["config"]["name"]: e for e in config["config"]["layers"]}
    assert entries["tf.concat"]["config"]["function"] == "concat"
    # the positional axis was saved by name; the slice as Keras 2 writes it
    assert entries["tf.concat"]["inbound_nodes"][0]["kwargs"] == {"axis": -1}
    assert entries["tf.__operators__.getitem"]["inbound_nodes"][0]["kwargs"] == {
        "slice_spec": [{"start": None, "stop": None, "step": None},
                       {"start": None, "stop": 2, "step": None}]}
    loaded = keras.models.load_model(path)  # safe_mode: a TFOpLambda holds no code
    for got, want in zip(loaded(DATA), _expected(DATA)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_a_config_naming_anything_but_a_tf_function_is_refused(tmp_path):
    model = _ops_model()
    path = str(tmp_path / "ops.keras")
    model.save(path)
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    for bad in ("keras.models.load_model", "__operators__.__class__", "io.gfile.remove"):
        config = json.loads(members["config.json"])
        for entry in config["config"]["layers"]:
            if entry["config"].get("function") == "concat":
                entry["config"]["function"] = bad
        crafted = str(tmp_path / "crafted.keras")
        with zipfile.ZipFile(crafted, "w") as z:
            for name, data in members.items():
                z.writestr(name, json.dumps(config) if name == "config.json" else data)
        with pytest.raises(ValueError, match="not a TensorFlow function"):
            keras.models.load_model(crafted)


def test_eager_calls_and_their_errors_are_unchanged_once_wrapped():
    import inspect
    keras.Input(shape=(2,))  # the wrappers are in place from the first Input on
    assert tf.concat.__wrapped__ is not None
    assert str(inspect.signature(tf.concat)) == "(values, axis, name='concat')"
    np.testing.assert_array_equal(tf.concat([[1], [2]], axis=0).numpy(), [1, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype string") as info:
        tf.reduce_sum("abc")
    assert os.path.basename(__file__) in str(info.value)  # the user's line, not a wrapper's
    with pytest.raises(TypeError, match="positional"):
        tf.concat(1, 2, 3, 4)


def test_model_add_loss_and_add_metric_on_symbolic_tensors(tmp_path):
    """The TF 2 guide ("Training and evaluation with the built-in methods")."""
    inputs = keras.Input(shape=(8,), name="digits")
    x1 = layers.Dense(6, activation="relu", name="dense_1")(inputs)
    x2 = layers.Dense(6, activation="relu", name="dense_2")(x1)
    outputs = layers.Dense(3, name="predictions")(x2)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.add_loss(tf.reduce_sum(x1) * 0.1)
    model.add_metric(keras.backend.std(x1) if hasattr(keras.backend, "std")
                     else tf.math.reduce_std(x1), name="std_of_activation", aggregation="mean")
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(1)
    x, y = rng.random((64, 8)).astype(np.float32), rng.integers(0, 3, 64)
    history = model.fit(x, y, batch_size=32, epochs=2, verbose=0).history
    assert set(history) == {"loss", "std_of_activation"}

    w1, b1 = (v.numpy() for v in model.get_layer("dense_1").weights)
    batches = [x[:32], x[32:]]
    act = [np.maximum(b @ w1 + b1, 0) for b in batches]
    logits = [model.predict(b, verbose=0) for b in batches]
    ce = [np.mean(np.log(np.exp(lg).sum(1)) - lg[np.arange(32), yy])
          for lg, yy in zip(logits, [y[:32], y[32:]])]
    result = model.evaluate(x, y, batch_size=32, verbose=0, return_dict=True)
    np.testing.assert_allclose(result["std_of_activation"], np.mean([a.std() for a in act]),
                               rtol=1e-5)
    np.testing.assert_allclose(result["loss"], np.mean([c + 0.1 * a.sum()
                                                        for c, a in zip(ce, act)]), rtol=1e-5)
    path = str(tmp_path / "guide.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert {"AddLoss", "AddMetric"} <= {type(la).__name__ for la in loaded.layers}
    loaded(x[:32])
    np.testing.assert_allclose(loaded.losses[0].numpy(), 0.1 * act[0].sum(), rtol=1e-5)


class MetricLoggingLayer(layers.Layer):
    """The TF 2 guide's pass-through layer that logs a metric of its input."""

    def call(self, inputs):
        self.add_metric(tf.math.reduce_std(inputs), name="std_of_activation",
                        aggregation="mean")
        return inputs


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_layer_add_metric_is_averaged_over_each_epochs_batches(run_eagerly):
    model = keras.Sequential([MetricLoggingLayer(), layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", run_eagerly=run_eagerly)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((48, 3)).astype(np.float32) * np.arange(1, 49)[:, None]
    y = rng.standard_normal((48, 1)).astype(np.float32)
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history
    want = np.mean([x[i:i + 16].std() for i in range(0, 48, 16)])
    np.testing.assert_allclose(history["std_of_activation"], [want, want], rtol=1e-5)
    assert model.metrics_names == ["loss", "std_of_activation"]


def test_add_metric_needs_a_name_and_a_mean_aggregation():
    layer = layers.Layer()
    with pytest.raises(ValueError, match="provide a name"):
        layer.add_metric(tf.constant(1.0))
    with pytest.raises(ValueError, match="only support `mean`"):
        layer.add_metric(tf.constant(1.0), name="m", aggregation="sum")
    layer.add_metric(tf.constant(1.0), name="m")
    layer.add_metric(tf.constant(3.0), name="m")
    assert [m.name for m in layer.metrics] == ["m"]
    assert float(layer.metrics[0].result()) == 2.0


def test_unknown_dimensions_stay_unknown_through_layers_and_ops():
    """Probed at two sizes: a sequence's unknown length passes a 'valid' convolution, and
    a TF function may reduce or move the batch dimension."""
    x = keras.Input((None, 10))
    assert layers.Conv1D(3, 3)(x).shape.as_list() == [None, None, 3]
    assert layers.Dense(4)(x).shape.as_list() == [None, None, 4]
    assert tf.shape(x).shape.as_list() == [3]
    assert tf.reduce_sum(x, axis=0).shape.as_list() == [None, 10]
    assert tf.reduce_sum(keras.Input((4,)), axis=0).shape.as_list() == [4]


class LogisticEndpoint(layers.Layer):
    """The TF 2 guide's endpoint layer: its loss and metric are the model's only ones."""

    def __init__(self, name=None):
        super().__init__(name=name)
        self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
        self.accuracy_fn = keras.metrics.BinaryAccuracy()

    def call(self, targets, logits, sample_weights=None):
        self.add_loss(self.loss_fn(targets, logits, sample_weights))
        self.add_metric(self.accuracy_fn(targets, logits, sample_weights), name="accuracy")
        return tf.nn.softmax(logits)


def test_a_model_compiled_without_a_loss_trains_on_its_added_losses():
    inputs = keras.Input(shape=(3,), name="inputs")
    targets = keras.Input(shape=(10,), name="targets")
    logits = layers.Dense(10)(inputs)
    model = keras.Model(inputs=[inputs, targets],  # (the guide passes them the other way)
                        outputs=LogisticEndpoint(name="predictions")(targets, logits))
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    assert "loss" not in model.metrics_names  # no loss tracked before a step computes one
    rng = np.random.default_rng(4)
    data = {"inputs": rng.random((8, 3)).astype(np.float32),
            "targets": (rng.random((8, 10)) > 0.5).astype(np.float32)}
    kernel = model.get_layer(index=2).kernel.numpy().copy()  # after the two InputLayers
    history = model.fit(data, batch_size=8, epochs=2, verbose=0).history
    # a metric's own result added: that metric, under its own name (tf.keras 2's way)
    assert set(history) == {"loss", "binary_accuracy"}
    assert history["loss"][1] < history["loss"][0]
    model.reset_metrics()
    model.evaluate(data, batch_size=4, verbose=0)
    endpoint = model.get_layer("predictions")
    want = keras.metrics.BinaryAccuracy()
    want(data["targets"], model.get_layer(index=2)(data["inputs"]))  # the Dense's logits
    assert 0.2 < float(want.result()) < 0.8
    assert endpoint.metrics == [endpoint.accuracy_fn]
    np.testing.assert_allclose(float(endpoint.accuracy_fn.result()), float(want.result()),
                               rtol=1e-6)  # float32 counts summed over 2 batches or 1
    assert not np.array_equal(model.get_layer(index=2).kernel.numpy(), kernel)
    bare = keras.Sequential([layers.Dense(1)])
    bare.compile(optimizer="sgd")
    with pytest.raises(ValueError, match="No loss found"):
        bare.fit(np.ones((4, 2), np.float32), np.ones((4, 1), np.float32), verbose=0)
