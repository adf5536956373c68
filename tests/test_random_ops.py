"""Random ops: TF's seed semantics exactly, statistics on large samples, shapes, dtypes,
shape rules, gradients through parameters, tf.random.Generator, and bad input."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import random_ops
from tests.op_check import check_shape_rules

N = 200_000


@pytest.fixture(autouse=True)
def _no_global_seed():
    tf.random.set_seed(None)
    yield
    tf.random.set_seed(None)


def _v(t):
    return np.asarray(t).copy()


# -- seed semantics ----------------------------------------------------------------------------
def test_global_seed_gives_a_repeatable_sequence_of_different_values():
    tf.random.set_seed(1)
    a1, a2 = _v(tf.random.uniform([1])), _v(tf.random.uniform([1]))
    assert a1 != a2
    tf.random.set_seed(1)
    assert _v(tf.random.uniform([1])) == a1
    assert _v(tf.random.uniform([1])) == a2


def test_different_global_seeds_differ():
    tf.random.set_seed(1)
    a = _v(tf.random.uniform([4]))
    tf.random.set_seed(2)
    assert not np.array_equal(a, _v(tf.random.uniform([4])))


def test_op_seed_calls_differ_and_set_seed_restarts_them():
    tf.random.set_seed(1234)
    a1, a2 = _v(tf.random.uniform([1], seed=1)), _v(tf.random.uniform([1], seed=1))
    assert a1 != a2
    tf.random.set_seed(1234)
    assert _v(tf.random.uniform([1], seed=1)) == a1
    assert _v(tf.random.uniform([1], seed=1)) == a2


def test_op_seed_without_global_seed_is_deterministic():
    a1, a2 = _v(tf.random.uniform([3], seed=5)), _v(tf.random.uniform([3], seed=5))
    assert not np.array_equal(a1, a2)
    tf.random.set_seed(None)  # a fresh program: same default global seed
    np.testing.assert_array_equal(tf.random.uniform([3], seed=5), a1)
    tf.random.set_seed(7)
    assert not np.array_equal(_v(tf.random.uniform([3], seed=5)), a1)


def test_op_seed_stream_ignores_unseeded_calls_in_between():
    tf.random.set_seed(3)
    a = _v(tf.random.normal([2], seed=9))
    tf.random.set_seed(3)
    tf.random.uniform([5])
    tf.random.normal([5])
    np.testing.assert_array_equal(tf.random.normal([2], seed=9), a)


def test_same_op_seed_on_different_ops_keeps_separate_streams():
    tf.random.set_seed(3)
    u1 = _v(tf.random.uniform([2], seed=1))
    tf.random.set_seed(3)
    tf.random.normal([2], seed=1)
    np.testing.assert_array_equal(tf.random.uniform([2], seed=1), u1)


def test_no_seed_at_all_is_nondeterministic():
    a = _v(tf.random.uniform([8]))
    b = _v(tf.random.uniform([8]))
    assert not np.array_equal(a, b)


def test_next_rng_helper_for_other_families():
    tf.random.set_seed(5)
    r1 = random_ops.next_rng(3, "Dropout")
    assert random_ops.next_rng(3, "Dropout") is r1  # persistent stream per (global, op, kind)
    assert random_ops.next_rng(3, "Other") is not r1
    first = r1.random(2)
    tf.random.set_seed(5)
    np.testing.assert_array_equal(random_ops.next_rng(3, "Dropout").random(2), first)
    assert isinstance(random_ops.next_rng(None), np.random.Generator)


def test_seed_must_be_an_integer():
    with pytest.raises(TypeError, match="seed"):
        tf.random.uniform([2], seed=1.5)
    with pytest.raises(TypeError, match="seed"):
        tf.random.set_seed("x")


# -- statistics --------------------------------------------------------------------------------
def test_uniform_statistics_and_range():
    x = _v(tf.random.uniform([N], seed=1))
    assert x.dtype == np.float32 and x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.005 and abs(x.std() - np.sqrt(1 / 12)) < 0.005
    y = _v(tf.random.uniform([N], minval=-3.0, maxval=5.0, seed=2))
    assert y.min() >= -3 and y.max() < 5 and abs(y.mean() - 1.0) < 0.05


def test_uniform_int_range_and_coverage():
    x = _v(tf.random.uniform([N], minval=-2, maxval=3, dtype=tf.int64, seed=1))
    assert x.dtype == np.int64
    assert set(np.unique(x)) == {-2, -1, 0, 1, 2}
    counts = np.bincount(x + 2) / N
    np.testing.assert_allclose(counts, 0.2, atol=0.01)


def test_normal_statistics():
    x = _v(tf.random.normal([N], mean=2.0, stddev=3.0, seed=1))
    assert x.dtype == np.float32
    assert abs(x.mean() - 2.0) < 0.05 and abs(x.std() - 3.0) < 0.05


def test_truncated_normal_range_and_std():
    x = _v(tf.random.truncated_normal([N], mean=1.0, stddev=2.0, seed=1))
    assert x.min() >= 1.0 - 4.0 and x.max() <= 1.0 + 4.0
    assert abs(x.mean() - 1.0) < 0.03
    assert abs(x.std() - 2.0 * 0.87962566) < 0.02  # std of N(0,1) truncated at +-2


def test_categorical_frequencies():
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    with np.errstate(divide="ignore"):
        logits = np.log(probs)
    s = _v(tf.random.categorical(logits, 50_000, seed=1))
    assert s.shape == (2, 50_000) and s.dtype == np.int64
    for row, p in zip(s, probs):
        np.testing.assert_allclose(np.bincount(row, minlength=3) / row.size, p, atol=0.01)
    assert tf.random.categorical(logits, 4, dtype=tf.int32).dtype == tf.int32


def test_shuffle_permutes_first_dimension_keeping_rows():
    x = np.arange(20).reshape(10, 2)
    y = _v(tf.random.shuffle(x, seed=1))
    assert sorted(y[:, 0].tolist()) == list(range(0, 20, 2))
    np.testing.assert_array_equal(y[:, 1], y[:, 0] + 1)
    assert not np.array_equal(y, x)


def test_gamma_poisson_binomial_statistics():
    g = _v(tf.random.gamma([N], alpha=[2.0, 5.0], beta=2.0, seed=1))
    assert g.shape == (N, 2) and g.dtype == np.float32 and g.min() > 0
    np.testing.assert_allclose(g.mean(0), [1.0, 2.5], rtol=0.02)
    p = _v(tf.random.poisson([N], lam=[1.0, 7.0], seed=1))
    assert p.shape == (N, 2) and p.dtype == np.float32
    np.testing.assert_allclose(p.mean(0), [1.0, 7.0], rtol=0.02)
    b = _v(tf.random.stateless_binomial([N], seed=[1, 2], counts=10, probs=0.3))
    assert b.dtype == np.int32 and abs(b.mean() - 3.0) < 0.03


# -- shapes, dtypes, shape rules ---------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda: tf.random.uniform([2, 3]),
    lambda: tf.random.uniform([2, 3], maxval=7, dtype=tf.int32),
    lambda: tf.random.normal([4], dtype=tf.float64),
    lambda: tf.random.truncated_normal([0, 2]),
    lambda: tf.random.categorical([[0.0, 1.0]], 3),
    lambda: tf.random.shuffle([1, 2, 3]),
    lambda: tf.random.gamma([3], [1.0, 2.0]),
    lambda: tf.random.poisson([2], 3.0, dtype=tf.int64),
    lambda: tf.random.stateless_uniform([2, 2], seed=[1, 2]),
    lambda: tf.random.stateless_uniform([3], seed=[1, 2], minval=None, maxval=None,
                                        dtype=tf.uint32),
    lambda: tf.random.stateless_normal([3], seed=[1, 2]),
    lambda: tf.random.stateless_categorical([[0.0, 1.0]], 2, seed=[3, 4]),
    lambda: tf.random.Generator.from_seed(1).normal([2, 2]),
])
def test_shape_rules_predict_outputs(fn):
    check_shape_rules(fn, [])


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_float_dtypes(dtype):
    for out in (tf.random.uniform([3], dtype=dtype), tf.random.normal([3], dtype=dtype),
                tf.random.truncated_normal([3], dtype=dtype),
                tf.random.stateless_normal([3], [1, 1], dtype=dtype)):
        assert out.dtype == dtype and out.shape == (3,)


def test_shape_accepts_tensorshape_and_tensor():
    assert tf.random.uniform(tf.TensorShape([2, 1])).shape == (2, 1)
    assert tf.random.normal(tf.constant([3, 2])).shape == (3, 2)
    assert tf.random.uniform([]).shape == ()


# -- gradients ---------------------------------------------------------------------------------
def test_normal_is_differentiable_in_mean_and_stddev():
    mean, std = tf.Variable(1.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        x = tf.random.normal([1000], mean=mean, stddev=std, seed=1)
        y = tf.reduce_sum(x)
    gm, gs = tape.gradient(y, [mean, std])
    assert gm.numpy() == pytest.approx(1000.0)
    assert gs.numpy() == pytest.approx(float(np.sum((x.numpy() - 1.0) / 2.0)), rel=1e-4)


def test_uniform_is_differentiable_in_bounds():
    lo, hi = tf.Variable(-1.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        x = tf.random.uniform([100], minval=lo, maxval=hi, seed=3)
        y = tf.reduce_sum(x)
    glo, ghi = tape.gradient(y, [lo, hi])
    u = (x.numpy() + 1.0) / 4.0
    assert ghi.numpy() == pytest.approx(u.sum(), rel=1e-4)
    assert glo.numpy() == pytest.approx((1 - u).sum(), rel=1e-4)


def test_draws_are_not_differentiable():
    lam = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.random.poisson([3], lam))
    assert tape.gradient(y, lam) is None
    for op in (random_ops.UNIFORM, random_ops.NORMAL, random_ops.MULTINOMIAL,
               random_ops.STATELESS_UNIFORM):
        assert op.grad is random_ops.NOT_DIFFERENTIABLE


def test_shuffle_and_gamma_alpha_have_no_gradient_loudly_as_tf_shuffle():
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.random.shuffle(x))
    with pytest.raises(LookupError, match="RandomShuffle"):
        tape.gradient(y, x)
    alpha = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.random.gamma([3], alpha))
    with pytest.raises(LookupError, match="RandomGamma"):
        tape.gradient(y, alpha)


def test_gamma_is_differentiable_in_beta():
    beta = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        x = tf.random.gamma([50], alpha=3.0, beta=beta, seed=1)
        y = tf.reduce_sum(x)
    # x = g / beta, so dx/dbeta = -x / beta
    assert tape.gradient(y, beta).numpy() == pytest.approx(-x.numpy().sum() / 2.0, rel=1e-5)


# -- stateless ---------------------------------------------------------------------------------
def test_stateless_is_a_function_of_the_seed_pair():
    a = _v(tf.random.stateless_uniform([5], seed=[1, 2]))
    tf.random.uniform([3])  # stateful draws in between change nothing
    np.testing.assert_array_equal(tf.random.stateless_uniform([5], seed=[1, 2]), a)
    np.testing.assert_array_equal(tf.random.stateless_uniform([5], seed=tf.constant([1, 2],
                                                                                      tf.int64)),
                                  a)
    assert not np.array_equal(_v(tf.random.stateless_uniform([5], seed=[1, 3])), a)
    n = _v(tf.random.stateless_normal([N], seed=[4, 4], mean=1.0, stddev=2.0))
    assert abs(n.mean() - 1.0) < 0.03 and abs(n.std() - 2.0) < 0.03
    t = _v(tf.random.stateless_truncated_normal([N], seed=[4, 5]))
    assert np.abs(t).max() <= 2.0


def test_stateless_split_and_fold_in():
    s = tf.random.experimental.stateless_split([1, 2], num=3)
    assert s.shape == (3, 2) and s.dtype == tf.int32
    np.testing.assert_array_equal(s, tf.random.experimental.stateless_split([1, 2], num=3))
    f1 = _v(tf.random.experimental.stateless_fold_in([1, 2], 7))
    f2 = _v(tf.random.experimental.stateless_fold_in([1, 2], 8))
    assert f1.shape == (2,) and not np.array_equal(f1, f2)


def test_split_and_fold_in_have_tf_2_21s_names():
    # tf.random.split / fold_in: the random-number guide's seeds, TF 2.21's names
    seeds = tf.random.split(tf.constant([1, 2]), 3)
    np.testing.assert_array_equal(seeds, tf.random.experimental.stateless_split([1, 2], 3))
    np.testing.assert_array_equal(tf.random.fold_in(tf.constant([1, 2]), 5),
                                  tf.random.experimental.stateless_fold_in([1, 2], 5))
    a = tf.random.stateless_normal([2], seed=tf.random.fold_in([1, 2], 0))
    b = tf.random.stateless_normal([2], seed=tf.random.fold_in([1, 2], 1))
    assert not np.array_equal(a, b)


# -- tf.random.Generator -----------------------------------------------------------------------
def test_generator_from_seed_reproducible_and_advancing():
    g = tf.random.Generator.from_seed(42)
    s0 = g.state.numpy().copy()
    a, b = _v(g.normal([4])), _v(g.normal([4]))
    assert not np.array_equal(a, b)
    assert not np.array_equal(g.state.numpy(), s0)
    assert g.state.dtype == tf.int64 and isinstance(g.state, tf.Variable)
    h = tf.random.Generator.from_seed(42)
    np.testing.assert_array_equal(h.normal([4]), a)
    g.reset_from_seed(42)
    np.testing.assert_array_equal(g.normal([4]), a)


def test_generator_copy_split_and_seeds():
    g = tf.random.Generator.from_seed(1)
    c = tf.random.Generator(copy_from=g)
    np.testing.assert_array_equal(c.uniform([3]), g.uniform([3]))
    kids = g.split(3)
    draws = [_v(k.uniform([4])) for k in kids] + [_v(g.uniform([4]))]
    assert len({d.tobytes() for d in draws}) == 4
    seeds = g.make_seeds(5)
    assert seeds.shape == (2, 5) and seeds.dtype == tf.int64
    x = g.uniform([N], minval=0, maxval=10, dtype=tf.int32)
    assert x.dtype == tf.int32 and set(np.unique(x.numpy())) == set(range(10))
    assert g.uniform_full_int([3]).dtype == tf.uint64
    t = g.truncated_normal([N], stddev=3.0).numpy()
    assert np.abs(t).max() <= 6.0


def test_generator_skip_and_key_counter():
    g = tf.random.Generator.from_key_counter(key=5, counter=[0, 0], alg="philox")
    h = tf.random.Generator.from_key_counter(key=5, counter=[0, 0], alg="philox")
    h.skip(10)
    assert not np.array_equal(_v(g.normal([2])), _v(h.normal([2])))
    assert int(g.key) == 5 and g.algorithm == tf.random.Algorithm.PHILOX.value
    big = [tf.random.Generator.from_key_counter(2**62 + i, [0, 0], "philox") for i in (1, 2)]
    assert not np.array_equal(_v(big[0].normal([2])), _v(big[1].normal([2])))  # full 64 bits


def test_global_generator():
    g = tf.random.get_global_generator()
    assert tf.random.get_global_generator() is g
    mine = tf.random.Generator.from_seed(3)
    tf.random.set_global_generator(mine)
    try:
        assert tf.random.experimental.get_global_generator() is mine
    finally:
        tf.random.set_global_generator(g)
    with pytest.raises(TypeError):
        tf.random.set_global_generator(3)


def test_generator_needs_state_or_copy():
    with pytest.raises(ValueError, match="from_seed"):
        tf.random.Generator()


# -- bad input ---------------------------------------------------------------------------------
def test_int_uniform_needs_maxval():
    with pytest.raises(ValueError, match="maxval"):
        tf.random.uniform([2], dtype=tf.int32)


def test_int_uniform_minval_not_below_maxval():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"minval < maxval.*RandomUniformInt"):
        tf.random.uniform([2], minval=5, maxval=3, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="RandomUniformInt"):
        tf.random.uniform([2], minval=[0, 1], maxval=3, dtype=tf.int32)


def test_bad_dtypes():
    with pytest.raises(ValueError, match="dtype"):
        tf.random.uniform([2], dtype=tf.bool)
    with pytest.raises(TypeError, match="dtype"):
        tf.random.normal([2], dtype=tf.int32)
    with pytest.raises(TypeError, match="dtype"):
        tf.random.categorical([[0.0, 1.0]], 2, dtype=tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="RandomStandardNormal"):
        tf.random.normal([2], mean=tf.constant(1.0, tf.float64))


def test_bad_shapes_and_logits():
    with pytest.raises(tf.errors.InvalidArgumentError, match="RandomUniform"):
        tf.random.uniform(3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative"):
        tf.random.uniform([2, -1])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"matrix.*Multinomial"):
        tf.random.categorical([0.0, 1.0], 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \[2\]"):
        tf.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="alpha"):
        tf.random.gamma([2], alpha=-1.0)
