"""TF1 SavedModels (classification / regression signatures over a tf.parse_example input,
written by real TensorFlow's `tf.compat.v1.saved_model.Builder`:
tests/fixtures/serving/make_tf1_fixtures.py) loaded by tensorlite and served with TF
Serving's :classify and :regress over real sockets, answers compared with TensorFlow's."""
import base64
import json
import os
import shutil

import numpy as np
import pytest

pytest.importorskip("starlette")
requests = pytest.importorskip("requests")

import tensorlite as tf  # noqa: E402
from tensorlite.serving.config import BatchingParameters, ModelSpec  # noqa: E402
from tests.test_serving import _Running  # noqa: E402

TF1 = os.path.join(os.path.dirname(__file__), "fixtures", "serving", "tf1")
with open(os.path.join(TF1, "expected.json"), encoding="utf-8") as _f:
    EXPECTED = json.load(_f)


@pytest.fixture(scope="module", params=[None, BatchingParameters(max_batch_size=8,
                                                                  batch_timeout_micros=1000)],
                ids=["unbatched", "batched"])
def served(request):
    running = _Running([ModelSpec("linear", os.path.join(TF1, "linear"))],
                       batching=request.param)
    yield running
    running.close()


def _example_bytes(features):
    from tensorlite.train import example as ex
    feats = ex.Features()
    feats.feature["x"].float_list.value.extend(features["x"])
    feats.feature["k"].int64_list.value.extend(features["k"])
    return ex.Example(features=feats).SerializeToString()


@pytest.mark.parametrize("model", ["linear", "linear_ref"])  # resource / VariableV2 variables
def test_tf1_saved_model_loads_and_runs_its_signatures(model):
    loaded = tf.saved_model.load(os.path.join(TF1, model, "1"))
    assert sorted(loaded.signatures) == ["predict", "regress", "serving_default"]
    batch = tf.constant(np.array([_example_bytes(e) for e in EXPECTED["examples"]], object))
    out = loaded.signatures["serving_default"](inputs=batch)
    np.testing.assert_allclose(out["scores"].numpy(), EXPECTED["scores"], rtol=1e-5)
    assert out["classes"].numpy()[1].tolist() == [b"cat", b"dog", b"eel"]
    value = loaded.signatures["regress"](inputs=batch)["outputs"].numpy()
    np.testing.assert_allclose(value[:, 0], EXPECTED["values"], rtol=1e-5, atol=1e-6)


def test_tf1_saved_model_without_its_variables_is_data_loss(tmp_path):
    shutil.copytree(os.path.join(TF1, "linear", "1"), tmp_path / "1")
    os.remove(tmp_path / "1" / "variables" / "variables.index")
    with pytest.raises(tf.errors.DataLossError, match="incomplete"):
        tf.saved_model.load(str(tmp_path / "1"))


def test_classify_answers_as_tf_serving_documents(served):
    r = requests.post(f"{served.url}/v1/models/linear:classify",
                      json={"examples": EXPECTED["examples"]})
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    assert len(result) == 3
    for row, scores in zip(result, EXPECTED["scores"]):
        assert [label for label, _ in row] == EXPECTED["classes"]
        np.testing.assert_allclose([s for _, s in row], scores, rtol=1e-5)


def test_regress_with_context_features(served):
    """`context` features join every example, as TF Serving's request form defines."""
    examples = [{"x": e["x"]} for e in EXPECTED["examples"]]
    r = requests.post(f"{served.url}/v1/models/linear/versions/1:regress",
                      json={"signature_name": "regress", "examples": examples[:1],
                            "context": {"k": EXPECTED["examples"][0]["k"]}})
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(r.json()["result"], EXPECTED["values"][:1], rtol=1e-5)


def test_predict_on_serialized_examples_in_b64(served):
    rows = [{"b64": base64.b64encode(_example_bytes(e)).decode()}
            for e in EXPECTED["examples"]]
    r = requests.post(f"{served.url}/v1/models/linear:predict",
                      json={"signature_name": "predict", "instances": rows})
    assert r.status_code == 200, r.text
    got = r.json()["predictions"]
    np.testing.assert_allclose([p["scores"] for p in got], EXPECTED["scores"], rtol=1e-5)
    np.testing.assert_allclose([p["value"][0] for p in got], EXPECTED["values"], rtol=1e-5)


def test_metadata_names_the_graph_tensors_and_methods(served):
    sigs = requests.get(f"{served.url}/v1/models/linear/metadata").json()[
        "metadata"]["signature_def"]["signature_def"]
    assert sigs["serving_default"]["method_name"] == "tensorflow/serving/classify"
    assert sigs["regress"]["method_name"] == "tensorflow/serving/regress"
    assert sigs["serving_default"]["inputs"]["inputs"]["name"] == "tf_example:0"
    assert sigs["serving_default"]["outputs"]["scores"]["dtype"] == "DT_FLOAT"


@pytest.mark.parametrize("path, body, pattern", [
    ("linear:regress", {"examples": [{"x": [1.0, 2.0, 3.0]}]}, "method_name"),
    ("linear:classify", {"examples": [{"x": [1.0, 2.0]}]}, "x"),
    ("linear:classify", {"examples": []}, "non-empty"),
    ("linear:classify", {"examples": [{"x": [1.0, 2.0, 3.0]}], "context": {"x": [1.0]}},
     "both 'context' and an example"),
])
def test_bad_classify_and_regress_requests_are_400(served, path, body, pattern):
    r = requests.post(f"{served.url}/v1/models/{path}", json=body)
    assert r.status_code == 400, r.text
    assert set(r.json()) == {"error"}
    assert pattern in r.json()["error"]
    ok = requests.post(f"{served.url}/v1/models/linear:classify",
                       json={"examples": EXPECTED["examples"][:1]})
    assert ok.status_code == 200, "the server keeps serving"
