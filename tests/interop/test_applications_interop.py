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
    "mobilenet_v2": (A.MobileNetV2, A.mobilenet_v2.preprocess_input,
                     dict(input_shape=(96, 96, 3), alpha=0.35, classifier_activation=None)),
    "mobilenet_v2_notop": (A.MobileNetV2, A.mobilenet_v2.preprocess_input,
                           dict(input_shape=(96, 96, 3), alpha=0.35, include_top=False,
                                pooling="avg")),
    "efficientnetb0_notop": (A.EfficientNetB0, A.efficientnet.preprocess_input,
                             dict(input_shape=(64, 64, 3), include_top=False, pooling="avg")),
    "resnet50_notop": (A.ResNet50, A.resnet50.preprocess_input,
                       dict(input_shape=(64, 64, 3), include_top=False, pooling="avg")),
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
    return asked


directory = sys.argv[2]
print(json.dumps({name: run_case(name, directory) for name in CASES}))
'''

CASES = {  # name: (builder, its module, keyword arguments), as TF_SIDE's
    "mobilenet_v2": (A.MobileNetV2, A.mobilenet_v2, dict(
        input_shape=(96, 96, 3), alpha=0.35, classifier_activation=None)),
    "mobilenet_v2_notop": (A.MobileNetV2, A.mobilenet_v2, dict(
        input_shape=(96, 96, 3), alpha=0.35, include_top=False, pooling="avg")),
    "efficientnetb0_notop": (A.EfficientNetB0, A.efficientnet, dict(
        input_shape=(64, 64, 3), include_top=False, pooling="avg")),
    "resnet50_notop": (A.ResNet50, A.resnet50, dict(
        input_shape=(64, 64, 3), include_top=False, pooling="avg")),
}


@pytest.fixture(scope="module")
def tensorflow_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("applications")
    script = directory / "tf_applications_side.py"
    script.write_text(TF_SIDE)
    return directory, run_tf("all", directory, legacy_keras=True, script=script)


def _base_attr(module):
    return "BASE_WEIGHT_PATH" if module is A.mobilenet_v2 else "BASE_WEIGHTS_PATH"


def _published_hash(module, fname, top):
    """The hash tensorlite's table gives the file (what Keras's get_file was handed)."""
    if module is A.mobilenet_v2:
        return module.WEIGHTS_HASHES.get(fname)
    key = {A.efficientnet: "b0", A.resnet50: "resnet50"}[module]
    return module.WEIGHTS_HASHES[key][0 if top else 1]


def _point_hash_at(monkeypatch, module, fname, top, md5):
    if module is A.mobilenet_v2:
        monkeypatch.setitem(module.WEIGHTS_HASHES, fname, md5)
        return
    key = {A.efficientnet: "b0", A.resnet50: "resnet50"}[module]
    pair = list(module.WEIGHTS_HASHES[key])
    pair[0 if top else 1] = md5
    monkeypatch.setitem(module.WEIGHTS_HASHES, key, tuple(pair))


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
