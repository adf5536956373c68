"""A tf.Module shared by the SavedModel tests (tensorlite's own and the interop ones with real
TensorFlow): two tf.functions, one of them __call__ returning a dict, and a non-trainable
variable."""
import numpy as np

import tensorlite as tf


class Scorer(tf.Module):
    """Two tf.functions (one of them __call__, returning a dict) over three variables."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(5)
        self.w = tf.Variable(rng.normal(size=(3, 4)).astype(np.float32), name="w")
        self.b = tf.Variable(rng.normal(size=(4,)).astype(np.float32), name="b")
        self.scale = tf.Variable(np.float32(1.5), name="scale", trainable=False)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w) + self.b)
        return {"score": tf.reduce_sum(h, axis=1) * self.scale, "probs": tf.nn.softmax(h)}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def features(self, x):
        return tf.concat([tf.tanh(x), tf.reshape(tf.reduce_mean(x, axis=1), [-1, 1])], 1)
