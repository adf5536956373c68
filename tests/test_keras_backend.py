"""`tf.keras.backend`'s ops (tensorlite/keras/backend_ops.py): each against NumPy and Keras
2's documented examples, custom losses and metrics written with them (eagerly, in a
tf.function and in fit), gradients through them, and TensorFlow-class errors on bad input."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras import backend_ops

K = tf.keras.backend
RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3, 4)).astype("float32")
M = RNG.normal(size=(3, 4)).astype("float32")


def _np(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def _close(t, expected, dtype=None, rtol=1e-5, atol=1e-6):
    got = _np(t)
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    assert got.dtype == (expected.dtype if dtype is None else np.dtype(dtype))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def test_reexported_by_backend_module_with_the_state_functions():
    assert set(backend_ops.__all__) <= set(dir(K))
    for name in backend_ops.__all__:
        assert getattr(K, name) is getattr(backend_ops, name)
    assert K.floatx() == "float32" and K.epsilon() == 1e-7 and K.backend() == "tensorflow"


# -- reductions ---------------------------------------------------------------------------------
REDUCTIONS = {"max": np.max, "min": np.min, "sum": np.sum, "prod": np.prod, "mean": np.mean,
              "var": np.var, "std": np.std}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 2], (1, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, axis, keepdims):
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    expected = REDUCTIONS[name](X, axis=np_axis, keepdims=keepdims).astype("float32")
    _close(getattr(K, name)(tf.constant(X), axis=axis, keepdims=keepdims), expected,
           rtol=1e-5, atol=1e-5)


def test_reductions_take_positional_axis_and_keepdims_and_numpy_input():
    _close(K.sum(X, 1, True), X.sum(1, keepdims=True))
    _close(K.max(X, -1), X.max(-1))


def test_int_reduction_keeps_int_dtype():
    _close(K.sum(tf.constant([[1, 2], [3, 4]]), axis=0), np.array([4, 6], np.int32))


@pytest.mark.parametrize("name", ["mean", "var", "std"])
def test_mean_var_std_count_bools_as_floatx(name):
    b = np.array([[True, False, False], [True, True, False]])
    got = getattr(K, name)(tf.constant(b), axis=1)
    _close(got, REDUCTIONS[name](b.astype("float32"), axis=1))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_any_all_cast_to_bool_first(axis):
    v = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]], "float32")
    _close(K.any(tf.constant(v), axis=axis), np.any(v != 0, axis=axis))
    _close(K.all(tf.constant(v + 1.0), axis=axis), np.all(v + 1.0 != 0, axis=axis))
    _close(K.all(tf.constant(v), axis=axis, keepdims=True),
           np.all(v != 0, axis=axis, keepdims=True))


def test_argmax_argmin_default_last_axis_int64():
    _close(K.argmax(X), np.argmax(X, -1).astype(np.int64))
    _close(K.argmin(X, axis=1), np.argmin(X, 1).astype(np.int64))


def test_cumsum_cumprod_default_first_axis():
    _close(K.cumsum(X), np.cumsum(X, 0))
    _close(K.cumprod(X, axis=2), np.cumprod(X, 2), rtol=1e-5)


def test_bad_axis_raises_tensorflow_error():
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.mean(tf.constant(X), axis=3)
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.argmax(tf.constant(X), axis=-4)


# -- element-wise -------------------------------------------------------------------------------
UNARY = {"square": np.square, "abs": np.abs, "exp": np.exp, "sign": np.sign, "sin": np.sin,
         "cos": np.cos, "tanh": np.tanh, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
         "softplus": lambda v: np.log1p(np.exp(v)), "softsign": lambda v: v / (1 + np.abs(v))}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_match_numpy(name):
    _close(getattr(K, name)(tf.constant(X)), UNARY[name](X).astype("float32"), rtol=1e-5)


def test_log_round_and_pow():
    p = np.abs(X) + 0.1
    _close(K.log(tf.constant(p)), np.log(p))
    _close(K.round(tf.constant([0.5, 1.5, 2.5, -0.5, -1.7])), np.array([0, 2, 2, -0, -2], "f4"))
    _close(K.pow(tf.constant(p), 3), p ** 3, rtol=1e-5)
    _close(K.pow(tf.constant(p), 0.5), np.sqrt(p), rtol=1e-5)


def test_sqrt_clips_negatives_to_zero():
    _close(K.sqrt(tf.constant([-4.0, 0.0, 9.0])), np.array([0.0, 0.0, 3.0], "float32"))


@pytest.mark.parametrize("name,np_fn", [("equal", np.equal), ("not_equal", np.not_equal),
                                        ("greater", np.greater),
                                        ("greater_equal", np.greater_equal),
                                        ("less", np.less), ("less_equal", np.less_equal),
                                        ("maximum", np.maximum), ("minimum", np.minimum)])
def test_binary_ops_broadcast_like_numpy(name, np_fn):
    a = np.round(X)
    b = np.round(M)  # broadcasts against the last two axes
    _close(getattr(K, name)(tf.constant(a), tf.constant(b)), np_fn(a, b))


def test_clip_bounds_none_and_max_below_min():
    _close(K.clip(tf.constant(X), -0.5, 0.5), np.clip(X, -0.5, 0.5))
    _close(K.clip(tf.constant(X), None, 0.1), np.minimum(X, 0.1))
    _close(K.clip(tf.constant(X), -0.2, None), np.maximum(X, -0.2))
    _close(K.clip(tf.constant(X), 0.5, -0.5), np.full_like(X, 0.5))  # max raised to the min
    _close(K.clip(tf.constant(X), tf.constant(-0.1), tf.constant(0.2)), np.clip(X, -0.1, 0.2))


# -- activations --------------------------------------------------------------------------------
def _keras_relu(v, alpha=0.0, max_value=None, threshold=0.0):
    """Keras 2's documented rule: max_value above it, x in [threshold, max_value), alpha *
    (x - threshold) below threshold."""
    out = np.where(v > threshold, v, 0.0)
    if max_value is not None:
        out = np.clip(out, 0.0, max_value)
    return (out + alpha * np.minimum(v - threshold, 0.0)).astype("float32")


@pytest.mark.parametrize("kwargs", [{}, {"alpha": 0.1}, {"max_value": 0.5}, {"max_value": 6},
                                    {"threshold": 0.3}, {"threshold": -0.3},
                                    {"threshold": -0.3, "max_value": 1.0},
                                    {"alpha": 0.2, "max_value": 0.5, "threshold": 0.2},
                                    {"alpha": 0.3, "threshold": -0.5}])
def test_relu_variants(kwargs):
    v = np.concatenate([X.ravel() * 4, np.linspace(-3, 8, 45)]).astype("float32")
    _close(K.relu(tf.constant(v), **kwargs), _keras_relu(v, **kwargs), atol=1e-5)


def test_elu_hard_sigmoid_softmax_l2_normalize():
    _close(K.elu(tf.constant(X)), np.where(X > 0, X, np.expm1(X)), atol=1e-6)
    _close(K.elu(tf.constant(X), alpha=0.5), np.where(X > 0, X, 0.5 * np.expm1(X)), atol=1e-6)
    v = X * 4
    _close(K.hard_sigmoid(tf.constant(v)), np.clip(0.2 * v + 0.5, 0, 1))
    for axis in (-1, 0):
        e = np.exp(X - X.max(axis, keepdims=True))
        _close(K.softmax(tf.constant(X), axis=axis), e / e.sum(axis, keepdims=True))
    _close(K.l2_normalize(tf.constant(X), axis=1),
           X / np.sqrt((X ** 2).sum(1, keepdims=True)))
    _close(K.l2_normalize(tf.constant(X)), X / np.sqrt((X ** 2).sum()))


def test_dropout_zeroes_and_rescales():
    v = np.ones((50, 40), "float32")
    out = _np(K.dropout(tf.constant(v), 0.25, seed=1))
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.15 < np.mean(out == 0) < 0.35


def test_in_top_k():
    pred = np.array([[0.1, 0.7, 0.2], [0.5, 0.1, 0.4]], "float32")
    _close(K.in_top_k(tf.constant(pred), tf.constant([2, 2]), 2), np.array([True, True]))
    _close(K.in_top_k(tf.constant(pred), tf.constant([2, 1]), 1), np.array([False, False]))


# -- dot and batch_dot --------------------------------------------------------------------------
def test_dot_matches_documented_shapes_and_numpy():
    a, b = RNG.normal(size=(2, 3)).astype("f4"), RNG.normal(size=(3, 4)).astype("f4")
    _close(K.dot(tf.constant(a), tf.constant(b)), a @ b)
    x3 = RNG.normal(size=(32, 28, 3)).astype("f4")
    _close(K.dot(tf.constant(x3), tf.constant(b)), np.dot(x3, b), rtol=1e-5, atol=1e-5)
    y3 = RNG.normal(size=(4, 3, 5)).astype("f4")
    out = K.dot(K.random_uniform_variable(shape=(2, 3), low=0, high=1), K.ones((4, 3, 5)))
    assert K.int_shape(out) == (2, 4, 5)
    _close(K.dot(tf.constant(a), tf.constant(y3)), np.dot(a, y3), atol=1e-5)
    x4 = RNG.normal(size=(2, 4, 5, 3)).astype("f4")
    _close(K.dot(tf.constant(x4), tf.constant(y3)), np.dot(x4, y3), atol=1e-5)


def test_dot_errors():
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.dot(tf.ones((2, 3)), tf.ones((2, 3)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.dot(tf.ones((2, 3, 4)), tf.ones((5, 2)))
    with pytest.raises(ValueError, match="rank >= 2"):
        K.dot(tf.ones((2, 3, 4)), tf.ones((4,)))


def _keras_batch_dot(x, y, axes=None):
    """Keras 2's batch_dot algorithm in NumPy: rank-2 inputs expanded, the contracted axes
    moved to x's last and y's second, a batched matmul, the added axes squeezed."""
    nx, ny = x.ndim, y.ndim
    if isinstance(axes, int):
        axes = (axes, axes)
    if axes is None:
        axes = (nx - 1, ny - 1 if ny == 2 else ny - 2)
    a0, a1 = (a % n for a, n in zip(axes, (nx, ny), strict=True))
    if nx == 2:
        x, a0 = x[:, None], a0 + 1
    if ny == 2:
        y = y[:, :, None]
    x = np.moveaxis(x, a0, -1)
    y = np.moveaxis(y, a1, 1)
    xs, ys = x.shape, y.shape
    out = np.matmul(x.reshape(xs[0], -1, xs[-1]), y.reshape(ys[0], ys[1], -1))
    out = out.reshape(xs[:-1] + ys[2:])
    if nx == 2:
        return out.squeeze(1)
    return out.squeeze(-1) if ny == 2 else out


@pytest.mark.parametrize("xs,ys,axes", [
    ((4, 3), (4, 3), None), ((4, 3), (4, 3), 1), ((4, 3), (4, 5, 3), (1, 2)),
    ((4, 3), (4, 3, 5), None), ((4, 5, 3), (4, 3), None), ((4, 5, 3), (4, 3, 6), None),
    ((4, 5, 3), (4, 5, 6), 1), ((4, 5, 3), (4, 6, 3), (2, 2)), ((4, 5, 3), (4, 6, 3), -1),
    ((4, 2, 3, 5), (4, 5, 6, 7), (3, 1)), ((4, 2, 3, 5), (4, 6, 3, 7), (2, 2)),
    ((4, 2, 3, 5), (4, 5), None), ((4, 5), (4, 3, 5, 2), (-1, -2))])
def test_batch_dot_matches_keras_algorithm(xs, ys, axes):
    x = RNG.normal(size=xs).astype("float32")
    y = RNG.normal(size=ys).astype("float32")
    _close(K.batch_dot(tf.constant(x), tf.constant(y), axes=axes), _keras_batch_dot(x, y, axes),
           rtol=1e-5, atol=1e-5)


def test_batch_dot_documented_examples():
    out = K.batch_dot(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([[5.0, 6.0], [7.0, 8.0]]),
                      axes=1)
    _close(out, np.array([[17.0], [53.0]], "float32"))  # the main diagonal of x.dot(y.T)
    out = K.batch_dot(K.ones(shape=(32, 20, 1)), K.ones(shape=(32, 30, 20)), axes=(1, 2))
    assert K.int_shape(out) == (32, 1, 30)
    _close(out, np.full((32, 1, 30), 20.0, "float32"))
    assert K.int_shape(K.batch_dot(tf.ones((100, 20)), tf.ones((100, 30, 20)), (1, 2))) == (100, 30)


@pytest.mark.parametrize("xs,ys,axes,match", [
    ((4,), (4, 3), None, "rank < 2"), ((4, 3), (5, 3), None, "different batch sizes"),
    ((4, 3), (4, 3), 0, "over axis 0"), ((4, 3, 2), (4, 3, 2), (1, 2), r"x.shape\[1\] != "),
    ((4, 3), (4, 3), [[1], [1]], "Multiple target dimensions"),
    ((4, 3), (4, 3), (1, 1, 1), "Multiple target dimensions"),
    ((4, 3), (4, 3), (1, 5), "out of range")])
def test_batch_dot_errors(xs, ys, axes, match):
    with pytest.raises(ValueError, match=match):
        K.batch_dot(tf.ones(xs), tf.ones(ys), axes=axes)


# -- shapes -------------------------------------------------------------------------------------
def test_shape_ops():
    t = tf.constant(X)
    _close(K.transpose(t), X.T)
    _close(K.permute_dimensions(t, (1, 0, 2)), X.transpose(1, 0, 2))
    _close(K.reshape(t, (4, 6)), X.reshape(4, 6))
    _close(K.expand_dims(t), X[..., None])
    _close(K.expand_dims(t, 0), X[None])
    _close(K.squeeze(t[:, :1], 1), X[:, 0])
    _close(K.flatten(t), X.ravel())
    _close(K.batch_flatten(K.ones(shape=(2, 3, 4, 5))), np.ones((2, 60), "float32"))
    _close(K.batch_flatten(t), X.reshape(2, -1))
    _close(K.stack([M, M * 2], axis=1), np.stack([M, M * 2], 1))
    _close(K.tile(tf.constant(M), [2, 1]), np.tile(M, (2, 1)))
    _close(K.tile(tf.constant([1, 2]), 3), np.tile(np.array([1, 2], np.int32), 3))
    _close(K.repeat_elements(t, 2, axis=1), np.repeat(X, 2, axis=1))
    _close(K.repeat_elements(tf.constant([1, 2, 3]), rep=2, axis=0),
           np.array([1, 1, 2, 2, 3, 3], np.int32))
    _close(K.reverse(t, 1), X[:, ::-1])
    _close(K.reverse(t, [0, 2]), X[::-1, :, ::-1])


def test_concatenate_stack_gather_one_hot_repeat_documented():
    a = tf.constant([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    b = tf.constant([[10, 20, 30], [40, 50, 60], [70, 80, 90]])
    _close(K.concatenate((a, b), axis=-1), np.concatenate([_np(a), _np(b)], -1))
    _close(K.concatenate([a, b], 0), np.concatenate([_np(a), _np(b)], 0))
    var = K.variable([[1, 2, 3], [4, 5, 6]])
    _close(K.gather(var, [0, 1, 0]), np.array([[1, 2, 3], [4, 5, 6], [1, 2, 3]], "float32"))
    _close(K.one_hot(tf.constant([0, 2, 1]), 4), np.eye(4, dtype="float32")[[0, 2, 1]])
    _close(K.repeat(tf.constant([[1, 2], [3, 4]]), n=2),
           np.array([[[1, 2], [1, 2]], [[3, 4], [3, 4]]], np.int32))
    with pytest.raises(ValueError, match="2-D"):
        K.repeat(tf.ones((2, 3, 4)), 2)
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.concatenate([tf.ones((2, 3)), tf.ones((3, 3))], axis=-1)


def test_arange_theano_convention_and_dtypes():
    _close(K.arange(start=0, stop=10, step=1.5), np.arange(0, 10, 1.5, dtype="float32"))
    _close(K.arange(5), np.arange(5, dtype=np.int32))
    _close(K.arange(-3), np.zeros((0,), np.int32))
    _close(K.arange(1, 7, 2, dtype="float64"), np.array([1.0, 3.0, 5.0]))


def test_shape_errors_are_tensorflow_errors():
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.reshape(tf.ones((2, 3)), (4, 2))
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.squeeze(tf.ones((2, 3)), 0)


# -- tensors, variables, values -----------------------------------------------------------------
def test_shape_int_shape_ndim_dtype():
    v = K.variable(np.array([[1, 2], [3, 4]]))
    _close(K.shape(v), np.array([2, 2], np.int32))
    assert K.int_shape(v) == (2, 2) and K.ndim(v) == 2 and K.dtype(v) == "float32"
    assert K.int_shape(np.zeros((3, 1))) == (3, 1)
    assert K.int_shape([1, 2]) is None and K.ndim([1, 2]) is None
    inp = tf.keras.Input(shape=(2, 4, 5))
    assert K.int_shape(inp) == (None, 2, 4, 5) and K.ndim(inp) == 4
    assert K.dtype(tf.constant([1.0], dtype=tf.float64)) == "float64"
    assert K.dtype(tf.constant([1])) == "int32"


def test_is_tensor_and_is_keras_tensor():
    inp = tf.keras.Input(shape=(3,))
    assert K.is_tensor(inp) and K.is_tensor(tf.constant(1.0)) and K.is_tensor(K.variable(1.0))
    assert not K.is_tensor(np.zeros(2)) and not K.is_tensor([1.0])
    assert K.is_keras_tensor(inp) is True
    assert K.is_keras_tensor(tf.keras.layers.Dense(2)(inp)) is True
    assert K.is_keras_tensor(tf.constant(1.0)) is False
    assert K.is_keras_tensor(K.variable(1.0)) is False
    with pytest.raises(ValueError, match="Expected a symbolic tensor instance"):
        K.is_keras_tensor(np.zeros(2))


def test_backend_ops_on_keras_inputs_become_model_layers():
    inp = tf.keras.Input(shape=(3,))
    out = K.concatenate([K.mean(K.square(inp), axis=1, keepdims=True), K.abs(inp)])
    model = tf.keras.Model(inp, out)
    x = RNG.normal(size=(5, 3)).astype("float32")
    _close(model(x), np.concatenate([np.mean(x ** 2, 1, keepdims=True), np.abs(x)], -1))


def test_cast_and_cast_to_floatx():
    _close(K.cast(tf.constant([1.7, -2.2]), "int32"), np.array([1, -2], np.int32))
    arr = K.cast_to_floatx(np.array([1.0, 2.0], dtype="float64"))
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float32
    np.testing.assert_array_equal(arr, [1.0, 2.0])
    t = K.cast_to_floatx(tf.constant([1, 2]))
    assert tf.is_tensor(t) and t.dtype == tf.float32


def test_constant_and_variable_default_to_floatx():
    _close(K.constant(3), np.float32(3))
    _close(K.constant(3, shape=(2, 2)), np.full((2, 2), 3.0, "float32"))
    _close(K.constant([1, 2], dtype="int64"), np.array([1, 2], np.int64))
    v = K.variable(np.array([[1, 2], [3, 4]]), name="kv")
    assert isinstance(v, tf.Variable) and v.dtype == tf.float32 and v.name.startswith("kv")
    def non_neg(w):
        return tf.maximum(w, 0.0)
    assert K.variable([-1.0, 2.0], constraint=non_neg).constraint is non_neg
    assert K.variable(2, dtype="int64").dtype == tf.int64
    K.set_floatx("float64")
    try:
        assert K.constant(1.0).dtype == tf.float64 and K.variable(1.0).dtype == tf.float64
        assert K.zeros((2,)).dtype == tf.float64 and K.random_normal((2,)).dtype == tf.float64
    finally:
        K.set_floatx("float32")


def test_zeros_ones_eye_are_variables():
    z, o, e = K.zeros((3, 4)), K.ones((2,), dtype="int32"), K.eye(3)
    assert all(isinstance(v, tf.Variable) for v in (z, o, e))
    _close(z, np.zeros((3, 4), "float32"))
    _close(o, np.ones((2,), np.int32))
    _close(e, np.eye(3, dtype="float32"))
    _close(K.zeros(tf.constant([1, 2, 3]).shape, dtype=tf.int32), np.zeros(3, np.int32))
    empty = K.zeros((0, 3))  # a 0 dimension: a plain tensor, as Keras
    assert not isinstance(empty, tf.Variable) and empty.shape == (0, 3)
    _close(K.zeros_like(tf.constant(M)), np.zeros_like(M))
    _close(K.ones_like(tf.constant(M), dtype="int32"), np.ones(M.shape, np.int32))


def test_placeholder_points_to_keras_input():
    with pytest.raises(NotImplementedError, match=r"tf.keras.Input.*tf.compat.v1.placeholder"):
        K.placeholder(shape=(2, 3))


def test_variable_value_round_trip():
    v = K.variable(1.0)
    K.set_value(v, 2.0)
    assert K.get_value(v) == 2.0
    K.set_value(v, K.get_value(v) + 1)
    assert K.get_value(v) == 3.0 and isinstance(K.get_value(v), np.floating)
    w = K.variable(np.zeros((2, 3)))
    K.set_value(w, np.arange(6, dtype="float64").reshape(2, 3))  # cast to the variable's dtype
    _close(w, np.arange(6, dtype="float32").reshape(2, 3))
    np.testing.assert_array_equal(K.eval(w), np.arange(6).reshape(2, 3))
    K.batch_set_value([(v, 5.0), (w, np.ones((2, 3)))])
    got = K.batch_get_value([v, w])
    assert got[0] == 5.0 and np.array_equal(got[1], np.ones((2, 3)))
    assert K.get_value([1, 2]) == [1, 2]  # a non-tensor comes back as is
    assert K.count_params(w) == 6 and K.count_params(K.variable(1.0)) == 1


def test_update_add_sub():
    v = K.variable([1.0, 2.0])
    K.update(v, [3.0, 4.0])
    _close(v, np.array([3.0, 4.0], "float32"))
    K.update_add(v, [1.0, 1.0])
    _close(v, np.array([4.0, 5.0], "float32"))
    K.update_sub(v, [0.5, 2.0])
    _close(v, np.array([3.5, 3.0], "float32"))


def test_batch_get_value_inside_function_is_runtime_error():
    v = K.variable(1.0)

    @tf.function
    def f():
        return K.batch_get_value([v])

    with pytest.raises(RuntimeError, match="inside Tensorflow graph function"):
        f()


def test_print_tensor_prints_and_returns_x(capsys):
    x = tf.constant([1.0, 2.0])
    out = K.print_tensor(x, message="x is")
    assert out is x
    assert "x is [1 2]" in capsys.readouterr().out


# -- control flow -------------------------------------------------------------------------------
def test_switch_scalar_condition_with_values_and_callables():
    a, b = tf.constant(M), tf.constant(-M)
    _close(K.switch(tf.constant(True), a, b), M)
    _close(K.switch(tf.constant(0), lambda: a, lambda: b), -M)
    _close(K.switch(1, a, lambda: b), M)
    _close(tf.function(lambda c: K.switch(c, a, b))(tf.constant(False)), -M)


def test_switch_elementwise_condition():
    _close(K.switch(tf.constant(M > 0), tf.constant(M), tf.constant(-M)), np.abs(M))
    cond = M[:, :2] > 0  # rank 2 under rank-3 expressions: trailing axes broadcast
    then, other = RNG.normal(size=(3, 2, 5)).astype("f4"), np.zeros((3, 2, 5), "f4")
    _close(K.switch(tf.constant(cond), tf.constant(then), tf.constant(other)),
           np.where(cond[..., None], then, other))
    with pytest.raises(ValueError, match="Rank of `condition`"):
        K.switch(tf.constant(X > 0), tf.constant(M), tf.constant(M))


def test_in_train_phase_and_in_test_phase():
    a, b = tf.constant([1.0]), tf.constant([2.0])
    one, two = np.array([1.0], "f4"), np.array([2.0], "f4")
    _close(K.in_train_phase(a, b, training=True), one)
    _close(K.in_train_phase(lambda: a, b, training=0), two)
    _close(K.in_train_phase(a, b, training=tf.constant(True)), one)
    _close(K.in_test_phase(a, b, training=False), one)
    _close(K.in_test_phase(a, b, training=1), two)
    assert K.learning_phase() == 0
    _close(K.in_train_phase(a, b), two)  # training=None: learning_phase()
    K.set_learning_phase(1)
    try:
        _close(K.in_train_phase(a, b), one)
        _close(K.in_test_phase(a, b), two)
    finally:
        K.set_learning_phase(0)


# -- crossentropies -----------------------------------------------------------------------------
EPS = 1e-7


def test_binary_crossentropy_elementwise_clipped():
    t = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], "f4")
    p = np.array([[0.9, 0.2, 0.0], [1.0, 0.6, 0.3]], "f4")
    pc = np.clip(p, EPS, 1 - EPS)
    expected = -(t * np.log(pc + EPS) + (1 - t) * np.log(1 - pc + EPS))
    _close(K.binary_crossentropy(tf.constant(t), tf.constant(p)), expected, rtol=1e-4)
    z = RNG.normal(size=(2, 3)).astype("f4")
    _close(K.binary_crossentropy(tf.constant(t), tf.constant(z), from_logits=True),
           np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z))), rtol=1e-5)


def test_categorical_crossentropy_documented_examples():
    a = tf.constant([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], shape=[3, 3])
    b = tf.constant([0.9, 0.05, 0.05, 0.05, 0.89, 0.06, 0.05, 0.01, 0.94], shape=[3, 3])
    np.testing.assert_allclose(K.categorical_crossentropy(a, b).numpy(),
                               [0.10536, 0.11653, 0.06188], atol=1e-5)
    np.testing.assert_allclose(K.categorical_crossentropy(a, a).numpy(), [0, 0, 0], atol=1e-5)
    # rows not summing to 1 are renormalised first (TF 2.x's example: 0.5, 0.89, 0.6)
    b2 = tf.constant([0.9, 0.05, 0.05, 0.5, 0.89, 0.6, 0.05, 0.01, 0.94], shape=[3, 3])
    np.testing.assert_allclose(K.categorical_crossentropy(a, b2).numpy(),
                               [0.10536, 0.80467, 0.06188], atol=1e-5)


def test_categorical_crossentropy_logits_and_axis():
    t = np.eye(3, dtype="f4")[[0, 2, 1, 0]]
    z = RNG.normal(size=(4, 3)).astype("f4")
    log_sm = z - np.log(np.exp(z).sum(-1, keepdims=True))
    _close(K.categorical_crossentropy(tf.constant(t), tf.constant(z), from_logits=True),
           -(t * log_sm).sum(-1), rtol=1e-5)
    p = np.exp(log_sm)
    _close(K.categorical_crossentropy(tf.constant(t.T), tf.constant(p.T), axis=0),
           -(t * log_sm).sum(-1), rtol=1e-4)


def test_sparse_categorical_crossentropy():
    z = RNG.normal(size=(4, 3)).astype("f4")
    p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    lab = np.array([0, 2, 1, 0])
    expected = -np.log(np.clip(p, EPS, 1 - EPS)[np.arange(4), lab])
    _close(K.sparse_categorical_crossentropy(tf.constant(lab), tf.constant(p)), expected,
           rtol=1e-5)
    _close(K.sparse_categorical_crossentropy(tf.constant(lab[:, None]), tf.constant(z),
                                             from_logits=True), expected, rtol=1e-5)
    _close(K.sparse_categorical_crossentropy(tf.constant(lab), tf.constant(p.T), axis=0),
           expected, rtol=1e-5)
    _close(K.sparse_categorical_crossentropy(tf.constant(lab), tf.constant(p), ignore_class=0),
           np.where(lab == 0, 0.0, expected).astype("f4"), rtol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.sparse_categorical_crossentropy(tf.constant([0, 3, 1, 0]), tf.constant(p))


# -- bias_add and conv2d ------------------------------------------------------------------------
def test_bias_add_data_formats():
    t = tf.constant(X)
    _close(K.bias_add(t, tf.range(4.0)), X + np.arange(4.0, dtype="f4"))
    _close(K.bias_add(t, tf.range(3.0), data_format="channels_first"),
           X + np.arange(3.0, dtype="f4")[:, None])
    full = np.arange(12.0, dtype="f4").reshape(3, 4)
    _close(K.bias_add(t, tf.constant(full)), X + full)
    # Keras reshapes (it does not transpose) a full bias to (1, channels, ...)
    _close(K.bias_add(t, tf.constant(full.T), data_format="channels_first"),
           X + full.T.reshape(1, 3, 4))
    with pytest.raises(ValueError, match="Unknown data_format"):
        K.bias_add(t, tf.range(4.0), data_format="NHWC")
    with pytest.raises(ValueError, match="Unexpected bias dimensions"):
        K.bias_add(tf.ones((2, 3, 4, 5)), tf.ones((4, 5)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.bias_add(t, tf.range(3.0))


def _np_conv2d(x, k, stride, pad):
    """Cross-correlation of NHWC x with an HWIO kernel, zero padding `pad` on each side."""
    x = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    kh, kw = k.shape[:2]
    oh, ow = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, k.shape[3]), "f4")
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_conv2d_against_numpy():
    x = RNG.normal(size=(2, 5, 5, 3)).astype("f4")
    k = RNG.normal(size=(3, 3, 3, 2)).astype("f4")
    _close(K.conv2d(tf.constant(x), tf.constant(k)), _np_conv2d(x, k, 1, 0), atol=1e-5)
    _close(K.conv2d(tf.constant(x), tf.constant(k), padding="same"), _np_conv2d(x, k, 1, 1),
           atol=1e-5)
    _close(K.conv2d(tf.constant(x), tf.constant(k), strides=(2, 2), padding="same"),
           _np_conv2d(x, k, 2, 1), atol=1e-5)
    out = K.conv2d(tf.constant(x.transpose(0, 3, 1, 2)), tf.constant(k),
                   data_format="channels_first")
    _close(out, _np_conv2d(x, k, 1, 0).transpose(0, 3, 1, 2), atol=1e-5)
    with pytest.raises(ValueError, match="Invalid padding"):
        K.conv2d(tf.constant(x), tf.constant(k), padding="full")


# -- random -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,kwargs", [(K.random_normal, {"mean": 1.0, "stddev": 2.0}),
                                       (K.random_uniform, {"minval": -1.0, "maxval": 3.0}),
                                       (K.truncated_normal, {"mean": 1.0, "stddev": 2.0}),
                                       (K.random_bernoulli, {"p": 0.3})])
def test_random_seeded_reproducible_with_shape_and_dtype(fn, kwargs):
    tf.random.set_seed(7)
    a = fn((200, 50), seed=3, **kwargs).numpy()
    tf.random.set_seed(7)
    b = fn((200, 50), seed=3, **kwargs).numpy()
    c = fn((200, 50), seed=4, **kwargs).numpy()
    assert a.shape == (200, 50) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert fn((3,), dtype="float64", **kwargs).dtype == tf.float64


def test_random_unseeded_draws_the_op_seed_from_numpy():
    def draw(np_seed):
        tf.random.set_seed(1)
        np.random.seed(np_seed)
        return K.random_normal((5,)).numpy()
    a = draw(0)
    np.testing.assert_array_equal(draw(0), a)
    assert not np.array_equal(draw(1), a)  # NumPy's RNG picked another op seed


def test_random_distributions():
    tf.random.set_seed(0)
    n = K.random_normal((20000,), mean=1.0, stddev=2.0, seed=1).numpy()
    assert abs(n.mean() - 1.0) < 0.06 and abs(n.std() - 2.0) < 0.06
    u = K.random_uniform((20000,), minval=-1.0, maxval=3.0, seed=1).numpy()
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.05
    t = K.truncated_normal((20000,), mean=1.0, stddev=2.0, seed=1).numpy()
    assert np.all(np.abs(t - 1.0) <= 4.0) and t.std() < 2.0
    b = K.random_bernoulli((20000,), p=0.3, seed=1).numpy()
    assert set(np.unique(b)) == {0.0, 1.0} and abs(b.mean() - 0.3) < 0.02
    v = K.random_uniform_variable((2, 3), low=0.0, high=1.0, seed=2)
    w = K.random_normal_variable((2, 3), mean=0.0, scale=1.0, seed=2)
    assert isinstance(v, tf.Variable) and isinstance(w, tf.Variable) and v.shape == (2, 3)
    assert np.all((v.numpy() >= 0) & (v.numpy() < 1))


# -- gradients ----------------------------------------------------------------------------------
def test_gradients_through_backend_ops():
    v = tf.Variable(X)
    with tf.GradientTape() as tape:
        loss = K.mean(K.square(v))
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), 2 * X / X.size, rtol=1e-5)
    with tf.GradientTape() as tape:
        norm = K.sqrt(K.sum(K.square(v)))
    np.testing.assert_allclose(tape.gradient(norm, v).numpy(), X / np.sqrt((X ** 2).sum()),
                               rtol=1e-5)
    w = tf.Variable(M)
    with tf.GradientTape() as tape:
        s = K.sum(K.batch_dot(w, w, axes=1))
    np.testing.assert_allclose(tape.gradient(s, w).numpy(), 2 * M, rtol=1e-5)
    with tf.GradientTape() as tape:
        r = K.sum(K.relu(w, alpha=0.1))
    np.testing.assert_allclose(tape.gradient(r, w).numpy(), np.where(M > 0, 1.0, 0.1), rtol=1e-6)
    with tf.GradientTape() as tape:
        s = K.sum(K.stop_gradient(w) * w)
    np.testing.assert_allclose(tape.gradient(s, w).numpy(), M, rtol=1e-6)
    assert isinstance(K.stop_gradient([w, w]), list)


# -- custom losses and metrics written with the backend -----------------------------------------
def rmse(y_true, y_pred):
    return K.sqrt(K.mean(K.square(y_pred - y_true)))


def f1(y_true, y_pred):
    tp = K.sum(K.round(K.clip(y_true * y_pred, 0, 1)))
    pp = K.sum(K.round(K.clip(y_pred, 0, 1)))
    ap = K.sum(K.round(K.clip(y_true, 0, 1)))
    precision = tp / (pp + K.epsilon())
    recall = tp / (ap + K.epsilon())
    return 2 * precision * recall / (precision + recall + K.epsilon())


def r2(y_true, y_pred):
    ss_res = K.sum(K.square(y_true - y_pred))
    ss_tot = K.sum(K.square(y_true - K.mean(y_true)))
    return 1 - ss_res / (ss_tot + K.epsilon())


def _np_metrics(t, p):
    rmse_ = np.sqrt(np.mean((p - t) ** 2))
    tp = np.round(np.clip(t * p, 0, 1)).sum()
    prec = tp / (np.round(np.clip(p, 0, 1)).sum() + EPS)
    rec = tp / (np.round(np.clip(t, 0, 1)).sum() + EPS)
    f1_ = 2 * prec * rec / (prec + rec + EPS)
    r2_ = 1 - ((t - p) ** 2).sum() / (((t - t.mean()) ** 2).sum() + EPS)
    return rmse_, f1_, r2_


def test_custom_metrics_eager_and_in_tf_function():
    rng = np.random.default_rng(1)
    t = (rng.random((16, 1)) > 0.5).astype("f4")
    p = rng.random((16, 1)).astype("f4")
    expected = _np_metrics(t.astype("f8"), p.astype("f8"))
    eager = [fn(tf.constant(t), tf.constant(p)) for fn in (rmse, f1, r2)]
    graph = [tf.function(fn)(tf.constant(t), tf.constant(p)) for fn in (rmse, f1, r2)]
    for e, g, want in zip(eager, graph, expected, strict=True):
        assert e.dtype == tf.float32 and e.shape == ()
        np.testing.assert_allclose(float(e), want, rtol=1e-5)
        np.testing.assert_allclose(float(g), float(e), rtol=1e-6)


def test_custom_loss_and_metrics_in_compile_and_fit():
    tf.random.set_seed(0)
    x = np.random.default_rng(2).normal(size=(64, 3)).astype("f4")
    y = (x @ np.array([[1.0], [2.0], [-1.0]], "f4") > 0).astype("f4")
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss=rmse, metrics=[f1, r2])
    history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
    assert set(history.history) == {"loss", "f1", "r2"}
    for values in history.history.values():
        assert len(values) == 3 and np.all(np.isfinite(values))
    assert history.history["loss"][-1] < history.history["loss"][0]
    result = model.evaluate(x, y, batch_size=64, verbose=0, return_dict=True)
    pred = model.predict(x, verbose=0).astype("f8")
    want_rmse, want_f1, want_r2 = _np_metrics(y.astype("f8"), pred)
    np.testing.assert_allclose(result["loss"], want_rmse, rtol=1e-5)
    np.testing.assert_allclose(result["f1"], want_f1, rtol=1e-5)
    np.testing.assert_allclose(result["r2"], want_r2, rtol=1e-4)
