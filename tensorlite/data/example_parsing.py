"""`tf.data.experimental.parse_example_dataset` and `make_batched_features_dataset`:
batches of serialized tf.train.Example records parsed by tf.io.parse_example.

Example (the TF API doc's):
    >>> features = {"age": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
    ...             "gender": tf.io.FixedLenFeature([], tf.string)}
    >>> ds = tf.data.experimental.make_batched_features_dataset(
    ...     "/tmp/data-*.tfrecord", batch_size=2, features=features, label_key="age",
    ...     num_epochs=1, shuffle=False)
"""
from tensorlite.data.dataset import AUTOTUNE
from tensorlite.data.readers import list_files
from tensorlite.data.tfrecord import TFRecordDataset
from tensorlite.framework import dtypes
from tensorlite.ops.parsing_ops import parse_example


def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """For `dataset.apply`: maps a dataset of serialized Example vectors (or scalars) to
    dicts of parsed features (`tf.io.parse_example(x, features)`)."""
    if features is None:
        raise ValueError("Argument `features` is required, but not specified.")
    return lambda dataset: dataset.map(lambda serialized: parse_example(serialized, features),
                                       num_parallel_calls=num_parallel_calls,
                                       deterministic=deterministic)


def _read(file_pattern, reader, reader_args, shuffle, shuffle_seed, threads, sloppy):
    files = list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    args = list(reader_args or ())
    return files.interleave(lambda filename: reader(filename, *args), cycle_length=threads,
                            num_parallel_calls=threads if threads > 1 else None,
                            deterministic=not sloppy)


def make_batched_features_dataset(file_pattern, batch_size, features, reader=None,
                                  label_key=None, reader_args=None, num_epochs=None,
                                  shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=None,
                                  parser_num_threads=None, sloppy_ordering=False,
                                  drop_final_batch=False):
    """Batches of feature dicts (and labels, with `label_key`) from the Example files
    matching `file_pattern`, as TF builds it: list_files -> interleave(reader) ->
    shuffle/repeat -> batch -> parse_example -> prefetch. With num_epochs=None it repeats
    forever and drops the final partial batch."""
    if label_key is not None and label_key not in features:
        raise ValueError(f"The `label_key` provided ({label_key}) must be one of the "
                         f"`features` keys.")
    ds = _read(file_pattern, reader or TFRecordDataset, reader_args, shuffle, shuffle_seed,
               reader_num_threads or 1, sloppy_ordering)
    spec = ds.element_spec
    if isinstance(spec, tuple) and [s.dtype for s in spec] == [dtypes.string] * 2:
        ds = ds.map(lambda _, value: value)  # (key, value) readers: the value is the Example
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    ds = ds.apply(parse_example_dataset(features, num_parallel_calls=parser_num_threads or 2))
    if label_key is not None:
        ds = ds.map(lambda x: (x, x.pop(label_key)))
    return ds.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)
