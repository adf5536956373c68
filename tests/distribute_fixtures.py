"""The small model and the per-step weight recorder that the data-parallel tests (in-process
and the MPI worker script) train, so both sides build exactly the same thing."""
import numpy as np

import tensorlite as tf


def small_classifier():
    """Dense(6, tanh) -> Dense(3) on 5 features, Adam(0.05), sparse CE from logits."""
    model = tf.keras.Sequential([tf.keras.layers.Dense(6, activation="tanh", input_shape=(5,)),
                                 tf.keras.layers.Dense(3)])
    model.compile(tf.keras.optimizers.Adam(0.05),
                  tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


class WeightRecorder(tf.keras.callbacks.Callback):
    """All weights, flattened into one vector, after every training step."""

    def __init__(self):
        super().__init__()
        self.steps = []

    def on_train_batch_end(self, batch, logs=None):
        self.steps.append(np.concatenate([w.ravel() for w in self.model.get_weights()]))
