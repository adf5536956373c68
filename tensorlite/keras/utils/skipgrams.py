"""`tf.keras.preprocessing.sequence.skipgrams` and `make_sampling_table`: the (word, context)
pairs of word2vec's skip-gram model, as Keras 2 generates them (the word2vec tutorial).

Example:
    >>> pairs, labels = skipgrams([1, 2, 3], vocabulary_size=4, window_size=1,
    ...                           negative_samples=0, shuffle=False)
    >>> pairs
    [[1, 2], [2, 1], [2, 3], [3, 2]]
"""
import random

import numpy as np


def make_sampling_table(size, sampling_factor=1e-5):
    """The probability of keeping each word rank 0..size-1 when sampling skip-grams, for a
    vocabulary sorted by frequency (rank 0 the most frequent): Mikolov et al.'s subsampling
    `min(1, sqrt(t / f))` with word frequencies approximated by Zipf's law,
    `f(rank) ~ 1 / (rank * (log(rank) + gamma) + 1/2 - 1 / (12 * rank))`."""
    gamma = 0.577
    rank = np.arange(size, dtype=np.float64)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True,
              categorical=False, sampling_table=None, seed=None):
    """(couples, labels): each word of `sequence` (index 0 is padding, skipped) paired with
    every word within `window_size` of it, label 1; with `negative_samples` > 0, that many
    times as many pairs of a word and a random index in [1, vocabulary_size), label 0.
    `sampling_table[i]` is the probability of keeping a pair whose first word is i.
    `categorical` labels are one-hot pairs ([0, 1] for 1). With `shuffle` the pairs (and
    labels alike) are shuffled, reproducibly given `seed`."""
    couples, labels = [], []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0 and couples:
        count = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[k % len(words)], random.randint(1, vocabulary_size - 1)]
                    for k in range(count)]
        labels += [[1, 0] if categorical else 0] * count
    if shuffle:
        seed = random.randint(0, 10_000_000) if seed is None else seed
        random.Random(seed).shuffle(couples)
        random.Random(seed).shuffle(labels)
    return couples, labels
