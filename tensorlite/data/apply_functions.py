"""The `dataset.apply` forms of Dataset methods, as `tf.data.experimental` spells them
(TF's argument names and defaults): each returns `lambda dataset: dataset.method(...)`.

Example:
    >>> ds = tf.data.Dataset.range(5).apply(tf.data.experimental.take_while(lambda x: x < 3))
    >>> [int(x) for x in ds]
    [0, 1, 2]
"""


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """`Dataset.bucket_by_sequence_length` for `apply`."""
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=padded_shapes,
        padding_values=padding_values, pad_to_bucket_boundary=pad_to_bucket_boundary,
        no_padding=no_padding, drop_remainder=drop_remainder)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """`Dataset.group_by_window` for `apply`."""
    return lambda dataset: dataset.group_by_window(key_func, reduce_func,
                                                   window_size=window_size,
                                                   window_size_func=window_size_func)


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """`Dataset.rejection_resample` for `apply`. As in TF, the resampled dataset's
    elements are (class, element) pairs."""
    return lambda dataset: dataset.rejection_resample(class_func, target_dist,
                                                      initial_dist=initial_dist, seed=seed)


def scan(initial_state, scan_func):
    """`Dataset.scan` for `apply`."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def take_while(predicate):
    """`Dataset.take_while` for `apply`."""
    return lambda dataset: dataset.take_while(predicate)


def unbatch():
    """`Dataset.unbatch` for `apply`."""
    return lambda dataset: dataset.unbatch()


def unique():
    """`Dataset.unique` for `apply`."""
    return lambda dataset: dataset.unique()


def ignore_errors(log_warning=False):
    """`Dataset.ignore_errors` for `apply`."""
    return lambda dataset: dataset.ignore_errors(log_warning=log_warning)


def enumerate_dataset(start=0):
    """`Dataset.enumerate` for `apply`: (index, element) pairs from `start`."""
    return lambda dataset: dataset.enumerate(start)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """`Dataset.interleave(map_func, cycle_length, block_length,
    num_parallel_calls=cycle_length, deterministic=not sloppy)` for `apply` (TF deprecated
    it for that). `buffer_output_elements` / `prefetch_input_elements` tune TF's buffers;
    tensorlite's interleave sizes its own, so they are accepted and not used."""
    return lambda dataset: dataset.interleave(map_func, cycle_length=cycle_length,
                                              block_length=block_length,
                                              num_parallel_calls=cycle_length,
                                              deterministic=not sloppy)


def dense_to_sparse_batch(batch_size, row_shape):
    """`Dataset.sparse_batch` for `apply`."""
    return lambda dataset: dataset.sparse_batch(batch_size, row_shape)
