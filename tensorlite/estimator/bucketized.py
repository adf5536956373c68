"""`bucketized_column`: a numeric column cut into ranges by sorted boundaries, as TF's
`tf.feature_column.bucketized_column` (bucket i holds boundaries[i-1] <= x < boundaries[i]).

tensorlite's feature_column.py has no bucketized column yet; BoostedTrees needs one, so it
lives here (it depends only on tensorlite.feature_column, so it can move down there).

Example:
    >>> age = bucketized_column(tf.feature_column.numeric_column("age"), [18.0, 65.0])
    >>> age.bucket_ids({"age": [[10.0], [30.0], [70.0]]}).ravel().tolist()
    [0, 1, 2]
"""
import numpy as np

from tensorlite.feature_column import NumericColumn, _raw
from tensorlite.framework.tensor import wrap


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
