"""A SavedModel whose function makes a value of the batch's size (an LSTM's zero state:
tf.zeros((batch, units)) from the size Python reads) serves every batch size, here and in
real TensorFlow, in both Keras modes: the exporter writes it as a Fill to each run's batch
size, never as the constant of the traced batch (which returned the traced number of rows
for a batch of one, a silent wrong answer)."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop
SIDE = __file__.replace("test_batch_sized_constants_interop.py", "tf_batch_sized_side.py")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    directory = tmp_path_factory.mktemp("batch_sized")
    tf.keras.utils.set_random_seed(3)
    model = tf.keras.Sequential([tf.keras.layers.Input((6, 3)), tf.keras.layers.LSTM(5),
                                 tf.keras.layers.Dense(2)])
    x = np.random.default_rng(0).normal(size=(4, 6, 3)).astype(np.float32)
    tf.saved_model.save(model, str(directory / "lstm"))
    np.savez(directory / "x.npz", x=x)
    return directory, model, x


def test_loaded_here_serves_every_batch_size(saved):
    directory, model, x = saved
    serve = tf.saved_model.load(str(directory / "lstm")).signatures["serving_default"]
    for b in (1, 3, 4):
        got = next(iter(serve(tf.constant(x[:b])).values())).numpy()
        np.testing.assert_allclose(got, model(x[:b]).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("legacy_keras", [False, True], ids=["keras3", "tf_keras2"])
def test_tensorflow_serves_every_batch_size(saved, legacy_keras):
    directory, model, x = saved
    facts = run_tf("call", directory, legacy_keras=legacy_keras, script=SIDE)
    assert facts["shapes"] == {"batch_1": [1, 2], "batch_3": [3, 2], "batch_4": [4, 2]}
    out = np.load(directory / "tf_out.npz")
    for b in (1, 3, 4):
        np.testing.assert_allclose(out[f"batch_{b}"], model(x[:b]).numpy(), rtol=1e-5,
                                   atol=1e-6)
