"""The model server over real sockets on 127.0.0.1, driven as TF Serving's REST API document
drives it (plain `requests` calls): status, metadata, predict in both formats, errors in
TF Serving's form, Prometheus metrics, batching, config files, and a version swap under
load with no failed or dropped request."""
import json
import os
import re
import shutil
import socket
import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette")
requests = pytest.importorskip("requests")

from tensorlite.framework import errors as tf_errors  # noqa: E402
from tensorlite.serving.config import BatchingParameters, ModelSpec  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "serving")


def _expected(version, name="logits"):
    """TensorFlow's own outputs for inputs.npy (written with the SavedModels)."""
    return np.load(os.path.join(FIXTURES, f"expected_{version}.npz"))[name]


X = np.load(os.path.join(FIXTURES, "inputs.npy"))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Running:
    """A ModelServer and its REST app on a uvicorn server thread, on 127.0.0.1."""

    def __init__(self, specs, batching=None, poll_seconds=0.2, config_file=None,
                 config_poll_seconds=0, max_body_bytes=None):
        import uvicorn
        from tensorlite.serving.limits import RestLimits, uvicorn_config
        from tensorlite.serving.rest_app import build_app
        from tensorlite.serving.servable import load_servable
        from tensorlite.serving.server import ModelServer
        self.server = ModelServer(specs, load_servable, batching=batching,
                                  poll_seconds=poll_seconds, config_file=config_file,
                                  config_poll_seconds=config_poll_seconds)
        self.server.start()
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        limits = RestLimits(max_body_bytes=max_body_bytes or RestLimits.max_body_bytes)
        self._uv = uvicorn.Server(uvicorn_config(build_app(self.server, limits=limits), limits,
                                                 "127.0.0.1", port, log_level="error"))
        self._thread = threading.Thread(target=self._uv.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._uv.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)

    def close(self):
        self._uv.should_exit = True
        self._thread.join(timeout=20)
        self.server.stop()


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Seed 002's MLP, versions 1 and 2, as SavedModels written by real TensorFlow
    (tests/fixtures/serving/make_fixtures.py)."""
    base = tmp_path_factory.mktemp("models")
    shutil.copytree(os.path.join(FIXTURES, "mlp"), base / "mlp")
    return base


@pytest.fixture(scope="module")
def served(models):
    base = models
    running = _Running([ModelSpec("mlp", str(base / "mlp"), ("all",), {"stable": 1,
                                                                        "canary": 2})])
    yield running
    running.close()


def _x(n=3):
    return X[:n]


def test_model_status_as_tf_serving_writes_it(served):
    r = requests.get(f"{served.url}/v1/models/mlp")
    assert r.status_code == 200
    assert r.json() == {"model_version_status": [
        {"version": v, "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
        for v in ("2", "1")]}
    one = requests.get(f"{served.url}/v1/models/mlp/versions/1").json()
    assert [s["version"] for s in one["model_version_status"]] == ["1"]
    canary = requests.get(f"{served.url}/v1/models/mlp/labels/canary").json()
    assert [s["version"] for s in canary["model_version_status"]] == ["2"]


def test_metadata_signature_defs(served):
    r = requests.get(f"{served.url}/v1/models/mlp/versions/1/metadata")
    assert r.status_code == 200
    doc = r.json()
    assert doc["model_spec"] == {"name": "mlp", "signature_name": "", "version": "1"}
    sigs = doc["metadata"]["signature_def"]["signature_def"]
    default = sigs["serving_default"]
    assert default["method_name"] == "tensorflow/serving/predict"
    assert default["inputs"]["x"]["dtype"] == "DT_FLOAT"
    assert default["inputs"]["x"]["tensor_shape"] == {
        "dim": [{"size": "-1", "name": ""}, {"size": "28", "name": ""},
                {"size": "28", "name": ""}], "unknown_rank": False}
    assert default["outputs"]["logits"]["tensor_shape"]["dim"][1]["size"] == "10"
    assert set(sigs) >= {"serving_default", "probabilities"}


def test_predict_rows_and_columns_equal_tensorflow(served):
    x = _x()
    want = _expected(2)[:3]
    rows = requests.post(f"{served.url}/v1/models/mlp:predict",
                         json={"instances": x.tolist()})
    assert rows.status_code == 200
    np.testing.assert_allclose(np.array(rows.json()["predictions"]), want, rtol=1e-5,
                               atol=1e-5)
    cols = requests.post(f"{served.url}/v1/models/mlp/versions/1:predict",
                         json={"inputs": {"x": x.tolist()}})
    want1 = _expected(1)[:3]
    np.testing.assert_allclose(np.array(cols.json()["outputs"]), want1, rtol=1e-5, atol=1e-5)
    labelled = requests.post(f"{served.url}/v1/models/mlp/labels/stable:predict",
                             json={"instances": x.tolist()})
    np.testing.assert_allclose(np.array(labelled.json()["predictions"]), want1, rtol=1e-5,
                               atol=1e-5)


def test_predict_named_signature_with_several_outputs(served):
    x = _x(2)
    r = requests.post(f"{served.url}/v1/models/mlp:predict",
                      json={"signature_name": "probabilities", "instances": x.tolist()})
    assert r.status_code == 200
    preds = r.json()["predictions"]
    assert [p["classes"] for p in preds] == _expected(2, "classes")[:2].tolist()
    np.testing.assert_allclose([p["probs"] for p in preds], _expected(2, "probs")[:2],
                               rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("path, body, status, pattern", [
    ("/v1/models/mlp:predict", b"{not json", 400, "JSON Parse error"),
    ("/v1/models/mlp:predict", {"instances": [[1.0]]}, 400, "shape"),
    ("/v1/models/mlp:predict", {"inputs": {"y": _x(1).tolist()}}, 400, "lacks"),
    ("/v1/models/mlp:predict", {"instances": _x(1).tolist(), "inputs": _x(1).tolist()}, 400,
     "not both"),
    ("/v1/models/mlp:predict", {"instances": [[["a"] * 28] * 28]}, 400, "expects numbers"),
    ("/v1/models/mlp:predict", {"signature_name": "nope", "instances": _x(1).tolist()}, 400,
     "nope"),
    ("/v1/models/half:predict", {"instances": [1.0, 5.0]}, 404,
     r"Servable not found for request: Latest\(half\)"),
    ("/v1/models/mlp/versions/7:predict", {"instances": _x(1).tolist()}, 404,
     r"Specific\(mlp, 7\)"),
    ("/v1/models/mlp/labels/prod:predict", {"instances": _x(1).tolist()}, 404, "label"),
    ("/v1/models/mlp:regress", {"examples": [{"x": 1.0}]}, 400, "method_name"),
])
def test_bad_requests_get_tf_serving_errors(served, path, body, status, pattern):
    kwargs = {"data": body} if isinstance(body, bytes) else {"json": body}
    r = requests.post(f"{served.url}{path}", **kwargs)
    assert r.status_code == status
    assert set(r.json()) == {"error"}
    assert re.search(pattern, r.json()["error"])
    ok = requests.post(f"{served.url}/v1/models/mlp:predict", json={"instances": _x(1).tolist()})
    assert ok.status_code == 200  # the server keeps serving


def test_wrong_http_method_is_405(served):
    r = requests.get(f"{served.url}/v1/models/mlp:predict")
    assert r.status_code == 405 and "Predict takes POST" in r.json()["error"]


def test_unknown_model_status_and_version_are_404(served):
    assert requests.get(f"{served.url}/v1/models/nope").status_code == 404
    r = requests.get(f"{served.url}/v1/models/mlp/versions/9")
    assert r.status_code == 404 and "version 9" in r.json()["error"]


def test_oversized_body_is_413(models):
    base = models
    running = _Running([ModelSpec("mlp", str(base / "mlp"))], max_body_bytes=100_000)
    try:
        r = requests.post(f"{running.url}/v1/models/mlp:predict",
                          json={"instances": _x(16).tolist()})
        assert r.status_code == 413 and "exceeds" in r.json()["error"]
        big = json.dumps({"instances": _x(16).tolist()}).encode()
        chunked = requests.post(f"{running.url}/v1/models/mlp:predict",  # no Content-Length
                                data=(big[i:i + 8192] for i in range(0, len(big), 8192)))
        assert chunked.status_code == 413 and "exceeds" in chunked.json()["error"]
        small = requests.post(f"{running.url}/v1/models/mlp:predict",
                              json={"instances": _x(1).tolist()})
        assert small.status_code == 200
    finally:
        running.close()


def test_prometheus_metrics(served):
    requests.post(f"{served.url}/v1/models/mlp:predict", json={"instances": _x(1).tolist()})
    requests.post(f"{served.url}/v1/models/mlp:predict", data=b"{")
    text = requests.get(f"{served.url}/monitoring/prometheus/metrics").text
    assert ':tensorflow:serving:request_count{model_name="mlp",status="OK"}' in text
    assert ':tensorflow:serving:request_latency_bucket{API="Predict",entrypoint="REST"' in text
    assert 'status="RequestError"' in text


def test_batching_merges_concurrent_requests(models):
    base = models
    running = _Running([ModelSpec("mlp", str(base / "mlp"))],
                       batching=BatchingParameters(max_batch_size=16,
                                                   batch_timeout_micros=50_000))
    try:
        x = _x(16)
        results = [None] * 16

        def call(i):
            r = requests.post(f"{running.url}/v1/models/mlp:predict",
                              json={"instances": x[i:i + 1].tolist()})
            results[i] = (r.status_code, r.json())
        threads = [threading.Thread(target=call, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        want = _expected(2)
        for i, (status, doc) in enumerate(results):
            assert status == 200
            np.testing.assert_allclose(doc["predictions"][0], want[i], rtol=1e-5, atol=1e-5)
        (batcher,) = running.server._batchers.values()
        assert max(batcher.batch_sizes) > 1, batcher.batch_sizes
    finally:
        running.close()


def _copy_slowly(src, dst, pause):
    """Copies a version directory file by file, in pieces, straight to its final name:
    the server sees it half-copied for a while."""
    for root, _, files in os.walk(src):
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in files:
            with open(os.path.join(root, f), "rb") as fi, \
                    open(os.path.join(dst, rel, f), "wb") as fo:
                data = fi.read()
                half = len(data) // 2
                fo.write(data[:half])
                fo.flush()
                time.sleep(pause)
                fo.write(data[half:])
            time.sleep(pause)


@pytest.mark.parametrize("batching", [None, BatchingParameters(max_batch_size=4,
                                                               batch_timeout_micros=2000)],
                         ids=["unbatched", "batched"])
def test_version_swap_under_load_drops_no_request(tmp_path, models, batching):
    base = models
    served_dir = tmp_path / "mlp"
    shutil.copytree(base / "mlp" / "1", served_dir / "1")
    running = _Running([ModelSpec("mlp", str(served_dir))], poll_seconds=0.1, batching=batching)
    x = _x(2)
    v1, v2 = _expected(1)[:2], _expected(2)[:2]
    seen, failures, stop = [], [], threading.Event()

    def client():
        deadline = time.monotonic() + 30
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                r = requests.post(f"{running.url}/v1/models/mlp:predict",
                                  json={"instances": x.tolist()}, timeout=10)
            except requests.RequestException as e:
                failures.append(repr(e))
                continue
            if r.status_code != 200:
                failures.append(r.text)
                continue
            got = np.array(r.json()["predictions"], np.float32)
            if np.allclose(got, v1, rtol=1e-5, atol=1e-5):
                seen.append(1)
            elif np.allclose(got, v2, rtol=1e-5, atol=1e-5):
                seen.append(2)
            else:
                failures.append(f"an answer from no complete version: {got[0, :3]} vs "
                                f"{v1[0, :3]} / {v2[0, :3]}")
    clients = [threading.Thread(target=client) for _ in range(2)]
    try:
        for c in clients:
            c.start()
        time.sleep(0.5)
        _copy_slowly(base / "mlp" / "2", served_dir / "2", pause=0.15)
        deadline = time.monotonic() + 20
        while 2 not in seen[-5:] and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(served_dir / "1")
        time.sleep(1.0)
    finally:
        stop.set()
        for c in clients:
            c.join(timeout=30)
        running.close()
    assert failures == []
    assert seen and seen[0] == 1 and seen[-1] == 2, "the switch should show in the answers"
    first_v2 = seen.index(2)
    assert seen[first_v2:].count(1) <= 2, "after the swap only in-flight requests see v1"


def test_failed_version_is_reported_and_old_keeps_serving(tmp_path, models):
    base = models
    served_dir = tmp_path / "mlp"
    shutil.copytree(base / "mlp" / "1", served_dir / "1")
    running = _Running([ModelSpec("mlp", str(served_dir))], poll_seconds=0.1)
    try:
        (served_dir / "3").mkdir()
        (served_dir / "3" / "saved_model.pb").write_bytes(b"\x08\x01garbage")
        deadline = time.monotonic() + 20
        status = None
        while time.monotonic() < deadline:
            status = requests.get(f"{running.url}/v1/models/mlp").json()
            if any(s["version"] == "3" and s["state"] == "END"
                   for s in status["model_version_status"]):
                break
            time.sleep(0.1)
        (three,) = [s for s in status["model_version_status"] if s["version"] == "3"]
        assert three["status"]["error_code"] != "OK" and "version 3" in \
            three["status"]["error_message"]
        r = requests.post(f"{running.url}/v1/models/mlp:predict",
                          json={"instances": _x(1).tolist()})
        assert r.status_code == 200
    finally:
        running.close()


def test_model_config_file_is_polled(tmp_path, models):
    base = models
    config = tmp_path / "models.config"
    entry = 'config {{ name: "{0}" base_path: "{1}" }}'
    config.write_text(f'model_config_list {{ {entry.format("a", base / "mlp")} }}')
    from tensorlite.serving.config import parse_model_config
    running = _Running(parse_model_config(config.read_text()), config_file=str(config),
                       config_poll_seconds=0.2, poll_seconds=0.1)
    try:
        assert requests.get(f"{running.url}/v1/models/b").status_code == 404
        config.write_text(f'model_config_list {{ {entry.format("a", base / "mlp")} '
                          f'{entry.format("b", base / "mlp")} }}')
        deadline = time.monotonic() + 20
        while requests.get(f"{running.url}/v1/models/b").status_code != 200:
            assert time.monotonic() < deadline, "model b was never served"
            time.sleep(0.1)
        r = requests.post(f"{running.url}/v1/models/b:predict",
                          json={"instances": _x(1).tolist()})
        assert r.status_code == 200 and json.loads(r.text)["predictions"]
    finally:
        running.close()


def test_a_half_copied_version_never_loads(tmp_path):
    """A version directory whose variables have not arrived yet (or only partly) is refused
    by the loader, never served with placeholder weights."""
    from tensorlite.serving.servable import load_servable
    src = os.path.join(FIXTURES, "mlp", "2")
    partial = tmp_path / "2"
    partial.mkdir()
    shutil.copy(os.path.join(src, "saved_model.pb"), partial)
    with pytest.raises(tf_errors.DataLossError, match="no variables/variables.index"):
        load_servable(str(partial))
    (partial / "variables").mkdir()
    shutil.copy(os.path.join(src, "variables", "variables.index"), partial / "variables")
    data = open(os.path.join(src, "variables", "variables.data-00000-of-00001"), "rb").read()
    (partial / "variables" / "variables.data-00000-of-00001").write_bytes(data[:len(data) // 2])
    with pytest.raises(tf_errors.DataLossError):
        load_servable(str(partial))


def test_serves_a_savedmodel_tensorlite_wrote(tmp_path):
    """A Keras MLP exported by tensorlite (tf.saved_model's layout) is served and predicts
    over loopback as the model itself does."""
    import tensorlite as tf
    from tests.lite_helpers import mlp
    tf.random.set_seed(7)
    model = mlp()
    model.export(str(tmp_path / "tl" / "1"), verbose=False)
    running = _Running([ModelSpec("tl", str(tmp_path / "tl"), ("latest", 1), {})])
    try:
        x = np.random.default_rng(8).normal(size=(3, 8)).astype(np.float32)
        r = requests.post(f"{running.url}/v1/models/tl:predict",
                          json={"instances": x.tolist()})
        assert r.status_code == 200, r.text
        np.testing.assert_allclose(np.array(r.json()["predictions"]),
                                   model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
        doc = requests.get(f"{running.url}/v1/models/tl/metadata").json()
        default = doc["metadata"]["signature_def"]["signature_def"]["serving_default"]
        assert [d["size"] for d in default["inputs"]["inputs"]["tensor_shape"]["dim"]] == \
            ["-1", "8"]
    finally:
        running.close()
