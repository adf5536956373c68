"""Keras model files against real Keras: `.keras` and `.h5` models saved by TensorFlow's
Keras 3 (and `.h5` by tf.keras 2) load here and predict the same; Keras 3 loads the
`.keras` and `.h5` files tensorlite saves and predicts the same, and tf.keras 2 its own `.h5`
format, compiled; training continues from a
loaded `.keras` exactly as it would have in the program that saved it."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf
from tests.interop.shared_data import X, Y, images, keras_models, ops_model

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def keras3_written(tmp_path_factory):
    directory = tmp_path_factory.mktemp("keras3")
    run_tf("keras_write", directory, legacy_keras=False)
    return directory, np.load(directory / "keras_expected.npz")


@pytest.mark.parametrize("fmt", ["keras", "h5"])
def test_keras3_files_load_and_predict_the_same(keras3_written, fmt):
    directory, expected = keras3_written
    mlp = tf.keras.models.load_model(str(directory / f"mlp.{fmt}"))
    cnn = tf.keras.models.load_model(str(directory / f"cnn.{fmt}"))
    assert [type(layer).__name__ for layer in cnn.layers] == [  # as Keras lists them
        "InputLayer", "Conv2D", "BatchNormalization", "MaxPooling2D", "Conv2D", "Flatten", "Dropout",
        "Dense", "Dense", "Concatenate"]
    np.testing.assert_allclose(mlp.predict(X, verbose=0), expected["mlp_pred"], atol=1e-6)
    np.testing.assert_allclose(cnn.predict(images(), verbose=0), expected["cnn_pred"],
                               atol=1e-5)


def test_training_continues_from_a_keras3_archive(keras3_written):
    directory, expected = keras3_written
    mlp = tf.keras.models.load_model(str(directory / "mlp.keras"))
    assert int(mlp.optimizer.iterations.numpy()) == 6
    mlp.train_on_batch(X, Y)  # Adam's moments came from the archive
    np.testing.assert_allclose(mlp.layers[0].kernel.numpy(), expected["mlp_next_kernel"],
                               rtol=1e-5, atol=1e-6)


def test_tf_keras2_h5_files_load_and_predict_the_same(tmp_path):
    run_tf("keras_write", tmp_path, legacy_keras=True)
    expected = np.load(tmp_path / "keras_expected.npz")
    mlp = tf.keras.models.load_model(str(tmp_path / "mlp.h5"))
    cnn = tf.keras.models.load_model(str(tmp_path / "cnn.h5"))
    np.testing.assert_allclose(mlp.predict(X, verbose=0), expected["mlp_pred"], atol=1e-6)
    np.testing.assert_allclose(cnn.predict(images(), verbose=0), expected["cnn_pred"],
                               atol=1e-5)


def test_tf_keras2_model_of_tf_functions_loads_and_evaluates_the_same(tmp_path):
    """tf.keras 2 saves TF functions called on symbolic tensors as TFOpLambda layers (their
    nodes in its own format: constant first arguments, tensors among the kwargs) and a
    symbolic add_loss / add_metric as AddLoss / AddMetric layers."""
    facts = run_tf("keras2_ops_write", tmp_path, legacy_keras=True)
    assert {"TFOpLambda", "SlicingOpLambda", "AddLoss", "AddMetric"} <= set(facts["layers"])
    expected = np.load(tmp_path / "ops_expected.npz")
    model = tf.keras.models.load_model(str(tmp_path / "ops.h5"))
    np.testing.assert_allclose(model.predict(X, verbose=0), expected["pred"], atol=1e-6)
    model.compile(optimizer="sgd", loss="mse")
    result = model.evaluate(X, Y, batch_size=4, verbose=0, return_dict=True)
    np.testing.assert_allclose(result["loss"], expected["loss"], rtol=1e-5)  # with add_loss
    np.testing.assert_allclose(result["std_h"], expected["std_h"], rtol=1e-5)
    ours = ops_model(tf)  # the same code builds the same graph here
    assert [type(la).__name__ for la in ours.layers] == \
        [type(la).__name__ for la in model.layers]


def test_keras3_loads_our_files_and_predicts_the_same(tmp_path):
    tf.random.set_seed(3)
    mlp, cnn = keras_models(tf.keras)
    mlp.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    mlp.fit(X, Y, epochs=2, batch_size=4, verbose=0, shuffle=False)
    cnn.compile(optimizer="sgd", loss="mse")
    cnn.fit(images(), np.ones((2, 5), np.float32), epochs=2, verbose=0)
    for fmt in ("keras", "h5"):
        mlp.save(str(tmp_path / f"mlp.{fmt}"))
        cnn.save(str(tmp_path / f"cnn.{fmt}"))
    run_tf("keras_read", tmp_path, legacy_keras=False)
    got = np.load(tmp_path / "keras_read.npz")
    for fmt in ("keras", "h5"):
        np.testing.assert_allclose(got[f"mlp_pred_{fmt}"], mlp.predict(X, verbose=0),
                                   atol=1e-6)
        np.testing.assert_allclose(got[f"cnn_pred_{fmt}"], cnn.predict(images(), verbose=0),
                                   atol=1e-5)
    facts = run_tf("keras2_read_h5", tmp_path, legacy_keras=True)  # tf.keras 2's own format
    got2 = np.load(tmp_path / "keras2_read.npz")
    assert facts["optimizer"] == "Adam"
    np.testing.assert_allclose(got2["mlp_pred"], mlp.predict(X, verbose=0), atol=1e-6)
    np.testing.assert_allclose(got2["cnn_pred"], cnn.predict(images(), verbose=0), atol=1e-5)
    np.testing.assert_allclose(got2["mlp_loss"], mlp.evaluate(X, Y, batch_size=len(X),
                                                                verbose=0), rtol=1e-5)
    mlp.train_on_batch(X, Y)  # Keras 3 continues from our archive's Adam state as we do
    np.testing.assert_allclose(got["mlp_next_kernel"], mlp.layers[0].kernel.numpy(),
                               rtol=1e-5, atol=1e-6)
