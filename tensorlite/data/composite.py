"""Ragged and sparse components of dataset elements: their specs, row access and batching.

tf.data elements may hold `tf.RaggedTensor`s and `tf.sparse.SparseTensor`s:
`from_tensor_slices` of one yields its rows, `batch` stacks them (ragged components into
a ragged batch, sparse ones into a SparseTensor one rank higher), `ragged_batch` makes any
component ragged, `unbatch` yields rows again.

Example:
    >>> ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1], [2, 3]]))
    >>> [x.numpy().tolist() for x in ds]
    [[1], [2, 3]]
"""
import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_notes import RAGGED_ROWS


def is_ragged(x):
    from tensorlite.ragged import RaggedTensor  # noqa: PLC0415 - only when one is in sight
    return isinstance(x, RaggedTensor)


def is_sparse(x):
    return type(x).__name__ == "SparseTensor"


def is_composite(x):
    return is_ragged(x) or is_sparse(x)


def _sparse_spec(shape, dtype):
    from tensorlite.framework.sparse_tensor import SparseTensorSpec  # noqa: PLC0415
    return SparseTensorSpec(shape, dtype)


def spec_for(t):
    """TensorSpec of a Tensor, RaggedTensorSpec of a RaggedTensor, SparseTensorSpec of a
    SparseTensor."""
    if is_sparse(t):
        return _sparse_spec(t.shape, t.dtype)
    if type(t) is Tensor or not is_ragged(t):
        from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
        return TensorSpec(t.shape, t.dtype)
    from tensorlite.ragged import RaggedTensorSpec  # noqa: PLC0415
    return RaggedTensorSpec(t.shape, t.dtype, t.ragged_rank)


def row_spec(t):
    """The spec of one row (slice along dimension 0) of a tensor or ragged tensor."""
    if is_sparse(t):
        return _sparse_spec(t.shape[1:], t.dtype)
    if not is_ragged(t):
        from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
        return TensorSpec(t.shape[1:], t.dtype)
    from tensorlite.ragged import RaggedTensorSpec  # noqa: PLC0415
    return RaggedTensorSpec(t.shape[1:], t.dtype, t.ragged_rank - 1)


def unbatched_spec(spec):
    from tensorlite.ragged import RaggedTensorSpec  # noqa: PLC0415
    if type(spec).__name__ == "SparseTensorSpec":
        return _sparse_spec(spec.shape[1:], spec.dtype)
    if isinstance(spec, RaggedTensorSpec):
        return RaggedTensorSpec(spec.shape[1:], spec.dtype, max(spec.ragged_rank - 1, 0))
    return None


def unknown_shape(spec):
    """True for a RaggedTensorSpec or a TensorSpec with an unknown dimension."""
    return getattr(spec, "ragged_rank", None) is not None or \
        not spec.shape.is_fully_defined()


def batched_spec(spec, dim, ragged):
    """The spec of a batch of `spec` elements; ragged when `ragged` or already ragged."""
    from tensorlite.framework.tensor_shape import TensorShape  # noqa: PLC0415
    from tensorlite.ragged import RaggedTensorSpec  # noqa: PLC0415
    shape = TensorShape([dim]) + spec.shape
    if type(spec).__name__ == "SparseTensorSpec":
        return _sparse_spec(shape, spec.dtype)
    if isinstance(spec, RaggedTensorSpec):
        return RaggedTensorSpec(shape, spec.dtype, spec.ragged_rank + 1)
    if ragged and spec.shape.rank and unknown_shape(spec):
        return RaggedTensorSpec(shape, spec.dtype, spec.shape.rank)
    return None


def values_of(t):
    """What a slices/unbatch iterator indexes: the array of a Tensor, a RaggedTensor itself."""
    return t._value if type(t) is Tensor else t


def row(a, i):
    if isinstance(a, np.ndarray):
        return wrap(a[i])
    out = a[i]
    if type(out) is Tensor:  # a dense row of a ragged tensor: batches as ragged again
        RAGGED_ROWS.set(out, True)
    return out


def ragged_rows(leaves):
    """Whether every one of a component's batched leaves is a dense row of a ragged tensor."""
    return bool(RAGGED_ROWS) and all(RAGGED_ROWS.get(t) for t in leaves)


def batch_rows(items, ragged):
    """One batched component from per-element Tensors/RaggedTensors: a RaggedTensor whose
    rows are the items. `ragged_batch` calls it for components whose shapes differ within
    the batch (TensorFlow decides by the static shape: a fully known one batches densely;
    element shapes here are always concrete, so a batch of equal shapes is dense), and
    `batch` for ragged components."""
    if any(is_sparse(t) for t in items):
        if not all(is_sparse(t) for t in items):
            raise errors.InvalidArgumentError(None, None, "batch: a component is a "
                                              "SparseTensor in some elements only")
        from tensorlite.ops.sparse_ops import batch  # noqa: PLC0415
        return batch(items)
    from tensorlite.ragged import RaggedTensor  # noqa: PLC0415
    from tensorlite.ragged.ragged_math import stack  # noqa: PLC0415
    if all(type(t) is Tensor for t in items):
        if not ragged or items[0].shape.rank == 0:
            raise TypeError("batch_rows needs ragged items or ragged=True")
        ranks = {t.shape.rank for t in items}
        if len(ranks) != 1:
            raise errors.InvalidArgumentError(None, None, f"ragged_batch: elements have "
                                              f"different ranks {sorted(ranks)}")
        rank = ranks.pop()
        inner = {tuple(t.shape[1:]) for t in items}
        if len(inner) == 1:
            values = np.concatenate([t._value for t in items]) if items else np.zeros(0)
            lengths = np.array([t.shape[0] for t in items], dtype=np.int64)
            return RaggedTensor.from_row_lengths(wrap(values), wrap(lengths), validate=False)
        items = [RaggedTensor.from_tensor(t, ragged_rank=rank - 1) if rank > 1 else t
                 for t in items]
    ragged_rank = max(t.ragged_rank for t in items if is_ragged(t))
    items = [t if is_ragged(t) else RaggedTensor.from_tensor(t, ragged_rank=ragged_rank)
             for t in items]
    return stack(items, axis=0)
