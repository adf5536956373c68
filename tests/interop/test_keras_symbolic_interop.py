"""Symbolic functional Keras judged by real TensorFlow: tf.keras 2 infers the same symbolic
output shapes for the same functional models (tests/interop/symbolic_models.py: the
textbook's Transformer layers on Input(shape=(None,)), RNNs and convolutions on unknown
lengths and sizes, keyword-only attention calls, TF functions on KerasTensors), and Keras 3
loads the `.keras` files of a dict-in/dict-out model and of a TransformerEncoder model that
tensorlite built, trained and saved, computing the same outputs."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop import symbolic_models
from tests.interop.conftest import TF_SIDE, run_tf

pytestmark = pytest.mark.interop
SIDE = TF_SIDE.with_name("tf_symbolic_side.py")


def test_symbolic_output_shapes_are_tf_keras_2s(tmp_path):
    theirs = run_tf("shapes", tmp_path, legacy_keras=True, script=SIDE)
    ours = {name: [t.shape.as_list() for t in tf.nest.flatten(fn(tf))]
            for name, fn in symbolic_models.MODELS.items()}
    assert ours == theirs


def _dict_io_model():
    keras, layers = tf.keras, tf.keras.layers
    title = keras.Input(shape=(4,), name="title")
    body = keras.Input(shape=(6,), name="body")
    features = layers.Concatenate()([title, body])
    return keras.Model(inputs={"title": title, "body": body},
                       outputs={"priority": layers.Dense(1, name="priority")(features),
                                "department": layers.Dense(3, activation="softmax",
                                                           name="department")(features)})


def _encoder_model():
    encoder = symbolic_models.transformer_encoder_class(tf.keras)
    inputs = tf.keras.Input(shape=(None, 16))
    x = encoder(16, 8, 2)(inputs)
    outputs = tf.keras.layers.Dense(1)(tf.keras.layers.GlobalMaxPooling1D()(x))
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer="rmsprop", loss="mse")
    rng = np.random.default_rng(0)
    model.fit(rng.normal(size=(8, 5, 16)).astype("float32"),
              rng.normal(size=(8, 1)).astype("float32"), epochs=1, verbose=0)
    return model


def test_keras_3_loads_dict_io_and_transformer_models_tensorlite_saved(tmp_path):
    tf.random.set_seed(0)
    rng = np.random.default_rng(1)
    data = {"title": rng.random((3, 4), dtype=np.float32),
            "body": rng.random((3, 6), dtype=np.float32),
            "sequences": rng.normal(size=(2, 7, 16)).astype("float32")}
    np.savez(tmp_path / "inputs.npz", **data)
    dict_io, encoder = _dict_io_model(), _encoder_model()
    dict_io.save(str(tmp_path / "dict_io.keras"))
    encoder.save(str(tmp_path / "encoder.keras"))
    run_tf("load", tmp_path, legacy_keras=False, script=SIDE)
    theirs = np.load(tmp_path / "tf_out.npz")
    ours = dict_io({"title": data["title"], "body": data["body"]})
    for key in ("priority", "department"):
        np.testing.assert_allclose(theirs[f"dict_{key}"], ours[key].numpy(), rtol=1e-5,
                                   atol=1e-6)
    np.testing.assert_allclose(theirs["encoder"], encoder(data["sequences"]).numpy(),
                               rtol=1e-4, atol=1e-5)
