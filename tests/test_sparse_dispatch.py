"""SparseTensor through tf.cast, the zero-preserving tf.math functions and Keras layers, as
TensorFlow's sparse tensor guide uses them."""
import numpy as np
import pytest

import tensorlite as tf


def _st():
    return tf.sparse.SparseTensor(indices=[[0, 1], [2, 3]], values=[-4.0, 9.0],
                                  dense_shape=[3, 5])


def test_cast_keeps_indices_and_casts_values():
    st = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    out = tf.cast(st, tf.float32)
    assert isinstance(out, tf.sparse.SparseTensor)
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.indices.numpy(), st.indices.numpy())
    np.testing.assert_array_equal(tf.sparse.to_dense(out).numpy(),
                                  tf.sparse.to_dense(st).numpy().astype(np.float32))


@pytest.mark.parametrize("fn, ref", [(tf.math.abs, np.abs), (tf.math.negative, np.negative),
                                     (tf.math.sign, np.sign), (tf.math.square, np.square),
                                     (tf.math.tanh, np.tanh), (tf.math.sin, np.sin)])
def test_zero_preserving_unary_functions_give_sparse(fn, ref):
    out = fn(_st())
    assert isinstance(out, tf.sparse.SparseTensor)
    dense = tf.sparse.to_dense(_st()).numpy()
    np.testing.assert_allclose(tf.sparse.to_dense(out).numpy(), ref(dense), rtol=1e-6)


def test_sqrt_of_sparse_values():
    st = tf.sparse.SparseTensor([[0, 1]], [16.0], [2, 2])
    np.testing.assert_allclose(tf.sparse.to_dense(tf.math.sqrt(st)).numpy(),
                               [[0.0, 4.0], [0.0, 0.0]])


def test_functions_that_move_zero_refuse_sparse():
    with pytest.raises(TypeError, match="zero-preserving.*map_values"):
        tf.math.exp(_st())


def test_keras_sparse_input_with_integer_values():
    # the sparse tensor guide's cell: tf.keras.Input(sparse=True) into Dense, int values
    x = tf.keras.Input(shape=(4,), sparse=True)
    y = tf.keras.layers.Dense(4)(x)
    model = tf.keras.Model(x, y)
    sparse_data = tf.sparse.SparseTensor(
        indices=[(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)],
        values=[1, 1, 1, 1, 1, 1], dense_shape=(6, 4))
    out = model(sparse_data)
    dense = tf.sparse.to_dense(sparse_data).numpy().astype(np.float32)
    kernel, bias = model.layers[-1].get_weights()
    np.testing.assert_allclose(out.numpy(), dense @ kernel + bias, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(sparse_data, verbose=0), out.numpy(), rtol=1e-6)


def test_repr_shows_the_component_tensors_as_tensorflow_does():
    st = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 10])
    assert repr(st) == (
        "SparseTensor(indices=tf.Tensor(\n[[0 3]\n [2 4]], shape=(2, 2), dtype=int64), "
        "values=tf.Tensor([10 20], shape=(2,), dtype=int32), "
        "dense_shape=tf.Tensor([ 3 10], shape=(2,), dtype=int64))")
