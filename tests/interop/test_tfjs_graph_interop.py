"""tensorflowjs_converter's main use, judged at both ends: a SavedModel written by real
TensorFlow (tf.keras 2, tests/interop/tf_tfjs_side.py) converts with
tensorlite.js.graph_model into TF.js's Graph format, and the real TensorFlow.js (Node, cpu
backend) predicts what TensorFlow predicted."""
import json
import os
import sys

import numpy as np
import pytest

from tensorlite.js import graph_model
from tests.interop.conftest import TF_SIDE, run_tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from js_runner import needs_node, run_node  # noqa: E402

pytestmark = [pytest.mark.interop, needs_node]


def test_tensorflow_saved_model_runs_in_tfjs(tmp_path):
    facts = run_tf("write", tmp_path, script=TF_SIDE.with_name("tf_tfjs_side.py"))
    assert facts["tf_version"].startswith("2.")
    expected = np.load(tmp_path / "expected.npz")
    out = tmp_path / "web_model"
    model_json = graph_model.convert_saved_model(str(tmp_path / "saved"), str(out))
    sig = model_json["signature"]
    assert list(sig["inputs"]) == ["image"] and list(sig["outputs"]) == ["probs"]
    ops = [n["op"] for n in model_json["modelTopology"]["node"]]
    assert {"Conv2D", "DepthwiseConv2dNative", "Relu6", "MaxPool"} <= set(ops), ops
    assert {"BiasAdd", "AddV2"} & set(ops), ops  # the biases survived
    x = expected["x"]
    result = run_node("graph_model.js", {
        "model": str(out / "model.json"), "backend": "cpu",
        "inputs": {"image": {"shape": list(x.shape), "dtype": "float32",
                             "values": x.ravel().tolist()}}})
    got = result["outputs"]["probs"]
    got = np.asarray(got["values"], np.float32).reshape(got["shape"])
    want = expected["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    assert json.loads((out / "model.json").read_text())["format"] == "graph-model"
