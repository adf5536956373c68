"""tf.keras.utils as programs use them: image folders, time series windows, Sequence /
PyDataset in fit (with workers), plot_model, get_file (local path, file:// and a real
HTTP server on 127.0.0.1; checksums; crafted archives)."""
import hashlib
import http.server
import io
import os
import tarfile
import threading
import zipfile

import numpy as np
import pytest

import tensorlite as tf

U = tf.keras.utils


def test_to_categorical_and_normalize():
    assert U.to_categorical([0, 2], 3).tolist() == [[1, 0, 0], [0, 0, 1]]
    np.testing.assert_allclose(U.normalize(np.array([[3.0, 4.0]])), [[0.6, 0.8]])


def _write_images(root, per_class):
    from PIL import Image
    rng = np.random.default_rng(0)
    for cls, n in per_class.items():
        os.makedirs(root / cls, exist_ok=True)
        for i in range(n):
            img = rng.integers(0, 256, (12, 10, 3), dtype=np.uint8)
            Image.fromarray(img).save(root / cls / f"{i}.{'png' if i % 2 else 'jpg'}")


def test_image_dataset_from_directory(tmp_path, capsys):
    pytest.importorskip("PIL")
    _write_images(tmp_path, {"cats": 3, "dogs": 2})
    ds = U.image_dataset_from_directory(tmp_path, image_size=(8, 8), batch_size=2,
                                        shuffle=False)
    assert "Found 5 files belonging to 2 classes." in capsys.readouterr().out
    assert ds.class_names == ["cats", "dogs"]
    batches = list(ds)
    assert [int(b[0].shape[0]) for b in batches] == [2, 2, 1]
    assert batches[0][0].shape == (2, 8, 8, 3) and batches[0][0].dtype == tf.float32
    assert np.concatenate([b[1].numpy() for b in batches]).tolist() == [0, 0, 0, 1, 1]
    train, val = U.image_dataset_from_directory(
        tmp_path, validation_split=0.4, subset="both", seed=1, image_size=(4, 4),
        label_mode="categorical", color_mode="grayscale", batch_size=8)
    assert capsys.readouterr().out.splitlines() == [  # Keras's lines, per subset
        "Found 5 files belonging to 2 classes.", "Using 3 files for training.",
        "Found 5 files belonging to 2 classes.", "Using 2 files for validation."]
    (xt, yt), (xv, yv) = next(iter(train)), next(iter(val))
    assert xt.shape == (3, 4, 4, 1) and xv.shape == (2, 4, 4, 1) and yt.shape == (3, 2)
    assert not set(train.file_paths) & set(val.file_paths)


def test_timeseries_dataset_from_array_matches_windows():
    data = np.arange(20).reshape(10, 2)
    targets = np.arange(100, 110)
    ds = U.timeseries_dataset_from_array(data, targets, sequence_length=3,
                                         sampling_rate=2, sequence_stride=2, batch_size=2)
    xs, ys = zip(*[(x.numpy(), y.numpy()) for x, y in ds])
    x, y = np.concatenate(xs), np.concatenate(ys)
    starts = [0, 2, 4]
    assert x.tolist() == [data[s:s + 5:2].tolist() for s in starts]
    assert y.tolist() == [targets[s] for s in starts]


class _Batches(U.Sequence):
    def __init__(self):
        super().__init__()
        self.epochs_ended = 0
        self.fetched = []

    def __len__(self):
        return 4

    def __getitem__(self, i):
        self.fetched.append(i)
        x = np.full((8, 2), i, np.float32)
        return x, x.sum(axis=1, keepdims=True)

    def on_epoch_end(self):
        self.epochs_ended += 1


@pytest.mark.parametrize("workers", [1, 3])
def test_sequence_in_fit_evaluate_predict(workers):
    seq = _Batches()
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(seq, epochs=2, verbose=0, workers=workers)
    assert len(history.history["loss"]) == 2 and seq.epochs_ended == 2
    assert sorted(seq.fetched) == sorted(list(range(4)) * 2)
    model.evaluate(seq, verbose=0)
    assert model.predict(seq, verbose=0).shape == (32, 1)


def test_pydataset_with_workers_keeps_order():
    class Indexed(U.PyDataset):
        def __init__(self):
            super().__init__(workers=4, max_queue_size=3)

        def __len__(self):
            return 10

        def __getitem__(self, i):
            return np.full((2, 1), i, np.float32), np.zeros((2, 1), np.float32)

    from tensorlite.keras.engine.data_adapter import make_batches
    xs = [int(x.numpy()[0, 0]) if hasattr(x, "numpy") else int(np.asarray(x)[0, 0])
          for x, _ in make_batches(Indexed()).epoch()]
    assert xs == list(range(10))


def test_plot_model_dot_and_dot_fallback(tmp_path, monkeypatch):
    inputs = tf.keras.Input((4,))
    hidden = tf.keras.layers.Dense(3, name="hidden")(inputs)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, name="out")(hidden))
    path = tmp_path / "model.dot"
    U.plot_model(model, str(path), show_shapes=True)
    text = path.read_text()
    assert "hidden: Dense" in text and "out: Dense" in text and "->" in text
    assert "(None, 3)" in text
    monkeypatch.setenv("PATH", "")  # no Graphviz: the graph as DOT, and how to render it
    with pytest.warns(UserWarning, match="Graphviz"):
        U.plot_model(model, str(tmp_path / "model.png"), show_shapes=True)
    assert not (tmp_path / "model.png").exists()
    assert (tmp_path / "model.dot").read_text() == text


@pytest.fixture
def http_root(tmp_path):
    root = tmp_path / "served"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(root), **k)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_get_file_http_cache_and_checksum(http_root, tmp_path):
    root, url = http_root
    (root / "data.txt").write_bytes(b"hello")
    sha = hashlib.sha256(b"hello").hexdigest()
    cache = tmp_path / "cache"
    path = U.get_file("data.txt", f"{url}/data.txt", file_hash=sha, cache_dir=str(cache))
    assert open(path, "rb").read() == b"hello"
    (root / "data.txt").write_bytes(b"changed")
    assert open(U.get_file("data.txt", f"{url}/data.txt", file_hash=sha,
                           cache_dir=str(cache)), "rb").read() == b"hello"  # cached
    with pytest.raises(ValueError, match="hash does not match"):
        U.get_file("other.txt", f"{url}/data.txt", file_hash=sha, cache_dir=str(cache))
    assert not os.path.exists(cache / "datasets" / "other.txt")
    assert os.listdir(cache / "datasets") == ["data.txt"]  # no temporary left behind


def test_get_file_local_and_extract(tmp_path):
    src = tmp_path / "arch.tar.gz"
    with tarfile.open(src, "w:gz") as tar:
        data = b"a,b\n1,2\n"
        info = tarfile.TarInfo("arch/table.csv")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    path = U.get_file("arch.tar.gz", src.as_uri(), extract=True, cache_dir=str(tmp_path / "c"))
    assert open(os.path.join(os.path.dirname(path), "arch", "table.csv")).read() == "a,b\n1,2\n"
    untarred = U.get_file("arch", str(src), untar=True, cache_dir=str(tmp_path / "d"))
    assert os.path.isdir(untarred)


def test_get_file_refuses_escaping_archives(tmp_path):
    canary = tmp_path / "canary.txt"
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("../canary.txt", "gotcha")
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside"):
        U.get_file("bad.zip", str(bad), extract=True, cache_dir=str(tmp_path / "c" / "x"))
    assert not canary.exists()
    assert not (tmp_path / "c" / "canary.txt").exists()


def test_set_random_seed_repeats_every_source():
    import random

    def draw():
        return (random.random(), np.random.rand(), tf.random.uniform([3]).numpy(),
                tf.keras.layers.Dense(2, kernel_initializer="glorot_uniform")(
                    tf.ones([1, 2])).numpy())
    tf.keras.utils.set_random_seed(7)
    first = draw()
    tf.keras.utils.set_random_seed(7)
    second = draw()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    tf.keras.utils.set_random_seed(8)
    assert draw()[2].tolist() != first[2].tolist()
    with pytest.raises(ValueError, match="int seed"):
        tf.keras.utils.set_random_seed(1.5)


# -- image files (keras.utils.load_img and friends, on Pillow) -----------------------------

def test_image_file_helpers_round_trip_as_keras(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (20, 30, 3)).astype(np.float32)
    path = str(tmp_path / "img.png")
    tf.keras.utils.save_img(path, pixels, scale=False)
    img = tf.keras.utils.load_img(path)
    assert img.size == (30, 20) and img.mode == "RGB"
    arr = tf.keras.utils.img_to_array(img)
    assert arr.dtype == np.float32 and arr.shape == (20, 30, 3)
    np.testing.assert_array_equal(arr, pixels)
    gray = tf.keras.preprocessing.image.load_img(path, color_mode="grayscale",
                                                 target_size=(10, 15))
    assert tf.keras.preprocessing.image.img_to_array(gray).shape == (10, 15, 1)
    first = tf.keras.utils.img_to_array(img, data_format="channels_first")
    assert first.shape == (3, 20, 30)
    # keep_aspect_ratio crops the centre (20x30 -> 20x20) before resizing
    square = tf.keras.utils.load_img(path, target_size=(10, 10), keep_aspect_ratio=True,
                                     interpolation="bilinear")
    assert square.size == (10, 10)
    scaled = tf.keras.utils.array_to_img(np.array([[[0.], [0.5]], [[1.], [0.25]]]))
    assert np.asarray(scaled).tolist() == [[0, 127], [255, 63]]
    with pytest.raises(ValueError, match="color_mode"):
        tf.keras.utils.load_img(path, color_mode="cmyk")
    with pytest.raises(ValueError, match="rank 3"):
        tf.keras.utils.array_to_img(np.zeros((4, 4)))


def test_rgba_saved_as_jpeg_drops_alpha_with_warning(tmp_path):
    pytest.importorskip("PIL")
    path = str(tmp_path / "x.jpg")
    with pytest.warns(UserWarning, match="RGBA"):
        tf.keras.utils.save_img(path, np.full((8, 8, 4), 200, np.float32), scale=False)
    assert tf.keras.utils.load_img(path).mode == "RGB"
