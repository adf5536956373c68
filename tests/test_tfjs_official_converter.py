"""The official `tensorflowjs` pip converter beside tensorlite's: it converts tensorlite's
SavedModels to TF.js Graph models that TF.js runs to tensorlite's predictions (and to what our
own Layers conversion gives in TF.js), and it reads tensorlite's TF.js Layers models back into
real tf_keras, whose .h5 tensorlite then loads with the same predictions.

tensorflowjs 4.22 cannot share the interop venv (it downgrades TensorFlow to 2.19), so it lives
in its own: tests/js/setup_tfjs_official_venv.sh makes `.venv-tfjs-official`, or set
TENSORLITE_TFJS_CONVERTER to a tensorflowjs_converter. Without one these tests skip, saying so.
"""
import os
import subprocess

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.js as tfjs
from tests.js_runner import ROOT, needs_node, run_node
from tests.test_tfjs_layers import (_close, _inputs, bn_dropout_model, fitted_cifar_cnn,
                                    rnn_zoo, text_classifier, tfjs_predict)


def _official():
    path = os.environ.get("TENSORLITE_TFJS_CONVERTER") or str(
        ROOT / ".venv-tfjs-official" / "bin" / "tensorflowjs_converter")
    return path if os.path.exists(path) else None


pytestmark = [needs_node, pytest.mark.skipif(
    _official() is None, reason="the official tensorflowjs converter is not installed: run "
    "tests/js/setup_tfjs_official_venv.sh (or set TENSORLITE_TFJS_CONVERTER)")]


def official(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)  # the official converter must not see tensorlite
    proc = subprocess.run([_official(), *map(str, args)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]


def graph_predict(model_json, x):
    out = run_node("predict_graph.js", {"model": str(model_json), "inputs": [x.tolist()]})
    out = out["outputs"][0]
    return np.array(out["values"], np.float32).reshape(out["shape"])


@pytest.mark.parametrize("kind", ["cnn", "bn"])
def test_official_graph_model_of_our_saved_model_runs_in_tfjs(tmp_path, kind):
    model = fitted_cifar_cnn() if kind == "cnn" else bn_dropout_model()
    x = _inputs(kind)
    model.save(str(tmp_path / "saved"))
    official("--input_format", "tf_saved_model", "--output_format", "tfjs_graph_model",
             tmp_path / "saved", tmp_path / "graph")
    ours = tfjs.converters.save_keras_model(model, str(tmp_path / "layers"))
    expected = model.predict(x, verbose=0)
    from_graph = graph_predict(tmp_path / "graph" / "model.json", x)
    _close(from_graph, expected)
    _close(tfjs_predict(ours, x)[0], from_graph)  # ours and theirs agree in TF.js


@pytest.mark.parametrize("build", [bn_dropout_model, text_classifier, rnn_zoo],
                         ids=["bn", "lstm", "bidirectional"])
def test_official_converter_reads_our_layers_model_into_tf_keras(tmp_path, build):
    model = build()
    ours = tfjs.converters.save_keras_model(model, str(tmp_path / "web"))
    official("--input_format", "tfjs_layers_model", "--output_format", "keras", ours,
             tmp_path / "back.h5")  # tf_keras 2.19 rebuilds our topology, loads our weights
    again = tf.keras.models.load_model(str(tmp_path / "back.h5"), compile=False)
    x = _inputs("text") if build is text_classifier else np.random.default_rng(0).normal(
        size=(3, *model.input_shape[1:])).astype("float32")
    _close(again.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
