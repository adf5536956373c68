"""Real TFDV reads tensorlite's statistics and schema files and reports the same anomalies.

TFDV (tensorflow-data-validation 1.16, which needs TensorFlow 2.16, so it does not install
beside the interop venv's TensorFlow 2.21) runs in a virtual environment of its own:
$TENSORLITE_TFDV_PYTHON, else .venv-tfdv/bin/python in the repository
(`python3 -m venv .venv-tfdv && .venv-tfdv/bin/pip install tensorflow-data-validation`).
Without it these tests skip."""
import json
import os
import subprocess

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("apache_beam")

import tensorlite.data_validation as tfdv  # noqa: E402

pytestmark = pytest.mark.interop
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_TFDV_SIDE = """
import json, sys
import tensorflow_data_validation as tfdv
from tensorflow_metadata.proto.v0 import anomalies_pb2
d = sys.argv[1]
train = tfdv.load_statistics(d + "/train_stats")
evaluation = tfdv.load_stats_text(d + "/eval_stats.pbtxt")
schema = tfdv.load_schema_text(d + "/schema.pbtxt")
anomalies = tfdv.validate_statistics(evaluation, schema, previous_statistics=train)
second = tfdv.validate_statistics(tfdv.load_statistics(d + "/eval2_stats"), schema,
                                  previous_statistics=train)
inferred = tfdv.infer_schema(train)
names = anomalies_pb2.AnomalyInfo.Type.Name
print(json.dumps({
    "anomalies": {k: sorted(names(r.type) for r in v.reason)
                  for k, v in anomalies.anomaly_info.items()},
    "second": {k: sorted(names(r.type) for r in v.reason)
               for k, v in second.anomaly_info.items()},
    "num_examples": train.datasets[0].num_examples,
    "inferred": {f.name: [f.type, f.presence.min_fraction, f.domain]
                 for f in inferred.feature}}))
"""


def _tfdv_python():
    path = os.environ.get("TENSORLITE_TFDV_PYTHON") or os.path.join(ROOT, ".venv-tfdv", "bin",
                                                                    "python")
    if not os.path.exists(path):
        return None
    probe = subprocess.run([path, "-c", "import tensorflow_data_validation"],
                           capture_output=True, timeout=300)
    return path if probe.returncode == 0 else None


def _frame(n, seed, cities, shift=0.0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 90, n),
                         "income": rng.normal(50 + shift, 10, n).round(2),
                         "city": rng.choice(cities, n), "label": rng.integers(0, 2, n)})


def test_tfdv_reads_our_files_and_finds_the_same_anomalies(tmp_path):
    python = _tfdv_python()
    if python is None:
        pytest.skip("no TFDV: set TENSORLITE_TFDV_PYTHON to a Python with "
                    "tensorflow-data-validation (it needs its own venv, TF 2.16)")
    train_df = _frame(2000, 0, ["NYC", "SF", "LA"])
    eval_df = _frame(500, 1, ["NYC", "SF", "Boston"]).drop(columns=["label"])
    eval_df["extra"] = 1.5
    train_df.to_csv(tmp_path / "train.csv", index=False)
    eval_df.to_csv(tmp_path / "eval.csv", index=False)
    train = tfdv.generate_statistics_from_csv(str(tmp_path / "train.csv"),
                                              output_path=str(tmp_path / "train_stats"))
    evaluation = tfdv.generate_statistics_from_csv(str(tmp_path / "eval.csv"))
    schema = tfdv.infer_schema(train)
    tfdv.get_feature(schema, "age").int_domain.max = 80
    tfdv.get_feature(schema, "city").drift_comparator.infinity_norm.threshold = 0.01
    tfdv.get_feature(schema, "income").drift_comparator.jensen_shannon_divergence \
        .threshold = 0.1
    eval2 = _frame(500, 2, ["NYC", "SF", "LA"], shift=12.0)
    eval2["age"] = eval2["age"] + 0.5  # floats where the schema says INT
    eval2.loc[::3, "income"] = np.nan  # income was always present in train
    eval2.to_csv(tmp_path / "eval2.csv", index=False)
    second = tfdv.validate_statistics(tfdv.generate_statistics_from_csv(
        str(tmp_path / "eval2.csv"), output_path=str(tmp_path / "eval2_stats")), schema,
        previous_statistics=train)
    tfdv.write_stats_text(evaluation, str(tmp_path / "eval_stats.pbtxt"))
    tfdv.write_schema_text(schema, str(tmp_path / "schema.pbtxt"))
    ours = tfdv.validate_statistics(evaluation, schema, previous_statistics=train)
    names = tfdv.metadata_protos.AnomalyInfo.Type
    expected = {k: sorted(names.Name(r.type) for r in v.reason)
                for k, v in ours.anomaly_info.items()}
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([python, "-c", _TFDV_SIDE, str(tmp_path)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["num_examples"] == 2000
    second_expected = {k: sorted(names.Name(r.type) for r in v.reason)
                       for k, v in second.anomaly_info.items()}
    assert got["second"] == second_expected
    assert second_expected == {"age": ["UNEXPECTED_DATA_TYPE"],
                               "city": ["COMPARATOR_L_INFTY_HIGH"],
                               "income": ["COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH",
                                          "FEATURE_TYPE_LOW_FRACTION_PRESENT",
                                          "INVALID_FEATURE_SHAPE"]}
    assert got["anomalies"] == expected
    assert expected == {"label": ["SCHEMA_MISSING_COLUMN"], "extra": ["SCHEMA_NEW_COLUMN"],
                        "age": ["INT_TYPE_BIG_INT"],
                        "city": ["COMPARATOR_L_INFTY_HIGH", "ENUM_TYPE_UNEXPECTED_STRING_VALUES"]}
    inferred = {f.name: [f.type, f.presence.min_fraction, f.domain] for f in schema.feature}
    assert got["inferred"] == inferred


_TFT_SIDE = """
import json, sys, tempfile
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils
d = sys.argv[1]
raw = json.load(open(d + "/raw.json"))
spec = {"x": tf.io.FixedLenFeature([], tf.float32), "n": tf.io.FixedLenFeature([], tf.int64),
        "s": tf.io.FixedLenFeature([], tf.string)}
metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(spec))
def preprocessing_fn(inputs):
    return {"x_z": tft.scale_to_z_score(inputs["x"]), "n_01": tft.scale_to_0_1(inputs["n"]),
            "s_id": tft.compute_and_apply_vocabulary(inputs["s"]),
            "x_b": tft.bucketize(inputs["x"], 4), "s_h": tft.hash_strings(inputs["s"], 10)}
with tft_beam.Context(temp_dir=tempfile.mkdtemp()):
    (data, _), _ = (raw, metadata) | tft_beam.AnalyzeAndTransformDataset(preprocessing_fn)
print(json.dumps([{k: getattr(v, "item", lambda: v)() for k, v in row.items()}
                  for row in data]))
"""


def preprocessing_fn(inputs):
    import tensorlite.transform as tft
    return {"x_z": tft.scale_to_z_score(inputs["x"]), "n_01": tft.scale_to_0_1(inputs["n"]),
            "s_id": tft.compute_and_apply_vocabulary(inputs["s"]),
            "x_b": tft.bucketize(inputs["x"], 4), "s_h": tft.hash_strings(inputs["s"], 10)}


def _tft_python():
    python = _tfdv_python()
    if python is None:
        return None
    probe = subprocess.run([python, "-c", "import tensorflow_transform.beam"],
                           capture_output=True, timeout=300)
    return python if probe.returncode == 0 else None


def test_tensorflow_transform_gives_the_same_values(tmp_path):
    """tf.Transform 1.16 and tensorlite on the same preprocessing_fn and data: the same
    vocabulary ids and hash buckets, z-scores and 0-1 scaling within float32 rounding,
    bucket ids equal except next to a boundary (tf.Transform's quantiles are approximate)."""
    import tensorlite as tf
    import tensorlite.transform.beam as tft_beam
    from tensorlite.transform.tf_metadata import dataset_metadata, schema_utils
    python = _tft_python()
    if python is None:
        pytest.skip("no tensorflow-transform: set TENSORLITE_TFDV_PYTHON to a Python with "
                    "tensorflow-data-validation and tensorflow-transform")
    rng = np.random.default_rng(3)
    words = ["apple", "pear", "fig", "kiwi", "plum", "lime"]
    raw = [{"x": float(np.float32(rng.normal(3, 2))), "n": int(rng.integers(0, 40)),
            "s": words[min(int(rng.exponential(1.3)), 5)]} for _ in range(400)]
    (tmp_path / "raw.json").write_text(json.dumps(raw))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([python, "-c", _TFT_SIDE, str(tmp_path)], capture_output=True,
                          text=True, timeout=600, env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    spec = {"x": tf.io.FixedLenFeature([], tf.float32), "n": tf.io.FixedLenFeature([], tf.int64),
            "s": tf.io.FixedLenFeature([], tf.string)}
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(spec))
    with tft_beam.Context(temp_dir=str(tmp_path / "ours")):
        (ours, _), _ = (raw, metadata) | tft_beam.AnalyzeAndTransformDataset(preprocessing_fn)
    col = {k: (np.array([r[k] for r in ours]), np.array([r[k] for r in theirs]))
           for k in ("x_z", "n_01", "s_id", "x_b", "s_h")}
    np.testing.assert_array_equal(*col["s_id"])
    np.testing.assert_array_equal(*col["s_h"])
    np.testing.assert_allclose(*col["x_z"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(*col["n_01"], rtol=1e-6, atol=1e-7)
    mine, other = col["x_b"]
    assert np.abs(mine - other).max() <= 1
    assert np.mean(mine == other) >= 0.97
