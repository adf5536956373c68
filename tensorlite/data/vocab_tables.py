"""`tf.data.experimental.DatasetInitializer`, `table_from_dataset` and
`index_table_from_dataset`: lookup tables built from a dataset of (key, value) pairs / of keys (each key's id is its position).

Out-of-vocabulary buckets (`num_oov_buckets > 0`) give a missing key the id
`vocab_size + Fingerprint64(key) % num_oov_buckets`, as TF's IdTableWithHashBuckets with
the default FastHashSpec does (tf.lookup.StaticVocabularyTable here).

Example (the TF API doc's):
    >>> keys = tf.data.Dataset.range(100)
    >>> values = tf.data.Dataset.range(100).map(lambda x: tf.strings.as_string(x * 2))
    >>> table = tf.data.experimental.table_from_dataset(
    ...     tf.data.Dataset.zip((keys, values)), default_value='n/a', key_dtype=tf.int64)
    >>> table.lookup(tf.constant([0, 1, 2], dtype=tf.int64)).numpy()
    array([b'0', b'2', b'4'], dtype=object)
"""
import numpy as np

from tensorlite.data.cardinality_assert import AssertCardinalityDataset
from tensorlite.framework import dtypes
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.lookup.tables import StaticHashTable, StaticVocabularyTable

_BASE = ("Datasets used to initialize lookup tables must produce elements in the form "
         "(key, value), where the keys and values are scalar tensors. ")


def _check_spec(spec):
    """TF's checks of the (key, value) element spec, with its messages."""
    if not isinstance(spec, tuple) or len(spec) != 2:
        n = len(spec) if isinstance(spec, tuple) else 1
        raise ValueError(_BASE + f"However, the given dataset produces {n} components instead "
                         f"of two (key, value) components. Full dataset element spec: {spec}.")
    for what, s in zip(("key", "value"), spec):
        if not isinstance(s, TensorSpec):
            raise ValueError(_BASE + f"However, the given dataset produces non-Tensor {what}s "
                             f"of type {type(s)}.")
        if s.shape.rank not in (None, 0):
            raise ValueError(_BASE + f"However, the given dataset produces non-scalar {what} "
                             f"Tensors of rank {s.shape.rank}.")


class DatasetInitializer:
    """`tf.data.experimental.DatasetInitializer(dataset)`: a lookup-table initializer that
    reads the dataset's (key, value) scalar pairs when a table is built from it.

    >>> init = tf.data.experimental.DatasetInitializer(ds)
    >>> table = tf.lookup.StaticHashTable(init, "")
    """

    def __init__(self, dataset):
        spec = dataset.element_spec
        _check_spec(spec)
        self.dataset = dataset
        self.key_dtype, self.value_dtype = spec[0].dtype, spec[1].dtype

    def _pairs(self):
        pairs = list(self.dataset.as_numpy_iterator())
        keys = np.empty(len(pairs), dtype=self.key_dtype.as_numpy_dtype)
        values = np.empty(len(pairs), dtype=self.value_dtype.as_numpy_dtype)
        for i, (k, v) in enumerate(pairs):
            keys[i], values[i] = k, v
        return keys, values


def _is_default_hasher(hasher_spec):
    return hasher_spec is None or getattr(hasher_spec, "hasher", "fasthash") == "fasthash"


def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=None,
                       hasher_spec=None, key_dtype=dtypes.string, name=None):
    """A StaticHashTable of the dataset's (key, value) pairs (a vocabulary table with
    `num_oov_buckets` hash buckets for missing keys when that is > 0)."""
    spec = dataset.element_spec
    _check_spec(spec)
    key_dtype = dtypes.as_dtype(key_dtype)
    if default_value is None:
        default_value = -1
        if not (spec[1].dtype.is_integer or spec[1].dtype.is_floating):
            raise ValueError(f"`default_value` must be specified when creating a table from a "
                             f"dataset that produces values of type {spec[1].dtype}.")
    if num_oov_buckets < 0:
        raise ValueError(f"`num_oov_buckets` must be greater than or equal to 0, got "
                         f"{num_oov_buckets}.")
    if vocab_size is not None and int(np.asarray(vocab_size)) < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    if not key_dtype.is_integer and key_dtype != dtypes.string:
        raise TypeError(f"`key_dtype` must be either an integer or string type, but got "
                        f"{key_dtype}")
    if not _is_default_hasher(hasher_spec):
        raise NotImplementedError(f"table_from_dataset: hasher_spec {hasher_spec!r} (keyed "
                                  f"StrongHash) is not supported; use the default FastHashSpec")
    if vocab_size is not None:
        n = int(np.asarray(vocab_size))
        dataset = AssertCardinalityDataset(dataset.take(n), n)
    # as in TF, `key_dtype` is only checked to be integer or string: the keys' dtype is the
    # dataset's (TF's index_table_from_dataset doc example passes int64 for string keys)
    init = DatasetInitializer(dataset)
    if num_oov_buckets:
        return StaticVocabularyTable(init, num_oov_buckets, name=name)
    return StaticHashTable(init, default_value, name=name)


def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None,
                             default_value=-1, hasher_spec=None, key_dtype=dtypes.string,
                             name=None):
    """A table mapping each key of the dataset to its position (int64)."""
    return table_from_dataset(dataset.enumerate().map(lambda v, k: (k, v)), num_oov_buckets,
                              vocab_size, default_value, hasher_spec, key_dtype, name)
