"""A saved function that trains a BatchNormalization (+ ReLU6), which tensorlite runs as one
fused op (ops/batch_norm_ops.py), is written in TensorFlow's ops: real TensorFlow loads it
and gives the same outputs and moving statistics."""
from pathlib import Path

import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop


class BatchNormTrainer(tf.Module):
    def __init__(self):
        super().__init__()
        self.bn = tf.keras.layers.BatchNormalization(momentum=0.9)
        self.bn.build([None, 4, 4, 3])

    @tf.function(input_signature=[tf.TensorSpec([2, 4, 4, 3])])
    def train(self, x):
        return tf.keras.layers.ReLU(6.0)(self.bn(x, training=True))

    @tf.function(input_signature=[])
    def moving(self):
        return self.bn.moving_mean, self.bn.moving_variance


def test_tensorflow_runs_a_saved_batch_norm_training_function(tmp_path):
    trainer = BatchNormTrainer()
    x = (np.random.default_rng(0).normal(size=(2, 4, 4, 3)) * 3 + 1).astype("float32")
    np.save(tmp_path / "x.npy", x)
    graph = trainer.train.get_concrete_function().graph
    assert graph.op_counts().get("_FusedBatchNormTrain") == 1
    tf.saved_model.save(trainer, str(tmp_path / "model"))
    got = run_tf("run", tmp_path, script=Path(__file__).with_name("tf_batch_norm_side.py"))
    for k in range(2):
        np.testing.assert_allclose(got[f"y{k}"], trainer.train(x).numpy(), rtol=1e-5,
                                   atol=1e-5)
        mean, var = trainer.moving()
        np.testing.assert_allclose(got[f"mean{k}"], mean.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[f"var{k}"], var.numpy(), rtol=1e-5, atol=1e-6)
