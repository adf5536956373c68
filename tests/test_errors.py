"""Bad input gets a TF-class error naming the op, shapes/dtypes, the user's line and a fix."""
import pytest

import tensorlite as tf


def test_shape_mismatch_names_op_shapes_and_user_line():
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.constant([[1.0, 2.0, 3.0]] * 2) + tf.constant([1.0, 2.0, 3.0, 4.0])
    msg = str(e.value)
    assert "AddV2" in msg and "float32[2, 3]" in msg and "float32[4]" in msg
    assert "test_errors.py" in msg and "broadcast" in msg


def test_dtype_mismatch_int32_float32():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"AddV2.*int32.*float32.*tf.cast"):
        tf.constant(1) + tf.constant(1.0)
    with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int32"):
        tf.constant(1) + 1.5


def test_op_dtype_not_supported():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Exp.*int32.*tf.cast"):
        tf.exp(tf.constant([1, 2]))


def test_index_out_of_range():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"slice index 5 of dimension 0 out "
                                                            r"of bounds.*test_errors.py"):
        tf.constant([1.0, 2.0])[5]


def test_matmul_inner_dimension():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Matrix size-incompatible.*\[2, 3\]"):
        tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))


def test_reshape_count():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"6 values.*\[Op:Reshape\]"):
        tf.reshape(tf.ones([2, 3]), [4, 2])


def test_non_tensor_input():
    with pytest.raises(TypeError, match="Cannot convert <object.*to a Tensor"):
        tf.reduce_sum(object())
    with pytest.raises(ValueError, match="non-rectangular"):
        tf.constant([[1.0], [1.0, 2.0]])


def test_bad_axis():
    with pytest.raises(tf.errors.InvalidArgumentError, match="axis 3 is out of range.*rank 2"):
        tf.reduce_sum(tf.ones([2, 2]), axis=3)


def test_errors_are_op_errors_with_tf_hierarchy():
    assert issubclass(tf.errors.InvalidArgumentError, tf.errors.OpError)
    assert issubclass(tf.errors.DataLossError, tf.errors.OpError)
    e = tf.errors.NotFoundError(None, None, "missing")
    assert e.message == "missing" and e.error_code == tf.errors.NOT_FOUND


@pytest.mark.parametrize("fn, cls, pattern", [
    (lambda: tf.reduce_sum(tf.ones([2, 2]), axis=0.5), TypeError,
     r"parameter 'axis' has type float.*int32, int64"),
    (lambda: tf.reduce_sum(tf.ones([2, 2]), axis=[0, 0]), tf.errors.InvalidArgumentError,
     r"Axes contains duplicate dimension: 0.*\[Op:Sum\]"),
    (lambda: tf.reduce_mean(tf.ones([2, 2]), axis=[1, -1]), tf.errors.InvalidArgumentError,
     r"duplicate dimension: 1"),
    (lambda: tf.zeros([-1, 2]), tf.errors.InvalidArgumentError,
     r"dims\[0\] = -1 must be nonnegative"),
    (lambda: tf.ones([3, -4]), tf.errors.InvalidArgumentError,
     r"dims\[1\] = -4 must be nonnegative"),
    (lambda: tf.fill([-2], 1.0), tf.errors.InvalidArgumentError,
     r"dims\[0\] = -2 must be nonnegative.*\[Op:Fill\]"),
    (lambda: tf.range(0.0, float("inf")), tf.errors.InvalidArgumentError,
     r"Requires limit to be finite, got inf"),
    (lambda: tf.range(float("nan"), 3.0), tf.errors.InvalidArgumentError,
     r"Requires start to be finite"),
    (lambda: tf.ones([10**6, 10**6]), tf.errors.ResourceExhaustedError,
     r"OOM when allocating tensor with shape\[1000000, 1000000\].*4000000000000 bytes"),
    (lambda: tf.zeros([10**7, 10**7], tf.float64), tf.errors.ResourceExhaustedError,
     r"float64: 800000000000000 bytes"),
    (lambda: tf.cast(tf.constant([1, 2]), tf.string), tf.errors.UnimplementedError,
     r"Cast int32 to string is not supported"),
])
def test_former_bare_errors_are_tf_errors(fn, cls, pattern):
    with pytest.raises(cls, match=pattern):
        fn()
