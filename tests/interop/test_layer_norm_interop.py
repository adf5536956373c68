"""Training steps saved in a tf.Module: the fused LayerNorm op (ops/layer_norm_ops.py) and
Softmax's gradient op SoftmaxGrad are written as TensorFlow's nodes of their compositions,
and real TensorFlow loads the SavedModels and computes the same values."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop
SIDE = __file__.replace("test_layer_norm_interop.py", "tf_layer_norm_side.py")


class Step(tf.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    @tf.function(input_signature=[tf.TensorSpec([None, 3, 8], tf.float32)])
    def train(self, x):
        return self.layer(x, training=True)


def test_tensorflow_runs_the_saved_training_layer_norm(tmp_path):
    layer = tf.keras.layers.LayerNormalization(epsilon=1e-2)
    rng = np.random.default_rng(0)
    x = (rng.normal(size=(4, 3, 8)) * 3 + 1).astype(np.float32)
    layer(x)
    layer.gamma.assign(rng.normal(size=8).astype(np.float32))
    layer.beta.assign(rng.normal(size=8).astype(np.float32))
    step = Step(layer)
    assert "LayerNorm" in step.train.get_concrete_function().graph.op_counts()
    tf.saved_model.save(step, str(tmp_path / "module"))
    np.savez(tmp_path / "x.npz", x=x)
    facts = run_tf("train", tmp_path, script=SIDE)
    assert facts["shape"] == [4, 3, 8]
    got = np.load(tmp_path / "tf_out.npz")["y"]
    np.testing.assert_allclose(got, layer(x, training=True).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, layer(x, training=False).numpy(), rtol=1e-5, atol=1e-5)


class SoftmaxGradient(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 5], tf.float32)])
    def grad(self, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = tf.nn.softmax(x) * tf.range(5, dtype=tf.float32)
        return tape.gradient(out, x)  # (a reduce_sum's gradient has no TF mapping yet)


def test_tensorflow_runs_a_saved_softmax_gradient(tmp_path):
    module = SoftmaxGradient()
    x = np.random.default_rng(1).normal(size=(3, 5)).astype(np.float32)
    assert "SoftmaxGrad" in module.grad.get_concrete_function().graph.op_counts()
    tf.saved_model.save(module, str(tmp_path / "module"))
    np.savez(tmp_path / "x.npz", x=x)
    run_tf("grad", tmp_path, script=SIDE)
    got = np.load(tmp_path / "tf_out.npz")["y"]
    e = np.exp(x - x.max(-1, keepdims=True))
    y = e / e.sum(-1, keepdims=True)
    w = np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(got, y * (w - (w * y).sum(-1, keepdims=True)), rtol=1e-5,
                               atol=1e-6)
