"""tf.Tensor semantics a TensorFlow user relies on: dtype inference, Python-scalar
promotion, operators, conversion to NumPy and Python, printing, hashing and the tensor
conversion registry."""
import numpy as np
import pytest

import tensorlite as tf


# -- tf.constant dtype inference ---------------------------------------------------------------
@pytest.mark.parametrize("value,dtype", [
    (1.0, tf.float32), (1, tf.int32), (2 ** 40, tf.int64), (-2 ** 40, tf.int64),
    (True, tf.bool), ("a", tf.string), (b"a", tf.string), ([1, 2.5], tf.float32),
    ([[1, 2], [3, 4]], tf.int32), ([True, False], tf.bool), (1 + 2j, tf.complex128),
    (np.array([1.0, 2.0]), tf.float64), (np.array([1, 2], np.int64), tf.int64),
    (np.float64(1.0), tf.float64), (np.array([1, 2], np.uint8), tf.uint8),
    (np.array(["x"]), tf.string),
], ids=lambda v: repr(v)[:20])
def test_constant_dtype_inference(value, dtype):
    assert tf.constant(value).dtype == dtype


def test_constant_with_dtype_and_shape():
    assert tf.constant(1, dtype=tf.float32).dtype == tf.float32
    assert tf.constant(np.array([1.5, 2.5]), dtype=tf.float32).dtype == tf.float32
    np.testing.assert_array_equal(tf.constant(0.0, shape=[2, 2]).numpy(), np.zeros((2, 2)))
    assert tf.constant([1, 2, 3, 4], shape=[2, 2]).shape == (2, 2)
    with pytest.raises(TypeError):
        tf.constant([1, 2, 3], shape=[2, 2])


# -- Python scalars adopt the tensor's dtype; tensors never mix ----------------------------------
def test_python_scalars_adopt_tensor_dtype():
    assert (tf.constant([1.0, 2.0]) + 1).dtype == tf.float32
    assert (1 + tf.constant([1.0, 2.0])).dtype == tf.float32
    assert (tf.constant([1.0], tf.float64) * 2).dtype == tf.float64
    assert (tf.constant([1, 2], tf.int64) - 1).dtype == tf.int64
    assert (tf.constant([1.0, 2.0]) + np.array([1.0, 2.0])).dtype == tf.float32
    assert (np.float64(2.0) * tf.constant([1.0, 2.0])).dtype == tf.float32


def test_python_float_into_int_tensor_is_type_error():
    with pytest.raises(TypeError, match="int32"):
        tf.constant(1) + 1.5
    with pytest.raises(TypeError):
        tf.constant([1, 2]) < 1.5


@pytest.mark.parametrize("fn", [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
    lambda a, b: a < b, lambda a, b: tf.add(a, b), lambda a, b: tf.maximum(a, b),
], ids=["add", "sub", "mul", "div", "less", "tf.add", "tf.maximum"])
def test_mixing_int32_and_float32_tensors_is_invalid_argument(fn):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        fn(tf.constant([1, 2]), tf.constant([1.0, 2.0]))
    assert "int32" in str(info.value) and "float32" in str(info.value)
    assert "tf.cast" in str(info.value)


# -- operators ---------------------------------------------------------------------------------
A = np.array([[7.0, -7.0], [2.5, 3.0]], np.float32)
B = np.array([[2.0, 3.0], [-1.5, 4.0]], np.float32)
IA = np.array([7, -7, 9], np.int32)
IB = np.array([2, 3, -4], np.int32)


@pytest.mark.parametrize("op", [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a @ b,
    lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b, lambda a, b: a >= b,
    lambda a, b: -a, lambda a, b: abs(a), lambda a, b: +a,
], ids=["+", "-", "*", "/", "//", "%", "@", "<", "<=", ">", ">=", "neg", "abs", "pos"])
def test_float_operators_match_numpy(op):
    got = op(tf.constant(A), tf.constant(B))
    want = op(A, B)
    assert isinstance(got, tf.Tensor) and got.dtype == tf.as_dtype(want.dtype)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_pow_and_reflected_operators():
    np.testing.assert_allclose((tf.constant([2.0, 3.0]) ** 2).numpy(), [4.0, 9.0])
    np.testing.assert_allclose((2 ** tf.constant([3.0])).numpy(), [8.0])
    np.testing.assert_allclose((1 / tf.constant([4.0])).numpy(), [0.25])
    np.testing.assert_allclose((10 - tf.constant([4.0])).numpy(), [6.0])
    np.testing.assert_allclose((7 // tf.constant([2.0])).numpy(), [3.0])
    np.testing.assert_allclose((7 % tf.constant([4.0])).numpy(), [3.0])
    assert (tf.constant([2]) ** 3).numpy().tolist() == [8]


@pytest.mark.parametrize("op", [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a // b,
    lambda a, b: a % b, lambda a, b: a == b, lambda a, b: a != b, lambda a, b: -a,
    lambda a, b: abs(b),
], ids=["+", "-", "*", "//", "%", "==", "!=", "neg", "abs"])
def test_int_operators_match_numpy(op):
    """Integer // and % floor toward -inf as in Python, NumPy and TF."""
    got = op(tf.constant(IA), tf.constant(IB))
    want = op(IA, IB)
    assert got.dtype == tf.as_dtype(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)


def test_true_division_of_integers_follows_tf():
    assert (tf.constant([1, 2]) / tf.constant([2, 2])).dtype == tf.float64
    assert (tf.constant([1, 2]) / 2).dtype == tf.float64
    assert (tf.constant([1, 2], tf.int64) / 2).dtype == tf.float64
    assert (tf.constant([1, 2], tf.int16) / 2).dtype == tf.float32
    np.testing.assert_allclose((tf.constant([1, 3]) / 2).numpy(), [0.5, 1.5])


def test_integer_division_by_zero_is_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match="division by zero"):
        tf.constant([1, 2]) // 0


def test_eq_and_ne_are_elementwise_and_tolerate_other_types():
    assert (tf.constant([1, 2]) == 2).numpy().tolist() == [False, True]
    assert (tf.constant([1, 2]) != tf.constant([1, 3])).numpy().tolist() == [False, True]
    assert (tf.constant([1.0]) == "a") is False
    assert (tf.constant([1.0]) != None) is True  # noqa: E711 - what the operator returns


def test_bool_operators_on_bool_tensors():
    a, b = tf.constant([True, False]), tf.constant([True, True])
    assert (a & b).numpy().tolist() == [True, False]
    assert (a | b).numpy().tolist() == [True, True]
    assert (a ^ b).numpy().tolist() == [False, True]
    assert (~a).numpy().tolist() == [False, True]


def test_bitwise_operators_on_int_tensors():
    a, b = tf.constant([3, 5]), tf.constant([1, 4])
    assert (a & b).numpy().tolist() == [1, 4]
    assert (a | b).numpy().tolist() == [3, 5]
    assert (a ^ b).numpy().tolist() == [2, 1]
    assert (~a).numpy().tolist() == [-4, -6]


def test_matmul_shape_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match="MatMul"):
        tf.constant([[1.0, 2.0]]) @ tf.constant([[1.0, 2.0]])


# -- NumPy and Python interop ------------------------------------------------------------------
def test_numpy_returns_array_or_numpy_scalar():
    t = tf.constant([1.0, 2.0])
    assert isinstance(t.numpy(), np.ndarray) and t.numpy().dtype == np.float32
    s = tf.constant(3.0).numpy()
    assert isinstance(s, np.float32) and not isinstance(s, np.ndarray)
    assert isinstance(tf.constant(3).numpy(), np.int32)


def test_shape_dtype_ndim():
    t = tf.constant([[1.0, 2.0, 3.0]])
    assert isinstance(t.shape, tf.TensorShape)
    assert t.shape == (1, 3) and t.shape == [1, 3] and t.shape[1] == 3
    assert str(tf.constant([1.0, 2.0]).shape) == "(2,)"
    assert repr(tf.constant([1.0, 2.0]).shape) == "TensorShape([2])"
    assert t.shape.as_list() == [1, 3] and t.shape.rank == 2
    assert t.dtype == tf.float32 and t.dtype is tf.float32
    assert t.ndim == 2 and tf.constant(1).ndim == 0


def test_array_protocol():
    t = tf.constant([1, 2])
    arr = np.asarray(t)
    assert isinstance(arr, np.ndarray) and arr.dtype == np.int32
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.array(t).tolist() == [1, 2]
    assert np.sum(tf.constant([1.0, 2.0])) == 3.0


def test_bool_of_tensor():
    assert bool(tf.constant(True)) is True
    assert bool(tf.constant(0)) is False
    assert bool(tf.constant(2.5)) is True
    with pytest.raises(ValueError, match="ambiguous"):
        bool(tf.constant([1, 2]))


def test_len_and_iteration():
    t = tf.constant([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    with pytest.raises(TypeError):
        len(tf.constant(1))
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, tf.Tensor) for r in rows)
    assert [r.numpy().tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError):
        iter(tf.constant(1))


def test_python_number_conversions():
    assert int(tf.constant(3)) == 3 and float(tf.constant(2.5)) == 2.5
    assert [10, 20, 30][tf.constant(1)] == 20  # __index__
    with pytest.raises(TypeError):
        [10, 20][tf.constant(1.0)]


def test_ndarray_plus_tensor_returns_tensor():
    out = np.array([1.0, 2.0], np.float32) + tf.constant([1.0, 2.0])
    assert isinstance(out, tf.Tensor) and out.dtype == tf.float32
    assert out.numpy().tolist() == [2.0, 4.0]
    out = np.array([3.0], np.float32) * tf.constant([2.0])
    assert isinstance(out, tf.Tensor)


# -- printing ----------------------------------------------------------------------------------
def test_str_and_repr():
    t = tf.constant([1.0, 2.0])
    assert str(t) == "tf.Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert repr(t) == "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    assert str(tf.constant(1.0)) == "tf.Tensor(1.0, shape=(), dtype=float32)"
    assert str(tf.constant([1, 2])) == "tf.Tensor([1 2], shape=(2,), dtype=int32)"
    assert str(tf.constant(b"ab")) == "tf.Tensor(b'ab', shape=(), dtype=string)"
    assert repr(tf.constant(["a", "b"])) == (
        "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'b'], dtype=object)>")


def test_multiline_str_and_repr_start_on_a_new_line():
    t = tf.constant([[1, 2], [3, 4]])
    assert str(t) == "tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)"
    assert repr(t) == ("<tf.Tensor: shape=(2, 2), dtype=int32, numpy=\n"
                       "array([[1, 2],\n       [3, 4]], dtype=int32)>")


def test_str_of_string_vector_matches_tf():
    assert str(tf.constant(["a", "b"])) == "tf.Tensor([b'a' b'b'], shape=(2,), dtype=string)"


# -- hashing -----------------------------------------------------------------------------------
def test_tensor_is_unhashable_but_ref_is_a_key():
    t = tf.constant([1.0])
    with pytest.raises(TypeError, match="ref()"):
        hash(t)
    with pytest.raises(TypeError):
        {t: 1}  # noqa: B018
    u = tf.constant([1.0])
    d = {t.ref(): "t", u.ref(): "u"}
    assert d[t.ref()] == "t" and d[u.ref()] == "u" and len(d) == 2
    assert t.ref().deref() is t
    assert t.ref() == t.ref() and t.ref() != u.ref()
    assert t.experimental_ref() == t.ref()


# -- conversion --------------------------------------------------------------------------------
class _Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def _point_to_tensor(value, dtype=None, name=None, as_ref=False):
    return tf.constant([value.x, value.y], dtype=dtype)


tf.register_tensor_conversion_function(_Point, _point_to_tensor)


def test_registered_conversion_function():
    t = tf.convert_to_tensor(_Point(1.0, 2.0))
    assert isinstance(t, tf.Tensor) and t.dtype == tf.float32
    assert t.numpy().tolist() == [1.0, 2.0]
    assert tf.convert_to_tensor(_Point(1.0, 2.0), dtype=tf.float64).dtype == tf.float64
    assert (tf.constant([1.0, 1.0]) + _Point(1.0, 2.0)).numpy().tolist() == [2.0, 3.0]
    assert tf.add(_Point(1, 2), 1).dtype == tf.int32
    with pytest.raises(TypeError):
        tf.register_tensor_conversion_function("not a type", _point_to_tensor)


def test_unconvertible_object_is_type_error():
    with pytest.raises(TypeError, match="register_tensor_conversion_function"):
        tf.convert_to_tensor(object())


def test_convert_to_tensor_dtype_mismatch():
    with pytest.raises(ValueError, match="requested dtype int32"):
        tf.convert_to_tensor(tf.constant(1.0), dtype=tf.int32)
    with pytest.raises(TypeError, match="int32"):
        tf.convert_to_tensor(1.5, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.convert_to_tensor([1.0, 2.0], dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.convert_to_tensor(True, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.convert_to_tensor("a", dtype=tf.float32)
    with pytest.raises(TypeError):
        tf.convert_to_tensor(2 ** 40, dtype=tf.int32)
    assert tf.convert_to_tensor(1, dtype=tf.float32).dtype == tf.float32
    assert tf.convert_to_tensor(np.array([1, 2]), dtype=tf.float32).dtype == tf.float32
    t = tf.constant(1)
    assert tf.convert_to_tensor(t, dtype=tf.int32) is t


def test_convert_to_tensor_dtype_hint_falls_back():
    assert tf.convert_to_tensor(1, dtype_hint=tf.float32).dtype == tf.float32
    assert tf.convert_to_tensor("a", dtype_hint=tf.float32).dtype == tf.string


def test_non_rectangular_list_is_value_error():
    with pytest.raises(ValueError, match="non-rectangular"):
        tf.constant([[1, 2], [3]])


def test_tensor_is_immutable_and_copies_are_itself():
    import copy
    t = tf.constant([1.0])
    assert copy.copy(t) is t and copy.deepcopy(t) is t
    with pytest.raises((TypeError, AttributeError)):
        t[0] = 2.0
    assert tf.is_tensor(t) and not tf.is_tensor(np.array([1.0]))


def test_a_range_converts_as_a_sequence():
    """`tf.lookup.KeyValueTensorInitializer(keys, range(len(keys)), ...)` (the load-text
    tutorial's vocabulary table): TF converts a range as the list it holds."""
    assert tf.constant(range(3)).numpy().tolist() == [0, 1, 2]
    assert tf.constant(range(3)).dtype == tf.int32
    assert tf.convert_to_tensor(range(2, 5), dtype=tf.int64).dtype == tf.int64
    keys = ['', 'a', 'b']
    init = tf.lookup.KeyValueTensorInitializer(keys, range(len(keys)), key_dtype=tf.string,
                                               value_dtype=tf.int64)
    table = tf.lookup.StaticVocabularyTable(init, 1)
    assert table.lookup(tf.constant(['a', 'z', ''])).numpy().tolist() == [1, 3, 0]
