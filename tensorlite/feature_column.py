"""`tf.feature_column`: how raw features (a dict of arrays) become a model's dense input, as
the DNNClassifier of the Google I/O 2018 talk "TensorFlow in production: TF Extended, TF
Hub, and TF Serving" uses them: numeric columns (bucketized by boundaries too),
categorical columns over a vocabulary, and their embedding or one-hot (indicator) forms.

Example:
    >>> color = tf.feature_column.categorical_column_with_vocabulary_list(
    ...     "color", ["red", "green"])
    >>> cols = [tf.feature_column.numeric_column("x"), tf.feature_column.indicator_column(color)]
    >>> tf.feature_column.input_layer({"x": [[1.0]], "color": [["green"]]}, cols).numpy()
    array([[1., 0., 1.]], dtype=float32)
"""
import zlib

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import array_ops, gather_ops, math_ops


def _raw(features, key):
    if key not in features:
        raise KeyError(f"feature column {key!r}: no feature named {key!r} in the input "
                       f"(features: {sorted(features)})")
    v = features[key]
    return v._value if isinstance(v, Tensor) else np.asarray(v.numpy() if hasattr(v, "numpy")
                                                               else v)


def _stable_hash(value):
    """The same on every process and run (Python's str hash is salted per process)."""
    return zlib.crc32(str(value).encode())


class NumericColumn:
    def __init__(self, key, shape, default_value, dtype, normalizer_fn):
        self.key, self.shape, self.dtype = key, tuple(shape), dtypes.as_dtype(dtype)
        self.default_value, self.normalizer_fn = default_value, normalizer_fn
        self.name = key

    @property
    def width(self):
        return int(np.prod(self.shape))

    def dense(self, features, state):
        v = features[self.key] if self.key in features else _raw(features, self.key)
        t = math_ops.cast(wrap(np.asarray(v._value if isinstance(v, Tensor) else v)),
                          self.dtype)
        if self.normalizer_fn is not None:
            t = self.normalizer_fn(t)
        return array_ops.reshape(math_ops.cast(t, dtypes.float32), [-1, self.width])


class VocabularyColumn:
    def __init__(self, key, vocabulary_list, dtype, default_value, num_oov_buckets):
        if not len(vocabulary_list):
            raise ValueError(f"categorical column {key!r}: vocabulary_list is empty")
        if len(set(vocabulary_list)) != len(vocabulary_list):
            raise ValueError(f"categorical column {key!r}: vocabulary_list has duplicates")
        if default_value != -1 and num_oov_buckets:
            raise ValueError("Can't specify both default_value and num_oov_buckets")
        self.key, self.vocabulary = key, list(vocabulary_list)
        self.default_value, self.num_oov_buckets = default_value, num_oov_buckets
        self.name = key
        self._index = {self._norm(v): i for i, v in enumerate(self.vocabulary)}

    @staticmethod
    def _norm(v):
        return v.decode() if isinstance(v, bytes) else v.item() if hasattr(v, "item") else v

    @property
    def num_buckets(self):
        return len(self.vocabulary) + self.num_oov_buckets

    def ids(self, features):
        """[batch] int64 ids (one value per example); OOV -> default or a hash bucket."""
        raw = _raw(features, self.key).reshape(-1)
        out = np.empty(raw.shape, np.int64)
        for i, v in enumerate(raw):
            key = self._norm(v)
            idx = self._index.get(key)
            if idx is None:
                idx = len(self.vocabulary) + _stable_hash(key) % self.num_oov_buckets \
                    if self.num_oov_buckets else self.default_value
            out[i] = idx
        return out


class IndicatorColumn:
    def __init__(self, categorical_column):
        self.categorical_column = categorical_column
        self.name = f"{categorical_column.name}_indicator"

    def dense(self, features, state):
        ids = self.categorical_column.ids(features)
        n = self.categorical_column.num_buckets
        out = np.zeros((len(ids), n), np.float32)
        valid = ids >= 0
        out[np.nonzero(valid)[0], ids[valid]] = 1.0
        return wrap(out)


class EmbeddingColumn:
    def __init__(self, categorical_column, dimension, combiner, initializer):
        if dimension is None or dimension < 1:
            raise ValueError(f"Invalid dimension {dimension}: embedding_column needs >= 1")
        self.categorical_column, self.dimension = categorical_column, int(dimension)
        self.combiner, self.initializer = combiner, initializer
        self.name = f"{categorical_column.name}_embedding"

    def dense(self, features, state):
        """Looks up the embedding table (a variable made once per `state`, the caller's
        variable store); ids outside the vocabulary give zeros."""
        from tensorlite.framework.variables import Variable  # noqa: PLC0415
        n = self.categorical_column.num_buckets
        table = state.get(self.name)
        if table is None:
            rng = np.random.default_rng(_stable_hash(self.name))
            init = self.initializer((n, self.dimension)) if self.initializer else \
                rng.normal(0, 1 / np.sqrt(self.dimension), (n, self.dimension))
            table = state[self.name] = Variable(np.asarray(init, np.float32),
                                                name=f"{self.name}/embedding_weights")
        ids = self.categorical_column.ids(features)
        mask = wrap((ids >= 0).astype(np.float32)[:, None])
        rows = gather_ops.gather(table, wrap(np.maximum(ids, 0)))
        return math_ops.multiply(rows, mask)


class BucketizedColumn:
    """Bucket ids of a numeric column; its dense form is one-hot per source dimension."""

    def __init__(self, source_column, boundaries):
        self.source_column, self.boundaries = source_column, tuple(float(b) for b in boundaries)
        self.name = f"{source_column.name}_bucketized"
        self.key = source_column.key

    @property
    def num_buckets(self):
        """Buckets per source dimension."""
        return len(self.boundaries) + 1

    def bucket_ids(self, features):
        """[batch, source width] int64 bucket ids."""
        raw = _raw(features, self.source_column.key).astype(np.float64)
        raw = raw.reshape(-1, self.source_column.width)
        return np.searchsorted(np.asarray(self.boundaries), raw, side="right").astype(np.int64)

    def dense(self, features, state):
        """One-hot [batch, width * num_buckets], as TF's input_layer makes it."""
        ids = self.bucket_ids(features)
        n, width = ids.shape
        out = np.zeros((n, width * self.num_buckets), np.float32)
        cols = ids + np.arange(width)[None, :] * self.num_buckets
        out[np.repeat(np.arange(n), width), cols.ravel()] = 1.0
        return wrap(out)


def bucketized_column(source_column, boundaries):
    """Cuts `source_column` (a numeric_column) by `boundaries` (a sorted list of floats)."""
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(), "
                         f"given: {source_column!r}")
    if not isinstance(boundaries, (list, tuple)) or not boundaries:
        raise ValueError(f"boundaries must be a non-empty sorted list, given: {boundaries!r}")
    if any(a >= b for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError(f"boundaries must be a sorted list (strictly increasing), "
                         f"given: {boundaries!r}")
    return BucketizedColumn(source_column, boundaries)


def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32,
                   normalizer_fn=None):
    """A real-valued feature (reshaped to [batch, prod(shape)])."""
    shape = (shape,) if isinstance(shape, int) else shape
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                            default_value=-1, num_oov_buckets=0):
    """Ids of a string or integer feature in `vocabulary_list` (unknown -> default_value,
    or one of num_oov_buckets hash buckets)."""
    return VocabularyColumn(key, vocabulary_list, dtype, default_value, num_oov_buckets)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """A trainable dense embedding of a categorical column."""
    return EmbeddingColumn(categorical_column, dimension, combiner, initializer)


def indicator_column(categorical_column):
    """A one-hot (multi-hot) encoding of a categorical column."""
    return IndicatorColumn(categorical_column)


def as_linear_columns(feature_columns):
    """The columns a linear model sums: a categorical column becomes its one-hot form (one
    weight per bucket, as TF's linear_model weighs categorical columns)."""
    return [IndicatorColumn(c) if isinstance(c, VocabularyColumn) else c
            for c in feature_columns]


def input_layer(features, feature_columns, state=None):
    """The dense [batch, width] input the columns make from `features`; `state` keeps the
    embedding tables (a dict, one per model)."""
    state = {} if state is None else state
    parts = []
    for col in feature_columns:
        if isinstance(col, VocabularyColumn):
            raise ValueError(f"Items of feature_columns must be a DenseColumn; wrap the "
                             f"categorical column {col.name!r} in embedding_column or "
                             f"indicator_column")
        parts.append(col.dense(features, state))
    return array_ops.concat(parts, axis=1)
