"""The untaped fast paths of softmax, concat, reduce_*, slicing and conv2d: the same values
as the taped (general) path, and the same TF-class errors for the inputs they pass on."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import numba_backend, numba_softmax
from tests.op_check import rand
from tests.test_conv_ops import _raises

X = rand(3, 4, 5, seed=41).astype(np.float32)

CALLS = {
    "softmax": lambda t: tf.nn.softmax(t),
    "log_softmax": lambda t: tf.nn.log_softmax(t),
    "concat0": lambda t: tf.concat([t, t * 2], 0),
    "concat_neg": lambda t: tf.concat((t, t), -1),
    "sum_none": lambda t: tf.reduce_sum(t),
    "sum_int": lambda t: tf.reduce_sum(t, 1),
    "sum_list_keep": lambda t: tf.reduce_sum(t, [0, -1], keepdims=True),
    "mean_tuple": lambda t: tf.reduce_mean(t, (0, 2)),
    "max": lambda t: tf.reduce_max(t, -1),
    "slice": lambda t: t[1:3, ::2],
    "slice_int": lambda t: t[-1, 2],
    "slice_neg_step": lambda t: t[::-1, 1:, -2],
    "gather": lambda t: tf.gather(t, tf.constant([2, 0, 2])),
    "gather_axis0_int64": lambda t: tf.gather(t, tf.constant(np.array([[1], [0]])), axis=0),
    "conv2d": lambda t: tf.nn.conv2d(tf.reshape(t, [1, 3, 4, 5]),
                                     tf.ones([2, 2, 5, 3]), 1, "SAME"),
}


@pytest.mark.parametrize("name", CALLS)
def test_fast_path_equals_taped_path(name):
    fn, x = CALLS[name], tf.constant(X)
    fast = fn(x)
    with tf.GradientTape() as tape:  # an observer: the general path through execute
        tape.watch(x)
        slow = fn(x)
    assert fast.dtype == slow.dtype and fast.shape == slow.shape
    np.testing.assert_allclose(fast.numpy(), slow.numpy(), rtol=1e-6)


def test_reduction_axis_errors_survive_the_cache():
    x = tf.constant(X)
    tf.reduce_sum(x, 1)  # cached for rank 3
    _raises(TypeError, lambda: tf.reduce_sum(x, True), "axis", "bool")
    _raises(tf.errors.InvalidArgumentError, lambda: tf.reduce_sum(tf.ones([2]), 1),
            "out of range")
    _raises(tf.errors.InvalidArgumentError, lambda: tf.reduce_sum(x, [1, -2]), "duplicate")
    _raises(TypeError, lambda: tf.reduce_sum(x, 1.0), "axis")


def test_reduction_of_empty_dimension_still_reports():
    _raises(tf.errors.InvalidArgumentError, lambda: tf.reduce_max(tf.zeros([0, 3]), 0),
            "empty")


def test_slicing_errors():
    x = tf.constant(X)
    _raises(tf.errors.InvalidArgumentError, lambda: x[3], "out of bounds")
    _raises(tf.errors.InvalidArgumentError, lambda: x[::0], "step")
    _raises(tf.errors.InvalidArgumentError, lambda: x[0, 0, 0, 0], "Index out of range")
    _raises(TypeError, lambda: x[1.5], "valid indices")


def test_concat_errors():
    a, b = tf.ones([2, 3]), tf.ones([2, 4])
    _raises(tf.errors.InvalidArgumentError, lambda: tf.concat([a, b], 0), "ConcatOp",
            "[2, 3]", "[2, 4]")
    _raises(tf.errors.InvalidArgumentError, lambda: tf.concat([a, a], 2), "axis")
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.concat([a, tf.ones([2, 3], tf.int32)], 0), "int32")


def test_conv2d_geometry_cache_keeps_checks():
    x, w = tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 3, 2])
    assert tf.nn.conv2d(x, w, [1, 1], "SAME").shape == (1, 5, 5, 2)
    assert tf.nn.conv2d(x, w, [1, 1], "SAME").shape == (1, 5, 5, 2)  # a cache hit
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d(x, tf.ones([3, 3, 4, 2]), [1, 1], "SAME"), "in_channels")
    _raises(ValueError, lambda: tf.nn.conv2d(x, w, [1, 1], "same"), "SAME")
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d(x, tf.ones([3, 3, 3, 2], tf.float64), 1, "SAME"), "float64")


def test_gather_errors():
    x = tf.constant(X)
    _raises(tf.errors.InvalidArgumentError, lambda: tf.gather(x, tf.constant([0, 3])),
            "indices[1] = 3", "[0, 3)")
    _raises(tf.errors.InvalidArgumentError, lambda: tf.gather(x, tf.constant([-1])),
            "indices[0] = -1")
    _raises(tf.errors.InvalidArgumentError, lambda: tf.gather(x, tf.constant([0.0])),
            "integer")


@pytest.mark.parametrize("shape", [(4, 10), (2, 3, 7), (1,), (300, 100)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_compiled_kernel_equals_numpy(shape, dtype, monkeypatch):
    """The numba kernel (where installed and the input small) against the NumPy form."""
    x = tf.constant(rand(*shape, seed=44, low=-30, high=30).astype(dtype))
    got = tf.nn.softmax(x).numpy()
    monkeypatch.setattr(numba_softmax, "_KERNEL", [None])
    monkeypatch.setitem(numba_backend._STATE, "on", False)
    want = tf.nn.softmax(x).numpy()
    assert got.dtype == want.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-13,
                               atol=1e-30)


def test_softmax_kernel_declines_what_it_does_not_cover():
    assert numba_softmax.rows(np.zeros((0, 3))) is None
    assert numba_softmax.rows(np.zeros((200, 100))) is None  # large: NumPy
    assert numba_softmax.rows(np.zeros((2, 3), np.float16)) is None
