"""`weights="imagenet"` against real TensorFlow: tf.keras 2 (tf_keras, the layout of Keras's
published files) builds each application with `weights=None`, saves its weights to `.h5`,
then builds it again with `weights="imagenet"` (its get_file replaced by one that hands over
that file and records what was asked for), and predicts on fixed images. tensorlite then
downloads the same file name from a 127.0.0.1 server standing in for Keras's URL base (its
hash table pointing at the served file's MD5) and must predict what TensorFlow did (rtol 1e-4);
the file name, URL and published hash TensorFlow asked for must be tensorlite's own."""
import hashlib

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras.engine.layer_order import keras_layer_order
from tests.interop.conftest import run_tf
from tests.test_applications import serve_directory

pytestmark = pytest.mark.interop
A = tf.keras.applications

TF_SIDE = r'''
import json, os, sys
import numpy as np
import tensorflow as tf
from tf_keras.src.utils import data_utils

A = tf.keras.applications
CASES = {
    "mobilenet": (A.MobileNet, A.mobilenet.preprocess_input,
                  dict(input_shape=(128, 128, 3), alpha=0.25, classifier_activation=None)),
    "mobilenet_notop": (A.MobileNet, A.mobilenet.preprocess_input,
                        dict(input_shape=(128, 128, 3), alpha=0.25, include_top=False,
                             pooling="avg")),
    "mobilenet_v2": (A.MobileNetV2, A.mobilenet_v2.preprocess_input,
                     dict(input_shape=(96, 96, 3), alpha=0.35, classifier_activation=None)),
    "mobilenet_v2_notop": (A.MobileNetV2, A.mobilenet_v2.preprocess_input,
                           dict(input_shape=(96, 96, 3), alpha=0.35, include_top=False,
                                pooling="avg")),
    "efficientnetb0_notop": (A.EfficientNetB0, A.efficientnet.preprocess_input,
                             dict(input_shape=(64, 64, 3), include_top=False, pooling="avg")),
    "xception_notop": (A.Xception, A.xception.preprocess_input,
                       dict(input_shape=(71, 71, 3), include_top=False, pooling="avg")),
    "vgg16_notop": (A.VGG16, A.vgg16.preprocess_input,
                    dict(input_shape=(32, 32, 3), include_top=False, pooling="avg")),
    "resnet50_notop": (A.ResNet50, A.resnet50.preprocess_input,
                       dict(input_shape=(64, 64, 3), include_top=False, pooling="avg")),
    "inception_v3_notop": (A.InceptionV3, A.inception_v3.preprocess_input,
                           dict(input_shape=(75, 75, 3), include_top=False, pooling="avg")),
}


def randomize_batch_norms(model, rng):
    # fresh statistics (mean 0, variance 1) would let a loader that skips them pass
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            layer.set_weights([
                rng.uniform(0.5, 1.5, w.shape) if w.name.split("/")[-1].startswith(
                    ("gamma", "moving_variance")) else rng.normal(0, 0.1, w.shape)
                for w in layer.weights])


def run_case(name, directory):
    build, prep, kwargs = CASES[name]
    tf.keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    source = build(weights=None, **kwargs)
    randomize_batch_norms(source, rng)
    staged = os.path.join(directory, name + ".staged.h5")
    source.save_weights(staged)
    asked = {}

    def get_file(fname=None, origin=None, cache_subdir="datasets", file_hash=None, **kw):
        asked.update(fname=fname, origin=origin, cache_subdir=cache_subdir,
                     file_hash=file_hash)
        return staged

    data_utils.get_file = get_file
    model = build(weights="imagenet", **kwargs)  # TF's own ImageNet path, our file
    size = kwargs["input_shape"][0]
    images = rng.uniform(0, 255, (2, size, size, 3)).astype("float32")
    preds = model.predict(prep(images.copy()), verbose=0)
    os.replace(staged, os.path.join(directory, asked["fname"]))
    np.savez(os.path.join(directory, name + ".npz"), images=images, preds=preds)
    asked["layers"] = [[layer.name, type(layer).__name__, [list(w.shape) for w in layer.weights]]
                       for layer in model.layers if layer.weights]
    return asked


directory = sys.argv[2]
print(json.dumps({name: run_case(name, directory) for name in CASES}))
'''

CASES = {  # name: (builder, its module, keyword arguments), as TF_SIDE's
    "mobilenet": (A.MobileNet, A.mobilenet, dict(
        input_shape=(128, 128, 3), alpha=0.25, classifier_activation=None)),
    "mobilenet_notop": (A.MobileNet, A.mobilenet, dict(
        input_shape=(128, 128, 3), alpha=0.25, include_top=False, pooling="avg")),
    "mobilenet_v2": (A.MobileNetV2, A.mobilenet_v2, dict(
        input_shape=(96, 96, 3), alpha=0.35, classifier_activation=None)),
    "mobilenet_v2_notop": (A.MobileNetV2, A.mobilenet_v2, dict(
        input_shape=(96, 96, 3), alpha=0.35, include_top=False, pooling="avg")),
    "efficientnetb0_notop": (A.EfficientNetB0, A.efficientnet, dict(
        input_shape=(64, 64, 3), include_top=False, pooling="avg")),
    "xception_notop": (A.Xception, A.xception, dict(
        input_shape=(71, 71, 3), include_top=False, pooling="avg")),
    "vgg16_notop": (A.VGG16, A.vgg16, dict(
        input_shape=(32, 32, 3), include_top=False, pooling="avg")),
    "resnet50_notop": (A.ResNet50, A.resnet50, dict(
        input_shape=(64, 64, 3), include_top=False, pooling="avg")),
    "inception_v3_notop": (A.InceptionV3, A.inception_v3, dict(
        input_shape=(75, 75, 3), include_top=False, pooling="avg")),
}


@pytest.fixture(scope="module")
def tensorflow_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("applications")
    script = directory / "tf_applications_side.py"
    script.write_text(TF_SIDE)
    return directory, run_tf("all", directory, legacy_keras=True, script=script)


PER_FILE_HASHES = (A.mobilenet, A.mobilenet_v2)  # hash tables keyed by file name


def _base_attr(module):
    return "BASE_WEIGHT_PATH" if module in PER_FILE_HASHES else "BASE_WEIGHTS_PATH"


HASH_KEYS = {A.efficientnet: "b0", A.resnet50: "resnet50", A.inception_v3: "inception_v3",
             A.vgg16: "vgg16", A.xception: "xception"}


def _published_hash(module, fname, top):
    """The hash tensorlite's table gives the file (what Keras's get_file was handed)."""
    if module in PER_FILE_HASHES:
        return module.WEIGHTS_HASHES.get(fname)
    return module.WEIGHTS_HASHES[HASH_KEYS[module]][0 if top else 1]


def _point_hash_at(monkeypatch, module, fname, top, md5):
    if module in PER_FILE_HASHES:
        monkeypatch.setitem(module.WEIGHTS_HASHES, fname, md5)
        return
    pair = list(module.WEIGHTS_HASHES[HASH_KEYS[module]])
    pair[0 if top else 1] = md5
    monkeypatch.setitem(module.WEIGHTS_HASHES, HASH_KEYS[module], tuple(pair))


@pytest.mark.parametrize("name", list(CASES))
def test_layer_order_is_tensorflows(tensorflow_files, name):
    """The order Keras's files list layers in (what loading in order relies on): layer
    classes and weight shapes, and the names where the model names its layers."""
    build, _, kwargs = CASES[name]
    model = build(weights=None, **kwargs)
    ours = [[layer.name, type(layer).__name__, [w.shape.as_list() for w in layer.weights]]
            for layer in keras_layer_order(model) if layer.weights]
    theirs = tensorflow_files[1][name]["layers"]
    assert [o[1:] for o in ours] == [t[1:] for t in theirs]
    if build not in (A.InceptionV3, A.Xception):  # names generated per session, as the
        named = [[o[0], t[0]] for o, t in zip(ours, theirs) if o[1] != "Normalization"]
        assert all(o == t for o, t in named), named  # ...Normalization's of EfficientNet


@pytest.mark.parametrize("name", list(CASES))
def test_imagenet_weights_predict_as_tensorflow(tensorflow_files, tmp_path, monkeypatch, name):
    directory, asked = tensorflow_files
    build, module, kwargs = CASES[name]
    fname, top = asked[name]["fname"], kwargs.get("include_top", True)
    # Keras's facts as TensorFlow's own code states them: URL, cache folder, hash
    assert asked[name]["origin"] == getattr(module, _base_attr(module)) + fname
    assert asked[name]["cache_subdir"] == "models"
    assert asked[name]["file_hash"] == _published_hash(module, fname, top)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    md5 = hashlib.md5((directory / fname).read_bytes()).hexdigest()  # noqa: S324 - Keras's
    _point_hash_at(monkeypatch, module, fname, top, md5)
    with serve_directory(directory) as (base, hits):
        monkeypatch.setattr(module, _base_attr(module), base)
        model = build(weights="imagenet", **kwargs)
    assert hits == ["/" + fname]
    expected = np.load(directory / f"{name}.npz")
    got = model.predict(module.preprocess_input(expected["images"].copy()), verbose=0)
    want = expected["preds"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
