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
def tfjs_predict(model_json, x, backend="cpu"):
    got = run_node("predict_layers.js", {"model": str(model_json), "inputs": [x.tolist()],
                                         "dtypes": ["int32" if x.dtype.kind == "i" else
                                                    "float32"], "backend": backend})
    assert got["backend"] == backend
    out = got["outputs"][0]
    return np.array(out["values"], np.float32).reshape(out["shape"]), got


def _close(actual, expected, rtol=1e-5):
    """Equal to float32 summation-order differences: 1e-5 relative, and 1e-5 of the output's
    scale for entries near zero."""
    np.testing.assert_allclose(actual, expected, rtol=rtol,
                               atol=rtol * float(np.abs(expected).max()))


# -- tensorlite -> TF.js ---------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["cpu", "wasm"])
@pytest.mark.parametrize("kind", list(MODELS))
def test_tfjs_predicts_what_tensorlite_predicts(tmp_path, kind, backend):
    model = MODELS[kind]()
    x = _inputs(kind)
    path = tfjs.converters.save_keras_model(model, str(tmp_path / kind))
    data = json.loads(open(path).read())
    assert data["format"] == "layers-model"
    assert data["modelTopology"]["model_config"]["class_name"] in ("Sequential", "Functional")
    assert "batch_shape" not in json.dumps(data["modelTopology"])
    got, info = tfjs_predict(path, x, backend)
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


# -- the other layers TF.js has --------------------------------------------------------------------
L = tf.keras.layers


def vision_zoo():
    i = tf.keras.Input(shape=(16, 16, 3))
    x = L.Rescaling(0.5, offset=0.1)(i)
    x = L.SeparableConv2D(4, 3, padding="same", activation="elu")(x)
    x = L.AveragePooling2D()(x)
    x = L.UpSampling2D()(x)
    x = L.Conv2DTranspose(3, 3, strides=2, padding="same")(x)
    x = L.Cropping2D(((1, 2), (3, 0)))(x)
    x = L.LeakyReLU(0.2)(x)
    x = L.Conv2D(4, 3, dilation_rate=2)(x)
    x = L.LayerNormalization()(x)
    x = L.PReLU()(x)
    x = L.Permute((2, 1, 3))(x)
    x = L.GlobalMaxPooling2D()(x)
    return tf.keras.Model(i, L.Softmax()(L.Dense(3)(x)))


def rnn_zoo():
    i = tf.keras.Input(shape=(7, 5))
    x = L.Bidirectional(L.LSTM(4, return_sequences=True))(i)
    x = L.GRU(5, reset_after=False, return_sequences=True)(x)
    x = L.TimeDistributed(L.Dense(3))(x)
    x = L.SimpleRNN(4)(x)
    x = L.RepeatVector(2)(x)
    return tf.keras.Model(i, L.Reshape((8,))(x))


def text_zoo():
    i = tf.keras.Input(shape=(9,), dtype="int32")
    c = L.Conv1D(4, 3, padding="same", activation="selu")(L.Embedding(30, 6)(i))
    c = L.MaxPooling1D()(c)
    c1, c2 = L.GlobalAveragePooling1D()(c), L.GlobalMaxPooling1D()(c)
    merged = L.Concatenate()([L.Multiply()([c1, c2]), L.Average()([c1, c2]),
                              L.Maximum()([c1, c2]), L.Minimum()([c1, c2]),
                              L.Dot(axes=1)([c1, c2]), L.Add()([c1, c2])])
    return tf.keras.Model(i, L.Dense(2, activation="gelu")(L.Activation("swish")(merged)))


def masked_lstm():
    i = tf.keras.Input(shape=(9,), dtype="int32")
    return tf.keras.Model(i, L.Dense(1)(L.LSTM(3)(L.Embedding(30, 6, mask_zero=True)(i))))


def activations_zoo():
    i = tf.keras.Input(shape=(4,))
    x = i
    for act in ("hard_sigmoid", "softplus", "softsign", "relu6", "elu", "selu", "tanh"):
        x = L.Dense(8, activation=act)(x)
    return tf.keras.Model(i, L.Dense(4, activation="log_softmax")(x))


ZOO = {"vision": (vision_zoo, lambda r: r.normal(size=(2, 16, 16, 3))),
       "rnn": (rnn_zoo, lambda r: r.normal(size=(2, 7, 5))),
       "text": (text_zoo, lambda r: r.integers(0, 30, (2, 9))),
       "masked_lstm": (masked_lstm, lambda r: np.array([[1, 2, 3] + [0] * 6,
                                                         [4, 5, 6, 7, 8, 9, 1, 2, 3]])),
       "activations": (activations_zoo, lambda r: r.normal(size=(3, 4)))}


@pytest.mark.parametrize("kind", list(ZOO))
def test_more_layers_predict_the_same_in_tfjs_and_back(tmp_path, kind):
    build, data = ZOO[kind]
    tf.random.set_seed(6)
    model = build()
    x = data(np.random.default_rng(0))
    x = x.astype("int32" if x.dtype.kind == "i" else "float32")
    path = tfjs.converters.save_keras_model(model, str(tmp_path))
    expected = model.predict(x, verbose=0)
    assert expected.std(0).max() > 1e-4
    got, _ = tfjs_predict(path, x)
    _close(got, expected)
    _close(tfjs.converters.load_keras_model(path).predict(x, verbose=0), expected, rtol=1e-6)


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


def test_causal_padding_tfjs_cannot_run_is_an_error(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Conv1D(2, 3, padding="causal",
                                                        input_shape=(8, 2), name="causal")])
    with pytest.raises(errors.UnimplementedError, match="causal.*padding"):
        tfjs.converters.save_keras_model(model, str(tmp_path))


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
@pytest.mark.parametrize("kind", ["mlp", "lstm", "nested"])
def test_model_trained_in_tfjs_loads_predicts_the_same_and_trains_on(tmp_path, kind):
    rng = np.random.default_rng(0)
    if kind != "lstm":
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
    assert data["modelTopology"]["class_name"] == ("Model" if kind == "nested" else
                                                   "Sequential")
    model = tfjs.converters.load_keras_model(str(tmp_path / "model.json"))
    expected = np.array(saved["predictions"], np.float32)
    _close(model.predict(x, verbose=0), expected)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                  loss="sparse_categorical_crossentropy")
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    assert model.evaluate(x, y, verbose=0) < before


def test_nested_model_with_two_inputs_and_two_outputs(tmp_path):
    a, b = tf.keras.Input(shape=(5,), name="a"), tf.keras.Input(shape=(3,), name="b")
    inner = tf.keras.Sequential([tf.keras.layers.Dense(6, activation="relu", input_shape=(8,)),
                                 tf.keras.layers.Dense(4)], name="inner")
    h = inner(tf.keras.layers.Concatenate()([a, b]))
    model = tf.keras.Model([a, b], [tf.keras.layers.Dense(2, name="o1")(h),
                                    tf.keras.layers.Dense(1, activation="sigmoid",
                                                          name="o2")(h)])
    path = tfjs.converters.save_keras_model(model, str(tmp_path))
    rng = np.random.default_rng(0)
    xa, xb = rng.normal(size=(3, 5)).astype("f4"), rng.normal(size=(3, 3)).astype("f4")
    got = run_node("predict_layers.js", {"model": path, "inputs": [xa.tolist(), xb.tolist()]})
    expected = model.predict([xa, xb], verbose=0)
    assert len(got["outputs"]) == 2
    for out, want in zip(got["outputs"], expected):
        _close(np.array(out["values"], np.float32).reshape(out["shape"]), want)
    again = tfjs.converters.load_keras_model(path)
    for out, want in zip(again.predict([xa, xb], verbose=0), expected):
        _close(out, want, rtol=1e-6)


def test_tfjs_model_saved_with_its_optimizer_loads_compiled(tmp_path):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(48, 6)).astype("float32")
    y = (x[:, 0] - x[:, 1] > 0).astype("int32")
    saved = run_node("train_and_save.js", {"kind": "mlp", "dir": str(tmp_path), "x": x.tolist(),
                                           "y": y.tolist(), "includeOptimizer": True})
    data = json.load(open(tmp_path / "model.json"))
    assert any(w.get("group") == "optimizer" for w in data["weightsManifest"][0]["weights"])
    model = tfjs.converters.load_keras_model(str(tmp_path / "model.json"), compile=True)
    _close(model.predict(x, verbose=0), np.array(saved["predictions"], np.float32))
    assert type(model.optimizer).__name__ == "Adam"
    assert float(model.optimizer.learning_rate.numpy()) == pytest.approx(0.01)
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=10, batch_size=16, verbose=0)
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


# -- compiled models train in TF.js as they load ----------------------------------------------------
@pytest.mark.parametrize("optimizer, expected", [
    (lambda: tf.keras.optimizers.Adam(0.01), "Adam"),
    (lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9), "Momentum"),
    (lambda: tf.keras.optimizers.RMSprop(0.005, rho=0.8), "RMSProp")])
def test_compiled_model_trains_in_tfjs_as_loaded(tmp_path, optimizer, expected):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(64, 20)).astype("float32")
    y = (x[:, :10].sum(1) > x[:, 10:].sum(1)).astype("float32")
    model = mlp()
    model.compile(optimizer=optimizer(), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    path = tfjs.converters.save_keras_model(model, str(tmp_path))
    got = run_node("fit_loaded.js", {"model": path, "x": x.tolist(), "y": y.tolist(),
                                     "epochs": 8})
    assert got["compiled"] and got["optimizer"] == expected
    assert got["loss"] == "sparseCategoricalCrossentropy" and "acc" in got["metrics"]
    assert got["optimizerConfig"]["learningRate"] == pytest.approx(
        float(model.optimizer.learning_rate.numpy()))
    if expected == "RMSProp":
        assert got["optimizerConfig"]["decay"] == pytest.approx(0.8)  # Keras's rho
    assert got["losses"][-1] < got["losses"][0]


def test_settings_tfjs_lacks_leave_the_model_uncompiled_with_a_warning(tmp_path):
    model = mlp()
    model.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.warns(UserWarning, match="from_logits"):
        path = tfjs.converters.save_keras_model(model, str(tmp_path))
    assert "trainingConfig" not in json.load(open(path))
    got = run_node("fit_loaded.js", {"model": path, "x": [[0.0] * 20], "y": [0], "epochs": 1})
    assert got == {"compiled": False}
