"""tf.unique: the distinct values of a vector and each element's position among them."""
from collections import namedtuple

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import invalid
from tensorlite.framework.tensor import wrap
from tensorlite.ops.common import to_tensor


Unique = namedtuple("Unique", ["y", "idx"])


def unique(x, out_idx=dtypes.int32, name=None):
    """`tf.unique`: the distinct values of a 1-D tensor in order of first appearance, and
    each element's position among them.

    >>> y, idx = tf.unique(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
    >>> y.numpy(), idx.numpy()
    (array([1, 2, 4, 7, 8], dtype=int32), array([0, 0, 1, 2, 2, 2, 3, 4, 4], dtype=int32))"""
    t = to_tensor(x)
    if t._value.ndim != 1:
        raise invalid("Unique", f"unique expects a 1D vector, got shape {list(t._value.shape)}")
    # Not a registered op: the output's length depends on the values (no static shape rule).
    vals, first, inv = np.unique(t._value, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(order.size)
    idx = rank_of[inv.reshape(-1)].astype(dtypes.as_dtype(out_idx).as_numpy_dtype)
    return Unique(wrap(vals[order]), wrap(idx))
