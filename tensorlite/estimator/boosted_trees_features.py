"""How BoostedTrees sees feature columns: every input dimension becomes one bucketized
feature. Numeric columns are cut at quantiles of the first training batches (about
1/quantile_sketch_epsilon buckets, as TF's quantile sketch gives; computed exactly and
unweighted here) and bucketized as TF's BoostedTreesBucketize does,
bucketized columns at their boundaries, and each dimension of an indicator column is a
0/1 feature. Columns are taken sorted by name, as TF does, and feature importances are
summed per column name (a numeric column's key, `<key>_bucketized`, an indicator's
categorical column's name).

Example:
    >>> layout = FeatureLayout([tf.feature_column.numeric_column("x")], 0.25)
    >>> layout.add_sketch({"x": np.arange(8.0)}); layout.finish_sketch()
    >>> layout.buckets({"x": [0.0, 7.0]}).ravel().tolist()
    [0, 4]
"""
import math

import numpy as np

from tensorlite.feature_column import BucketizedColumn
from tensorlite.feature_column import IndicatorColumn, NumericColumn, _raw


class FeatureLayout:
    """The bucketized features of a list of feature columns."""

    def __init__(self, feature_columns, quantile_sketch_epsilon):
        columns = list(feature_columns)
        for col in columns:
            if not isinstance(col, (NumericColumn, BucketizedColumn, IndicatorColumn)):
                raise ValueError(
                    f"BoostedTrees supports numeric_column, bucketized_column and "
                    f"indicator_column; got {type(col).__name__} {getattr(col, 'name', col)!r}"
                    f" (wrap categorical columns in indicator_column)")
        self.columns = sorted(columns, key=lambda c: c.name)
        self.epsilon = quantile_sketch_epsilon
        self.boundaries = {}     # numeric column name -> per dimension sorted boundaries
        self._sketch = {}
        self.names = []          # the feature-column name of each feature, for importances
        for col in self.columns:
            if isinstance(col, IndicatorColumn):
                width = col.categorical_column.num_buckets
                self.names += [col.categorical_column.name] * width
            else:
                width = col.width if isinstance(col, NumericColumn) else \
                    col.source_column.width
                self.names += [col.name] * width

    @property
    def needs_sketch(self):
        """Whether numeric columns still wait for their quantile boundaries."""
        return any(isinstance(c, NumericColumn) and c.name not in self.boundaries
                   for c in self.columns)

    def add_sketch(self, features):
        """Keeps a batch's numeric values for the quantile boundaries."""
        for col in self.columns:
            if isinstance(col, NumericColumn):
                raw = _raw(features, col.key).astype(np.float64).reshape(-1, col.width)
                self._sketch.setdefault(col.name, []).append(raw)

    def finish_sketch(self):
        """Sets each numeric dimension's boundaries: its quantiles at epsilon steps."""
        levels = np.linspace(0.0, 1.0, int(math.ceil(1.0 / self.epsilon)) + 1)
        for name, parts in self._sketch.items():
            values = np.concatenate(parts)
            self.boundaries[name] = [np.unique(np.quantile(values[:, d], levels)).tolist()
                                     for d in range(values.shape[1])]
        self._sketch = {}

    @property
    def n_buckets(self):
        """The most buckets any feature has (histograms are this wide)."""
        sizes = [2]
        for col in self.columns:
            if isinstance(col, BucketizedColumn):
                sizes.append(col.num_buckets)
            elif isinstance(col, NumericColumn):
                sizes += [len(b) for b in self.boundaries[col.name]]
        return max(sizes)

    def buckets(self, features):
        """[n, features] int64 bucket ids of a batch."""
        parts = []
        for col in self.columns:
            if isinstance(col, IndicatorColumn):
                parts.append(np.asarray(col.dense(features, {}).numpy()).astype(np.int64))
            elif isinstance(col, BucketizedColumn):
                parts.append(col.bucket_ids(features))
            else:
                raw = _raw(features, col.key).astype(np.float64).reshape(-1, col.width)
                parts.append(np.stack(
                    [_bucketize(b, raw[:, d]) for d, b in enumerate(self.boundaries[col.name])],
                    1))
        return np.concatenate(parts, axis=1)


def _bucketize(boundaries, values):
    """TF's BoostedTreesBucketize: the first boundary >= value, capped at the last one
    (no boundaries: bucket 0)."""
    if not len(boundaries):
        return np.zeros(len(values), np.int64)
    ids = np.searchsorted(np.asarray(boundaries), values, side="left")
    return np.minimum(ids, len(boundaries) - 1).astype(np.int64)
