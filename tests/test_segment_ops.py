"""tf.math segment reductions against NumPy loops, gradients against finite differences
(ties and zeros by TensorFlow's rules), empty segments and dropped (negative) ids as
TensorFlow gives them, and bad ids as clear errors."""
import numpy as np
import pytest

import tensorlite as tf
from tests.op_check import check_op, rand

IDS = np.array([2, 0, 2, 2, 0])


def _np_unsorted(kind, data, ids, n):
    # an empty segment's maximum (minimum) is the dtype's lowest (highest) finite value,
    # as TensorFlow's numeric_limits<T>::lowest()
    big = np.finfo(data.dtype).max
    start = {"sum": 0.0, "prod": 1.0, "max": -big, "min": big}[kind]
    out = np.full((n,) + data.shape[ids.ndim:], start, data.dtype)
    fn = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[kind]
    for i, s in np.ndenumerate(ids):
        if s >= 0:
            out[s] = fn(out[s], data[i])
    return out


@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
def test_unsorted_segment_values_and_gradients(kind):
    fn = getattr(tf.math, f"unsorted_segment_{kind}")
    # segment 1 is empty and 3 only when n=4: their values are the identity / extreme
    check_op(lambda d: fn(d, IDS, 3)[::2], lambda d: _np_unsorted(kind, d, IDS, 3)[::2],
             [rand(5, 2, seed=1)])
    got = fn(tf.constant(rand(5, 2, seed=1)), IDS, 4).numpy()
    np.testing.assert_allclose(got, _np_unsorted(kind, rand(5, 2, seed=1), IDS, 4))


def test_ids_of_rank_two_and_negative_ids_drop_rows():
    data = rand(2, 3, 4, seed=2)
    ids = np.array([[0, -1, 1], [1, 1, 0]])
    check_op(lambda d: tf.math.unsorted_segment_sum(d, ids, 2),
             lambda d: _np_unsorted("sum", d, ids, 2), [data])


def test_gradients_share_ties_and_skip_zeros():
    x = tf.constant([1.0, 3.0, 3.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        top = tf.math.unsorted_segment_max(x, [0, 0, 0, 1], 2)
        z = tf.constant([2.0, 0.0, 5.0, 0.0, 0.0, 0.0])
        tape.watch(z)
        prod = tf.math.unsorted_segment_prod(z, [0, 0, 0, 1, 2, 2], 3)
    np.testing.assert_allclose(tape.gradient(top, x).numpy(), [0, 0.5, 0.5, 1])
    # one zero in a segment: only its row gets the others' product (2 * 5; 1 alone);
    # two zeros: nothing
    np.testing.assert_allclose(tape.gradient(prod, z).numpy(), [0, 10, 0, 1, 0, 0])


def test_sorted_segments_and_means():
    data = rand(6, 2, seed=3)
    ids = np.array([0, 0, 1, 3, 3, 3])
    check_op(lambda d: tf.math.segment_sum(d, ids),
             lambda d: _np_unsorted("sum", d, ids, 4), [data])
    check_op(lambda d: tf.math.segment_mean(d, ids),
             lambda d: _np_unsorted("sum", d, ids, 4) / np.maximum(
                 np.bincount(ids, minlength=4), 1)[:, None], [data])
    check_op(lambda d: tf.math.unsorted_segment_sqrt_n(d, ids, 4),
             lambda d: _np_unsorted("sum", d, ids, 4) / np.sqrt(np.maximum(
                 np.bincount(ids, minlength=4), 1))[:, None], [data])
    maxima = tf.math.segment_max(data, ids).numpy()  # segment 2 is empty: 0 here
    np.testing.assert_allclose(maxima[2], [0, 0])
    np.testing.assert_allclose(maxima[3], data[3:].max(0))


def test_no_rows_at_all():
    out = tf.math.unsorted_segment_sum(tf.zeros([0, 16]), tf.zeros([0], tf.int64), 3)
    assert out.shape == (3, 16) and float(tf.reduce_sum(out)) == 0.0


def test_bad_segment_ids_are_clear_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        tf.math.unsorted_segment_sum([1.0, 2.0], [0, 5], 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="sorted"):
        tf.math.segment_sum([1.0, 2.0], [1, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="prefix"):
        tf.math.unsorted_segment_sum([1.0, 2.0], [0, 0, 1], 2)
