"""`tf.ragged.constant`: a RaggedTensor from nested Python lists.

Example:
    >>> tf.ragged.constant([[1, 2], [3]]).shape
    TensorShape([2, None])
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import to_numpy
from tensorlite.framework.tensor import wrap
from tensorlite.ragged.ragged_tensor import RaggedTensor


def _is_list(x):
    return isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.ndim > 0)


def _depths(x, depth, out):
    if _is_list(x):
        if len(x) == 0:
            out.add(("empty", depth))
        for v in x:
            _depths(v, depth + 1, out)
    else:
        out.add(("scalar", depth))


def _nesting(pylist):
    found = set()
    _depths(pylist, 0, found)
    scalar = {d for k, d in found if k == "scalar"}
    if len(scalar) > 1:
        raise ValueError(f"all scalar values must have the same nesting depth; found depths "
                         f"{sorted(scalar)} in {_short(pylist)}")
    if scalar:
        depth = scalar.pop()
        if any(k == "empty" and d >= depth for k, d in found):
            raise ValueError(f"all scalar values must have the same nesting depth; an empty "
                             f"list sits where scalars are in {_short(pylist)}")
        return depth
    return max(d for _, d in found) + 1


def _short(x):
    s = repr(x)
    return s if len(s) < 80 else s[:77] + "..."


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype=dtypes.int64):
    """`tf.ragged.constant`: nested lists whose rows may differ in length.

    >>> tf.ragged.constant([["a", "b"], []]).to_list()
    [[b'a', b'b'], []]"""
    if not _is_list(pylist):
        raise ValueError(f"tf.ragged.constant expects a nested list, got {_short(pylist)}")
    depth = _nesting(pylist)
    inner = len(inner_shape) if inner_shape is not None else 0
    if ragged_rank is None:
        ragged_rank = max(1, depth - 1 - inner)
    if not 0 < ragged_rank < max(depth, 2):
        raise ValueError(f"ragged_rank={ragged_rank} must be in [1, {max(depth - 1, 1)}] for a "
                         f"list nested {depth} deep")
    splits, rows = [], list(pylist)
    for _ in range(ragged_rank):
        lengths = [len(r) for r in rows]
        splits.append(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
        rows = [v for r in rows for v in r]
    dt = None if dtype is None else dtypes.as_dtype(dtype)
    try:
        flat = to_numpy(rows, dt, allow_cast=dt is not None) if rows else \
            np.zeros((0,) + tuple(inner_shape or ()) + (0,) * max(
                0, depth - 1 - ragged_rank - inner), dtype=(dt or dtypes.float32).as_numpy_dtype
                if not (dt and dt.is_string) else object)
    except TypeError as e:  # TF: a ValueError for values of mixed types
        raise ValueError(f"tf.ragged.constant: {e}") from None
    except ValueError as e:
        raise ValueError(f"tf.ragged.constant: the values inside the ragged dimensions must "
                         f"have a uniform shape (pass ragged_rank={depth - 1} to make every "
                         f"dimension ragged): {e}") from None
    if inner_shape is not None and rows:
        flat = flat.reshape((-1,) + tuple(inner_shape))
    result = wrap(flat)
    for s in reversed(splits):
        result = RaggedTensor(result, wrap(s), internal=True)
    return result
