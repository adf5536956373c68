"""The fused transformations of TF 1.x that the Google I/O 2018 talk "Distributed
TensorFlow training" shows, as `dataset.apply` arguments:
`tf.data.experimental.shuffle_and_repeat` and `map_and_batch`. They produce exactly what the
unfused chains produce (TF deprecated them for that reason: its optimiser fuses the chains).

Example:
    >>> ds = tf.data.Dataset.range(5).apply(
    ...     tf.data.experimental.map_and_batch(lambda x: x * 2, batch_size=2))
    >>> [b.numpy().tolist() for b in ds]
    [[0, 2], [4, 6], [8]]
"""


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """dataset.shuffle(buffer_size, seed).repeat(count), reshuffled every epoch."""
    def apply(dataset):
        return dataset.shuffle(buffer_size, seed=seed, reshuffle_each_iteration=True) \
            .repeat(count)
    return apply


def map_and_batch(map_func, batch_size, num_batches=None, drop_remainder=False,
                  num_parallel_batches=None, num_parallel_calls=None):
    """dataset.map(map_func).batch(batch_size, drop_remainder); `num_parallel_calls` (or
    num_parallel_batches * batch_size) runs the map in parallel."""
    if num_batches is not None:
        raise ValueError("map_and_batch: `num_batches` was removed in TF 1.x; use batch_size")
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("map_and_batch: give `num_parallel_batches` or `num_parallel_calls`, "
                         "not both")
    parallel = num_parallel_calls
    if num_parallel_batches is not None:
        parallel = num_parallel_batches * batch_size

    def apply(dataset):
        return dataset.map(map_func, num_parallel_calls=parallel) \
            .batch(batch_size, drop_remainder=drop_remainder)
    return apply
