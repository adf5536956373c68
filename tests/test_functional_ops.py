"""tf.map_fn / tf.scan / tf.foldl / tf.foldr against Python loops over NumPy, with
gradients against finite differences, ragged elements and results, nested structures, and
inside tf.function (including a shape-polymorphic signature)."""
import numpy as np
import pytest

import tensorlite as tf
from tests.op_check import check_op, rand


def test_map_fn_values_and_gradients():
    check_op(lambda x: tf.map_fn(lambda r: tf.reduce_sum(r * r) * r, x),
             lambda x: np.stack([np.sum(r * r) * r for r in x]), [rand(4, 3, seed=1)])


def test_map_fn_nested_elems_and_outputs():
    a, b = tf.constant([1, 2, 3]), tf.constant([10, 20, 30])
    s, p = tf.map_fn(lambda x: (x[0] + x[1], x[0] * x[1]), (a, b))
    assert s.numpy().tolist() == [11, 22, 33] and p.numpy().tolist() == [10, 40, 90]
    out = tf.map_fn(lambda d: {"twice": d["v"] * 2}, {"v": a})
    assert out["twice"].numpy().tolist() == [2, 4, 6]


def test_map_fn_ragged_as_in_the_ragged_tensor_guide():
    digits = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
    assert tf.map_fn(tf.math.square, digits).to_list() == \
        [[9, 1, 16, 1], [], [25, 81, 4], [36], []]
    sums = tf.map_fn(tf.reduce_sum, digits, fn_output_signature=tf.int32)
    assert sums.numpy().tolist() == [9, 0, 16, 6, 0]
    ranges = tf.map_fn(tf.range, tf.constant([1, 2, 3]),
                       fn_output_signature=tf.RaggedTensorSpec(shape=[None], dtype=tf.int32))
    assert ranges.to_list() == [[0], [0, 1], [0, 1, 2]]


def test_map_fn_errors_and_empty_input():
    assert tf.map_fn(lambda x: x, tf.zeros([0, 3])).shape == (0, 3)
    with pytest.raises(ValueError, match="differ in shape"):
        tf.map_fn(tf.range, tf.constant([1, 2]))
    with pytest.raises(TypeError, match="fn_output_signature says float32"):
        tf.map_fn(lambda x: x, tf.constant([1, 2]), fn_output_signature=tf.float32)
    with pytest.raises(ValueError, match="same first dimension"):
        tf.map_fn(lambda x: x[0], (tf.zeros([2]), tf.zeros([3])))


@pytest.mark.parametrize("signature", [None, [tf.TensorSpec([None], tf.float32)]])
def test_map_fn_in_tf_function_for_each_length(signature):
    f = tf.function(lambda x: tf.map_fn(lambda v: v * 2.0, x), input_signature=signature)
    for n in (3, 2, 3):
        x = tf.range(float(n))
        assert f(x).numpy().tolist() == (np.arange(n) * 2.0).tolist()


def test_scan_and_folds_against_python_loops():
    x = rand(5, 2, seed=3)
    check_op(lambda t: tf.scan(lambda a, v: a * v + 1.0, t),
             lambda t: np.stack(list(_running(lambda a, v: a * v + 1.0, t))), [x])
    check_op(lambda t, i: tf.scan(lambda a, v: a + v * v, t, initializer=i),
             lambda t, i: np.stack(list(_running(lambda a, v: a + v * v, t, i))[1:]),
             [x, rand(2, seed=4)])
    v = tf.constant([1, 2, 3])
    assert tf.scan(lambda a, e: a + e, v, reverse=True).numpy().tolist() == [6, 5, 3]
    assert int(tf.foldl(lambda a, e: a - e, v)) == -4
    assert int(tf.foldr(lambda a, e: a - e, v)) == 0
    assert int(tf.foldl(lambda a, e: a * e, v, initializer=tf.constant(10))) == 60
    with pytest.raises(ValueError, match="no initializer"):
        tf.foldl(lambda a, e: a, tf.zeros([0]))


def _running(fn, xs, init=None):
    acc = xs[0] if init is None else init
    yield acc
    for v in (xs[1:] if init is None else xs):
        acc = fn(acc, v)
        yield acc
