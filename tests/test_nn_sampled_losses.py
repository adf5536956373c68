"""tf.nn.compute_accidental_hits, tf.nn.sampled_softmax_loss and tf.nn.nce_loss, checked
against NumPy computations of the formulas TensorFlow documents (its
`_compute_sampled_logits`), with fixed `sampled_values` so the check is exact, and their
gradients by finite differences."""
import numpy as np
import pytest

import tensorlite as tf

FLT_MAX = np.finfo(np.float32).max


def test_compute_accidental_hits_is_tfs_sparse_triple():
    indices, ids, weights = tf.nn.compute_accidental_hits(
        true_classes=[[1, 2], [4, 1], [7, 8]], sampled_candidates=[4, 2, 1, 9], num_true=2)
    assert indices.dtype == tf.int32 and ids.dtype == tf.int64 and weights.dtype == tf.float32
    assert indices.numpy().tolist() == [0, 0, 1, 1]
    assert ids.numpy().tolist() == [2, 1, 0, 2]
    np.testing.assert_array_equal(weights.numpy(), [-FLT_MAX] * 4)
    none = tf.nn.compute_accidental_hits([[5]], [1, 2], num_true=1)
    assert [t.shape.as_list() for t in none] == [[0], [0], [0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_true=2"):
        tf.nn.compute_accidental_hits([[1]], [1], num_true=2)


def _numpy_logits(w, b, labels, x, sampled, true_count, sampled_count, remove_hits):
    """TF's _compute_sampled_logits, written out in NumPy (float64)."""
    num_true = labels.shape[1]
    true_logits = np.einsum("bd,btd->bt", x, w[labels]) + b[labels] - np.log(true_count)
    sampled_logits = x @ w[sampled].T + b[sampled]
    if remove_hits:
        hits = (labels[:, :, None] == sampled[None, None, :]).any(axis=1)
        sampled_logits = np.where(hits, sampled_logits - FLT_MAX, sampled_logits)
    sampled_logits = sampled_logits - np.log(sampled_count)
    logits = np.concatenate([true_logits, sampled_logits], 1)
    targets = np.concatenate([np.full(true_logits.shape, 1.0 / num_true),
                              np.zeros(sampled_logits.shape)], 1)
    return logits, targets


def _problem(num_true=1, seed=0):
    rng = np.random.default_rng(seed)
    num_classes, dim, batch = 12, 4, 3
    w = rng.normal(size=(num_classes, dim))
    b = rng.normal(size=num_classes)
    x = rng.normal(size=(batch, dim))
    labels = rng.integers(0, num_classes, (batch, num_true)).astype(np.int64)
    sampled = np.array([labels[0, 0], 3, 7, 10, labels[2, 0]], np.int64)  # two hits
    true_count = rng.uniform(0.1, 0.9, (batch, num_true))
    sampled_count = rng.uniform(0.1, 0.9, sampled.shape)
    return w, b, labels, x, (sampled, true_count, sampled_count)


def _softmax_xent(logits, targets):
    m = logits.max(1, keepdims=True)
    log_softmax = logits - m - np.log(np.exp(logits - m).sum(1, keepdims=True))
    return -(targets * log_softmax).sum(1)


def _sigmoid_xent(logits, targets):
    return (np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits)))).sum(1)


@pytest.mark.parametrize("num_true", [1, 2])
@pytest.mark.parametrize("remove", [True, False])
def test_sampled_softmax_loss_with_fixed_candidates_is_the_formula(num_true, remove):
    w, b, labels, x, sv = _problem(num_true)
    loss = tf.nn.sampled_softmax_loss(
        weights=tf.constant(w, tf.float32), biases=tf.constant(b, tf.float32), labels=labels,
        inputs=tf.constant(x, tf.float32), num_sampled=5, num_classes=12, num_true=num_true,
        sampled_values=tuple(tf.constant(v, tf.float32 if i else tf.int64)
                             for i, v in enumerate(sv)),
        remove_accidental_hits=remove)
    expected = _softmax_xent(*_numpy_logits(w, b, labels, x, *sv, remove))
    assert loss.shape == (3,) and loss.dtype == tf.float32
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize("num_true", [1, 2])
@pytest.mark.parametrize("remove", [True, False])
def test_nce_loss_with_fixed_candidates_is_the_formula(num_true, remove):
    w, b, labels, x, sv = _problem(num_true, seed=1)
    loss = tf.nn.nce_loss(weights=w, biases=b, labels=labels, inputs=x, num_sampled=5,
                          num_classes=12, num_true=num_true, sampled_values=sv,
                          remove_accidental_hits=remove)
    expected = _sigmoid_xent(*_numpy_logits(w, b, labels, x, *sv, remove))
    assert loss.dtype == tf.float64
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-10)
    assert np.all(np.isfinite(loss.numpy()))


@pytest.mark.parametrize("loss_fn", [tf.nn.sampled_softmax_loss, tf.nn.nce_loss])
def test_gradients_match_finite_differences(loss_fn):
    w, b, labels, x, sv = _problem(num_true=2, seed=2)
    args = [tf.constant(w), tf.constant(b), tf.constant(x)]

    def total(wt, bt, xt):
        return tf.reduce_sum(loss_fn(wt, bt, labels, xt, num_sampled=5, num_classes=12,
                                     num_true=2, sampled_values=sv))

    with tf.GradientTape() as tape:
        tape.watch(args)
        value = total(*args)
    grads = tape.gradient(value, args)
    eps = 1e-6
    for k, (arg, grad) in enumerate(zip(args, grads)):
        base = arg.numpy()
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            hi, lo = base.copy(), base.copy()
            hi[idx] += eps
            lo[idx] -= eps
            plus = [a if j != k else tf.constant(hi) for j, a in enumerate(args)]
            minus = [a if j != k else tf.constant(lo) for j, a in enumerate(args)]
            numeric[idx] = (total(*plus).numpy() - total(*minus).numpy()) / (2 * eps)
        np.testing.assert_allclose(grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_all_classes_sampled_uniformly_is_the_full_softmax_up_to_log_q():
    """With every class sampled once (unique uniform sampling of all num_classes) and the
    true class removed as an accidental hit, the sampled logits are the full logits minus
    log(q), q the same for all: the loss is the full softmax cross-entropy."""
    w, b, labels, x, _ = _problem()
    n = 12
    sampled = tf.random.uniform_candidate_sampler(labels, 1, n, True, n, seed=5)
    loss = tf.nn.sampled_softmax_loss(w, b, labels, x, num_sampled=n, num_classes=n,
                                      sampled_values=sampled)
    full = tf.nn.sparse_softmax_cross_entropy_with_logits(labels[:, 0], x @ w.T + b)
    np.testing.assert_allclose(loss.numpy(), full.numpy(), rtol=1e-6)


def test_default_sampler_trains_word2vec_style_in_tf_function():
    tf.random.set_seed(3)
    w = tf.Variable(tf.random.normal([50, 8], seed=1) * 0.1)
    b = tf.Variable(tf.zeros([50]))
    labels = tf.constant([[1], [2], [3], [4]], tf.int64)
    x = tf.random.normal([4, 8], seed=2)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.nce_loss(w, b, labels, x, num_sampled=6,
                                                 num_classes=50))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.5 * tf.convert_to_tensor(gw))
        b.assign_sub(0.5 * gb)
        return loss

    first = float(step())
    for _ in range(30):
        last = float(step())
    assert np.isfinite(first) and last < first
    eager = tf.nn.sampled_softmax_loss(w, b, labels, x, num_sampled=6, num_classes=50,
                                       seed=4)
    assert eager.shape == (4,) and np.all(np.isfinite(eager.numpy()))


def test_bad_arguments_are_clear_errors():
    w, b, labels, x, sv = _problem()
    with pytest.raises(tf.errors.InvalidArgumentError, match="labels must be a"):
        tf.nn.sampled_softmax_loss(w, b, labels[:, 0], x, 5, 12, sampled_values=sv)
    with pytest.raises(tf.errors.InvalidArgumentError, match="inputs must be"):
        tf.nn.nce_loss(w, b, labels, x[0], 5, 12, sampled_values=sv)
    with pytest.raises(tf.errors.InvalidArgumentError, match="sampled_values"):
        tf.nn.nce_loss(w, b, labels, x, 5, 12, sampled_values=sv[:2])


def test_sampled_softmax_loss_under_vectorized_map():
    w, b, labels, x, sv = _problem(num_true=2, seed=4)

    def per_example(xi):
        return tf.nn.sampled_softmax_loss(w, b, labels, tf.tile(xi[None], [3, 1]), 5, 12,
                                          num_true=2, sampled_values=sv)

    batched = tf.vectorized_map(per_example, tf.constant(x))
    looped = np.stack([per_example(tf.constant(xi)).numpy() for xi in x])
    np.testing.assert_allclose(batched.numpy(), looped, rtol=1e-6)
