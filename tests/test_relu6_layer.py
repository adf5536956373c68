"""`tf.keras.layers.ReLU(6.0)` / `activations.relu(x, max_value=6)` run the Relu6 op, as
TensorFlow's Keras does: one op each way (MobileNetV2 has 35 of them), TF's values and
gradients (0 at exactly 6 and at 0, as TF's Relu6Grad)."""
import numpy as np

import tensorlite as tf


def test_relu_max_value_6_is_one_relu6_op():
    layer = tf.keras.layers.ReLU(6.0)
    graph = tf.function(layer).get_concrete_function(
        tf.TensorSpec([2, 3], tf.float32)).graph
    assert graph.op_counts().get("Relu6") == 1 and "Minimum" not in graph.op_counts()


def test_values_and_gradients_are_tensorflows():
    x = tf.constant(np.array([-1.0, 0.0, 3.0, 6.0, 7.0, np.nan], "float32"))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.keras.layers.ReLU(6.0)(x)
    np.testing.assert_array_equal(y.numpy(), [0, 0, 3, 6, 6, np.nan])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0, 0, 1, 0, 0, 0])
    # other settings keep the general form
    np.testing.assert_array_equal(
        tf.keras.activations.relu(x[:5], max_value=5.0, threshold=1.0).numpy(),
        [0, 0, 3, 5, 5])
