"""SavedModels that real TensorFlow wrote from Keras TextVectorization models (int ids padded
to a length, bigrams, multi_hot, count, tf_idf; tf_text_models.py) load in tensorlite with
TensorFlow's outputs, re-save from tensorlite (their functions trace into tensorlite's ops:
StringSplitV2, the ragged row partitions, RaggedTensorToTensor, RaggedBincount), and real
TensorFlow loads the re-saved files (tf.saved_model.load and TensorFlow 1's loader) with the
same outputs; the re-saved graphs follow a new batch size."""
import json
from pathlib import Path

import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf
from tests.saved_model_helpers import TEXTS

pytestmark = pytest.mark.interop
SCRIPT = Path(__file__).with_name("tf_text_models.py")
OTHER_TEXTS = np.array([b"dogs", b"the cat and the dog ran on", b"mat mat mat"])


def _only(outputs):
    """The one output of a signature (named for the Keras layer that made it)."""
    (value,) = outputs.values()
    return value.numpy()


@pytest.fixture(scope="module")
def resaved(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tf_text_models")
    np.savez(directory / "inputs.npz", texts=TEXTS)
    kinds = run_tf("write", directory, script=SCRIPT)
    tf_outputs = np.load(directory / "tf_outputs.npz")
    ours, other = {}, {}
    for kind in kinds:
        loaded = tf.saved_model.load(str(directory / f"tf_{kind}"))
        serve = loaded.signatures["serving_default"]
        ours[kind] = _only(serve(inputs=tf.constant(TEXTS)))
        other[kind] = _only(serve(inputs=tf.constant(OTHER_TEXTS)))
        tf.saved_model.save(loaded, str(directory / kind))
    manifest = {kind: {"signatures": {"serving_default": {"inputs": "texts"}}}
                for kind in kinds}
    (directory / "manifest.json").write_text(json.dumps(manifest))
    run_tf("savedmodel_read", directory)
    return (kinds, tf_outputs, ours, other, np.load(directory / "tf_read.npz"), directory)


def test_tensorlite_runs_tensorflows_text_models(resaved):
    kinds, tf_outputs, ours, _, _, _ = resaved
    assert kinds == ["bigrams", "count", "int", "multi_hot", "tf_idf"]
    for kind in kinds:
        np.testing.assert_allclose(ours[kind], tf_outputs[kind], rtol=1e-6, err_msg=kind)


@pytest.mark.parametrize("where", ["sig", "tf1"])
def test_tensorflow_loads_the_re_saved_text_models(resaved, where):
    kinds, tf_outputs, _, _, got, _ = resaved
    for kind in kinds:
        (key,) = [k for k in got.files if k.startswith(f"{kind}.{where}.serving_default.")]
        np.testing.assert_allclose(got[key], tf_outputs[kind], rtol=1e-6, err_msg=kind)


def test_the_re_saved_graph_follows_a_new_batch(resaved):
    """A batch of another size and other word counts: the re-saved graph computes its row
    partitions from the input (nothing frozen at the traced values)."""
    kinds, _, _, other, _, directory = resaved
    for kind in kinds:
        again = tf.saved_model.load(str(directory / kind)).signatures["serving_default"]
        got = _only(again(inputs=tf.constant(OTHER_TEXTS)))
        np.testing.assert_allclose(got, other[kind], rtol=1e-6, err_msg=kind)
