"""`tensorlite-tfjs-converter` / `python -m tensorlite.js`: tensorflowjs_converter's flags,
with the files it writes judged by the real TF.js in Node (and Keras files it writes by
tensorlite's load_model)."""
import importlib.util
import json
import os
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import tensorlite as tf
from tests.js_runner import ROOT, needs_node, run_node
from tests.test_tfjs_layers import _close, _dequantized_twin, tfjs_predict

FLAGS = ["--input_format", "--output_format", "--signature_name", "--saved_model_tags",
         "--weight_shard_size_bytes", "--quantize_float16", "--quantize_uint8",
         "--quantize_uint16"]


def converter(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "tensorlite.js", *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=env)


def _model():
    tf.random.set_seed(9)
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(8, 3, activation="relu", input_shape=(12, 12, 1), name="conv"),
        tf.keras.layers.MaxPooling2D(), tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(16, activation="relu", name="hidden"),
        tf.keras.layers.Dense(4, activation="softmax", name="out")])


def _x():
    return np.random.default_rng(1).normal(size=(3, 12, 12, 1)).astype("float32")


def test_help_explains_every_flag():
    out = converter("--help")
    assert out.returncode == 0
    for flag in FLAGS:
        assert flag in out.stdout
    for fmt in ("keras_saved_model", "tf_saved_model", "tfjs_layers_model", "tfjs_graph_model"):
        assert fmt in out.stdout


def test_console_script_is_declared_and_importable():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, func = scripts["tensorlite-tfjs-converter"].split(":")
    assert callable(getattr(importlib.import_module(module), func))


@needs_node
@pytest.mark.parametrize("ending", [".h5", ".keras"])
def test_keras_file_to_layers_model_sharded_and_quantized(tmp_path, ending):
    model = _model()
    model.save(str(tmp_path / f"m{ending}"))
    out = converter("--input_format", "keras", "--weight_shard_size_bytes", "2048",
                    "--quantize_uint8", "conv/*,hidden/kernel", tmp_path / f"m{ending}",
                    tmp_path / "web")
    assert out.returncode == 0, out.stderr
    data = json.load(open(tmp_path / "web" / "model.json"))
    assert data["format"] == "layers-model"
    group = data["weightsManifest"][0]
    assert len(group["paths"]) > 1
    assert {w["name"]: w.get("quantization", {}).get("dtype") for w in group["weights"]} == {
        "conv/kernel": "uint8", "conv/bias": "uint8", "hidden/kernel": "uint8",
        "hidden/bias": None, "out/kernel": None, "out/bias": None}
    got, _ = tfjs_predict(tmp_path / "web" / "model.json", _x())
    _close(got, _dequantized_twin(model, str(tmp_path / "web" / "model.json"))
           .predict(_x(), verbose=0))


@needs_node
def test_keras_saved_model_to_layers_model(tmp_path):
    model = _model()
    model.save(str(tmp_path / "sm"))
    out = converter("--input_format", "keras_saved_model", tmp_path / "sm", tmp_path / "web")
    assert out.returncode == 0, out.stderr
    got, _ = tfjs_predict(tmp_path / "web" / "model.json", _x())
    _close(got, model.predict(_x(), verbose=0))


@needs_node
@pytest.mark.parametrize("target", ["tuned.h5", "tuned.keras", "tuned_savedmodel"])
def test_tfjs_trained_model_to_keras(tmp_path, target):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 6)).astype("float32")
    y = (x.sum(1) > 0).astype("int32")
    web = tmp_path / "web"
    saved = run_node("train_and_save.js", {"kind": "mlp", "dir": str(web), "x": x.tolist(),
                                           "y": y.tolist()})
    out_format = "keras_saved_model" if "." not in target else "keras"
    out = converter("--input_format", "tfjs_layers_model", "--output_format", out_format,
                    web / "model.json", tmp_path / target)
    assert out.returncode == 0, out.stderr
    model = tf.keras.models.load_model(str(tmp_path / target))
    _close(model.predict(x, verbose=0), np.array(saved["predictions"], np.float32))


def test_layers_model_requantized_by_layers_to_layers(tmp_path):
    model = _model()
    from tensorlite.js import converters
    converters.save_keras_model(model, str(tmp_path / "a"))
    out = converter("--input_format", "tfjs_layers_model", "--output_format",
                    "tfjs_layers_model", tmp_path / "a" / "model.json", tmp_path / "b",
                    "--quantize_float16")  # alone (after the paths): every weight
    assert out.returncode == 0, out.stderr
    specs = json.load(open(tmp_path / "b" / "model.json"))["weightsManifest"][0]["weights"]
    assert all(s["quantization"]["dtype"] == "float16" for s in specs)


def test_unsupported_layer_fails_naming_it(tmp_path):
    inputs = tf.keras.Input(shape=(4,))
    outputs = tf.keras.layers.Subtract(name="delta")([inputs, inputs])
    tf.keras.Model(inputs, outputs).save(str(tmp_path / "m.keras"))
    out = converter("--input_format", "keras", tmp_path / "m.keras", tmp_path / "web")
    assert out.returncode == 1
    assert "delta" in out.stderr and "Subtract" in out.stderr


def test_saved_model_cannot_become_a_layers_model(tmp_path):
    out = converter("--input_format", "tf_saved_model", "--output_format",
                    "tfjs_layers_model", tmp_path, tmp_path / "web")
    assert out.returncode == 1 and "tfjs_graph_model" in out.stderr


def test_conflicting_quantization_is_an_error(tmp_path):
    _model().save(str(tmp_path / "m.h5"))
    out = converter("--input_format", "keras", "--quantize_uint8", "hidden/*",
                    "--quantize_float16", "*/kernel", tmp_path / "m.h5", tmp_path / "web")
    assert out.returncode == 1 and "hidden/kernel" in out.stderr
