"""tensorlite.transform (tf.Transform's API) on Apache Beam: analyzer results against NumPy,
the transform graph (a SavedModel with the results baked in) applying exactly the transform
the pipeline applied, a Keras model exported once with it and served by the model server
on raw features, and real TensorFlow loading the transform graph with the same outputs."""
import json
import os
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

pytest.importorskip("apache_beam")

import tensorlite as tf  # noqa: E402
import tensorlite.transform as tft  # noqa: E402
import tensorlite.transform.beam as tft_beam  # noqa: E402
from tensorlite.transform import graph  # noqa: E402
from tensorlite.transform.tf_metadata import dataset_metadata, schema_utils  # noqa: E402

FEATURE_SPEC = {"x": tf.io.FixedLenFeature([], tf.float32),
                "n": tf.io.FixedLenFeature([], tf.int64),
                "s": tf.io.FixedLenFeature([], tf.string)}
WORDS = ["apple", "pear", "fig", "kiwi", "plum"]


def _raw(count=200, seed=0):
    rng = np.random.default_rng(seed)
    return [{"x": float(rng.normal(3.0, 2.0)), "n": int(rng.integers(0, 50)),
             "s": WORDS[min(int(rng.exponential(1.2)), 4)]} for _ in range(count)]


def _metadata(spec=None):
    return dataset_metadata.DatasetMetadata(
        schema_utils.schema_from_feature_spec(spec or FEATURE_SPEC))


def preprocessing_fn(inputs):
    x, n, s = inputs["x"], inputs["n"], inputs["s"]
    return {"x_z": tft.scale_to_z_score(x), "n_01": tft.scale_to_0_1(n),
            "s_id": tft.compute_and_apply_vocabulary(s, vocab_filename="fruit"),
            "s_top2": tft.compute_and_apply_vocabulary(s, top_k=2, num_oov_buckets=1),
            "x_bucket": tft.bucketize(x, 4), "s_hash": tft.hash_strings(s, 10),
            # zeros_like(x) + c, not tf.fill(tf.shape(x), c): a loaded tensorlite SavedModel
            # keeps the traced batch size of tf.fill's shape (a tensorlite bug, not ours)
            "x_mean": tf.zeros_like(x) + tft.mean(x), "n_max": tf.zeros_like(n) + tft.max(n),
            "x_var": tf.zeros_like(x) + tft.var(x), "n_min": tf.zeros_like(n) + tft.min(n)}


def _analyze_and_transform(raw, fn=preprocessing_fn, tmp=None):
    """tmp: a directory the test owns (pytest's tmp_path), for the transform graph."""
    with tft_beam.Context(temp_dir=tmp):
        (data, metadata), transform_fn = (raw, _metadata()) | \
            tft_beam.AnalyzeAndTransformDataset(fn)
        _ = transform_fn | tft_beam.WriteTransformFn(os.path.join(tmp, "out"))
    return data, metadata, os.path.join(tmp, "out")


@pytest.fixture(scope="module")
def transformed(tmp_path_factory):
    raw = _raw()
    data, metadata, out = _analyze_and_transform(raw, tmp=str(tmp_path_factory.mktemp("tft")))
    return raw, data, metadata, out


def _column(rows, name):
    return np.array([r[name] for r in rows])


def test_analyzer_results_equal_numpy(transformed):
    raw, data, _, _ = transformed
    x, n, s = (_column(raw, k) for k in ("x", "n", "s"))
    x32 = x.astype(np.float32)
    assert len(data) == len(raw)
    np.testing.assert_allclose(_column(data, "x_z"), (x32 - x32.mean()) / x32.std(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(_column(data, "n_01"), (n - n.min()) / (n.max() - n.min()),
                               rtol=1e-6)
    assert _column(data, "x_mean")[0] == pytest.approx(x32.astype(np.float64).mean(), rel=1e-6)
    assert _column(data, "x_var")[0] == pytest.approx(x32.astype(np.float64).var(), rel=1e-5)
    assert (_column(data, "n_min")[0], _column(data, "n_max")[0]) == (n.min(), n.max())
    words, counts = np.unique(s, return_counts=True)
    ranked = [w for _, w in sorted(zip(counts, words), reverse=True)]  # ties: larger first
    assert [ranked.index(w) for w in s] == _column(data, "s_id").tolist()
    top2 = [ranked.index(w) if ranked.index(w) < 2 else 2 for w in s]
    assert _column(data, "s_top2").tolist() == top2
    bounds = np.quantile(x32, [0.25, 0.5, 0.75], method="lower")
    assert _column(data, "x_bucket").tolist() == np.searchsorted(bounds, x32, "right").tolist()
    np.testing.assert_array_equal(_column(data, "s_hash"),
                                  tf.strings.to_hash_bucket_fast(s.astype(object), 10).numpy())


def test_transform_output_files_and_layer(transformed):
    raw, data, metadata, out = transformed
    output = tft.TFTransformOutput(out)
    assert output.vocabulary_by_name("fruit")[:2] == [b"apple", b"pear"]
    assert sorted(output.raw_feature_spec()) == ["n", "s", "x"]
    assert output.transformed_feature_spec() == metadata.feature_spec
    assert output.transformed_feature_spec()["s_id"].dtype == tf.int64
    layer = output.transform_features_layer()
    batch = {k: tf.constant(_column(raw, k)) for k in ("x", "n", "s")}
    result = layer(batch)
    for name in ("x_z", "n_01", "s_id", "s_top2", "x_bucket", "s_hash"):
        np.testing.assert_array_equal(result[name].numpy(), _column(data, name), err_msg=name)
    unseen = layer({"x": tf.constant([1e6]), "n": tf.constant([10**6], tf.int64),
                    "s": tf.constant(["durian"])})
    assert unseen["s_id"].numpy().tolist() == [-1] and unseen["s_top2"].numpy().tolist() == [2]
    assert unseen["x_bucket"].numpy().tolist() == [3]


def nested_fn(inputs):
    """A second-phase analyzer: the z-score of a bucket id (needs the quantiles first)."""
    bucket = tft.bucketize(inputs["x"], 5)
    return {"bucket_z": tft.scale_to_z_score(tf.cast(bucket, tf.float32)),
            "bucket": bucket}


def test_analyzers_that_depend_on_analyzers_run_in_phases(tmp_path):
    phases, kinds, _ = graph.plan(nested_fn, FEATURE_SPEC)
    assert phases == [[0], [1]] and kinds[0][0] == "quantiles" and kinds[1][0] == "mean_var"
    raw = _raw(300, seed=1)
    data, _, _ = _analyze_and_transform(raw, nested_fn, tmp=str(tmp_path))
    bucket = _column(data, "bucket").astype(np.float32)
    assert sorted(set(bucket.tolist())) == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(_column(data, "bucket_z"), (bucket - bucket.mean()) / bucket.std(),
                               rtol=1e-5, atol=1e-6)


def test_csv_record_batches_give_the_same_transform(tmp_path):
    import apache_beam as beam
    raw = _raw(150, seed=2)
    path = tmp_path / "raw.csv"
    path.write_text("x,n,s\n" + "".join(f"{r['x']!r},{r['n']},{r['s']}\n" for r in raw))
    expected, _, _ = _analyze_and_transform(raw, tmp=str(tmp_path))
    out = tmp_path / "batches.json"
    with tft_beam.Context(temp_dir=str(tmp_path)), beam.Pipeline() as p:
        dataset = tft_beam.ReadCsvBatches(p, str(path), FEATURE_SPEC)
        (batches, _), _ = dataset | tft_beam.AnalyzeAndTransformDataset(preprocessing_fn)
        _ = (batches | beam.Map(lambda b: {k: v.tolist() for k, v in b.items()})
             | beam.combiners.ToList() | beam.Map(lambda rows: out.write_text(json.dumps(rows))))
    rows = json.loads(out.read_text())
    got = {k: sum((r[k] for r in rows), []) for k in rows[0]}
    for name in ("x_z", "s_id", "x_bucket", "n_01"):
        np.testing.assert_allclose(sorted(got[name]), sorted(_column(expected, name)),
                                   rtol=1e-6, err_msg=name)


def test_errors_are_clear(tmp_path):
    with pytest.raises(RuntimeError, match="inside a preprocessing_fn"):
        tft.mean(tf.constant([1.0]))
    analyze = tft_beam.AnalyzeDataset(preprocessing_fn)
    with pytest.raises(NotImplementedError, match="FixedLenFeature"):
        with tft_beam.Context(temp_dir=str(tmp_path)):
            _ = ([{"v": [1.0]}], _metadata_var()) | analyze
    # the pipeline Beam made for the in-memory data never ran: its directory is gone too
    assert analyze.pipeline is not None and not os.path.exists(analyze.pipeline.local_tempdir)

    def uses_tfidf(inputs):  # tft.tfidf takes a 2-D SparseTensor of term ids
        return {"t": tft.tfidf(inputs["n"], 10)}
    with pytest.raises(ValueError, match="tfidf: the input must be a 2-D SparseTensor"):
        _analyze_and_transform(_raw(10), uses_tfidf, tmp=str(tmp_path))


def _metadata_var():
    meta = _metadata({"v": tf.io.FixedLenFeature([], tf.float32)})
    meta._schema.feature[0].shape.dim.add(size=2)
    return meta


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serving_fn(inputs):
    return {"x_z": tft.scale_to_z_score(inputs["x"]),
            "s_id": tft.compute_and_apply_vocabulary(inputs["s"], num_oov_buckets=1)}


def export_model_with_transform(tmp_path):
    """Trains a Keras model on transformed data and exports it once with the transform
    layer: its serving signature takes the raw features (a label column is not needed)."""
    raw = _raw(300, seed=3)
    data, _, out = _analyze_and_transform(raw, serving_fn, tmp=str(tmp_path))
    output = tft.TFTransformOutput(out)
    tf.random.set_seed(1)
    x_z = tf.keras.Input(shape=(1,), name="x_z")
    s_id = tf.keras.Input(shape=(), dtype=tf.int64, name="s_id")
    emb = tf.keras.layers.Flatten()(tf.keras.layers.Embedding(6, 3)(s_id))
    hidden = tf.keras.layers.Dense(4, activation="relu")(
        tf.keras.layers.Concatenate()([x_z, emb]))
    model = tf.keras.Model({"x_z": x_z, "s_id": s_id},
                           tf.keras.layers.Dense(1, activation="sigmoid")(hidden))
    model.compile("adam", "binary_crossentropy")
    labels = np.array([r["n"] > 25 for r in raw], np.float32)
    model.fit({"x_z": _column(data, "x_z")[:, None].astype(np.float32),
               "s_id": _column(data, "s_id")}, labels, epochs=2, verbose=0)
    model.tft_layer = output.transform_features_layer()

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x"),
                                  tf.TensorSpec([None], tf.string, name="s")])
    def serve(x, s):
        t = model.tft_layer({"x": x, "s": s})
        return {"probability": model({"x_z": tf.expand_dims(t["x_z"], -1),
                                      "s_id": t["s_id"]})}
    tf.saved_model.save(model, str(tmp_path / "serving" / "1"),
                        signatures={"serving_default": serve})
    return out, serve


def predict_over_rest(base_path, name, instances):
    """Serves base_path/<version> with tensorlite's model server on 127.0.0.1 and POSTs
    TF Serving's REST predict request; returns the response."""
    requests = pytest.importorskip("requests")
    pytest.importorskip("starlette")
    import uvicorn
    from tensorlite.serving.config import ModelSpec
    from tensorlite.serving.limits import RestLimits, uvicorn_config
    from tensorlite.serving.rest_app import build_app
    from tensorlite.serving.servable import load_servable
    from tensorlite.serving.server import ModelServer
    server = ModelServer([ModelSpec(name, str(base_path), ("latest", 1), {})], load_servable,
                         poll_seconds=0.2)
    server.start()
    port = _free_port()
    limits = RestLimits()
    uv = uvicorn.Server(uvicorn_config(build_app(server, limits=limits), limits, "127.0.0.1",
                                       port, log_level="error"))
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not uv.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        return requests.post(f"http://127.0.0.1:{port}/v1/models/{name}:predict",
                             json={"instances": instances}, timeout=60)
    finally:
        uv.should_exit = True
        thread.join(timeout=20)
        server.stop()


def test_model_server_predicts_from_raw_features(tmp_path):
    _, serve = export_model_with_transform(tmp_path)
    instances = [{"x": 1.5, "s": "fig"}, {"x": -2.0, "s": "durian"}]
    r = predict_over_rest(tmp_path / "serving", "fruit", instances)
    assert r.status_code == 200, r.text
    expected = serve(tf.constant([1.5, -2.0]), tf.constant(["fig", "durian"]))
    np.testing.assert_allclose(np.array(r.json()["predictions"]),
                               expected["probability"].numpy(), rtol=1e-6)


_TF_SIDE = """
import json, sys, numpy as np, tensorflow as tf
d = sys.argv[1]
inputs = json.load(open(d + "/inputs.json"))
m = tf.saved_model.load(d + "/t/out/transform_fn")
out = m.signatures["serving_default"](x=tf.constant(inputs["x"], tf.float32),
    n=tf.constant(inputs["n"], tf.int64), s=tf.constant(inputs["s"]))
served = tf.saved_model.load(d + "/model/serving/1").signatures["serving_default"](
    x=tf.constant(inputs["x"], tf.float32), s=tf.constant(inputs["s"]))
res = {k: v.numpy().tolist() for k, v in out.items()}
res["probability"] = served["probability"].numpy().tolist()
print(json.dumps(res))
"""


@pytest.mark.interop
def test_real_tensorflow_applies_the_same_transform(tmp_path):
    from tests.interop.conftest import tf_python
    python = tf_python()
    if python is None:
        pytest.skip("real TensorFlow is not installed (TENSORLITE_TF_PYTHON)")
    _, _, out = _analyze_and_transform(_raw(120, seed=4), tmp=str(tmp_path / "t"))
    (tmp_path / "model").mkdir()
    _, serve = export_model_with_transform(tmp_path / "model")
    raw = _raw(20, seed=5) + [{"x": 99.0, "n": 1000, "s": "durian"}]
    inputs = {k: _column(raw, k).tolist() for k in ("x", "n", "s")}
    (tmp_path / "inputs.json").write_text(json.dumps(inputs))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([python, "-c", _TF_SIDE, str(tmp_path)], capture_output=True,
                          text=True, timeout=400, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    ours = tft.TFTransformOutput(out).transform_features_layer()(
        {k: tf.constant(inputs[k], FEATURE_SPEC[k].dtype) for k in ("x", "n", "s")})
    assert sorted(got) == sorted(list(ours) + ["probability"])
    for name, value in ours.items():  # ids exactly; floats within TF's division's 1 ulp
        if value.dtype == tf.int64:
            np.testing.assert_array_equal(np.array(got[name]), value.numpy(), err_msg=name)
        else:
            np.testing.assert_allclose(np.array(got[name]), value.numpy(), rtol=2.5e-7,
                                       atol=1e-7, err_msg=name)
    expected = serve(tf.constant(inputs["x"], tf.float32), tf.constant(inputs["s"]))
    np.testing.assert_allclose(got["probability"], expected["probability"].numpy(), rtol=1e-5)
