"""A Sequential whose first layer is an adapted preprocessing layer given no input shape is
built (as tf.keras 2 builds it) and saved with its input; real Keras 3 loads the `.keras`
file and predicts the same (the regression and load-text tutorials' models)."""
from pathlib import Path

import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop
L = tf.keras.layers
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "A cat, a dog; a bird?"]


def _save(model, directory, name, x):
    assert model.built
    model.save(str(directory / f"{name}.keras"))
    np.save(directory / f"{name}_x.npy", x)
    np.save(directory / f"{name}_y.npy", model.predict(x, verbose=0))


def test_keras3_loads_sequentials_started_by_adapted_layers(tmp_path):
    texts = tf.data.Dataset.from_tensor_slices(TEXTS).batch(2)
    int_vectorize_layer = L.TextVectorization(max_tokens=20, output_mode='int',
                                              output_sequence_length=6)
    int_vectorize_layer.adapt(texts)
    _save(tf.keras.Sequential([int_vectorize_layer, L.Embedding(21, 4, mask_zero=True),
                               L.GlobalMaxPooling1D(), L.Dense(3)]),
          tmp_path, "text_int", np.array(TEXTS, dtype=object))
    binary_vectorize_layer = L.TextVectorization(max_tokens=20, output_mode='binary')
    binary_vectorize_layer.adapt(texts)
    _save(tf.keras.Sequential([binary_vectorize_layer, L.Dense(4)]), tmp_path, "text_binary",
          np.array(TEXTS, dtype=object))
    features = np.random.default_rng(0).normal(size=(20, 9)).astype(np.float32)
    normalizer = L.Normalization(axis=-1)
    normalizer.adapt(features)
    _save(tf.keras.Sequential([normalizer, L.Dense(8, activation="relu"), L.Dense(1)]),
          tmp_path, "normalized", features[:5])
    diffs = run_tf("read", tmp_path, legacy_keras=False,
                   script=Path(__file__).with_name("tf_adapted_side.py"))
    assert set(diffs) == {"text_int", "text_binary", "normalized"}
    assert max(diffs.values()) < 1e-5, diffs
