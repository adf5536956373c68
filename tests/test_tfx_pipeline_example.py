"""examples/tfx_pipeline.py end to end on small data: the artifacts of every step, a blessed
model pushed to serving/1 that tensorlite's model server serves from raw features, and a
second, worse run that is not blessed and not pushed."""
import importlib.util
import os

import numpy as np
import pytest

pytest.importorskip("apache_beam")
pytest.importorskip("pandas")

import tensorlite as tf  # noqa: E402
import tensorlite.data_validation as tfdv  # noqa: E402
from tests.test_tfx_transform import predict_over_rest  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example():
    spec = importlib.util.spec_from_file_location(
        "tfx_pipeline", os.path.join(ROOT, "examples", "tfx_pipeline.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pipeline_blesses_pushes_and_serves(tmp_path, capsys):
    example = _example()
    work = tmp_path / "run"
    assert example.main(["--workdir", str(work), "--rows", "3000", "--epochs", "3"]) == 0
    out = capsys.readouterr().out
    assert "BLESSED: pushed as version 1" in out
    schema = tfdv.load_schema_text(str(work / "schema" / "schema.pbtxt"))
    assert set(tfdv.get_domain(schema, "education").value) == set(example.EDUCATION)
    assert len(tfdv.load_anomalies_text(str(work / "anomalies.pbtxt")).anomaly_info) == 0
    assert (work / "transform" / "transform_fn" / "assets" / "education").exists()
    assert (work / "evaluation" / "BLESSED").exists()
    served = tf.saved_model.load(str(work / "serving" / "1")).signatures["serving_default"]
    raw = {"age": [25, 61], "hours": [20.0, 55.5], "education": ["HS-grad", "Doctorate"],
           "city": ["SF", "Paris"]}
    expected = served(age=tf.constant(raw["age"], tf.int64), hours=tf.constant(raw["hours"]),
                      education=tf.constant(raw["education"]),
                      city=tf.constant(raw["city"]))["probability"].numpy()
    assert expected[1, 0] > expected[0, 0]  # older, longer hours, a doctorate: likelier
    instances = [{k: raw[k][i] for k in raw} for i in range(2)]
    r = predict_over_rest(work / "serving", "census", instances)
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(np.array(r.json()["predictions"]), expected, rtol=1e-6)
    # a second run trained for one epoch on fewer rows must not beat the served model
    assert example.main(["--workdir", str(work), "--rows", "400", "--epochs", "1"]) == 0
    assert "NOT BLESSED" in capsys.readouterr().out
    assert sorted(os.listdir(work / "serving")) == ["1"]
    assert (work / "evaluation" / "NOT_BLESSED").exists()
