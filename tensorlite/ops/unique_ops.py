"""tf.unique: the distinct values of a vector and each element's position among them."""
from collections import namedtuple

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.ops.common import to_tensor


Unique = namedtuple("Unique", ["y", "idx"])


def _unique_fwd(x, out_idx):
    vals, first, inv = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(order.size)
    return vals[order], rank_of[inv.reshape(-1)].astype(dtypes.as_dtype(out_idx).as_numpy_dtype)


# An op (not a NumPy shortcut), so a graph recomputes it: how many values are distinct is
# known only when it runs, hence the None length. TensorFlow declares it not differentiable.
UNIQUE = register(
    "Unique", _unique_fwd, grad=NOT_DIFFERENTIABLE, multi_output=True,
    shape=lambda x, out_idx: [Spec((None,), x.dtype), Spec(x.shape, dtypes.as_dtype(out_idx))],
    tf=lambda a, specs: lambda add, ins: [
        f"{node}:{arg}:0" for node in [add("Unique", ins, T=specs[0].dtype,
                                           out_idx=dtypes.as_dtype(a["out_idx"]))]
        for arg in ("y", "idx")],
    tf_outputs=("y", "idx"),
    tf_import=lambda ins, a: UNIQUE(ins[0], out_idx=dtypes.as_dtype(a.get("out_idx", "int32")).name),
    unsupported="onnx tflite batch")


def unique(x, out_idx=dtypes.int32, name=None):
    """`tf.unique`: the distinct values of a 1-D tensor in order of first appearance, and
    each element's position among them.

    >>> y, idx = tf.unique(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
    >>> y.numpy(), idx.numpy()
    (array([1, 2, 4, 7, 8], dtype=int32), array([0, 0, 1, 2, 2, 2, 3, 4, 4], dtype=int32))"""
    t = to_tensor(x)
    if t._value.ndim != 1:
        raise invalid("Unique", f"unique expects a 1D vector, got shape {list(t._value.shape)}")
    y, idx = UNIQUE(t, out_idx=dtypes.as_dtype(out_idx).name)
    return Unique(y, idx)
