"""math ops against NumPy, gradients against finite differences (one table row per op)."""
import numpy as np
import pytest

import tensorlite as tf
from tests.op_check import check_op, positive, rand

B = rand(2, 3, seed=1)
A = rand(3, seed=2)
P = positive(2, 3, seed=3)
M1, M2 = rand(2, 3, 4, seed=4), rand(4, 5, seed=5)

CASES = [
    ("add", tf.add, np.add, [B, A]),
    ("add_scalar", lambda x: x + 1.5, lambda x: x + 1.5, [B]),
    ("subtract", tf.subtract, np.subtract, [A, B]),
    ("multiply", tf.multiply, np.multiply, [B, rand(2, 1, seed=7)]),
    ("divide", tf.divide, np.divide, [B, P]),
    ("pow", tf.pow, np.power, [P, B]),
    ("pow_int_exp", lambda x: x ** 3, lambda x: x ** 3, [B]),
    ("maximum", tf.maximum, np.maximum, [B, A]),
    ("minimum", tf.minimum, np.minimum, [B, A]),
    ("squared_difference", tf.math.squared_difference, lambda x, y: (x - y) ** 2, [B, A]),
    ("atan2", tf.math.atan2, np.arctan2, [B, P]),
    ("negative", tf.negative, np.negative, [B]),
    ("abs", tf.abs, np.abs, [B]),
    ("square", tf.square, np.square, [B]),
    ("sqrt", tf.sqrt, np.sqrt, [P]),
    ("rsqrt", tf.math.rsqrt, lambda x: 1 / np.sqrt(x), [P]),
    ("exp", tf.exp, np.exp, [B]),
    ("expm1", tf.math.expm1, np.expm1, [B]),
    ("log", tf.math.log, np.log, [P]),
    ("log1p", tf.math.log1p, np.log1p, [P]),
    ("sin", tf.sin, np.sin, [B]),
    ("cos", tf.cos, np.cos, [B]),
    ("tan", tf.tan, np.tan, [rand(4, low=-1, high=1)]),
    ("asin", tf.math.asin, np.arcsin, [rand(4, low=-0.9, high=0.9)]),
    ("acos", tf.math.acos, np.arccos, [rand(4, low=-0.9, high=0.9)]),
    ("atan", tf.math.atan, np.arctan, [B]),
    ("sinh", tf.math.sinh, np.sinh, [B]),
    ("cosh", tf.math.cosh, np.cosh, [B]),
    ("tanh", tf.tanh, np.tanh, [B]),
    ("sigmoid", tf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), [B]),
    ("reciprocal", tf.math.reciprocal, np.reciprocal, [P]),
    ("erf", tf.math.erf, lambda x: np.vectorize(__import__("math").erf)(x), [B]),
    ("reduce_sum", lambda x: tf.reduce_sum(x, axis=1), lambda x: x.sum(1), [B]),
    ("reduce_sum_all", tf.reduce_sum, np.sum, [B]),
    ("reduce_sum_keep", lambda x: tf.reduce_sum(x, [0, 2], keepdims=True),
     lambda x: x.sum((0, 2), keepdims=True), [M1]),
    ("reduce_mean", lambda x: tf.reduce_mean(x, axis=-1), lambda x: x.mean(-1), [M1]),
    ("reduce_max", lambda x: tf.reduce_max(x, axis=0), lambda x: x.max(0), [B]),
    ("reduce_min", lambda x: tf.reduce_min(x, axis=1), lambda x: x.min(1), [B]),
    ("reduce_prod", lambda x: tf.reduce_prod(x, axis=1), lambda x: x.prod(1), [B]),
    ("reduce_logsumexp", lambda x: tf.reduce_logsumexp(x, axis=1),
     lambda x: np.log(np.exp(x).sum(1)), [B]),
    ("reduce_std", lambda x: tf.math.reduce_std(x, axis=0), lambda x: x.std(0), [B]),
    ("matmul", tf.matmul, np.matmul, [M1, M2]),
    ("matmul_shared_weights", tf.matmul, np.matmul, [rand(2, 3, 4, seed=11),
                                                     rand(4, 5, seed=12)]),
    ("matmul_ta", lambda a, b: tf.matmul(a, b, transpose_a=True),
     lambda a, b: a.T @ b, [rand(4, 3, seed=9), rand(4, 2, seed=10)]),
    ("matmul_tb", lambda a, b: tf.matmul(a, b, transpose_b=True),
     lambda a, b: a @ b.T, [rand(3, 4, seed=9), rand(2, 4, seed=10)]),
    ("matmul_tab", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
     lambda a, b: a.T @ b.T, [rand(4, 3, seed=9), rand(2, 4, seed=10)]),
    ("tensordot", lambda a, b: tf.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1),
     [M1, M2]),
    ("tensordot_pairs", lambda a, b: tf.tensordot(a, b, [[0, 1], [1, 0]]),
     lambda a, b: np.tensordot(a, b, [[0, 1], [1, 0]]), [rand(2, 3, 4), rand(3, 2, 5)]),
    ("einsum", lambda a, b: tf.einsum("ijk,kl->il", a, b),
     lambda a, b: np.einsum("ijk,kl->il", a, b), [M1, M2]),
    ("add_n", lambda a, b: tf.add_n([a, b, a]), lambda a, b: a + b + a, [B, P]),
    ("cumsum", lambda x: tf.cumsum(x, axis=1), lambda x: np.cumsum(x, 1), [B]),
    ("cumsum_excl_rev", lambda x: tf.cumsum(x, axis=1, exclusive=True, reverse=True),
     lambda x: np.flip(np.cumsum(np.flip(x, 1), 1), 1) - x, [B]),
    ("cumprod", lambda x: tf.math.cumprod(x, axis=0), lambda x: np.cumprod(x, 0), [P]),
    ("clip_by_value", lambda x: tf.clip_by_value(x, -1.0, 1.0), lambda x: np.clip(x, -1, 1),
     [B]),
    ("where", lambda x, y: tf.where(x > 0, x, y), lambda x, y: np.where(x > 0, x, y), [B, A]),
    ("sort", lambda x: tf.sort(x, axis=-1), lambda x: np.sort(x, -1), [B]),
    ("sort_desc", lambda x: tf.sort(x, direction="DESCENDING"), lambda x: -np.sort(-x, -1),
     [B]),
    ("cast", lambda x: tf.cast(x, tf.float32), lambda x: x.astype(np.float32), [B]),
]


@pytest.mark.parametrize("name,tf_fn,np_fn,args", CASES, ids=[c[0] for c in CASES])
def test_op(name, tf_fn, np_fn, args):
    grad = name != "cast"
    check_op(tf_fn, np_fn, args, grad=grad, rtol=1e-4 if name == "cast" else 1e-5)


def test_count_nonzero_as_tf():
    """`tf.math.count_nonzero` (Hands-On ML ch. 13 counts non-padding tokens with it):
    int64 counts, strings count when non-empty; values as real TF 2.21 gives them."""
    assert tf.math.count_nonzero([[0, 1], [2, 0]]).numpy() == 2
    assert tf.math.count_nonzero([[0, 1], [2, 0]]).dtype == tf.int64
    assert tf.math.count_nonzero([[0., 1.], [2., 3.]], axis=1).numpy().tolist() == [1, 2]
    assert tf.math.count_nonzero(tf.constant(['a', '', 'b']), keepdims=True).numpy() \
        .tolist() == [2]
    out = tf.math.count_nonzero([[0, 1], [2, 0]], axis=0, dtype=tf.int32)
    assert out.dtype == tf.int32 and out.numpy().tolist() == [1, 1]
