"""tf.keras.datasets download once from their origin, check the published hash before
keeping anything, and load from the cache afterwards. The tests serve small files in the
real formats from a local HTTP server on 127.0.0.1 and point the loaders' origins and
hashes at them."""
import gzip
import hashlib
import http.server
import io
import json
import os
import pickle
import tarfile
import threading

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras.datasets import (boston_housing, cifar10, cifar100, fashion_mnist,
                                       imdb, mnist, reuters)
from tensorlite.keras.datasets.idx import write_idx


class _Files(http.server.BaseHTTPRequestHandler):
    files = {}
    hits = []

    def do_GET(self):  # noqa: N802 - the stdlib's name
        body = self.files.get(self.path)
        self.hits.append(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    _Files.files, _Files.hits = {}, []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", monkeypatch
    httpd.shutdown()
    httpd.server_close()


def _serve(server, module, name, body, attr="ORIGIN", hash_attr="FILE_HASH"):
    base, monkeypatch = server
    _Files.files[f"/{name}"] = body
    monkeypatch.setattr(module, attr, f"{base}/{name}")
    monkeypatch.setattr(module, hash_attr, hashlib.sha256(body).hexdigest())


def _npz(**arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_mnist_downloads_verifies_and_then_loads_offline(server):
    rng = np.random.default_rng(0)
    arrays = {"x_train": rng.integers(0, 255, (5, 28, 28), dtype=np.uint8),
              "y_train": rng.integers(0, 10, 5, dtype=np.uint8),
              "x_test": rng.integers(0, 255, (3, 28, 28), dtype=np.uint8),
              "y_test": rng.integers(0, 10, 3, dtype=np.uint8)}
    _serve(server, mnist, "mnist.npz", _npz(**arrays))
    (a, b), (c, d) = tf.keras.datasets.mnist.load_data()
    for got, name in zip((a, b, c, d), ("x_train", "y_train", "x_test", "y_test")):
        np.testing.assert_array_equal(got, arrays[name])
    _Files.files.clear()  # offline from now on: the cache serves it
    (a2, _), _ = tf.keras.datasets.mnist.load_data()
    np.testing.assert_array_equal(a2, arrays["x_train"])
    assert _Files.hits == ["/mnist.npz"]


def test_hash_mismatch_is_an_error_and_nothing_is_cached(server, tmp_path):
    _serve(server, mnist, "mnist.npz", _npz(x_train=np.zeros(1)))
    server[1].setattr(mnist, "FILE_HASH", "0" * 64)
    with pytest.raises(ValueError, match="hash"):
        tf.keras.datasets.mnist.load_data()
    cache = tmp_path / "keras" / "datasets"
    assert os.listdir(cache) == []  # no file, no partial download


def test_fashion_mnist_idx_files_in_their_subdirectory(server):
    base, monkeypatch = server
    hashes = {}
    for name in fashion_mnist.FILES:
        arr = np.zeros((2, 28, 28), np.uint8) if "images" in name else np.ones(2, np.uint8)
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb") as f:
            f.write(bytes([0, 0, 8, arr.ndim]) + np.asarray(arr.shape, ">u4").tobytes()
                    + arr.tobytes())
        _Files.files[f"/{name}"] = buf.getvalue()
        hashes[name] = hashlib.sha256(buf.getvalue()).hexdigest()
    monkeypatch.setattr(fashion_mnist, "ORIGIN_FOLDER", base + "/")
    monkeypatch.setattr(fashion_mnist, "FILE_HASHES", hashes)
    (x, y), (xt, yt) = tf.keras.datasets.fashion_mnist.load_data()
    assert x.shape == (2, 28, 28) and y.tolist() == [1, 1] and xt.shape == (2, 28, 28)
    assert os.path.isdir(os.path.join(os.environ["KERAS_HOME"], "datasets", "fashion-mnist"))


def _cifar_archive(top, members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, obj in members.items():
            data = pickle.dumps(obj)
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_cifar10_archive_is_unpacked_and_read_with_arrays_only(server):
    rng = np.random.default_rng(1)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batches[name] = {b"data": rng.integers(0, 255, (2, 3072), dtype=np.uint8),
                         b"labels": rng.integers(0, 10, 2).tolist(), b"batch_label": b"x"}
    _serve(server, cifar10, "cifar-10-python.tar.gz",
           _cifar_archive("cifar-10-batches-py", batches))
    (xtr, ytr), (xte, yte) = tf.keras.datasets.cifar10.load_data()
    assert xtr.shape == (10, 32, 32, 3) and ytr.shape == (10, 1) and xte.shape == (2, 32, 32, 3)
    first = batches["data_batch_1"][b"data"][0]
    np.testing.assert_array_equal(xtr[0, :, :, 0], first[:1024].reshape(32, 32))  # red plane
    assert yte.ravel().tolist() == batches["test_batch"][b"labels"]


def test_cifar100_fine_and_coarse_labels(server):
    rng = np.random.default_rng(2)
    members = {name: {b"data": rng.integers(0, 255, (3, 3072), dtype=np.uint8),
                      b"fine_labels": [5, 60, 99], b"coarse_labels": [1, 2, 19]}
               for name in ("train", "test")}
    _serve(server, cifar100, "cifar-100-python.tar.gz",
           _cifar_archive("cifar-100-python", members))
    (x, y), _ = tf.keras.datasets.cifar100.load_data()
    assert x.shape == (3, 32, 32, 3) and y.ravel().tolist() == [5, 60, 99]
    (_, yc), _ = tf.keras.datasets.cifar100.load_data(label_mode="coarse")
    assert yc.ravel().tolist() == [1, 2, 19]
    with pytest.raises(ValueError, match="label_mode"):
        tf.keras.datasets.cifar100.load_data(label_mode="medium")


def test_crafted_pickles_never_run(server, tmp_path):
    canary = tmp_path / "canary"

    class Evil:
        def __reduce__(self):
            return (open, (str(canary), "w"))
    members = {name: {b"data": Evil(), b"labels": [0]} for name in
               [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]}
    _serve(server, cifar10, "cifar-10-python.tar.gz",
           _cifar_archive("cifar-10-batches-py", members))
    with pytest.raises(tf.errors.DataLossError, match="refusing"):
        tf.keras.datasets.cifar10.load_data()
    evil_npz = io.BytesIO()
    np.savez(evil_npz, x=np.array([Evil()], dtype=object), y=np.zeros(1))
    _serve(server, reuters, "reuters.npz", evil_npz.getvalue())
    with pytest.raises(tf.errors.DataLossError, match="refusing"):
        tf.keras.datasets.reuters.load_data()
    assert not canary.exists()


def test_imdb_sequences_and_word_index_as_keras(server):
    x_train = np.empty(3, dtype=object)
    x_train[:] = [[1, 2, 3], [4, 5], [6, 7, 8, 9]]
    x_test = np.empty(2, dtype=object)
    x_test[:] = [[2, 2], [9, 1, 3]]
    _serve(server, imdb, "imdb.npz", _npz(x_train=x_train, y_train=np.array([0, 1, 1]),
                                          x_test=x_test, y_test=np.array([1, 0])))
    word_index = json.dumps({"the": 1, "and": 2}).encode()
    _Files.files["/imdb_word_index.json"] = word_index
    server[1].setattr(imdb, "WORD_INDEX_ORIGIN", f"{server[0]}/imdb_word_index.json")
    server[1].setattr(imdb, "WORD_INDEX_HASH", hashlib.md5(word_index).hexdigest())  # noqa: S324
    (xtr, ytr), (xte, yte) = tf.keras.datasets.imdb.load_data()
    assert len(xtr) == 3 and len(xte) == 2
    lengths = sorted(len(x) for x in xtr)
    assert lengths == [3, 4, 5]  # start_char added
    # ids shifted by index_from=3; as in Keras, the largest id (num_words defaults to it)
    # falls outside [skip_top, num_words) and becomes oov_char
    assert all(x[0] == 1 and all(w >= 4 or w == 2 for w in x[1:]) for x in xtr)
    assert sorted(w for x in xtr for w in x[1:]) == [2, 4, 5, 6, 7, 8, 9, 10, 11]
    (xtr, _), _ = tf.keras.datasets.imdb.load_data(num_words=6)
    assert all(w == 2 or w < 6 for x in xtr for w in x)  # rarer words become oov_char
    (xtr, _), _ = tf.keras.datasets.imdb.load_data(maxlen=4)
    assert sorted(len(x) for x in xtr) == [3]
    assert tf.keras.datasets.imdb.get_word_index() == {"the": 1, "and": 2}


def test_reuters_and_boston_housing_splits(server):
    xs = np.empty(10, dtype=object)
    xs[:] = [[i, i + 1] for i in range(10)]
    _serve(server, reuters, "reuters.npz", _npz(x=xs, y=np.arange(10)))
    (xtr, ytr), (xte, yte) = tf.keras.datasets.reuters.load_data(test_split=0.2)
    assert len(xtr) == 8 and len(xte) == 2 and sorted(ytr.tolist() + yte.tolist()) == \
        list(range(10))
    assert len(tf.keras.datasets.reuters.get_label_names()) == 46
    x = np.arange(26 * 13, dtype=np.float64).reshape(26, 13)
    _serve(server, boston_housing, "boston_housing.npz", _npz(x=x, y=x[:, 0] / 13))
    (bx, by), (tx, ty) = tf.keras.datasets.boston_housing.load_data()
    assert bx.shape == (20, 13) and tx.shape == (6, 13)
    np.testing.assert_array_equal(by, bx[:, 0] / 13)


def test_archive_with_links_or_escaping_members_is_refused(server, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("cifar-10-batches-py/data_batch_1")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(info)
    _serve(server, cifar10, "cifar-10-python.tar.gz", buf.getvalue())
    with pytest.raises(tf.errors.InvalidArgumentError, match="links"):
        tf.keras.datasets.cifar10.load_data()
    assert not os.path.exists(tmp_path / "keras" / "datasets" / "cifar-10-batches-py")


def test_digits_offline_and_to_categorical():
    pytest.importorskip("sklearn")
    (x, y), (xt, yt) = tf.keras.datasets.digits.load_data()
    assert x.shape[1:] == (8, 8) and x.dtype == np.uint8 and len(x) + len(xt) == 1797
    assert set(np.unique(y)) == set(range(10))
    from tensorlite.keras.utils.np_utils import to_categorical
    oh = to_categorical(np.array([[1], [0]]), num_classes=3)
    assert oh.tolist() == [[0, 1, 0], [1, 0, 0]]


def test_idx_writer_round_trip(tmp_path):
    from tensorlite.keras.datasets.idx import read_idx
    path = str(tmp_path / "a.gz")
    write_idx(path, np.arange(6, dtype=np.uint8).reshape(2, 3))
    assert read_idx(path).tolist() == [[0, 1, 2], [3, 4, 5]]
