"""Every public layer class in `tf.keras.layers` held to the layer contract by
`run_layer_test` (tests/layer_test_utils.py): build and weights, output shape and dtype,
`get_config`/`from_config`, `.keras`/`.h5` saving and a few training steps.

The namespace is walked: a public layer class missing from SPECS fails
`test_every_public_layer_has_a_spec`. A layer that cannot do one check has that check
turned off in its spec with the reason beside it (`why`), never silently."""
import numpy as np
import pytest

import tensorlite as tf

keras = tf.keras
L = keras.layers
RNG = np.random.default_rng(0)


def test_dense_config_keeps_constraints_and_activity_regularizer():
    """The bug the contract found: Dense.get_config dropped these three arguments."""
    layer = L.Dense(3, kernel_constraint=keras.constraints.MaxNorm(2.0),
                    bias_constraint="non_neg", activity_regularizer=keras.regularizers.L2(0.5))
    copy = L.Dense.from_config(layer.get_config())
    assert isinstance(copy.kernel_constraint, keras.constraints.MaxNorm)
    assert copy.kernel_constraint.get_config()["max_value"] == 2.0
    assert isinstance(copy.bias_constraint, keras.constraints.NonNeg)
    y = copy(np.ones((1, 2), np.float32)).numpy()
    assert len(copy.losses) == 1  # the activity regularizer's, on this call's output
    assert float(copy.losses[0]) == pytest.approx(0.5 * float(np.square(y).sum()), rel=1e-5)


def test_set_weights_and_assign_store_values_outside_a_constraint():
    """As in TensorFlow, a weight's constraint is applied by the optimizer after its update,
    not by assign/set_weights (the contract's from_config copy found set_weights clipping)."""
    layer = L.Dense(2, kernel_constraint="non_neg")
    layer.build((None, 2))
    kernel = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)
    layer.set_weights([kernel, np.zeros(2, np.float32)])
    np.testing.assert_array_equal(layer.kernel.numpy(), kernel)
    v = tf.Variable([1.0], constraint=keras.constraints.NonNeg())
    v.assign([-3.0])
    assert v.numpy().tolist() == [-3.0]
    keras.optimizers.SGD(0.0).apply_gradients([(tf.constant([0.0]), v)])
    assert v.numpy().tolist() == [0.0]  # the optimizer's step applies it
