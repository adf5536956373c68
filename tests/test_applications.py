"""tf.keras.applications: Keras's parameter counts, output shapes, a MobileNetV2 forward
pass, weights from a local file, weights="imagenet" (downloaded from a 127.0.0.1 server in
Keras's HDF5 layout, hash-checked, cached, then loaded offline), preprocessing,
decode_predictions, and a ResNet50 .keras file that reloads. Models are built at small
input sizes where the count does not depend on it (the classifier follows a global pooling)."""
import contextlib
import hashlib
import http.server
import json
import threading

import h5py
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras.saving import legacy_h5, weights_layout

A = tf.keras.applications


def out_shape(model):
    return tuple(model.outputs[0].shape.as_list())


@pytest.mark.parametrize("build, size, params", [
    (A.MobileNet, 32, 4_253_864),
    (A.MobileNetV2, 32, 3_538_984),
    (A.ResNet50, 32, 25_636_712),
    (A.InceptionV3, 75, 23_851_784),
    (A.EfficientNetB0, 32, 5_330_571),
    (A.Xception, 71, 22_910_480),
])
def test_parameter_counts_equal_keras(build, size, params):
    model = build(weights=None, input_shape=(size, size, 3))
    assert model.count_params() == params
    assert out_shape(model) == (None, 1000)


@pytest.mark.parametrize("build, params", [(A.VGG16, 14_714_688), (A.VGG19, 20_024_384)])
def test_vgg_bases_equal_keras(build, params):
    base = build(weights=None, include_top=False)
    assert base.count_params() == params
    assert out_shape(base) == (None, None, None, 512)
    # the Functional API guide's feature extractor over every layer's output
    features = tf.keras.Model(inputs=base.input, outputs=[layer.output for layer in
                                                          base.layers])
    out = features(np.random.default_rng(0).random((1, 64, 64, 3)).astype("float32"))
    assert [tuple(o.shape) for o in out][-1] == (1, 2, 2, 512)


def test_mobilenet_v2_forward_and_heads(tmp_path):
    model = A.MobileNetV2(weights=None, input_shape=(32, 32, 3), classes=7)
    images = np.random.default_rng(0).integers(0, 256, (2, 32, 32, 3)).astype("float32")
    probs = model(A.mobilenet_v2.preprocess_input(images)).numpy()
    assert probs.shape == (2, 7)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    features = A.MobileNetV2(weights=None, include_top=False, input_shape=(64, 64, 3))
    assert out_shape(features) == (None, 2, 2, 1280)
    path = str(tmp_path / "mobilenet.weights")
    model.save_weights(path)
    again = A.MobileNetV2(weights=path, input_shape=(32, 32, 3), classes=7)
    np.testing.assert_allclose(again(images / 127.5 - 1).numpy(), probs, rtol=1e-5,
                               atol=1e-6)


def test_head_shapes_without_top():
    pooled = A.EfficientNetB0(weights=None, include_top=False, pooling="max",
                              input_shape=(32, 32, 3))
    assert out_shape(pooled) == (None, 1280)
    assert pooled(np.zeros((1, 32, 32, 3), np.float32)).shape == (1, 1280)


def test_bad_arguments_are_clear():
    with pytest.raises(ValueError, match="at least 32x32"):
        A.MobileNetV2(weights=None, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="weights"):
        A.ResNet50(weights="no/such/file.weights")
    with pytest.raises(ValueError, match="pooling"):
        A.MobileNetV2(weights=None, include_top=False, pooling="mean",
                      input_shape=(32, 32, 3))


def test_preprocess_input_modes():
    x = np.array([[[[0.0, 127.5, 255.0]]]], np.float32)
    np.testing.assert_allclose(A.mobilenet_v2.preprocess_input(x), [[[[-1.0, 0.0, 1.0]]]])
    np.testing.assert_allclose(A.inception_v3.preprocess_input(x), [[[[-1.0, 0.0, 1.0]]]])
    np.testing.assert_allclose(A.resnet50.preprocess_input(x),
                               [[[[255 - 103.939, 127.5 - 116.779, 0 - 123.68]]]], rtol=1e-6)
    assert A.efficientnet.preprocess_input(x) is x
    assert isinstance(A.resnet50.preprocess_input(tf.constant(x)), tf.Tensor)


def test_decode_predictions(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    preds = np.zeros((2, 1000), np.float32)
    preds[0, [3, 7]] = [0.9, 0.1]
    preds[1, 999] = 1.0
    with pytest.raises(tf.errors.NotFoundError, match="does not exist"):
        A.mobilenet_v2.decode_predictions(preds, class_index_path=str(tmp_path / "none.json"))
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    body = json.dumps(index).encode()
    (tmp_path / "index.json").write_bytes(body)
    # the download: Keras's origin, replaced by a local file, and its hash checked
    from tensorlite.keras.applications import imagenet_utils
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX_URL", (tmp_path / "index.json").as_uri())
    with pytest.raises(ValueError, match="hash"):
        A.resnet50.decode_predictions(preds, top=2)
    assert not (tmp_path / "models" / "imagenet_class_index.json").exists()
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX_HASH",
                        __import__("hashlib").md5(body).hexdigest())  # noqa: S324
    top = A.resnet50.decode_predictions(preds, top=2)
    assert (tmp_path / "models" / "imagenet_class_index.json").exists()
    assert top[0] == [("n00000003", "class_3", pytest.approx(0.9)),
                      ("n00000007", "class_7", pytest.approx(0.1))]
    assert top[1][0][1] == "class_999"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"0": "x"}))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not the ImageNet class index"):
        A.inception_v3.decode_predictions(preds, class_index_path=str(bad))
    with pytest.raises(ValueError, match=r"\(samples, 1000\)"):
        A.efficientnet.decode_predictions(np.zeros((2, 10)))


@pytest.mark.slow
def test_resnet50_keras_file_reloads(tmp_path):
    model = A.ResNet50(weights=None, input_shape=(32, 32, 3), classes=10)
    path = str(tmp_path / "resnet50.keras")
    model.save(path)
    again = tf.keras.models.load_model(path)
    assert again.count_params() == model.count_params()
    assert [w.shape for w in again.weights] == [w.shape for w in model.weights]
    x = A.resnet50.preprocess_input(
        np.random.default_rng(1).uniform(0, 255, (2, 32, 32, 3)).astype("float32"))
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)


@contextlib.contextmanager
def serve_directory(directory):
    """An HTTP server on 127.0.0.1 for the files of `directory`; yields (base URL, the
    paths requested)."""
    hits = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(directory), **kwargs)

        def do_GET(self):  # noqa: N802 - http.server's name
            hits.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", hits
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def write_keras2_weights(model, path):
    """`model`'s weights in tf.keras 2's `save_weights("w.h5")` layout (the published files')."""
    with h5py.File(path, "w") as f:
        weights_layout.write_legacy(model, f)
        f.attrs["keras_version"] = "2.15.0"


def randomize(model, seed):
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(rng.uniform(0.5, 1.5, w.shape.as_list()).astype(w.dtype.as_numpy_dtype))
    return model


def assert_same_weights(a, b):
    assert len(a.weights) == len(b.weights)
    for x, y in zip(a.weights, b.weights):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_imagenet_downloads_once_then_loads_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    kwargs = {"input_shape": (96, 96, 3), "alpha": 0.35}
    source = randomize(A.MobileNetV2(weights=None, **kwargs), 0)
    fname = "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96.h5"  # Keras's name
    (tmp_path / "served").mkdir()
    write_keras2_weights(source, tmp_path / "served" / fname)
    with serve_directory(tmp_path / "served") as (base, hits):
        monkeypatch.setattr(A.mobilenet_v2, "BASE_WEIGHT_PATH", base)
        first = A.MobileNetV2(weights="imagenet", **kwargs)
        assert hits == ["/" + fname]
    assert_same_weights(first, source)
    assert (tmp_path / "keras" / "models" / fname).exists()
    again = A.MobileNetV2(weights="imagenet", **kwargs)  # the server is gone: the cache
    assert_same_weights(again, source)
    with pytest.raises(Exception, match="URL fetch failure"):  # noqa: PT011 - Keras's class
        A.MobileNetV2(weights="imagenet", include_top=False, **kwargs)  # not cached: _no_top


def test_imagenet_hash_mismatch_caches_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    kwargs = {"include_top": False, "input_shape": (32, 32, 3)}
    source = randomize(A.EfficientNetB0(weights=None, **kwargs), 1)
    (tmp_path / "served").mkdir()
    path = tmp_path / "served" / "efficientnetb0_notop.h5"
    write_keras2_weights(source, path)
    md5 = hashlib.md5(path.read_bytes()).hexdigest()  # noqa: S324 - Keras's hash
    assert A.efficientnet.WEIGHTS_HASHES["b0"][1] != md5  # Keras's published value
    with serve_directory(tmp_path / "served") as (base, _):
        monkeypatch.setattr(A.efficientnet, "BASE_WEIGHTS_PATH", base)
        with pytest.raises(ValueError, match="hash does not match"):
            A.EfficientNetB0(weights="imagenet", **kwargs)
        assert list((tmp_path / "keras" / "models").iterdir()) == []
        monkeypatch.setitem(A.efficientnet.WEIGHTS_HASHES, "b0", ("unused", md5))
        model = A.EfficientNetB0(weights="imagenet", **kwargs)
    assert_same_weights(model, source)
    assert [p.name for p in (tmp_path / "keras" / "models").iterdir()] == [path.name]


def test_imagenet_argument_checks_come_before_any_download(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    monkeypatch.setattr(A.mobilenet_v2, "BASE_WEIGHT_PATH", "http://127.0.0.1:9/")
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        A.MobileNetV2(weights="imagenet", classes=10, input_shape=(96, 96, 3))
    with pytest.raises(ValueError, match="Only `None` and `softmax`"):
        A.MobileNetV2(weights="imagenet", classifier_activation="relu",
                      input_shape=(96, 96, 3))
    with pytest.raises(ValueError, match="alpha must be one of"):
        A.MobileNetV2(weights="imagenet", alpha=0.6, input_shape=(96, 96, 3))
    with pytest.raises(ValueError, match=r"input_shape` should be \(224, 224, 3\)"):
        A.ResNet50(weights="imagenet", input_shape=(64, 64, 3))
    with pytest.raises(ValueError, match=r"input_shape` should be \(299, 299, 3\)"):
        A.InceptionV3(weights="imagenet", input_shape=(75, 75, 3))
    assert not (tmp_path / "keras" / "models").exists() or \
        not list((tmp_path / "keras" / "models").iterdir())


def _two_dense(first, second):
    inputs = tf.keras.Input(shape=(4,))
    x = tf.keras.layers.Dense(4, name=first)(inputs)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(4, name=second)(x))


def test_published_weights_match_by_name_else_in_order(tmp_path):
    model = _two_dense("a", "b")
    swapped = randomize(_two_dense("b", "a"), 2)  # same names, the other order
    write_keras2_weights(swapped, tmp_path / "named.h5")
    legacy_h5.load_published_weights(model.layers[1:], str(tmp_path / "named.h5"))
    np.testing.assert_array_equal(model.get_layer("a").kernel.numpy(),
                                  swapped.get_layer("a").kernel.numpy())
    generated = randomize(_two_dense("dense_7", "dense_8"), 3)  # Keras's generated names
    write_keras2_weights(generated, tmp_path / "ordered.h5")
    legacy_h5.load_published_weights(model.layers[1:], str(tmp_path / "ordered.h5"))
    np.testing.assert_array_equal(model.get_layer("a").kernel.numpy(),
                                  generated.get_layer("dense_7").kernel.numpy())
    inputs = tf.keras.Input(shape=(4,))
    wrong = tf.keras.Model(inputs, tf.keras.layers.Dense(5, name="b")(
        tf.keras.layers.Dense(4, name="a")(inputs)))
    write_keras2_weights(wrong, tmp_path / "wrong.h5")
    with pytest.raises(ValueError, match="shape"):
        legacy_h5.load_published_weights(model.layers[1:], str(tmp_path / "wrong.h5"))


def test_keras_layer_order_is_by_depth_then_first_visit():
    """tf.keras 2 lists `b` (depth 1) after `a` (depth 2) although the walk from the
    output meets `b` first; a plain topological order puts `b` first."""
    from tensorlite.keras.engine.layer_order import keras_layer_order
    inputs = tf.keras.Input(shape=(4,))
    b = tf.keras.layers.Dense(4, name="b")(inputs)
    c = tf.keras.layers.Dense(4, name="c")(tf.keras.layers.Dense(4, name="a")(inputs))
    model = tf.keras.Model(inputs, tf.keras.layers.Add(name="add")([b, c]))
    assert [layer.name for layer in keras_layer_order(model)] == ["a", "b", "c", "add"]


def test_mobilenet_v2_file_for_other_sizes_is_keras_224_one(tmp_path, monkeypatch, caplog):
    """Keras's rule: a non-square input, or rows outside (96, 128, 160, 192, 224), takes the
    224 file, with a warning (nothing listens on 127.0.0.1:9, so the URL shows in the
    error)."""
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    monkeypatch.setattr(A.mobilenet_v2, "BASE_WEIGHT_PATH", "http://127.0.0.1:9/")
    url = r"127\.0\.0\.1:9/mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0\.5_224_no_top\.h5"
    with pytest.raises(Exception, match=url):  # noqa: PT011 - Keras's class for it
        A.MobileNetV2(weights="imagenet", alpha=0.5, include_top=False,
                      input_shape=(96, 128, 3))
    assert "Weights for input shape (224, 224) will be loaded" in caplog.text
