"""Variable, Module, name_scope and variable_creator_scope as TF 2 behaves."""
import numpy as np
import pytest

import tensorlite as tf


def test_variable_basics_and_names():
    v = tf.Variable([1.0, 2.0], name="kernel")
    assert v.name == "kernel:0" and v.dtype == tf.float32 and v.shape == (2,)
    assert v.trainable
    v.assign([3.0, 4.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub(tf.constant([0.5, 0.5]))
    np.testing.assert_allclose(v.numpy(), [3.5, 4.5])
    np.testing.assert_allclose(v.read_value().numpy(), [3.5, 4.5])
    assert repr(v).startswith("<tf.Variable 'kernel:0' shape=(2,) dtype=float32, numpy=array([3.5")
    with tf.name_scope("dense"):
        w = tf.Variable(0.0, name="bias")
        with tf.name_scope("inner"):
            u = tf.Variable(0.0)
    assert w.name == "dense/bias:0" and u.name == "dense/inner/Variable:0"


def test_read_values_are_snapshots():
    v = tf.Variable(1.0)
    before = v.read_value()
    v.assign(5.0)
    assert before.numpy() == 1.0 and v.numpy() == 5.0


def test_variable_operators_and_conversion():
    v = tf.Variable([[1.0, 2.0]])
    assert (v + 1).numpy().tolist() == [[2.0, 3.0]]
    assert (2 * v).numpy().tolist() == [[2.0, 4.0]]
    assert (v @ tf.ones([2, 1])).numpy().tolist() == [[3.0]]
    assert v[0, 1].numpy() == 2.0
    assert np.asarray(v).shape == (1, 2)
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)
    assert {v.ref(): 1}[v.ref()] == 1


def test_variable_bad_assign():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="shape"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype"):
        v.assign(tf.constant([1, 2]))


def test_variable_dtype_and_callable_initial_value():
    v = tf.Variable(lambda: tf.ones([2]), dtype=tf.float64)
    assert v.dtype == tf.float64
    assert tf.Variable(1).dtype == tf.int32


class Inner(tf.Module):
    def __init__(self):
        super().__init__()
        with self.name_scope:
            self.w = tf.Variable(1.0, name="w")
            self.frozen = tf.Variable(2.0, name="frozen", trainable=False)


class Outer(tf.Module):
    def __init__(self):
        super().__init__(name="outer")
        self.blocks = [Inner(), Inner()]
        self.lookup = {"b": tf.Variable(3.0, name="b")}


def test_module_tracking():
    m = Outer()
    assert len(m.variables) == 5
    assert len(m.trainable_variables) == 3 and len(m.non_trainable_variables) == 2
    assert len(m.submodules) == 2
    assert m.blocks[0].w.name == "inner/w:0"
    with pytest.raises(ValueError, match="valid module name"):
        tf.Module(name="bad name!")


def test_variable_creator_scope_substitutes_objects():
    class FactorizedVariable(tf.Module):
        def __init__(self, a, b):
            self.a = a
            self.b = b
    tf.register_tensor_conversion_function(
        FactorizedVariable, lambda x, *a, **k: tf.matmul(x.a, x.b))

    def scope(next_creator, **kwargs):
        shape = kwargs["initial_value"]().shape
        if len(shape) != 2:
            return next_creator(**kwargs)
        return FactorizedVariable(tf.Variable(tf.ones([shape[0], 2])),
                                  tf.Variable(tf.ones([2, shape[1]])))
    with tf.variable_creator_scope(scope):
        k = tf.Variable(lambda: tf.zeros([20, 10]))
        b = tf.Variable(lambda: tf.zeros([10]))
    assert isinstance(k, FactorizedVariable) and isinstance(b, tf.Variable)
    y = tf.matmul(tf.ones([1, 20]), k)
    np.testing.assert_allclose(y.numpy(), np.full((1, 10), 40.0))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.matmul(tf.ones([1, 20]), k))
    ga, gb = tape.gradient(loss, [k.a, k.b])
    assert ga.shape == (20, 2) and gb.shape == (2, 10)


# -- slice assignment (v[0, 0].assign(3.)), as TensorFlow's Variable.__getitem__ ----------

def test_slice_assign_eager_matches_numpy():
    v = tf.Variable(np.zeros((3, 4), np.float32))
    expect = np.zeros((3, 4), np.float32)
    v[0, 0].assign(3.)
    expect[0, 0] = 3.
    v[:, 1].assign([1., 2., 3.])
    expect[:, 1] = [1., 2., 3.]
    v[1:, 2:].assign_add(np.ones((2, 2), np.float32))
    expect[1:, 2:] += 1
    v[..., -1].assign_sub(5.)
    expect[..., -1] -= 5
    v[::2].assign(7.)
    expect[::2] = 7.
    np.testing.assert_array_equal(v.numpy(), expect)


def test_slice_assign_returns_variable_and_keeps_slice_usable():
    v = tf.Variable([1., 2., 3.])
    s = v[1:]
    assert (s + 1).numpy().tolist() == [3., 4.]  # still an ordinary tensor
    assert v[0].assign(9.) is v
    assert v.numpy().tolist() == [9., 2., 3.]


def test_slice_assign_inside_tf_function_runs_every_call():
    v = tf.Variable(np.zeros((2, 3), np.float32))

    @tf.function
    def step(x):
        v[0, 2].assign(x)
        v[:, 0].assign_add(tf.constant([1., 1.]))
        return v[0]

    assert step(tf.constant(7.)).numpy().tolist() == [1., 0., 7.]
    assert step(tf.constant(5.)).numpy().tolist() == [2., 0., 5.]
    np.testing.assert_array_equal(v.numpy(), [[2., 0., 5.], [2., 0., 0.]])


def test_slice_assign_errors():
    v = tf.Variable(np.zeros((2, 2), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError):
        v[5].assign(1.)
    with pytest.raises(AttributeError):
        tf.constant([1., 2.])[0].assign(1.)  # only a variable's slice assigns
