"""`tf.sparse`: SparseTensor (indices, values, dense_shape), conversions to/from dense, and
the sparse guide's operations: add, sparse_dense_matmul, concat, slice, transpose,
map_values, reduce_sum, reduce_max. The public namespace: the type lives in
`framework.sparse_tensor`, the ops in `ops.sparse_ops`.

Example:
    >>> st = tf.sparse.SparseTensor(indices=[[0, 1], [2, 0]], values=[5, 7], dense_shape=[3, 2])
    >>> tf.sparse.to_dense(st).numpy().tolist()
    [[0, 5], [0, 0], [7, 0]]
"""
from tensorlite.framework.sparse_tensor import SparseTensor, SparseTensorSpec  # noqa: F401
from tensorlite.ops.sparse_ops import (  # noqa: F401
    add, batch, concat, from_dense, map_values, reduce_max, reduce_sum, reorder, slice,
    sparse_dense_matmul, to_dense, transpose)

__all__ = ["SparseTensor", "SparseTensorSpec", "to_dense", "from_dense", "reorder", "map_values",
           "add", "sparse_dense_matmul", "concat", "slice", "transpose", "reduce_sum",
           "reduce_max"]
