"""tf.TensorArray eagerly and inside tf.function: the guide's "Accumulating values in a
loop" (dynamic_rnn), tf.function's docstring example, tf.while_loop carrying one, a fresh
array on every call, and errors."""
import numpy as np
import pytest

import tensorlite as tf


def test_eager_write_read_stack_and_friends():
    ta = tf.TensorArray(tf.float32, size=3)
    for i in range(3):
        ta = ta.write(i, [float(i), float(i) * 10])
    assert ta.size().numpy() == 3
    np.testing.assert_array_equal(ta.stack().numpy(), [[0, 0], [1, 10], [2, 20]])
    np.testing.assert_array_equal(ta.read(1).numpy(), [1, 10])
    np.testing.assert_array_equal(ta.gather([2, 0]).numpy(), [[2, 20], [0, 0]])
    np.testing.assert_array_equal(ta.concat().numpy(), [0, 0, 1, 10, 2, 20])
    grown = tf.TensorArray(tf.int32, size=0, dynamic_size=True).unstack([[1, 2], [3, 4]])
    assert grown.size().numpy() == 2 and grown.read(1).numpy().tolist() == [3, 4]
    empty = tf.TensorArray(tf.float32, size=0, element_shape=[2])
    assert empty.stack().shape == (0, 2)


def test_eager_errors():
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not resizeable"):
        ta.write(2, 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="has not yet been written"):
        ta.read(0)
    with pytest.raises(ValueError, match="Size must be provided"):
        tf.TensorArray(tf.float32)
    ta = ta.write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        ta.write(1, [1.0])


def test_eager_gradient_flows_through_stack():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        ta = tf.TensorArray(tf.float32, size=2)
        ta = ta.write(0, x * x).write(1, 3.0 * x)
        loss = tf.reduce_sum(ta.stack())
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [5.0, 7.0])


def test_guide_accumulating_values_in_a_loop():
    @tf.function
    def rnn_step(inp, state):
        return inp + state

    @tf.function
    def dynamic_rnn(rnn_step, input_data, initial_state):
        # [batch, time, features] -> [time, batch, features]
        input_data = tf.transpose(input_data, [1, 0, 2])
        max_seq_len = input_data.shape[0]

        states = tf.TensorArray(tf.float32, size=max_seq_len)
        state = initial_state
        for i in tf.range(max_seq_len):
            state = rnn_step(input_data[i], state)
            states = states.write(i, state)
        return tf.transpose(states.stack(), [1, 0, 2])

    for _ in range(2):  # each call gets a fresh array
        x = tf.random.uniform([3, 4, 5])
        out = dynamic_rnn(rnn_step, x, tf.zeros([3, 5]))
        np.testing.assert_allclose(out.numpy(), np.cumsum(x.numpy(), axis=1), rtol=1e-6)
    assert dynamic_rnn.experimental_get_tracing_count() == 1


def test_tf_function_docstring_example():
    @tf.function
    def f(x):
        ta = tf.TensorArray(dtype=tf.int32, size=0, dynamic_size=True)
        for i in range(len(x)):
            ta = ta.write(i, x[i] + 1)
        return ta.stack()

    assert f(tf.constant([1, 2, 3])).numpy().tolist() == [2, 3, 4]


def test_while_loop_carries_a_tensor_array_in_a_graph_and_eagerly():
    def f(n):
        ta = tf.TensorArray(tf.float32, size=n)
        _, ta = tf.while_loop(lambda i, ta: i < n,
                              lambda i, ta: (i + 1, ta.write(i, tf.cast(i, tf.float32) * 2)),
                              [tf.constant(0), ta])
        return ta.stack()
    assert f(tf.constant(3)).numpy().tolist() == [0.0, 2.0, 4.0]
    g = tf.function(f)
    assert g(tf.constant(3)).numpy().tolist() == [0.0, 2.0, 4.0]
    assert g(tf.constant(5)).numpy().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert g.experimental_get_tracing_count() == 1


def test_graph_read_of_an_unwritten_index_is_an_error():
    @tf.function
    def f(n):
        ta = tf.TensorArray(tf.float32, size=n)
        return ta.write(0, 1.0).read(1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not yet been written"):
        f(tf.constant(2))
