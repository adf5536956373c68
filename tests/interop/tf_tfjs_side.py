"""TensorFlow's side of the TF.js Graph-format interop test (test_tfjs_graph_interop.py): run
under real TensorFlow with tf.keras 2 (TF_USE_LEGACY_KERAS=1) by conftest.run_tf, never
imported by tensorlite or pytest.

    python tf_tfjs_side.py write DIR   TensorFlow saves a small image classifier as a
                                       SavedModel in DIR/saved and its predictions for
                                       DIR/expected.npz's `x` as `y`

The model (convolution with a bias, ReLU6, depthwise convolution, max pooling, Dropout,
global average pooling, softmax) has biases drawn at random, so every constant matters.
BatchNormalization is left out: tensorlite's SavedModel loader has no FusedBatchNormV3.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf


def model():
    tf.random.set_seed(0)
    image = tf.keras.Input((16, 16, 3), name="image")
    h = tf.keras.layers.Conv2D(8, 3, padding="same")(image)
    h = tf.keras.layers.ReLU(6.0)(h)
    h = tf.keras.layers.DepthwiseConv2D(3, strides=2, padding="same")(h)
    h = tf.keras.layers.Activation("relu")(h)
    h = tf.keras.layers.MaxPooling2D()(h)
    h = tf.keras.layers.Dropout(0.3)(h)
    h = tf.keras.layers.GlobalAveragePooling2D()(h)
    probs = tf.keras.layers.Dense(4, activation="softmax", name="probs")(h)
    classifier = tf.keras.Model(image, probs)
    rng = np.random.default_rng(0)
    for layer in classifier.layers:
        weights = layer.get_weights()
        if len(weights) == 2:  # kernel and bias: the bias off zero
            layer.set_weights([weights[0], rng.normal(0, 0.3, weights[1].shape)])
    return classifier


def write(directory):
    classifier = model()
    tf.saved_model.save(classifier, os.path.join(directory, "saved"))
    x = np.random.default_rng(1).normal(size=(3, 16, 16, 3)).astype("float32")
    np.savez(os.path.join(directory, "expected.npz"), x=x,
             y=classifier(x, training=False).numpy())
    return {"tf_version": tf.__version__}


if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    if command != "write":
        raise SystemExit(f"unknown command {command}")
    print(json.dumps(write(directory)))
