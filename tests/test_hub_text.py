"""Seed 001's text classification with a hub embedding, as the TF tutorial writes it:
`hub.KerasLayer(embedding, input_shape=[], dtype=tf.string, trainable=True)` in a Sequential
model, where `embedding` is the URL of a text-embedding SavedModel written by TensorFlow
(tests/fixtures/hub_text_module, made by make_hub_text_module.py: tokenise, vocabulary lookup
from its asset file, embedding, mean) served over a real HTTP server on 127.0.0.1. The module
gives TensorFlow's embeddings, and the model learns a synthetic two-class corpus (falling
loss, held-out accuracy above 0.9) while fine-tuning the module's embedding matrix."""
import os

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.hub as hub
from tests.test_hub import _Server, _tarball

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
MODULE = os.path.join(FIXTURES, "hub_text_module")
EXPECTED = np.load(os.path.join(FIXTURES, "hub_text_module_expected.npz"))["y"]
SENTENCES = ["The movie was great!", "this film is AWFUL, really awful", "", "unknown words",
             "a truly wonderful, moving story"]  # make_hub_text_module.SENTENCES

POSITIVE = "great wonderful superb brilliant delightful loved enjoyable moving".split()
NEGATIVE = "terrible awful boring dreadful dull hated painful weak".split()
FILLER = "the a this that it was is and but movie film story plot acting actors really " \
         "very quite so truly utterly".split()


def corpus(n, seed):
    """`n` reviews: filler words around two or three words of the label's class (and, in a
    third of them, one word of the other class), some capitals and punctuation."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        label = int(rng.integers(2))
        own, other = (POSITIVE, NEGATIVE) if label else (NEGATIVE, POSITIVE)
        words = list(rng.choice(FILLER, size=int(rng.integers(3, 9))))
        words += list(rng.choice(own, size=int(rng.integers(2, 4))))
        if rng.random() < 0.33:
            words.append(str(rng.choice(other)))
        rng.shuffle(words)
        text = " ".join(words)
        texts.append(text.capitalize() + str(rng.choice([".", "!", ",", ""])))
        labels.append(label)
    return np.array(texts, dtype=object), np.array(labels, dtype=np.int64)


@pytest.fixture
def embedding(tmp_path, monkeypatch):
    monkeypatch.setenv("TFHUB_CACHE_DIR", str(tmp_path / "cache"))
    server = _Server(_tarball(root=MODULE))
    yield server.url
    server.close()


def test_hub_text_embedding_gives_tensorflows_outputs(embedding):
    module = hub.load(embedding)
    np.testing.assert_allclose(module(tf.constant(SENTENCES)).numpy(), EXPECTED, atol=1e-6)
    layer = hub.KerasLayer(embedding, input_shape=[], dtype=tf.string)
    np.testing.assert_allclose(layer(tf.constant(SENTENCES[:3])).numpy(), EXPECTED[:3],
                               atol=1e-6)


def test_seed_001_text_classification_with_hub_learns(embedding):
    tf.random.set_seed(0)
    train_x, train_y = corpus(1000, seed=1)
    val_x, val_y = corpus(200, seed=2)
    train_data = tf.data.Dataset.from_tensor_slices((train_x, train_y))
    validation_data = tf.data.Dataset.from_tensor_slices((val_x, val_y))

    hub_layer = hub.KerasLayer(embedding, input_shape=[],
                               dtype=tf.string, trainable=True)
    train_examples_batch = tf.constant(train_x[:3])
    assert hub_layer(train_examples_batch[:3]).shape == (3, 16)

    model = tf.keras.Sequential()
    model.add(hub_layer)
    model.add(tf.keras.layers.Dense(16, activation='relu'))
    model.add(tf.keras.layers.Dense(1))
    model.compile(optimizer='adam',
                  loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=['accuracy'])
    embeddings_before = hub_layer.weights[0].numpy().copy()
    history = model.fit(train_data.shuffle(10000).batch(32), epochs=10,
                        validation_data=validation_data.batch(32), verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    assert history.history["val_accuracy"][-1] > 0.9
    _, accuracy = model.evaluate(val_x, val_y, verbose=0)
    assert accuracy > 0.9
    # trainable=True fine-tunes the module's embedding matrix itself
    assert len(model.trainable_weights) == 5
    assert not np.allclose(hub_layer.weights[0].numpy(), embeddings_before)
