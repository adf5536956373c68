"""`tf.nn.embedding_lookup_sparse` and `tf.nn.safe_embedding_lookup_sparse`: one combined
embedding per row of a SparseTensor of ids (a bag of words, a set of categories), as
TensorFlow documents them.

Row r's result combines the embeddings `params[id]` of the ids in that row, each scaled
by its weight w (1 without `sp_weights`): "sum" is sum(w * e); "mean" divides by sum(w);
"sqrtn" by sqrt(sum(w ** 2)); a row without ids gives zeros. The safe variant first
flattens ids of rank > 2 to rows, drops ids < 0 (and, unless combining by "sum", weights
<= 0), gives empty rows `default_id`'s embedding (or zeros), and reshapes back.

The gathers and segment sums are registered ops, so gradients reach `params` (and the
weights); the SparseTensor's structure (which row each id is in) is read eagerly.

Example:
    >>> sp = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1, 3, 2], [3, 2])
    >>> tf.nn.embedding_lookup_sparse(tf.eye(4), sp, None, combiner="sum").numpy()[0]
    array([0., 1., 0., 1.], dtype=float32)
"""
import numpy as np

from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.framework.tensor import wrap
from tensorlite.ops.array_ops import concat, reshape
from tensorlite.ops.common import to_tensor
from tensorlite.ops.creation_ops import ones_like, zeros_like
from tensorlite.ops.gather_ops import gather
from tensorlite.ops.math_ops import cast, divide, equal, multiply, sqrt, square, where
from tensorlite.ops.nn_ops import embedding_lookup
from tensorlite.ops.segment_ops import segment_sum

_COMBINERS = ("mean", "sqrtn", "sum")


def _div_no_nan(x, y):
    """x / y, 0 where y is 0 (TF's div_no_nan), with finite gradients there too."""
    zero = equal(y, 0.0)
    return where(zero, zeros_like(x), divide(x, where(zero, ones_like(y), y)))


def _check(sp_ids, sp_weights, combiner):
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError(f"sp_weights must be either None or SparseTensor, got "
                        f"{type(sp_weights)}")


def embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=None, max_norm=None,
                            name=None, allow_fast_lookup=False):
    """`tf.nn.embedding_lookup_sparse`: for a [batch, ...] SparseTensor of int ids (rows in
    order, as SparseTensors are), the [max row + 1, dim] combination of each row's
    embeddings (see the module docstring); `combiner` None means "mean"; `max_norm`
    clips each looked-up embedding as `embedding_lookup` does."""
    combiner = "mean" if combiner is None else combiner
    _check(sp_ids, sp_weights, combiner)
    segment_ids = wrap(np.asarray(sp_ids.indices)[:, 0])
    emb = embedding_lookup(params, sp_ids.values, max_norm=max_norm)
    rank = emb.shape.rank
    if sp_weights is None:
        weights = ones_like(sp_ids.values, dtype=emb.dtype)
    else:
        weights = cast(sp_weights.values, emb.dtype)
    weights = reshape(weights, [-1] + [1] * (rank - 1))
    total = segment_sum(multiply(emb, weights), segment_ids)
    if combiner == "sum":
        return total
    if combiner == "mean":
        return _div_no_nan(total, segment_sum(weights, segment_ids))
    return _div_no_nan(total, sqrt(segment_sum(square(weights), segment_ids)))


def _flatten_rows(sp_ids, sp_weights, combiner):
    """Ids of rank > 2 flattened to rows (row-major), invalid ids and weights dropped:
    (row of each kept id, positions kept, number of rows)."""
    idx = np.asarray(sp_ids.indices)
    shape = np.asarray(sp_ids.dense_shape)
    rows = (np.ravel_multi_index(idx[:, :-1].T, shape[:-1]) if idx.shape[1] > 1
            else np.zeros(len(idx), np.int64))
    keep = np.asarray(sp_ids.values) >= 0
    if sp_weights is not None and combiner != "sum":
        keep &= np.asarray(sp_weights.values) > 0
    return rows, np.flatnonzero(keep), int(np.prod(shape[:-1]))


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, max_norm=None, name=None,
                                 allow_fast_lookup=False):
    """`tf.nn.safe_embedding_lookup_sparse`: `embedding_lookup_sparse` for [d0, ..., dn]
    ids of any rank >= 2, returning [d0, ..., dn-1, dim]: ids < 0 are ignored (and
    weights <= 0 unless `combiner` is "sum"); a row left empty gets the embedding of
    `default_id`, or zeros when it is None."""
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if isinstance(embedding_weights, (list, tuple)) and not embedding_weights:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    _check(sparse_ids, sparse_weights, combiner)
    rows, kept, n_rows = _flatten_rows(sparse_ids, sparse_weights, combiner)
    empty = np.ones(n_rows, bool)
    empty[rows[kept]] = False
    fill = np.flatnonzero(empty)
    # every row present (sorted), as sparse_fill_empty_rows makes it
    all_rows = np.concatenate([rows[kept], fill])
    order = np.argsort(all_rows, kind="stable")
    ids = to_tensor(sparse_ids.values)
    ids = gather(_concat_values(gather(ids, wrap(kept)), np.full(len(fill), default_id or 0),
                                ids.dtype), wrap(order))
    weights = None
    if sparse_weights is not None:
        w = to_tensor(sparse_weights.values)
        w = gather(_concat_values(gather(w, wrap(kept)), np.ones(len(fill)), w.dtype),
                   wrap(order))
        weights = SparseTensor(_row_indices(all_rows[order]), w, [n_rows, len(order)])
    lookup = SparseTensor(_row_indices(all_rows[order]), ids, [n_rows, len(order)])
    result = embedding_lookup_sparse(embedding_weights, lookup, weights, combiner=combiner,
                                     max_norm=max_norm)
    if default_id is None:
        result = where(wrap(empty.reshape(-1, 1)), zeros_like(result), result)
    shape = [int(d) for d in np.asarray(sparse_ids.dense_shape)[:-1]]
    return reshape(result, shape + result.shape.as_list()[1:])


def _concat_values(kept, filler, dtype):
    return concat([kept, wrap(filler.astype(dtype.as_numpy_dtype))], axis=0)


def _row_indices(rows):
    """[n, 2] indices of values sorted by row: (row, position within the row)."""
    cols = np.arange(len(rows)) - np.searchsorted(rows, rows)
    return np.stack([rows, cols], axis=1).astype(np.int64)


__all__ = ["embedding_lookup_sparse", "safe_embedding_lookup_sparse"]
