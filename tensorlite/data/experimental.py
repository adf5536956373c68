"""`tf.data.experimental`."""
from tensorlite.data.csv_dataset import CsvDataset, make_csv_dataset  # noqa: F401
from tensorlite.data.dataset import AUTOTUNE, INFINITE, UNKNOWN  # noqa: F401
from tensorlite.data.optimize import batch_safe  # noqa: F401
from tensorlite.data.options import (AutotuneAlgorithm, AutotuneOptions,  # noqa: F401
                                     OptimizationOptions, ThreadingOptions)
from tensorlite.data.sources import choose_from_datasets, sample_from_datasets  # noqa: F401
from tensorlite.data.fused import map_and_batch, shuffle_and_repeat  # noqa: F401
from tensorlite.data.apply_functions import (  # noqa: F401
    bucket_by_sequence_length, dense_to_sparse_batch, enumerate_dataset, group_by_window,
    ignore_errors, parallel_interleave, rejection_resample, scan, take_while, unbatch, unique)
from tensorlite.data.cardinality_assert import assert_cardinality  # noqa: F401
from tensorlite.data.counter_random import Counter, RandomDataset  # noqa: F401
from tensorlite.data.dataset_helpers import (from_list, get_single_element,  # noqa: F401
                                             get_structure)
from tensorlite.data.debug_mode import enable_debug_mode  # noqa: F401
from tensorlite.data.device_transfer import copy_to_device, prefetch_to_device  # noqa: F401
from tensorlite.data.distribute_options import (SHARD_HINT, AutoShardPolicy,  # noqa: F401
                                                DistributeOptions, ExternalStatePolicy)
from tensorlite.data.example_parsing import (make_batched_features_dataset,  # noqa: F401
                                             parse_example_dataset)
from tensorlite.data.group_reducer import Reducer, group_by_reducer  # noqa: F401
from tensorlite.data.optional import Optional, get_next_as_optional  # noqa: F401
from tensorlite.data.padding_cardinality import pad_to_cardinality  # noqa: F401
from tensorlite.data.random_access import at  # noqa: F401
from tensorlite.data.record_writer import TFRecordWriter  # noqa: F401
from tensorlite.data.sql_dataset import SqlDataset  # noqa: F401
from tensorlite.data.vocab_tables import (DatasetInitializer,  # noqa: F401
                                          index_table_from_dataset, table_from_dataset)

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN


def cardinality(dataset):
    return dataset.cardinality()


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=None):
    """`tf.data.experimental.dense_to_ragged_batch`: for `dataset.apply`; elements of
    different shapes batch into RaggedTensors.

    >>> ds = tf.data.Dataset.range(3).map(lambda n: tf.range(n))
    >>> next(iter(ds.apply(dense_to_ragged_batch(3)))).to_list()
    [[], [0], [0, 1]]"""
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder)


def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """`tf.data.experimental.save`: `dataset.save(path, ...)`."""
    from tensorlite.data.save_load import save as _save  # noqa: PLC0415
    return _save(dataset, path, compression, shard_func, checkpoint_args)


def load(path, element_spec=None, compression=None, reader_func=None):
    """`tf.data.experimental.load`: `tf.data.Dataset.load(path, ...)`."""
    from tensorlite.data.save_load import load as _load  # noqa: PLC0415
    return _load(path, element_spec, compression, reader_func)


def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    """`tf.data.experimental.snapshot`: for `dataset.apply`, `dataset.snapshot(path)`."""
    return lambda dataset: dataset.snapshot(path, compression=compression,
                                            reader_func=reader_func, shard_func=shard_func)


def __getattr__(name):
    # tf.data.experimental.service loads Dask only when used.
    if name == "service":
        from tensorlite.data import service  # noqa: PLC0415
        return service
    raise AttributeError(f"module 'tensorlite.data.experimental' has no attribute {name!r}")
