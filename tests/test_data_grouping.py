"""group_by_window, bucket_by_sequence_length and rejection_resample from the tf.data
guide; the expected batches are what TensorFlow 2.21 gives for the same pipelines."""
import numpy as np
import pytest

import tensorlite as tf


def _lengths(n):
    return tf.data.Dataset.range(1, n).map(lambda x: tf.fill([x], x))


def test_group_by_window_as_tensorflow():
    ds = tf.data.Dataset.range(10).group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda key, ds: ds.batch(3), window_size=3)
    assert [b.numpy().tolist() for b in ds] == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
    sized = tf.data.Dataset.range(10).group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda key, ds: ds.batch(5),
        window_size_func=lambda key: key + 1)
    assert [b.numpy().tolist() for b in sized] == [[0], [2], [1, 3], [4], [6], [5, 7], [8],
                                                    [9]]
    with pytest.raises(ValueError, match="window_size"):
        tf.data.Dataset.range(3).group_by_window(lambda x: x, lambda k, d: d)


def test_bucket_by_sequence_length_as_tensorflow():
    bucketed = _lengths(20).bucket_by_sequence_length(
        element_length_func=lambda elem: tf.shape(elem)[0], bucket_boundaries=[3, 5],
        bucket_batch_sizes=[2, 2, 2])
    batches = list(bucketed)
    assert [b.shape.as_list() for b in batches] == [[2, 2], [2, 4], [2, 6], [2, 8], [2, 10],
                                                    [2, 12], [2, 14], [2, 16], [2, 18],
                                                    [1, 19]]
    assert batches[0].numpy().tolist() == [[1, 0], [2, 2]]  # padded with zeros
    to_boundary = _lengths(9).bucket_by_sequence_length(
        element_length_func=lambda elem: tf.shape(elem)[0], bucket_boundaries=[3, 5, 9],
        bucket_batch_sizes=[2, 2, 2, 2], pad_to_bucket_boundary=True)
    assert [b.shape.as_list() for b in to_boundary] == [[2, 2], [2, 4], [2, 8], [2, 8]]
    same = tf.data.Dataset.range(6).map(lambda x: tf.fill([2], x)).bucket_by_sequence_length(
        lambda e: tf.shape(e)[0], [3], [4, 4], no_padding=True)
    assert [b.shape.as_list() for b in same] == [[4, 2], [2, 2]]
    with pytest.raises(ValueError, match="bucket_batch_sizes"):
        _lengths(5).bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3], [2])


def test_rejection_resample_moves_toward_the_target():
    rng = np.random.default_rng(0)
    labels = (rng.random(4000) < 0.1).astype(np.int64)  # 10% positives
    ds = tf.data.Dataset.from_tensor_slices((np.arange(4000), labels))
    resampled = ds.rejection_resample(lambda x, y: tf.cast(y, tf.int32),
                                      target_dist=[0.5, 0.5], initial_dist=[0.9, 0.1], seed=3)
    classes = np.array([int(c) for c, _ in resampled])
    assert abs(classes.mean() - 0.5) < 0.06 and len(classes) > 600
    pairs = list(resampled.take(5).as_numpy_iterator())
    assert all(int(c) == int(element[1]) for c, element in pairs)
    estimated = ds.rejection_resample(lambda x, y: tf.cast(y, tf.int32), [0.5, 0.5], seed=3)
    assert abs(np.mean([int(c) for c, _ in estimated]) - 0.5) < 0.1
    with pytest.raises(tf.errors.InvalidArgumentError, match="probability"):
        ds.rejection_resample(lambda x, y: y, target_dist=[0.7, 0.7])
