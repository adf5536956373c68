"""Complex-number basics: tf.complex, tf.math.real/imag/conj/angle, complex tf.abs, and
TensorFlow's gradient convention for complex inputs (dL/dRe + i dL/dIm)."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors
from tests.complex_check import check_complex_grads
from tests.op_check import check_shape_rules


def _z(*shape, seed=0):
    rng = np.random.default_rng([seed, *shape])
    return rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)


def test_complex_builds_from_parts_with_tf_dtypes():
    # TF's docstring example
    z = tf.complex([2.25, 3.25], [4.75, 5.75])
    assert z.dtype == tf.complex64
    np.testing.assert_allclose(z.numpy(), [2.25 + 4.75j, 3.25 + 5.75j])
    w = tf.complex(np.ones((2, 1)), np.arange(3.0))  # broadcasts, float64 -> complex128
    assert w.dtype == tf.complex128 and w.shape == (2, 3)
    np.testing.assert_allclose(w.numpy(), np.ones((2, 1)) + 1j * np.arange(3.0))


@pytest.mark.parametrize("real, imag", [
    (tf.constant([1.0]), tf.constant([1.0], tf.float64)),
    (tf.constant([1]), tf.constant([2])),
])
def test_complex_rejects_mismatched_or_integer_parts(real, imag):
    with pytest.raises(TypeError, match="real.*imag"):
        tf.complex(real, imag)


def test_parts_conj_angle_abs_match_numpy():
    z = _z(3, 4)
    t = tf.constant(z)
    for fn, ref in ((tf.math.real, np.real), (tf.math.imag, np.imag),
                    (tf.math.conj, np.conj), (tf.math.angle, np.angle), (tf.abs, np.abs)):
        got = check_shape_rules(fn, [t])
        assert got.dtype == tf.as_dtype(ref(z).dtype), fn
        np.testing.assert_allclose(got.numpy(), ref(z), rtol=1e-12)
    small = tf.constant(z.astype(np.complex64))
    assert tf.math.real(small).dtype == tf.float32 and tf.abs(small).dtype == tf.float32
    assert tf.math.abs(small).dtype == tf.float32 and abs(small).dtype == tf.float32


def test_documented_values():
    x = tf.constant([[-2.25 + 4.75j], [-3.25 + 5.75j]])
    np.testing.assert_allclose(tf.abs(x).numpy(), [[5.25594902], [6.60492229]], rtol=1e-7)
    a = tf.math.angle(tf.constant([-2.25 + 4.75j, 3.25 + 5.75j]))
    np.testing.assert_allclose(a.numpy(), [2.0131705, 1.056345], rtol=1e-6)


def test_real_inputs():
    x = tf.constant([-1.5, 0.0, 2.0])
    np.testing.assert_array_equal(tf.math.real(x).numpy(), x.numpy())
    np.testing.assert_array_equal(tf.math.imag(x).numpy(), [0, 0, 0])
    assert tf.math.conj(x) is x and tf.math.real(x) is x  # TF returns real inputs unchanged
    np.testing.assert_allclose(tf.math.angle(x).numpy(), [np.pi, 0, 0], rtol=1e-7)
    np.testing.assert_array_equal(tf.abs(x).numpy(), [1.5, 0.0, 2.0])
    with pytest.raises(errors.InvalidArgumentError, match="Angle"):
        tf.math.angle(tf.constant([1, 2]))


@pytest.mark.parametrize("name, fn, nargs", [
    ("complex", lambda x, y: tf.complex(x, y), 2),
    ("complex_broadcast", lambda x, y: tf.complex(x, y[:1]), 2),
])
def test_complex_gradient_real_parts(name, fn, nargs):
    rng = np.random.default_rng(1)
    check_complex_grads(fn, [rng.uniform(-2, 2, (2, 3)) for _ in range(nargs)])


@pytest.mark.parametrize("name, fn", [
    ("real", tf.math.real), ("imag", tf.math.imag), ("conj", tf.math.conj),
    ("abs", tf.abs), ("angle", tf.math.angle),
    ("mul", lambda z: z * tf.constant(0.5 - 1.5j, tf.complex128)),
    ("div", lambda z: z / tf.constant(0.5 - 1.5j, tf.complex128)),
    ("square", tf.square), ("exp", tf.exp), ("sin", tf.sin),
    ("mul_self_conj", lambda z: z * tf.math.conj(z)),
    ("abs_squared", lambda z: tf.abs(z) ** 2),
    ("cast_to_real", lambda z: tf.cast(z, tf.float64)),
    ("sum", lambda z: tf.reduce_sum(z * z, axis=0)),
    ("prod", lambda z: tf.reduce_prod(z, axis=1)),
    ("cumprod", lambda z: tf.math.cumprod(z, axis=1)),
    ("matmul", lambda z: tf.matmul(z, tf.constant(np.arange(6).reshape(3, 2) * (1 - 1j)))),
    ("matmul_self_adjoint", lambda z: tf.matmul(z, z, adjoint_b=True)),
    ("einsum", lambda z: tf.einsum("ij,kj->ik", z, tf.math.conj(z) + 1j)),
])
def test_gradients_follow_tf_convention(name, fn):
    check_complex_grads(fn, [_z(2, 3, seed=3)])


def test_abs_squared_gradient_is_two_z():
    # TF: d/dz of |z|^2 is 2z (= dL/dx + i dL/dy); a non-conjugating rule would give 2 conj(z)
    z = tf.constant([3.0 + 4.0j, -1.0 + 0.5j])
    with tf.GradientTape() as tape:
        tape.watch(z)
        loss = tf.reduce_sum(tf.abs(z) ** 2)
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), 2 * z.numpy(), rtol=1e-6)


def test_gradients_at_zero_are_finite():
    z = tf.constant([0j, 1 + 1j])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(z)
        a, b = tf.reduce_sum(tf.abs(z)), tf.reduce_sum(tf.math.angle(z))
    for out in (a, b):
        g = tape.gradient(out, z).numpy()
        assert np.all(np.isfinite(g)) and g[0] == 0


def test_real_cast_and_parts_gradient_from_real_source():
    x = tf.constant([1.0, -2.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = tf.complex(x, 2 * x)
        loss = tf.reduce_sum(tf.abs(z))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.sqrt(5) * np.sign([1, -2]))


def test_complex_ops_in_tf_function():
    @tf.function
    def f(x, y):
        z = tf.complex(x, y)
        return tf.abs(z), tf.math.angle(z), tf.math.real(tf.math.conj(z))
    mag, ang, re = f(tf.constant([3.0, 0.0]), tf.constant([4.0, -1.0]))
    np.testing.assert_allclose(mag.numpy(), [5, 1])
    np.testing.assert_allclose(ang.numpy(), [np.arctan2(4, 3), -np.pi / 2], rtol=1e-6)
    np.testing.assert_allclose(re.numpy(), [3, 0])
