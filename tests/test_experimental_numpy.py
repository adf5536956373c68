"""tf.experimental.numpy against NumPy itself: the same call on the same values gives the
same values and dtypes (NumPy's promotion and float64 default), differentiable and
traceable; NumPy's methods on tensors after experimental_enable_numpy_behavior."""
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.experimental.numpy as tnp

A = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
B = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.5]], np.float32)
I32 = np.array([3, 1, 2], np.int32)

CASES = [
    ("exp", (A,), {}), ("log", (A,), {}), ("sqrt", (I32,), {}), ("tanh", (B,), {}),
    ("abs", (B,), {}), ("square", (I32,), {}), ("floor", (B,), {}), ("around", (B,), {}),
    ("add", (A, B), {}), ("add", (I32, 1.5), {}), ("multiply", (I32, I32), {}),
    ("true_divide", (I32, I32), {}), ("divide", (A, B), {}), ("power", (A, 2), {}),
    ("maximum", (A, B), {}), ("floor_divide", (I32, 2), {}), ("mod", (I32, 2), {}),
    ("greater", (A, B), {}), ("logical_and", (A > 2, B > 0), {}),
    ("sum", (A,), {}), ("sum", (A,), {"axis": 1, "keepdims": True}), ("sum", (I32,), {}),
    ("mean", (A,), {"axis": 0}), ("mean", (I32,), {}), ("prod", (A,), {}),
    ("amax", (B,), {"axis": 1}), ("min", (B,), {}), ("std", (A,), {}),
    ("var", (A,), {"axis": 1, "ddof": 1}), ("argmax", (B,), {}), ("argmin", (B,), {"axis": 1}),
    ("cumsum", (A,), {"axis": 1}), ("cumprod", (A,), {}), ("all", (A > 0,), {}),
    ("any", (B > 2,), {"axis": 0}),
    ("matmul", (A, B.T), {}), ("dot", (A, B.T), {}), ("dot", (I32, I32), {}),
    ("outer", (I32, I32), {}), ("inner", (A, B), {}), ("tensordot", (A, B.T, 1), {}),
    ("einsum", ("ij,kj->ik", A, B), {}),
    ("reshape", (A, (3, 2)), {}), ("ravel", (A,), {}), ("transpose", (A,), {}),
    ("swapaxes", (A, 0, 1), {}), ("moveaxis", (A[None], 0, 2), {}),
    ("squeeze", (A[None],), {}), ("expand_dims", (A, 1), {}),
    ("concatenate", ([A, B],), {"axis": 1}), ("stack", ([A, B],), {}),
    ("hstack", ([I32, I32],), {}), ("vstack", ([I32, I32],), {}),
    ("tile", (I32, 2), {}), ("repeat", (I32, 2), {}), ("flip", (A,), {"axis": 1}),
    ("take", (A, [0, 4]), {}), ("sort", (B,), {}), ("argsort", (B,), {}),
    ("clip", (B, 0.0, 1.0), {}), ("where", (A > 3, A, B), {}), ("diag", (I32,), {}),
    ("pad", (A, 1), {}), ("broadcast_to", (I32, (2, 3)), {}),
    ("zeros", ((2, 3),), {}), ("ones", (4,), {}), ("full", ((2,), 7), {}),
    ("arange", (5,), {}), ("arange", (1.0, 2.0, 0.25), {}), ("linspace", (0, 1, 5), {}),
    ("eye", (3,), {}), ("zeros_like", (I32,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_numpy(name, args, kwargs):
    expected = getattr(np, name)(*args, **kwargs)
    got = getattr(tnp, name)(*[tf.constant(a) if isinstance(a, np.ndarray) else a
                               for a in args], **kwargs)
    assert isinstance(got, tnp.ndarray)
    assert got.dtype.as_numpy_dtype == np.asarray(expected).dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_differentiable_and_traceable():
    v = tf.Variable(tnp.ones([3]))
    with tf.GradientTape() as tape:
        y = tnp.sum(tnp.exp(v) * tnp.linspace(0, 1, 3))
    np.testing.assert_allclose(tape.gradient(y, v), np.e * np.linspace(0, 1, 3))
    f = tf.function(lambda x: tnp.tanh(tnp.dot(x, x)))
    np.testing.assert_allclose(f(tnp.ones((2, 2))), np.tanh(np.full((2, 2), 2.0)))


def test_missing_functions_say_so():
    with pytest.raises(NotImplementedError, match="tf.experimental.numpy.fft"):
        tnp.fft  # noqa: B018
    with pytest.raises(AttributeError):
        tnp.no_such_function  # noqa: B018
    assert tf.experimental.numpy is tnp


def test_numpy_behavior_on_tensors():
    """In a fresh process: enabling NumPy behaviour changes tf.Tensor for the process."""
    code = """
import numpy as np, tensorlite as tf
import tensorlite.experimental.numpy as tnp
tnp.experimental_enable_numpy_behavior(prefer_float32=True)
t = tf.constant([[1., 2.], [3., 4.]])
assert t.T.numpy().tolist() == [[1., 3.], [2., 4.]]
assert t.reshape(4).shape == (4,) and t.reshape((1, 4)).shape == (1, 4)
assert t.astype(np.int32).dtype == tf.int32 and t.size == 4 and t.ndim == 2
assert t.tolist() == [[1., 2.], [3., 4.]] and float(t.sum()) == 10.0
assert tnp.asarray(1.5).dtype == tf.float32
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
