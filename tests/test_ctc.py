"""tf.nn.ctc_loss (TF 2's), tf.keras.backend.ctc_batch_cost, tf.nn.ctc_greedy_decoder,
tf.nn.ctc_beam_search_decoder and tf.keras.backend.ctc_decode: the loss against a brute-force sum over every alignment of
tiny cases, its gradient by finite differences."""
import itertools

import numpy as np
import pytest

import tensorlite as tf


def _log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _collapse(path, blank):
    out, prev = [], None
    for c in path:
        if c != prev and c != blank:
            out.append(c)
        prev = c
    return out


def _brute_force_loss(logits_btc, labels, label_length, logit_length, blank):
    """-log of the summed probability of every frame-wise path that collapses (repeats
    merged, then blanks removed) to the label sequence."""
    losses = []
    for b in range(logits_btc.shape[0]):
        lp = _log_softmax(logits_btc[b, :logit_length[b]].astype(np.float64))
        target = list(labels[b][:label_length[b]])
        total = 0.0
        for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
            if _collapse(path, blank) == target:
                total += np.exp(sum(lp[t, c] for t, c in enumerate(path)))
        losses.append(-np.log(total) if total > 0 else np.inf)
    return np.array(losses)


def _assert_matches(loss, expected, rtol=1e-5):
    """Feasible sequences: the brute-force loss. One that cannot fit its frames: TF's dense
    loss, large and finite (its log(1e-307) weight on paths that end elsewhere, about 707
    plus their cost; tests/interop/test_ctc_interop.py checks the exact value)."""
    feasible = np.isfinite(expected)
    np.testing.assert_allclose(loss[feasible], expected[feasible], rtol=rtol)
    assert np.all(np.isfinite(loss)) and np.all(loss[~feasible] > 700)


def _case(seed, batch=3, frames=5, classes=4, max_label=3):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(batch, frames, classes)) * 2
    label_length = rng.integers(0, max_label + 1, batch)
    logit_length = rng.integers(min(frames, 3), frames + 1, batch)
    return logits, label_length, logit_length, rng


@pytest.mark.parametrize("blank_index", [0, 3, -1, 1])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ctc_loss_is_the_sum_over_all_alignments(seed, blank_index):
    logits, label_length, logit_length, rng = _case(seed)
    blank = blank_index % 4
    others = [c for c in range(4) if c != blank]
    labels = rng.choice(others, size=(3, 3))
    labels[0, :2] = others[0]  # a repeated label needs a blank between its copies
    loss = tf.nn.ctc_loss(labels=tf.constant(labels, tf.int32),
                          logits=tf.constant(np.transpose(logits, (1, 0, 2)), tf.float32),
                          label_length=label_length, logit_length=logit_length,
                          blank_index=blank_index)
    expected = _brute_force_loss(logits, labels, label_length, logit_length, blank)
    assert loss.shape == (3,) and loss.dtype == tf.float32
    _assert_matches(loss.numpy(), expected)


def test_batch_major_logits_and_infeasible_labels():
    logits, _, _, _ = _case(5, frames=3)
    labels = np.array([[1, 1, 2], [1, 2, 0], [2, 0, 0]])
    loss = tf.nn.ctc_loss(labels, tf.constant(logits), label_length=[3, 2, 1],
                          logit_length=[3, 3, 2], logits_time_major=False)
    expected = _brute_force_loss(logits, labels, [3, 2, 1], [3, 3, 2], 0)
    assert np.isinf(expected[0])  # "1 1 2" needs 4 frames: 1, blank, 1, 2
    _assert_matches(loss.numpy(), expected, rtol=1e-10)


def test_ctc_gradient_matches_finite_differences():
    logits, label_length, logit_length, rng = _case(7)
    labels = rng.integers(1, 4, size=(3, 3))
    x = tf.constant(np.transpose(logits, (1, 0, 2)))
    weights = tf.constant([1.0, -2.0, 0.5], tf.float64)

    def total(v):
        loss = tf.nn.ctc_loss(labels, v, label_length, logit_length)
        return tf.reduce_sum(loss * weights)

    with tf.GradientTape() as tape:
        tape.watch(x)
        value = total(x)
    grad = tape.gradient(value, x).numpy()
    base, eps = x.numpy(), 1e-6
    numeric = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        hi, lo = base.copy(), base.copy()
        hi[idx] += eps
        lo[idx] -= eps
        numeric[idx] = (total(tf.constant(hi)).numpy() - total(tf.constant(lo)).numpy()) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)
    past_end = np.arange(5)[:, None] >= logit_length[None, :]
    assert np.all(grad[past_end] == 0)  # frames past logit_length get no gradient


def test_second_derivative_is_a_loud_error_as_in_tf():
    x = tf.constant(np.zeros((3, 1, 3)))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            loss = tf.reduce_sum(tf.nn.ctc_loss([[1]], x, [1], [3]))
        g = tf.reduce_sum(inner.gradient(loss, x) ** 2)
    with pytest.raises(LookupError, match="second derivative of ctc_loss"):
        outer.gradient(g, x)


def test_sparse_labels_need_blank_index_and_match_dense():
    logits, _, _, _ = _case(3)
    x = tf.constant(np.transpose(logits, (1, 0, 2)), tf.float32)
    sparse = tf.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]],
                             values=[0, 1, 2, 1, 1], dense_shape=[3, 2])
    with pytest.raises(ValueError, match="blank_index"):
        tf.nn.ctc_loss(sparse, x, None, [5, 5, 5])
    loss = tf.nn.ctc_loss(sparse, x, None, [5, 5, 5], blank_index=-1)
    dense = tf.nn.ctc_loss([[0, 1], [2, 0], [1, 1]], x, [2, 1, 2], [5, 5, 5], blank_index=3)
    np.testing.assert_allclose(loss.numpy(), dense.numpy(), rtol=1e-6)


def test_ctc_loss_in_tf_function_and_vectorized_map():
    logits, label_length, logit_length, rng = _case(9)
    labels = rng.integers(1, 4, size=(3, 3))
    x = tf.constant(np.transpose(logits, (1, 0, 2)), tf.float32)
    eager = tf.nn.ctc_loss(labels, x, label_length, logit_length)
    traced = tf.function(lambda v: tf.nn.ctc_loss(labels, v, label_length, logit_length))(x)
    np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-6)
    scaled = tf.vectorized_map(
        lambda s: tf.nn.ctc_loss(labels, x * s, label_length, logit_length),
        tf.constant([1.0, 0.5]))
    np.testing.assert_allclose(scaled.numpy()[0], eager.numpy(), rtol=1e-6)
    np.testing.assert_allclose(
        scaled.numpy()[1], tf.nn.ctc_loss(labels, x * 0.5, label_length, logit_length).numpy(),
        rtol=1e-6)


def test_ctc_unique_labels_and_the_unique_argument():
    labels = tf.constant([[3, 1, 3, 0], [2, 2, 5, 1]])
    unique, index = tf.nn.ctc_unique_labels(labels)
    assert unique.dtype == tf.int64 and index.dtype == tf.int32
    assert unique.numpy().tolist() == [[3, 1, 0, 0], [2, 5, 1, 0]]
    assert index.numpy().tolist() == [[0, 1, 0, 2], [0, 0, 1, 2]]
    x = tf.constant(np.random.default_rng(1).normal(size=(9, 2, 6)), tf.float32)
    np.testing.assert_array_equal(
        tf.nn.ctc_loss(labels, x, [3, 4], [9, 9], unique=(unique, index)).numpy(),
        tf.nn.ctc_loss(labels, x, [3, 4], [9, 9]).numpy())


def test_bad_arguments_are_clear_errors():
    x = tf.zeros([4, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside the 3 classes"):
        tf.nn.ctc_loss([[1, 3], [1, 1]], x, [2, 1], [4, 4])
    with pytest.raises(tf.errors.InvalidArgumentError, match="logits must be 3-D"):
        tf.nn.ctc_loss([[1]], tf.zeros([4, 3]), [1], [4])
    with pytest.raises(tf.errors.InvalidArgumentError, match="label_length must be a vector"):
        tf.nn.ctc_loss([[1], [2]], x, [1], [4, 4])


def test_greedy_decoder_merges_repeats_and_drops_blanks():
    # frames' best classes, batch 0: 1 1 2 (blank=3) 2 0; batch 1: 3 0 0 (length 3)
    best = np.array([[1, 3], [1, 0], [2, 0], [3, 1], [2, 1], [0, 2]])
    inputs = np.eye(4)[best] * 5.0  # [max_time, batch, classes]
    (decoded,), neg_sum = tf.nn.ctc_greedy_decoder(inputs, [6, 3])
    dense = tf.sparse.to_dense(decoded, default_value=-1).numpy().tolist()
    assert dense == [[1, 2, 2, 0], [0, -1, -1, -1]]
    np.testing.assert_allclose(neg_sum.numpy(), [[-30.0], [-15.0]])
    (unmerged,), _ = tf.nn.ctc_greedy_decoder(inputs, [6, 3], merge_repeated=False)
    assert tf.sparse.to_dense(unmerged, default_value=-1).numpy().tolist() == \
        [[1, 1, 2, 2, 0], [0, 0, -1, -1, -1]]


def test_keras_ctc_batch_cost_takes_probabilities_with_the_blank_last():
    logits, _, _, rng = _case(11)
    probs = tf.nn.softmax(tf.constant(logits, tf.float32)).numpy()
    labels = rng.integers(0, 3, size=(3, 3)).astype(np.float32)  # Keras labels may be floats
    label_length, input_length = np.array([[2], [1], [3]]), np.array([[5], [4], [5]])
    cost = tf.keras.backend.ctc_batch_cost(labels, probs, input_length, label_length)
    expected = _brute_force_loss(np.log(probs + 1e-7), labels.astype(int), label_length[:, 0],
                                 input_length[:, 0], blank=3)
    assert cost.shape == (3, 1)
    np.testing.assert_allclose(cost.numpy()[:, 0], expected, rtol=1e-5)
    traced = tf.function(tf.keras.backend.ctc_batch_cost)(labels, probs, input_length,
                                                          label_length)
    np.testing.assert_allclose(traced.numpy(), cost.numpy(), rtol=1e-6)


def test_sparse_kernel_checks_apply_to_sparse_labels_and_keras():
    """TF's sparse-label kernel refuses empty label sequences and ones longer than their
    frames (the dense-label loss is large and finite instead)."""
    probs = np.full((2, 3, 4), 0.25, np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels length is zero in batch 1"):
        tf.keras.backend.ctc_batch_cost([[1, 2], [0, 0]], probs, [[3], [3]], [[2], [0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Not enough time"):
        tf.keras.backend.ctc_batch_cost([[1, 1], [0, 0]], probs, [[2], [2]], [[2], [1]])
    sparse = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], [1, 2, 1], [1, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Not enough time"):
        tf.nn.ctc_loss(sparse, tf.zeros([2, 1, 4]), None, [2], blank_index=0)
    dense = tf.nn.ctc_loss([[1, 2, 1]], tf.zeros([2, 1, 4]), [3], [2]).numpy()[0]
    assert 700 < dense < np.inf


def test_keras_ctc_decode_greedy_pads_with_minus_one():
    best = np.array([[0, 2], [0, 1], [3, 1], [1, 3], [2, 3]])  # [frames, batch], blank 3
    probs = np.transpose(np.eye(4)[best] * 0.9 + 0.025, (1, 0, 2)).astype(np.float32)
    (dense,), log_prob = tf.keras.backend.ctc_decode(probs, input_length=[5, 4])
    assert dense.numpy().tolist() == [[0, 1, 2, -1, -1], [2, 1, -1, -1, -1]]
    np.testing.assert_allclose(log_prob.numpy(), -np.log(0.925 + 1e-7) * np.array([[5], [4]]),
                               rtol=1e-5)
    (beam,), beam_log_prob = tf.keras.backend.ctc_decode(probs, [5, 4], greedy=False)
    assert beam.numpy().tolist() == dense.numpy().tolist()  # one clear best path
    best_path = -log_prob.numpy()  # greedy: minus the best single path's log-probability
    assert np.all(beam_log_prob.numpy() >= best_path - 1e-6)  # the beam sums all its paths


def test_wide_beam_search_gives_each_labelling_its_exact_probability():
    """With a beam wide enough to keep every prefix, each decoded labelling's
    log-probability is the sum over all its alignments: -ctc_loss (blank last)."""
    logits, _, _, _ = _case(13, batch=2, frames=4, classes=3)
    x = tf.constant(np.transpose(logits, (1, 0, 2)), tf.float32)
    decoded, log_probs = tf.nn.ctc_beam_search_decoder(x, [4, 3], beam_width=200,
                                                       top_paths=4)
    assert len(decoded) == 4 and log_probs.shape == (2, 4)
    assert np.all(np.diff(log_probs.numpy(), axis=1) <= 0)  # best first
    for j, sparse in enumerate(decoded):
        dense = tf.sparse.to_dense(sparse, default_value=0).numpy()
        lengths = np.bincount(sparse.indices.numpy()[:, 0], minlength=2)
        loss = tf.nn.ctc_loss(dense, x, lengths, [4, 3], blank_index=-1).numpy()
        np.testing.assert_allclose(log_probs.numpy()[:, j], -loss, rtol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="top_paths"):
        tf.nn.ctc_beam_search_decoder(x, [4, 3], beam_width=2, top_paths=3)
