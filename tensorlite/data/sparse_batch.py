"""`Dataset.sparse_batch` (tf.data.experimental.dense_to_sparse_batch): elements of varying
shape batch into one `tf.sparse.SparseTensor` per batch.

Every element must have the rank of `row_shape` and fit in it; a `row_shape` dimension of
None takes the batch's largest size there, as TF's kernel does.

Example (the TF API doc's):
    >>> ds = tf.data.Dataset.from_generator(lambda: iter([["a", "b", "c"], ["a", "b"]]),
    ...                                     output_signature=tf.TensorSpec([None], tf.string))
    >>> sp = next(iter(ds.sparse_batch(2, [6])))
    >>> sp.dense_shape.numpy().tolist()
    [2, 6]
"""
import numpy as np

from tensorlite.data.dataset import DatasetV2, batch_size_arg
from tensorlite.data.transforms import PassThroughIterator, UnaryDataset
from tensorlite.framework import errors, nest
from tensorlite.framework.sparse_tensor import SparseTensor, SparseTensorSpec
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_shape import TensorShape


def _row_shape(row_shape):
    """TensorShape, list or int64 vector -> dims, -1 for unknown (None). As in TF, an unknown
    dimension is written None: a -1 is a ValueError."""
    numpy = getattr(row_shape, "numpy", None)
    if callable(numpy):
        row_shape = numpy().tolist()
    if isinstance(row_shape, TensorShape):
        if row_shape.rank is None:
            raise ValueError("sparse_batch: row_shape must have a known rank")
        row_shape = row_shape.as_list()
    dims = [None if d is None else int(d) for d in np.asarray(row_shape, dtype=object).reshape(-1)]
    for d in dims:
        if d is not None and d < 0:
            raise ValueError(f"Dimension {d} must be >= 0")
    return [-1 if d is None else d for d in dims]


class SparseBatchDataset(UnaryDataset):
    _name = "SparseBatch"

    def __init__(self, input_dataset, batch_size, row_shape, name=None):
        super().__init__(input_dataset)
        self._batch = batch_size_arg(batch_size, "sparse_batch")
        self._row = _row_shape(row_shape)
        spec = input_dataset.element_spec
        if len(nest.flatten(spec)) != 1 or not hasattr(spec, "shape"):
            raise errors.InvalidArgumentError(None, None, f"sparse_batch: the dataset's "
                                              f"elements must be single tensors, got {spec}")

    def _compute_spec(self):
        dims = [None] + [None if d == -1 else d for d in self._row]
        return SparseTensorSpec(dims, self._input.element_spec.dtype)

    def _cardinality(self):
        n = self._input._cardinality()
        return n if n < 0 else -(-n // self._batch)

    def _describe(self):
        return f"batch_size={self._batch}, row_shape={self._row}"

    def _make_iterator(self, ctx):
        return _SparseBatchIterator(self._input._make_iterator(ctx), self._batch, self._row)


class _SparseBatchIterator(PassThroughIterator):
    def __init__(self, inner, size, row):
        super().__init__(inner)
        self._size, self._row = size, row

    def next(self):
        rows = []
        while len(rows) < self._size:
            try:
                rows.append(self._in.next())
            except StopIteration:
                break
        if not rows:
            raise StopIteration
        return _to_sparse([r._value if isinstance(r, Tensor) else np.asarray(r) for r in rows],
                          self._row)


def _shapes(a, row):
    return f"Input element had shape ([{','.join(map(str, a.shape))}]) that is", \
        f"the row shape ([{','.join('-1' if d == -1 else str(d) for d in row)}])"


def _to_sparse(arrays, row):
    """[N] arrays of rank len(row) -> SparseTensor with dense_shape [N, *row]; TF's errors
    (InvalidArgumentError for a rank that differs, DataLossError for an element larger
    than the row shape)."""
    for a in arrays:
        if a.ndim != len(row):
            head, tail = _shapes(a, row)
            raise errors.InvalidArgumentError(None, None, f"{head} incompatible with {tail}.")
    shape = [max(a.shape[j] for a in arrays) if d == -1 else d for j, d in enumerate(row)]
    for a in arrays:
        if any(s > d for s, d in zip(a.shape, shape)):
            head, tail = _shapes(a, row)
            raise errors.DataLossError(None, None, f"{head} larger than {tail}.")
    indices, values = [], []
    for b, a in enumerate(arrays):
        idx = np.indices(a.shape).reshape(a.ndim, -1).T if a.ndim else np.zeros((1, 0), int)
        indices.append(np.concatenate([np.full((len(idx), 1), b), idx], axis=1))
        values.append(a.reshape(-1))
    return SparseTensor(wrap(np.concatenate(indices).astype(np.int64)),
                        wrap(np.concatenate(values)),
                        wrap(np.array([len(arrays)] + shape, dtype=np.int64)))


DatasetV2.sparse_batch = lambda self, batch_size, row_shape, name=None: SparseBatchDataset(
    self, batch_size, row_shape)
