"""tensorlite.hub over a real HTTP server on 127.0.0.1 serving a SavedModel written by
TensorFlow (tests/fixtures/hub_module, made by make_hub_module.py): downloaded once and
reused offline, KerasLayer fine-tuning, seed 004's hub.Module, crafted archives refused
before anything is written, and SIGKILLs during downloads never leave a torn module."""
import http.server
import io
import os
import random
import signal
import tarfile
import threading
import time

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.hub as hub
from tests.interop.shared_data import X

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "hub_module")
EXPECTED = np.load(os.path.join(os.path.dirname(FIXTURE), "hub_module_expected.npz"))["y"]


def _tarball(members=None, root=FIXTURE):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        if members is None:
            tar.add(root, arcname=".")
        else:
            for info, data in members:
                tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


class _Server:
    """Serves `body` for every GET (slowly when `chunk_delay` is set); counts requests."""

    def __init__(self, body, chunk_delay=0.0):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the http.server API
                server.requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", str(len(server.body)))
                self.end_headers()
                for i in range(0, len(server.body), 4096):
                    self.wfile.write(server.body[i:i + 4096])
                    time.sleep(server.chunk_delay)

            def log_message(self, *args):
                pass

        self.body, self.chunk_delay, self.requests = body, chunk_delay, []
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/models/embedder/1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TFHUB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_url_downloaded_once_then_offline(cache):
    server = _Server(_tarball())
    try:
        model = hub.load(server.url)
        np.testing.assert_allclose(model(X).numpy(), EXPECTED, atol=1e-6)
        assert server.requests == ["/models/embedder/1?tf-hub-format=compressed"]
    finally:
        server.close()
    again = hub.load(server.url)  # the server is gone: the cache serves it
    np.testing.assert_allclose(again(X).numpy(), EXPECTED, atol=1e-6)
    assert hub.resolve(server.url).startswith(str(cache))
    assert not [n for n in os.listdir(cache) if ".tmp-" in n]


@pytest.mark.parametrize("trainable", [True, False])
def test_keras_layer_fine_tunes_only_when_trainable(trainable):
    layer = hub.KerasLayer(FIXTURE, trainable=trainable, input_shape=[3])
    model = tf.keras.Sequential([layer, tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    before = [w.numpy().copy() for w in layer.weights]
    assert len(model.trainable_weights) == (4 if trainable else 2)
    model.fit(X, np.ones((8, 1), np.float32), epochs=3, verbose=0)
    changed = [not np.array_equal(b, w.numpy()) for b, w in zip(before, layer.weights)]
    assert all(changed) if trainable else not any(changed)


def test_seed_004_hub_module():
    module = hub.Module(FIXTURE, trainable=True, tags={"serve"})
    np.testing.assert_allclose(module(X).numpy(), EXPECTED, atol=1e-6)
    assert sorted(v.shape.as_list() for v in module.variables) == [[3, 4], [4]]


def _info(name, kind=tarfile.REGTYPE, data=b"x", link=""):
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, len(data) if kind == tarfile.REGTYPE else 0, link
    return info, data if kind == tarfile.REGTYPE else None


@pytest.mark.parametrize("member", [
    _info("../../canary.txt"), _info("/tmp/canary_abs.txt"),
    _info("evil_link", tarfile.SYMTYPE, link="/etc/passwd"),
    _info("evil_hard", tarfile.LNKTYPE, link="../../canary.txt")], ids=lambda m: m[0].name)
def test_crafted_archive_is_refused_before_writing(cache, tmp_path, member):
    server = _Server(_tarball([_info("saved_model.pb", data=b"\0"), member]))
    try:
        with pytest.raises(tf.errors.DataLossError, match="refusing to unpack"):
            hub.resolve(server.url)
    finally:
        server.close()
    assert not (tmp_path / "canary.txt").exists() and not os.path.exists("/tmp/canary_abs.txt")
    assert not [n for n in os.listdir(cache) if not n.endswith(".descriptor.txt")]


def test_not_an_archive_is_data_loss(cache):
    server = _Server(b"<html>not a model</html>")
    try:
        with pytest.raises(tf.errors.DataLossError, match="valid compressed model archive"):
            hub.resolve(server.url)
    finally:
        server.close()


def test_sigkill_during_download_never_leaves_a_torn_module(cache):
    server = _Server(_tarball(), chunk_delay=0.002)
    rng = random.Random(1)
    try:
        for _ in range(20):
            pid = os.fork()
            if pid == 0:
                try:
                    hub.resolve(server.url)
                finally:
                    os._exit(0)
            time.sleep(rng.uniform(0.0, 0.05))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            names = os.listdir(cache) if cache.exists() else []  # a kill before mkdir
            done = [n for n in names if ".tmp-" not in n and not n.endswith(".descriptor.txt")]
            for name in done:  # whatever is in place is complete
                np.testing.assert_allclose(hub.load(str(cache / name))(X).numpy(), EXPECTED,
                                           atol=1e-6)
        model = hub.load(server.url)  # finishes or reuses, clearing dead temporaries
        np.testing.assert_allclose(model(X).numpy(), EXPECTED, atol=1e-6)
        assert not [n for n in os.listdir(cache) if ".tmp-" in n]
    finally:
        server.close()
