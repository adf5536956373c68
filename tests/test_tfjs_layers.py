"""TF.js Layers format (`tensorlite.js.converters`), judged by the real TensorFlow.js in Node
(@tensorflow/tfjs 4.22, pure-JS cpu backend): `tf.loadLayersModel` loads what
`save_keras_model` writes and predicts what tensorlite predicts, float32 to 1e-5 and quantized
models within the change tensorlite predicts from the dequantized weights; models built and
trained in TF.js load back into tensorlite, predict the same and train on."""
import json
import os

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.js as tfjs
from tensorlite.framework import errors
from tensorlite.js import weights as tfjs_weights
from tests.js_runner import needs_node, run_node
from tests.lite_helpers import fitted_cifar_cnn

pytestmark = needs_node


# -- the models ----------------------------------------------------------------------------------
def _randomize_bn(model, seed=3):
    """Moving statistics away from 0/1, so inference-mode BatchNormalization is exercised."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, gamma.shape).astype("float32"),
                               rng.normal(0, 0.1, beta.shape).astype("float32"),
                               rng.normal(0, 0.1, mean.shape).astype("float32"),
                               rng.uniform(0.5, 2.0, var.shape).astype("float32")])


def mlp():
    tf.random.set_seed(1)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(64, activation="relu", input_shape=(20,)),
        tf.keras.layers.Dense(32, activation="tanh"),
        tf.keras.layers.Dense(5, activation="softmax")])


def text_classifier():
    tf.random.set_seed(2)
    model = tf.keras.Sequential([
        tf.keras.layers.Embedding(500, 16, input_length=12),
        tf.keras.layers.LSTM(24),
        tf.keras.layers.Dense(1, activation="sigmoid")])
    model.build((None, 12))
    emb = model.layers[0]  # trained-size embeddings, so the text changes the prediction
    emb.set_weights([np.random.default_rng(2).normal(0, 1, (500, 16)).astype("float32")])
    return model


def bn_dropout_model():
    tf.random.set_seed(4)
    inputs = tf.keras.Input(shape=(10,))
    x = tf.keras.layers.Dense(32)(inputs)
    x = tf.keras.layers.BatchNormalization()(x)
    x = tf.keras.layers.Activation("relu")(x)
    x = tf.keras.layers.Dropout(0.5)(x)
    y = tf.keras.layers.Dense(16, activation="relu")(x)
    y = tf.keras.layers.Dropout(0.2)(y)
    merged = tf.keras.layers.Concatenate()([x, y])
    outputs = tf.keras.layers.Dense(3, activation="softmax")(merged)
    model = tf.keras.Model(inputs, outputs)
    _randomize_bn(model)
    return model


def _calibrate_bn(model, x):
    """Moving statistics set to the batch statistics of `x` (momentum 0 for one training
    call), as training would leave them: without this a randomly initialized deep network's
    output barely depends on its input, and a wrong layer could hide behind that."""
    bns = [layer for layer in model.layers
           if isinstance(layer, tf.keras.layers.BatchNormalization)]
    momenta = [layer.momentum for layer in bns]
    for layer in bns:
        layer.momentum = 0.0
    model(x, training=True)
    for layer, momentum in zip(bns, momenta):
        layer.momentum = momentum


def mobilenet():
    tf.random.set_seed(5)
    model = tf.keras.applications.MobileNetV2(input_shape=(96, 96, 3), weights=None,
                                              classes=10)
    _calibrate_bn(model, np.random.default_rng(12).normal(size=(8, 96, 96, 3)).astype("f4"))
    return model


def _inputs(kind, n=4):
    rng = np.random.default_rng(11)
    if kind == "text":
        return rng.integers(1, 500, (n, 12)).astype("int32")
    shapes = {"mlp": (20,), "bn": (10,), "cnn": (32, 32, 3), "mobilenet": (96, 96, 3)}
    return rng.normal(size=(n, *shapes[kind])).astype("float32")


MODELS = {"mlp": mlp, "cnn": fitted_cifar_cnn, "text": text_classifier, "bn": bn_dropout_model,
          "mobilenet": mobilenet}


# -- running TF.js ---------------------------------------------------------------------------------
def tfjs_predict(model_json, x):
    got = run_node("predict_layers.js", {"model": str(model_json), "inputs": [x.tolist()],
                                         "dtypes": ["int32" if x.dtype.kind == "i" else
                                                    "float32"]})
    out = got["outputs"][0]
    return np.array(out["values"], np.float32).reshape(out["shape"]), got


def _close(actual, expected, rtol=1e-5):
    """Equal to float32 summation-order differences: 1e-5 relative, and 1e-5 of the output's
    scale for entries near zero."""
    np.testing.assert_allclose(actual, expected, rtol=rtol,
                               atol=rtol * float(np.abs(expected).max()))


# -- tensorlite -> TF.js ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(MODELS))
def test_tfjs_predicts_what_tensorlite_predicts(tmp_path, kind):
    model = MODELS[kind]()
    x = _inputs(kind)
    path = tfjs.converters.save_keras_model(model, str(tmp_path / kind))
    data = json.loads(open(path).read())
    assert data["format"] == "layers-model"
    assert data["modelTopology"]["model_config"]["class_name"] in ("Sequential", "Functional")
    assert "batch_shape" not in json.dumps(data["modelTopology"])
    got, info = tfjs_predict(path, x)
    assert info["weights"] == len(model.weights)
    expected = model.predict(x, verbose=0)
    assert expected.std(0).max() > 1e-3  # the outputs depend on the input
    _close(got, expected)


def test_mobilenet_topology_uses_layers_tfjs_has(tmp_path):
    model = mobilenet()
    path = tfjs.converters.save_keras_model(model, str(tmp_path))
    _, info = tfjs_predict(path, _inputs("mobilenet", 1))
    assert {"DepthwiseConv2D", "ZeroPadding2D", "ReLU", "Add", "BatchNormalization"} <= \
        set(info["layers"])
    assert len(info["layers"]) == len(model.layers)


def test_weights_are_sharded_and_tfjs_reads_every_shard(tmp_path):
    model = fitted_cifar_cnn()
    path = tfjs.converters.save_keras_model(model, str(tmp_path), weight_shard_size_bytes=1 << 20)
    manifest = json.loads(open(path).read())["weightsManifest"]
    paths = manifest[0]["paths"]
    total = sum(os.path.getsize(tmp_path / p) for p in paths)
    assert total == sum(w.numpy().nbytes for w in model.weights)
    assert len(paths) == -(-total // (1 << 20)) > 1
    assert all(os.path.getsize(tmp_path / p) == 1 << 20 for p in paths[:-1])
    names = [w["name"] for w in manifest[0]["weights"]]
    assert "dense/kernel" in names or any(n.endswith("/kernel") for n in names)
    x = _inputs("cnn")
    got, _ = tfjs_predict(path, x)
    _close(got, model.predict(x, verbose=0))


def _dequantized_twin(model, model_json):
    """tensorlite's prediction of the quantized model: a copy carrying the weights as TF.js
    dequantizes them."""
    twin = tf.keras.models.clone_model(model)
    twin.set_weights(model.get_weights())
    tfjs.converters.assign_by_name(
        twin, tfjs_weights.read_weights(json.load(open(model_json))["weightsManifest"],
                                        os.path.dirname(model_json)), model_json)
    return twin


@pytest.mark.parametrize("kind", ["mlp", "cnn", "text"])
@pytest.mark.parametrize("dtype", ["float16", "uint8", "uint16"])
def test_quantized_models_are_within_the_predicted_error(tmp_path, kind, dtype):
    model = MODELS[kind]()
    x = _inputs(kind)
    path = tfjs.converters.save_keras_model(model, str(tmp_path),
                                            quantization_dtype_map={dtype: True})
    specs = json.load(open(path))["weightsManifest"][0]["weights"]
    float_specs = [s for s in specs if s["dtype"] == "float32"]
    assert float_specs and all(s["quantization"]["dtype"] == dtype for s in float_specs)
    sizes = sum(os.path.getsize(os.path.join(tmp_path, p))
                for p in json.load(open(path))["weightsManifest"][0]["paths"])
    assert sizes * {"float16": 2, "uint16": 2, "uint8": 4}[dtype] == \
        sum(w.numpy().nbytes for w in model.weights)
    got, _ = tfjs_predict(path, x)
    predicted = _dequantized_twin(model, path).predict(x, verbose=0)
    exact = model.predict(x, verbose=0)
    _close(got, predicted)  # TF.js computes exactly what tensorlite predicts ...
    change = np.abs(predicted - exact).max()
    assert 0 < change < {"float16": 0.01, "uint16": 0.01, "uint8": 0.25}[dtype]  # ... and it moved


def test_wildcards_quantize_only_the_weights_they_match(tmp_path):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(32, activation="relu", input_shape=(20,), name="hidden1"),
        tf.keras.layers.Dense(16, activation="relu", name="hidden2"),
        tf.keras.layers.Dense(4, name="out")])
    path = tfjs.converters.save_keras_model(
        model, str(tmp_path), quantization_dtype_map={"uint8": ["hidden*/kernel"],
                                                      "float16": "out/*"})
    specs = json.load(open(path))["weightsManifest"][0]["weights"]
    assert {s["name"]: s.get("quantization", {}).get("dtype") for s in specs} == {
        "hidden1/kernel": "uint8", "hidden1/bias": None, "hidden2/kernel": "uint8",
        "hidden2/bias": None, "out/kernel": "float16", "out/bias": "float16"}
    x = _inputs("mlp")
    got, _ = tfjs_predict(path, x)
    _close(got, _dequantized_twin(model, path).predict(x, verbose=0))


# -- what TF.js cannot load ------------------------------------------------------------------------
def test_layer_tfjs_lacks_is_an_error_naming_it(tmp_path):
    inputs = tf.keras.Input(shape=(8,))
    a, b = tf.keras.layers.Dense(4)(inputs), tf.keras.layers.Dense(4)(inputs)
    outputs = tf.keras.layers.Subtract(name="difference")([a, b])
    model = tf.keras.Model(inputs, outputs)
    with pytest.raises(errors.UnimplementedError, match="difference.*Subtract"):
        tfjs.converters.save_keras_model(model, str(tmp_path))


def test_setting_tfjs_ignores_is_an_error_naming_it(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.GRU(4, input_shape=(5, 3), name="gru_a")])
    with pytest.raises(errors.UnimplementedError, match="gru_a.*reset_after"):
        tfjs.converters.save_keras_model(model, str(tmp_path))
    leaky = tf.keras.Sequential([tf.keras.layers.ReLU(negative_slope=0.1, input_shape=(3,),
                                                      name="leaky")])
    with pytest.raises(errors.UnimplementedError, match="leaky.*negative_slope"):
        tfjs.converters.save_keras_model(leaky, str(tmp_path))


def test_sequential_without_input_shape_is_a_clear_error(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    with pytest.raises(ValueError, match="input shape"):
        tfjs.converters.save_keras_model(model, str(tmp_path))


def test_gru_tfjs_supports_converts(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.GRU(6, reset_after=False, input_shape=(5, 3)),
                                 tf.keras.layers.Dense(2)])
    x = np.random.default_rng(0).normal(size=(3, 5, 3)).astype("float32")
    got, _ = tfjs_predict(tfjs.converters.save_keras_model(model, str(tmp_path)), x)
    _close(got, model.predict(x, verbose=0))


# -- TF.js -> tensorlite ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["mlp", "lstm"])
def test_model_trained_in_tfjs_loads_predicts_the_same_and_trains_on(tmp_path, kind):
    rng = np.random.default_rng(0)
    if kind == "mlp":
        x = rng.normal(size=(64, 6)).astype("float32")
        y = (x[:, :3].sum(1) > x[:, 3:].sum(1)).astype("int32")
    else:
        x = rng.integers(1, 50, (64, 8)).astype("float32")
        y = (x[:, 0] > 25).astype("int32")
    saved = run_node("train_and_save.js", {"kind": kind, "dir": str(tmp_path),
                                           "x": x.tolist(), "y": y.tolist()})
    assert saved["losses"][-1] < saved["losses"][0]  # TF.js really trained it
    data = json.load(open(tmp_path / "model.json"))
    assert "model_config" not in data["modelTopology"]
    names = [w["name"] for w in data["weightsManifest"][0]["weights"]]
    assert "dense_Dense1/kernel" in names  # TF.js's own names
    model = tfjs.converters.load_keras_model(str(tmp_path / "model.json"))
    expected = np.array(saved["predictions"], np.float32)
    _close(model.predict(x, verbose=0), expected)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                  loss="sparse_categorical_crossentropy")
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    assert model.evaluate(x, y, verbose=0) < before


def test_round_trip_through_tfjs_files(tmp_path):
    model = bn_dropout_model()
    path = tfjs.converters.save_keras_model(model, str(tmp_path))
    again = tfjs.converters.load_keras_model(path)
    x = _inputs("bn")
    _close(again.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


def test_weight_missing_from_the_manifest_is_named(tmp_path):
    path = tfjs.converters.save_keras_model(mlp(), str(tmp_path))
    data = json.load(open(path))
    dropped = data["weightsManifest"][0]["weights"].pop()
    open(path, "w").write(json.dumps(data))
    with pytest.raises((ValueError, errors.OpError), match="model.json"):
        tfjs.converters.load_keras_model(path)
    assert dropped["name"].endswith("bias")


def test_not_json_is_data_loss(tmp_path):
    (tmp_path / "model.json").write_text("{not json")
    with pytest.raises(errors.DataLossError, match="model.json"):
        tfjs.converters.load_keras_model(str(tmp_path / "model.json"))
