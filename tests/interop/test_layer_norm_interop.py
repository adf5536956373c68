"""A training-mode LayerNormalization saved in a tf.Module: the fused LayerNorm op
(ops/layer_norm_ops.py) is written as TensorFlow's nodes of the composition, and real
TensorFlow loads the SavedModel and computes the same values."""
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
    facts = run_tf("call", tmp_path, script=SIDE)
    assert facts["shape"] == [4, 3, 8]
    got = np.load(tmp_path / "tf_out.npz")["y"]
    np.testing.assert_allclose(got, layer(x, training=True).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, layer(x, training=False).numpy(), rtol=1e-5, atol=1e-5)
