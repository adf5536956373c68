"""tf.keras.applications: Keras's parameter counts, output shapes, a MobileNetV2 forward
pass, weights from a local file, preprocessing, decode_predictions, and a ResNet50 .keras
file that reloads. Models are built at small input sizes where the count does not depend
on it (the classifier follows a global pooling)."""
import json

import numpy as np
import pytest

import tensorlite as tf

A = tf.keras.applications


def out_shape(model):
    return tuple(model.outputs[0].shape.as_list())


@pytest.mark.parametrize("build, size, params", [
    (A.MobileNetV2, 32, 3_538_984),
    (A.ResNet50, 32, 25_636_712),
    (A.InceptionV3, 75, 23_851_784),
    (A.EfficientNetB0, 32, 5_330_571),
])
def test_parameter_counts_equal_keras(build, size, params):
    model = build(weights=None, input_shape=(size, size, 3))
    assert model.count_params() == params
    assert out_shape(model) == (None, 1000)


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
    with pytest.raises(tf.errors.NotFoundError, match="does not download"):
        A.MobileNetV2(weights="imagenet")
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
