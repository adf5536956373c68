"""TF.js's Graph format, judged by the real TensorFlow.js: SavedModels and tf.functions
converted by `tensorlite.js.graph_model` load with `tf.loadGraphModel` in Node (@tensorflow/tfjs
4.22 from js/node_modules, pure-JS `cpu` backend and `wasm`) and `model.execute` /
`executeAsync` return tensorlite's predictions (float32: 1e-5 relative)."""
import json
import os
import sys

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors
from tensorlite.js import graph_model
from tensorlite.js.tfjs_ops import TFJS_OPS
from tensorlite.js.weights import read_weights

sys.path.insert(0, os.path.dirname(__file__))
from js_runner import needs_node, run_node  # noqa: E402
from lite_helpers import fitted_cifar_cnn, images  # noqa: E402
from tfjs_models import batch_norm_dropout, lstm_classifier, mlp, mobilenet_v2  # noqa: E402

pytestmark = needs_node


def tfjs_execute(model_dir, inputs, backend="cpu", asynchronous=False):
    """{output key: array} from TF.js's GraphModel.execute (or executeAsync) on `inputs`
    ({signature key: array})."""
    request = {"model": os.path.join(model_dir, "model.json"), "backend": backend,
               "async": asynchronous,
               "inputs": {k: {"shape": list(np.shape(v)), "dtype": str(np.asarray(v).dtype),
                              "values": np.asarray(v).ravel().tolist()}
                          for k, v in inputs.items()}}
    result = run_node("graph_model.js", request)
    assert result["backend"] == backend
    return {k: np.asarray(v["values"], np.float32).reshape(v["shape"])
            for k, v in result["outputs"].items()}


def assert_close(got, want, rtol=1e-5):
    """float32 agreement: `rtol` relative to each value, and to the output's scale for the
    values near zero."""
    want = np.asarray(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * float(np.abs(want).max()))


def ops_of(model_json):
    return [n["op"] for n in model_json["modelTopology"]["node"]]


def test_the_op_list_is_tfjs_own():
    """tfjs_ops.py is what the pinned tfjs-converter's op mappers know (regenerate it when
    js/package-lock.json moves)."""
    ops = set(run_node("graph_model.js", {"op_list": True})["ops"])
    assert ops == set(TFJS_OPS), (sorted(ops - TFJS_OPS), sorted(TFJS_OPS - ops))


def test_mlp_saved_model_in_tfjs(tmp_path):
    model = mlp()
    tf.saved_model.save(model, str(tmp_path / "saved"))
    out = str(tmp_path / "web_model")
    model_json = graph_model.convert_saved_model(str(tmp_path / "saved"), out)

    on_disk = json.loads((tmp_path / "web_model" / "model.json").read_text())
    assert on_disk["format"] == "graph-model"
    assert on_disk["signature"]["inputs"]["inputs"]["tensorShape"]["dim"][0]["size"] == "-1"
    assert on_disk == model_json
    assert sorted(os.listdir(out)) == ["group1-shard1of1.bin", "model.json"]
    x = np.random.default_rng(0).normal(size=(5, 8)).astype("float32")
    want = model(x).numpy()
    for backend in ("cpu", "wasm"):
        got = tfjs_execute(out, {"inputs": x}, backend)
        assert list(got) == ["output_0"]
        assert_close(got["output_0"], want)


def test_cifar_cnn_saved_model_in_tfjs(tmp_path):
    model = fitted_cifar_cnn()
    tf.saved_model.save(model, str(tmp_path / "saved"))
    out = str(tmp_path / "web_model")
    model_json = graph_model.convert_saved_model(str(tmp_path / "saved"), out)
    assert {"Conv2D", "MaxPool", "MatMul", "Softmax"} <= set(ops_of(model_json))
    x = images(3, seed=5)
    want = model(x, training=False).numpy()
    got = tfjs_execute(out, {"inputs": x}, asynchronous=True)["output_0"]
    assert_close(got, want)
    assert (got.argmax(1) == want.argmax(1)).all()


def test_mobilenet_v2_saved_model_in_tfjs(tmp_path):
    model = mobilenet_v2(96)
    tf.saved_model.save(model, str(tmp_path / "saved"))
    out = str(tmp_path / "web_model")
    model_json = graph_model.convert_saved_model(str(tmp_path / "saved"), out)
    ops = ops_of(model_json)
    assert "DepthwiseConv2dNative" in ops
    # BatchNormalization's rsqrt(variance + epsilon) * gamma was folded into constants, and
    # those into the convolutions' filters
    assert not {"Rsqrt", "FusedBatchNormV3", "Mul"} & set(ops)
    x = np.random.default_rng(1).uniform(-1, 1, size=(2, 96, 96, 3)).astype("float32")
    want = model(x, training=False).numpy()
    assert np.abs(want).max() > 1e-2  # logits that say something
    got = tfjs_execute(out, {"inputs": x})["output_0"]
    assert_close(got, want)


@pytest.mark.parametrize("conv", [False, True])
def test_batch_norm_and_dropout_fold_away(tmp_path, conv):
    """Inference graphs hold neither Dropout nor BatchNormalization's arithmetic:
    constant folding leaves one scale and one offset per channel, and the scale moves into
    the filter of the Dense or Conv2D before it (through its bias)."""
    model = batch_norm_dropout(conv)
    tf.saved_model.save(model, str(tmp_path / "saved"))
    out = str(tmp_path / "web_model")
    ops = ops_of(graph_model.convert_saved_model(str(tmp_path / "saved"), out))
    assert not {"Rsqrt", "Sqrt", "RandomUniform", "Sub", "Mul"} & set(ops), ops
    shape = (4, 6, 6, 2) if conv else (4, 6)
    x = np.random.default_rng(2).normal(size=shape).astype("float32")
    assert_close(tfjs_execute(out, {"inputs": x})["output_0"], model(x, training=False))


def test_tf_function_with_two_inputs_and_named_outputs(tmp_path):
    w = tf.Variable(np.random.default_rng(3).normal(size=(4, 4)).astype("float32"))

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32),
                                  tf.TensorSpec([None, 4], tf.float32)])
    def f(a, b):
        h = tf.matmul(a, w)
        shared = tf.exp(h * 0.1)
        return {"sum": shared + tf.exp(h * 0.1) * b, "top": tf.reduce_max(h, axis=1)}

    out = str(tmp_path / "web_model")
    model_json = graph_model.convert_function(f, out)
    sig = model_json["signature"]
    assert sorted(sig["inputs"]) == ["a", "b"] and sorted(sig["outputs"]) == ["sum", "top"]
    assert ops_of(model_json).count("Exp") == 1  # the duplicate exp(h * 0.1) was merged
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(3, 4)).astype("float32"), rng.normal(size=(3, 4)).astype("float32")
    want = f(a, b)
    got = tfjs_execute(out, {"a": a, "b": b})
    assert_close(got["sum"], want["sum"])
    assert_close(got["top"], want["top"])


def test_lstm_text_classifier_at_any_batch_size(tmp_path):
    """An Embedding + LSTM classifier from a tf.function over token ids: the LSTM's zero
    state, a constant in each trace, follows the batch size of the run (a Fill)."""
    model = lstm_classifier()
    classify = tf.function(lambda tokens: model(tokens, training=False),
                           input_signature=[tf.TensorSpec([None, 10], tf.int32)])
    out = str(tmp_path / "web_model")
    model_json = graph_model.convert_function(classify, out)
    assert {"Fill", "Tanh", "Sigmoid"} <= set(ops_of(model_json))
    assert model_json["signature"]["inputs"]["tokens"]["dtype"] == "DT_INT32"
    for batch in (1, 5):
        tokens = np.random.default_rng(batch).integers(0, 50, size=(batch, 10)).astype("int32")
        got = tfjs_execute(out, {"tokens": tokens})["output_0"]
        assert got.shape == (batch, 2)
        assert_close(got, model(tokens).numpy())


def test_concrete_function_keeps_its_shapes(tmp_path):
    f = tf.function(lambda x: tf.nn.relu(x) * 2.0 + 1.0)
    concrete = f.get_concrete_function(tf.TensorSpec([2, 3], tf.float32))
    out = str(tmp_path / "web_model")
    model_json = graph_model.convert_function(concrete, out)
    info = next(iter(model_json["signature"]["inputs"].values()))
    assert [d["size"] for d in info["tensorShape"]["dim"]] == ["2", "3"]
    x = np.array([[-1, 0, 1], [2, -3, 4]], np.float32)
    key = next(iter(model_json["signature"]["inputs"]))
    assert_close(tfjs_execute(out, {key: x})["output_0"], np.maximum(x, 0) * 2 + 1)


def test_weights_shard_and_still_load(tmp_path):
    model = fitted_cifar_cnn()
    tf.saved_model.save(model, str(tmp_path / "saved"))
    out = str(tmp_path / "web_model")
    model_json = graph_model.convert_saved_model(str(tmp_path / "saved"), out,
                                                 weight_shard_size_bytes=64 * 1024)
    paths = model_json["weightsManifest"][0]["paths"]
    assert len(paths) > 2 and all(os.path.getsize(os.path.join(out, p)) <= 64 * 1024
                                  for p in paths)
    x = images(2, seed=6)
    assert_close(tfjs_execute(out, {"inputs": x})["output_0"], model(x, training=False))


@pytest.mark.parametrize("quantization,quantized", [
    ("float16", {"hidden/kernel", "hidden/bias", "probs/kernel", "probs/bias"}),
    ("uint8", {"hidden/kernel", "hidden/bias", "probs/kernel", "probs/bias"}),
    ({"uint16": "hidden/*", "float16": ["probs/kernel"]},
     {"hidden/kernel", "hidden/bias", "probs/kernel"})])
def test_quantized_graph_model(tmp_path, quantization, quantized):
    """Quantized weights as tfjs-converter writes them, chosen by wildcards over the weight
    names (the variables' names): TF.js predicts what tensorlite predicts from the
    dequantized weights (that is the whole quantization error)."""
    model = mlp()
    tf.saved_model.save(model, str(tmp_path / "saved"))
    out = str(tmp_path / "web_model")
    manifest = graph_model.convert_saved_model(str(tmp_path / "saved"), out,
                                               quantization=quantization)["weightsManifest"]
    entries = {w["name"]: w for w in manifest[0]["weights"]}
    assert set(entries) == {v.name.split(":")[0] for v in model.variables}
    assert {n for n, w in entries.items() if "quantization" in w} == quantized
    stored = {"float16": 2, "uint8": 1, "uint16": 2}
    assert os.path.getsize(os.path.join(out, manifest[0]["paths"][0])) == sum(
        int(np.prod(w["shape"])) * stored.get(w.get("quantization", {}).get("dtype"), 4)
        for w in entries.values())

    x = np.random.default_rng(5).normal(size=(6, 8)).astype("float32")
    exact = model(x).numpy()
    read = read_weights(manifest, out)  # what TF.js reads: dequantized
    for v in model.variables:
        v.assign(read[v.name.split(":")[0]])
    got = tfjs_execute(out, {"inputs": x})["output_0"]
    assert_close(got, model(x).numpy())
    assert not np.allclose(got, exact, rtol=1e-6, atol=1e-7)  # the weights did change


def test_an_op_tfjs_lacks_is_named(tmp_path):
    f = tf.function(lambda x: tf.nn.softsign(x) + 1.0,
                    input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    with pytest.raises(errors.UnimplementedError, match="Softsign.*TensorFlow.js"):
        graph_model.convert_function(f, str(tmp_path / "web_model"))
    assert not (tmp_path / "web_model" / "model.json").exists()


def test_bad_signature_and_stateful_functions_are_refused(tmp_path):
    model = mlp()
    tf.saved_model.save(model, str(tmp_path / "saved"))
    with pytest.raises(ValueError, match="serving_default"):
        graph_model.convert_saved_model(str(tmp_path / "saved"), str(tmp_path / "o"),
                                        signature_name="predict")
    v = tf.Variable(1.0)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def counts(x):
        v.assign_add(1.0)
        return x * v
    with pytest.raises(errors.UnimplementedError, match="changes state"):
        graph_model.convert_function(counts, str(tmp_path / "o2"))
    with pytest.raises(ValueError, match="input signature"):
        graph_model.convert_function(tf.function(lambda x: x), str(tmp_path / "o3"))


def test_a_constant_that_follows_the_batch_size_unevenly_is_refused(tmp_path):
    """Row numbers are a constant of each trace that no Fill can rebuild: refused, naming
    the fix, rather than written at the traced batch size."""
    f = tf.function(lambda x: x + np.arange(x.shape[0], dtype=np.float32)[:, None],
                    input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    with pytest.raises(errors.UnimplementedError, match="changes with the batch size"):
        graph_model.convert_function(f, str(tmp_path / "web_model"))
    fixed = tf.function(f.python_function, input_signature=[tf.TensorSpec([4, 3], tf.float32)])
    out = str(tmp_path / "fixed")
    graph_model.convert_function(fixed, out)
    x = np.ones((4, 3), np.float32)
    assert_close(tfjs_execute(out, {"x": x})["output_0"], x + np.arange(4)[:, None])


def test_keras_model_to_graph_model(tmp_path):
    """tensorflowjs_converter --input_format keras --output_format tfjs_graph_model: a
    functional model's inputs and outputs keep their names."""
    tf.random.set_seed(8)
    features = tf.keras.Input((5,), name="features")
    hidden = tf.keras.layers.Dense(7, activation="tanh")(features)
    model = tf.keras.Model(features, [tf.keras.layers.Dense(2, name="logits")(hidden),
                                      tf.keras.layers.Dense(1, name="score")(hidden)])
    out = str(tmp_path / "web_model")
    signature = graph_model.convert_function(model, out)["signature"]
    assert list(signature["inputs"]) == ["features"]
    assert sorted(signature["outputs"]) == ["logits", "score"]
    x = np.random.default_rng(8).normal(size=(3, 5)).astype("float32")
    logits, score = model(x)
    got = tfjs_execute(out, {"features": x})
    assert_close(got["logits"], logits)
    assert_close(got["score"], score)


def test_tensorflowjs_argument_names_and_metadata(tmp_path):
    """tensorflowjs.converters.convert_tf_saved_model's argument names work too, and
    `metadata` reaches TF.js as model.metadata."""
    model = mlp()
    tf.saved_model.save(model, str(tmp_path / "saved"))
    out = tmp_path / "web_model"
    graph_model.convert_saved_model(
        str(tmp_path / "saved"), str(out), signature_def="serving_default",
        saved_model_tags="serve", quantization_dtype_map={"float16": True},
        metadata={"trained_by": "tensorlite", "classes": [0, 1, 2]})
    x = np.zeros((1, 8), np.float32)
    result = run_node("graph_model.js", {
        "model": str(out / "model.json"), "backend": "cpu",
        "inputs": {"inputs": {"shape": [1, 8], "dtype": "float32", "values": x.ravel().tolist()}}})
    assert result["metadata"] == {"trained_by": "tensorlite", "classes": [0, 1, 2]}
    manifest = json.loads((out / "model.json").read_text())["weightsManifest"]
    assert {w["quantization"]["dtype"] for w in manifest[0]["weights"]} == {"float16"}
    with pytest.raises(TypeError, match="both"):
        graph_model.convert_saved_model(str(tmp_path / "saved"), str(tmp_path / "o"),
                                        signature_name="a", signature_def="b")
    with pytest.raises(TypeError, match="skip_op_check"):
        graph_model.convert_saved_model(str(tmp_path / "saved"), str(tmp_path / "o"),
                                        skip_op_check=True)


def _official_converter():
    """tensorflowjs_converter (the official pip package, in a venv of its own: it needs
    TensorFlow 2.19), from $TENSORLITE_TFJS_CONVERTER or .venv-tfjs-official; or None."""
    path = os.environ.get("TENSORLITE_TFJS_CONVERTER") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".venv-tfjs-official",
        "bin", "tensorflowjs_converter")
    return path if os.path.exists(path) else None


@pytest.mark.slow  # the official converter starts TensorFlow
@pytest.mark.skipif(_official_converter() is None,
                    reason="the official tensorflowjs converter is not installed: run "
                           "tests/js/setup_tfjs_official_venv.sh (or set "
                           "TENSORLITE_TFJS_CONVERTER)")
def test_official_converter_and_ours_agree_in_tfjs(tmp_path):
    """tensorflowjs_converter and tensorlite.js convert the same tensorlite SavedModel
    (MobileNetV2: depthwise convolutions, BatchNormalization, ReLU6) into Graph models that
    TF.js runs to the same predictions. Ours folds every BatchNormalization into its
    convolution (the depthwise ones included: no Mul is left); the official converter's
    Grappler also fuses each bias and ReLU6 into its convolution (_FusedConv2D), which our
    Graph models do not yet, so theirs has fewer nodes."""
    import subprocess  # noqa: PLC0415
    model = mobilenet_v2(64)
    saved = str(tmp_path / "saved")
    tf.saved_model.save(model, saved)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)  # the official converter must not see tensorlite
    proc = subprocess.run([_official_converter(), "--input_format", "tf_saved_model",
                           "--output_format", "tfjs_graph_model", saved,
                           str(tmp_path / "official")], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ours = graph_model.convert_saved_model(saved, str(tmp_path / "ours"))
    theirs = json.loads((tmp_path / "official" / "model.json").read_text())
    assert "Mul" not in ops_of(ours) and ops_of(ours).count("Conv2D") == 35
    x = np.random.default_rng(9).uniform(-1, 1, size=(2, 64, 64, 3)).astype("float32")
    (official_out,) = tfjs_execute(str(tmp_path / "official"), {"inputs": x}).values()
    (our_out,) = tfjs_execute(str(tmp_path / "ours"), {"inputs": x}).values()
    want = model(x, training=False).numpy()
    assert_close(official_out, want)
    assert_close(our_out, official_out)
