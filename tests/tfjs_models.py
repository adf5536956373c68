"""The models the TF.js Graph-format and browser tests convert (issue 34's list: an MLP, the
CIFAR CNN (lite_helpers.fitted_cifar_cnn), an LSTM text classifier, MobileNetV2 with
weights=None, a model with BatchNormalization and Dropout), built with weights that make
every layer matter."""
import numpy as np

import tensorlite as tf


def mlp(seed=3):
    tf.random.set_seed(seed)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(8,),
                              bias_initializer="random_normal", name="hidden"),
        tf.keras.layers.Dense(3, activation="softmax", bias_initializer="random_normal",
                              name="probs")])


def lstm_classifier(seed=5, vocabulary=50, length=10):
    """Embedding + LSTM + softmax over token ids [batch, length]."""
    tf.random.set_seed(seed)
    model = tf.keras.Sequential([
        tf.keras.layers.Embedding(vocabulary, 8, input_length=length),
        tf.keras.layers.LSTM(12), tf.keras.layers.Dense(2, activation="softmax")])
    model.build((None, length))
    return model


def spread_batch_norms(model, seed):
    """BatchNormalization statistics, scales and offsets away from their initial values,
    so every layer changes the result (at init MobileNetV2's BN layers are near identity
    and its classifier sees zeros). Returns the model."""
    rng = np.random.default_rng(seed)
    for v in model.variables:
        name = v.name.split(":")[0].rsplit("/", 1)[-1]
        if name in ("moving_variance", "gamma"):
            v.assign(rng.uniform(0.5, 1.5, v.shape).astype("float32"))
        elif name in ("moving_mean", "beta"):
            v.assign(rng.normal(0, 0.2, v.shape).astype("float32"))
    return model


def mobilenet_v2(size=96):
    """MobileNetV2 (weights=None) with logits out and spread BatchNormalization."""
    model = tf.keras.applications.MobileNetV2(input_shape=(size, size, 3), weights=None,
                                              classifier_activation=None)
    return spread_batch_norms(model, 0)


def batch_norm_dropout(conv=False, seed=4):
    """Dense (or Conv2D) with a bias, BatchNormalization, ReLU, Dropout, Dense."""
    tf.random.set_seed(seed)
    first = tf.keras.layers.Conv2D(5, 3, input_shape=(6, 6, 2)) if conv else \
        tf.keras.layers.Dense(12, input_shape=(6,))
    model = tf.keras.Sequential([
        first, tf.keras.layers.BatchNormalization(), tf.keras.layers.Activation("relu"),
        tf.keras.layers.Dropout(0.5), tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
    spread_batch_norms(model, 2)
    first.bias.assign(np.linspace(-1, 1, first.bias.shape[0]).astype("float32"))
    return model
