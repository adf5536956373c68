"""Seed 004's fused tf.data spellings and the removed tf.contrib names."""
import pytest

import tensorlite as tf


def test_shuffle_and_repeat_is_shuffle_then_repeat():
    ds = tf.data.Dataset.range(6).apply(
        tf.data.experimental.shuffle_and_repeat(buffer_size=1000, count=3, seed=1))
    got = [int(x) for x in ds]
    assert sorted(got) == sorted(list(range(6)) * 3)
    assert sorted(got[:6]) == list(range(6))          # each epoch is a permutation
    assert got[:6] != got[6:12] or got[6:12] != got[12:]   # reshuffled each epoch


def test_map_and_batch_matches_map_then_batch():
    fused = tf.data.Dataset.range(7).apply(
        tf.data.experimental.map_and_batch(lambda x: x * 3, batch_size=3,
                                           num_parallel_calls=2))
    plain = tf.data.Dataset.range(7).map(lambda x: x * 3).batch(3)
    assert [b.numpy().tolist() for b in fused] == [b.numpy().tolist() for b in plain]
    dropped = tf.data.Dataset.range(7).apply(
        tf.data.experimental.map_and_batch(lambda x: x, 3, drop_remainder=True))
    assert [len(b) for b in dropped] == [3, 3]
    with pytest.raises(ValueError, match="not both"):
        tf.data.experimental.map_and_batch(lambda x: x, 3, num_parallel_batches=1,
                                           num_parallel_calls=2)


def test_contrib_names_point_to_their_replacements():
    with pytest.raises(AttributeError, match=r"tf\.data\.experimental\.shuffle_and_repeat"):
        tf.contrib.data.shuffle_and_repeat(buffer_size=10)
    with pytest.raises(AttributeError, match=r"tf\.data\.experimental\.map_and_batch"):
        tf.contrib.data.map_and_batch
    with pytest.raises(AttributeError, match=r"tf\.distribute\.MirroredStrategy"):
        tf.contrib.distribute.MirroredStrategy()
