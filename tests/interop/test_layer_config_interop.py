"""A Dense layer's constraints and activity regularizer (which its config used to drop)
survive `.keras` and `.h5` files both ways: real Keras 3 loads the files tensorlite saves
with them intact and predicts the same, and tensorlite loads the files Keras 3 saves.
(tf.keras 2 reads neither: tensorlite writes Keras 3's `.keras` and `.h5` layouts.)"""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import TF_SIDE, run_tf

pytestmark = pytest.mark.interop
SIDE = TF_SIDE.with_name("tf_layer_config_side.py")
X = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)


def _model():
    """tf.keras 2's style: a Sequential whose first layer is given input_shape (a layer's
    batch_input_shape in its config made Keras 3 refuse the file)."""
    keras = tf.keras
    return keras.Sequential([keras.layers.Dense(
        2, input_shape=(3,), kernel_constraint=keras.constraints.MaxNorm(1.5),
        bias_constraint=keras.constraints.NonNeg(),
        activity_regularizer=keras.regularizers.L2(0.25))])


def test_real_keras_reads_dense_weight_arguments_we_save(tmp_path):
    model = _model()
    np.save(tmp_path / "x.npy", X)
    for fmt in ("keras", "h5"):
        model.save(str(tmp_path / f"dense.{fmt}"))
    facts = run_tf("read", tmp_path, legacy_keras=False, script=SIDE)
    for fmt in ("keras", "h5"):
        got = facts[fmt]
        assert (got["kernel_constraint"], got["max_value"]) == ("MaxNorm", 1.5)
        assert got["bias_constraint"] == "NonNeg"
        assert (got["activity_regularizer"], got["l2"]) == ("L2", 0.25)
        np.testing.assert_allclose(got["pred"], model.predict(X, verbose=0), atol=1e-6)


def test_we_read_dense_weight_arguments_real_keras_saves(tmp_path):
    np.save(tmp_path / "x.npy", X)
    expected = run_tf("write", tmp_path, legacy_keras=False, script=SIDE)
    for fmt in ("keras", "h5"):
        model = tf.keras.models.load_model(str(tmp_path / f"dense.{fmt}"), compile=False)
        dense = model.layers[-1]
        assert isinstance(dense.kernel_constraint, tf.keras.constraints.MaxNorm)
        assert dense.kernel_constraint.get_config()["max_value"] == 1.5
        assert isinstance(dense.bias_constraint, tf.keras.constraints.NonNeg)
        assert isinstance(dense.activity_regularizer, tf.keras.regularizers.L2)
        assert dense.activity_regularizer.get_config()["l2"] == pytest.approx(0.25)
        np.testing.assert_allclose(model.predict(X, verbose=0), expected["pred"], atol=1e-6)
