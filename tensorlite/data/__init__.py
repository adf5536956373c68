"""`tf.data`: input pipelines."""
from tensorlite.data.dataset import AUTOTUNE, INFINITE, UNKNOWN, Dataset, DatasetV2
from tensorlite.data import (batching, cache, grouping, interleave, prefetch,  # noqa: F401
                             save_load, shuffle, snapshot, sources, transforms)
from tensorlite.data import counter_random, sparse_batch  # noqa: F401
from tensorlite.data.fixed_length import FixedLengthRecordDataset
from tensorlite.data.iterator import Iterator, IteratorSpec, NumpyIterator, OwnedIterator
from tensorlite.data.options import Options
from tensorlite.data.readers import TextLineDataset
from tensorlite.data.tfrecord import TFRecordDataset
from tensorlite.data.transforms import DatasetSpec
from tensorlite.data import experimental

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN
ThreadingOptions = experimental.ThreadingOptions
__all__ = ["AUTOTUNE", "Dataset", "DatasetV2", "Iterator", "OwnedIterator", "Options",
           "IteratorSpec", "NumpyIterator", "FixedLengthRecordDataset",
           "TextLineDataset", "TFRecordDataset", "DatasetSpec", "experimental", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY"]
