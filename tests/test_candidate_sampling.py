"""The word2vec tutorial's sampling: tf.random.log_uniform_candidate_sampler (and the
uniform one), tf.keras.preprocessing.sequence.skipgrams and make_sampling_table, checked
against the distributions and formulas TensorFlow and Keras document."""
import numpy as np
import pytest

import tensorlite as tf


def _log_uniform_p(k, range_max):
    return (np.log(k + 2.0) - np.log(k + 1.0)) / np.log(range_max + 1.0)


def test_log_uniform_draws_follow_the_zipfian_distribution():
    tf.random.set_seed(0)
    ids, true_count, sampled_count = tf.random.log_uniform_candidate_sampler(
        true_classes=[[3], [0]], num_true=1, num_sampled=20000, unique=False,
        range_max=10, seed=7)
    assert ids.dtype == tf.int64 and ids.shape == (20000,)
    freq = np.bincount(ids.numpy(), minlength=10) / 20000
    p = _log_uniform_p(np.arange(10), 10)
    np.testing.assert_allclose(freq, p, atol=0.01)
    np.testing.assert_allclose(true_count.numpy(), 20000 * p[[[3], [0]]], rtol=1e-5)
    np.testing.assert_allclose(sampled_count.numpy(), 20000 * p[ids.numpy()], rtol=1e-5)


def test_unique_draws_are_distinct_and_seeded_and_their_expected_counts_use_the_tries():
    tf.random.set_seed(1)
    first = tf.random.log_uniform_candidate_sampler([[2]], 1, 4, True, 8, seed=42)
    tf.random.set_seed(1)
    again = tf.random.log_uniform_candidate_sampler([[2]], 1, 4, True, 8, seed=42)
    ids = first[0].numpy()
    assert len(set(ids.tolist())) == 4 and ids.min() >= 0 and ids.max() < 8
    np.testing.assert_array_equal(ids, again[0].numpy())
    p = _log_uniform_p(ids, 8)
    counts = first[2].numpy()  # 1 - (1 - p) ** tries, the same number of tries for all
    if np.allclose(counts, 4 * p, rtol=1e-5):
        return  # no draw repeated: 4 tries, and TF's kernel gives num_sampled * p
    tries = np.log1p(-counts) / np.log1p(-p)
    np.testing.assert_allclose(tries, np.round(tries[0]), rtol=1e-4)
    assert np.round(tries[0]) > 4


def test_uniform_candidate_sampler_and_errors():
    ids, true_count, _ = tf.random.uniform_candidate_sampler([[1, 2]], 2, 5, True, 5, seed=3)
    assert sorted(ids.numpy().tolist()) == [0, 1, 2, 3, 4]  # all of them, once each
    counts = true_count.numpy()  # 1 - (1 - 1/5) ** tries, after at least 5 tries
    assert counts.shape == (1, 2) and counts[0, 0] == counts[0, 1]
    assert 1 - 0.8 ** 5 - 1e-6 <= counts[0, 0] < 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_sampled"):
        tf.random.uniform_candidate_sampler([[1]], 1, 6, True, 5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="true_classes"):
        tf.random.uniform_candidate_sampler([1, 2], 1, 2, False, 5)


def test_make_sampling_table_is_the_tutorials():
    """The word2vec tutorial prints make_sampling_table(size=10)."""
    np.testing.assert_allclose(
        tf.keras.preprocessing.sequence.make_sampling_table(size=10),
        [0.00315225, 0.00315225, 0.00547597, 0.00741556, 0.00912817, 0.01068435,
         0.01212381, 0.01347162, 0.01474487, 0.0159558], rtol=1e-5)


def test_skipgrams_of_the_tutorials_sentence():
    """"The wide road shimmered in the hot sun" with window 2: the tutorial counts 26
    positive pairs; every pair is two words at most 2 apart, never the padding 0."""
    tokens = "the wide road shimmered in the hot sun".split()
    vocab = {"<pad>": 0}
    for t in tokens:
        vocab.setdefault(t, len(vocab))
    sequence = [vocab[t] for t in tokens]
    pairs, labels = tf.keras.preprocessing.sequence.skipgrams(
        sequence, vocabulary_size=len(vocab), window_size=2, negative_samples=0)
    assert len(pairs) == 26 and labels == [1] * 26
    expected = sorted([sequence[i], sequence[j]] for i in range(8) for j in range(8)
                      if i != j and abs(i - j) <= 2)
    assert sorted(pairs) == expected


def test_skipgrams_negatives_categorical_padding_and_sampling_table():
    sequence = [1, 0, 2, 3]
    pairs, labels = tf.keras.preprocessing.sequence.skipgrams(
        sequence, vocabulary_size=10, window_size=1, negative_samples=2.0, shuffle=True,
        categorical=True, seed=5)
    positives = [p for p, lab in zip(pairs, labels) if lab == [0, 1]]
    negatives = [p for p, lab in zip(pairs, labels) if lab == [1, 0]]
    assert sorted(positives) == [[2, 3], [3, 2]]  # 0 is padding: no pair with it
    assert len(negatives) == 4 and all(1 <= p[1] < 10 for p in negatives)
    again = tf.keras.preprocessing.sequence.skipgrams(
        sequence, vocabulary_size=10, window_size=1, negative_samples=0, seed=5)
    assert sorted(again[0]) == [[2, 3], [3, 2]]
    never = np.zeros(10)
    assert tf.keras.preprocessing.sequence.skipgrams(
        sequence, 10, window_size=1, sampling_table=never) == ([], [])


def test_fixed_unigram_sampler_follows_the_distorted_counts(tmp_path):
    ids, true_count, sampled_count = tf.random.fixed_unigram_candidate_sampler(
        true_classes=[[1], [3]], num_true=1, num_sampled=20000, unique=False, range_max=4,
        unigrams=[1, 4, 9], distortion=0.5, num_reserved_ids=1, seed=2)
    p = np.array([0.0, 1.0, 2.0, 3.0]) / 6.0  # sqrt of the counts, after one reserved id
    freq = np.bincount(ids.numpy(), minlength=4) / 20000
    np.testing.assert_allclose(freq, p, atol=0.015)
    assert freq[0] == 0
    np.testing.assert_allclose(true_count.numpy(), 20000 * p[[[1], [3]]], rtol=1e-5)
    np.testing.assert_allclose(sampled_count.numpy(), 20000 * p[ids.numpy()], rtol=1e-5)
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("the,1\nroad,4\nsun,9\n")
    ids, _, counts = tf.random.fixed_unigram_candidate_sampler(
        [[1]], 1, 2, True, 4, vocab_file=str(vocab), distortion=0.5, num_reserved_ids=1)
    assert set(ids.numpy().tolist()) <= {1, 2, 3} and len(set(ids.numpy().tolist())) == 2
    first_p = p[ids.numpy()]
    if not np.allclose(counts.numpy(), 2 * first_p, rtol=1e-5):  # else: 2 tries, 2 * p
        tries = np.log1p(-counts.numpy()) / np.log1p(-first_p)
        np.testing.assert_allclose(tries, np.round(tries[0]), rtol=1e-4)


def test_fixed_unigram_sampler_errors_and_all_candidate_sampler():
    with pytest.raises(tf.errors.InvalidArgumentError, match="range_max"):
        tf.random.fixed_unigram_candidate_sampler([[1]], 1, 2, False, 5, unigrams=[1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="exactly one of"):
        tf.random.fixed_unigram_candidate_sampler([[1]], 1, 2, False, 3)
    with pytest.raises(tf.errors.NotFoundError, match="vocab_file"):
        tf.random.fixed_unigram_candidate_sampler([[1]], 1, 2, False, 3,
                                                  vocab_file="/nonexistent/vocab.csv")
    ids, true_count, sampled_count = tf.random.all_candidate_sampler([[1, 2]], 2, 4, True)
    assert ids.numpy().tolist() == [0, 1, 2, 3]
    assert true_count.numpy().tolist() == [[1.0, 1.0]]
    assert sampled_count.numpy().tolist() == [1.0] * 4


def test_samplers_return_tfs_named_tuples():
    out = tf.random.log_uniform_candidate_sampler([[1]], 1, 3, True, 10, seed=1)
    assert type(out).__name__ == "LogUniformCandidateSampler"
    assert out.sampled_candidates.shape == (3,) and out.true_expected_count.shape == (1, 1)
    assert out.sampled_expected_count.shape == (3,)
    hits = tf.nn.compute_accidental_hits([[2]], [2, 5], num_true=1)
    assert type(hits).__name__ == "ComputeAccidentalHits"
    assert hits.indices.numpy().tolist() == [0] and hits.ids.numpy().tolist() == [0]
    assert hits.weights.dtype == tf.float32
