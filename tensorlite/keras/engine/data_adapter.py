"""What `fit`/`evaluate`/`predict` accept, turned into batches of (x, y, sample_weight):
NumPy arrays and tensors (nested in lists/tuples/dicts), a tf.data Dataset, or a Python
generator/Sequence-like iterable. Also `validation_split`, `class_weight` and
`steps_per_epoch` as Keras defines them.
"""
import math

import numpy as np

from tensorlite.data.dataset import DatasetV2
from tensorlite.framework import nest
from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import random_ops
from tensorlite.ragged.indexing import gather_rows as ragged_gather
from tensorlite.ragged.ragged_tensor import RaggedTensor


def _is_composite(v):
    return isinstance(v, (RaggedTensor, SparseTensor))


def _rows(a):
    """The number of examples in an array or a ragged/sparse tensor (its first dimension)."""
    if isinstance(a, RaggedTensor):
        return int(a.nrows())
    if isinstance(a, SparseTensor):
        return int(a.dense_shape.numpy()[0])
    return a.shape[0]


def _take_rows(a, idx):
    """Rows `idx` (a slice or an array of positions) of an array or a ragged/sparse tensor,
    as a tensor: the examples of one batch."""
    if isinstance(a, RaggedTensor):
        return a[idx] if isinstance(idx, slice) else ragged_gather(a, wrap(idx))
    if isinstance(a, SparseTensor):
        return _sparse_rows(a, idx)
    return wrap(a[idx])


def _sparse_rows(st, idx):
    """The rows `idx` of a SparseTensor, renumbered 0.. in that order (a batch of them)."""
    indices, values = st.indices.numpy(), st.values.numpy()
    shape = st.dense_shape.numpy().copy()
    order = np.arange(shape[0])[idx]
    position = np.full(shape[0], -1, np.int64)
    position[order] = np.arange(len(order))
    new_rows = position[indices[:, 0]]
    keep = np.nonzero(new_rows >= 0)[0]
    new_indices = indices[keep].copy()
    new_indices[:, 0] = new_rows[keep]
    sort = np.lexsort(new_indices.T[::-1])  # canonical row-major order
    shape[0] = len(order)
    return SparseTensor(wrap(new_indices[sort]), wrap(values[keep][sort]), wrap(shape))


def _to_array(v):
    if _is_composite(v):  # tf.keras 2 fits on ragged and sparse tensors as they are
        return v
    if isinstance(v, Tensor):
        return v._value
    if getattr(v, "_is_variable", False):
        return v.numpy()
    a = v.to_numpy() if _is_pandas(v) else np.asarray(v)
    if a.dtype.kind in "US" or (a.dtype == object and a.size and isinstance(a.flat[0], str)):
        from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
        return convert_to_tensor(a)._value  # text as the bytes objects tf.string holds
    if a.dtype.kind == "f":
        # floating arrays in floatx, as tf.keras 2 and Keras 3 feed them: a custom loss or
        # metric (Hands-On ML's huber_fn, HuberMetric) sees float32 targets, not float64
        from tensorlite.keras import backend  # noqa: PLC0415
        return a.astype(backend.floatx(), copy=False)
    return a


def _scalars_as_one(x):
    """A list of Python scalars is one array of examples, as Keras takes it (the load-text
    tutorial's `model.predict(['How do you sort a list?'])`), not a structure of inputs."""
    if isinstance(x, list) and x and all(isinstance(v, (str, bytes, int, float, bool))
                                         for v in x):
        return np.asarray(x)
    return x


def unpack(data):
    """(x, y, sample_weight) from an element: x, (x,), (x, y) or (x, y, sample_weight)
    (`tf.keras.utils.unpack_x_y_sample_weight`)."""
    if isinstance(data, list):
        data = tuple(data)
    if isinstance(data, tuple) and not hasattr(data, "_fields"):
        if len(data) == 1:
            return data[0], None, None
        if len(data) == 2:
            return data[0], data[1], None
        if len(data) == 3:
            return data
        raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                         f"`(x, y, sample_weight)`, found a tuple of {len(data)} elements")
    return data, None, None


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """`tf.keras.utils.pack_x_y_sample_weight`: the element a step receives, as Keras
    builds it: x alone (or (x,) when x is a tuple/list), (x, y), or (x, y, sample_weight)
    only when weights exist.

    >>> tf.keras.utils.pack_x_y_sample_weight(1, 2)
    (1, 2)
    """
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def _is_pandas(x):
    """A pandas DataFrame or Series (Keras takes them as their NumPy values)."""
    return type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "to_numpy")


def _is_array_like(x):
    return isinstance(x, (np.ndarray, Tensor, list)) or getattr(x, "_is_variable", False) or \
        _is_composite(x) or \
        _is_pandas(x) or \
        (isinstance(x, (tuple, dict)) and all(_is_array_like(v) or isinstance(v, (int, float))
                                              for v in nest.flatten(x)))


class ArrayBatches:
    """In-memory arrays, batched (and shuffled each epoch) for one pass."""

    def __init__(self, x, y, sample_weight, batch_size, shuffle, class_weight=None, seed=None):
        self.x = nest.map_structure(_to_array, _scalars_as_one(x))
        self.y = None if y is None else nest.map_structure(_to_array, _scalars_as_one(y))
        sizes = {_rows(a) for a in nest.flatten([self.x, self.y]) if a is not None}
        if len(sizes) > 1:
            raise ValueError(f"Data cardinality is ambiguous: make sure all arrays contain "
                             f"the same number of samples; got sizes {sorted(sizes)}")
        self.n = sizes.pop() if sizes else 0
        if self.n == 0:
            raise ValueError("Expected input data to be non-empty (got 0 samples); pass at "
                             "least one example to fit/evaluate/predict")
        self.sw = None if sample_weight is None else _to_array(sample_weight)
        if class_weight is not None:
            self.sw = _class_weights(self.y, class_weight, self.sw)
        self.batch_size = batch_size or 32
        self.shuffle = shuffle
        if seed is None:   # from TF's global seed when one is set (tf.random.set_seed,
            # tf.keras.utils.set_random_seed): a seeded program shuffles alike every run
            seed = int(random_ops.next_rng().integers(1 << 62))
        self.rng = np.random.default_rng(seed)

    def steps(self):
        return math.ceil(self.n / self.batch_size)

    def epoch(self):
        order = self.rng.permutation(self.n) if self.shuffle else None
        for start in range(0, self.n, self.batch_size):
            idx = order[start:start + self.batch_size] if order is not None else \
                slice(start, start + self.batch_size)

            def take(a):
                return _take_rows(a, idx)
            x = nest.map_structure(take, self.x)
            y = None if self.y is None else nest.map_structure(take, self.y)
            sw = None if self.sw is None else wrap(self.sw[idx])
            yield pack_x_y_sample_weight(x, y, sw)


def _class_weights(y, class_weight, sw):
    if y is None:
        raise ValueError("class_weight needs targets y")
    flat = nest.flatten(y)
    if len(flat) != 1:
        raise ValueError("`class_weight` is only supported for Models with a single output.")
    labels = flat[0]
    cls = np.argmax(labels, axis=-1) if labels.ndim > 1 and labels.shape[-1] > 1 else \
        labels.reshape(labels.shape[0], -1)[:, 0].astype(np.int64)
    missing = set(np.unique(cls).tolist()) - set(int(k) for k in class_weight)
    if missing:
        raise ValueError(f"`class_weight` must contain all classes in the data. The classes "
                         f"{sorted(missing)} exist in the data but not in `class_weight`.")
    w = np.array([class_weight[int(c)] for c in cls], dtype=np.float32)
    return w if sw is None else w * sw


class DatasetBatches:
    """A tf.data Dataset (already batched by the user) or a generator of batches."""

    def __init__(self, data, steps=None, class_weight=None):
        self.data = data
        self.steps_given = steps
        self.class_weight = class_weight
        self._infinite_iter = None

    def steps(self):
        if self.steps_given is not None:
            return self.steps_given
        if isinstance(self.data, DatasetV2):
            n = self.data._cardinality()
            return n if n >= 0 else None
        return None

    def epoch(self):
        if isinstance(self.data, DatasetV2):
            if self.steps_given is not None and self.data._cardinality() == -1:
                # infinite dataset: continue the same iterator across epochs, as Keras
                if self._infinite_iter is None:
                    self._infinite_iter = iter(self.data)
                source = self._infinite_iter
            else:
                source = iter(self.data)
        else:
            source = self.data if hasattr(self.data, "__next__") else iter(self.data)
        for i, element in enumerate(source):
            if self.steps_given is not None and i >= self.steps_given:
                break
            if self.class_weight is None:
                yield element  # as the dataset gives it, as Keras passes it on
                continue
            x, y, sw = unpack(element)
            if y is not None:
                w = _class_weights(nest.map_structure(_to_array, y), self.class_weight,
                                   None if sw is None else _to_array(sw))
                sw = wrap(w)
            yield pack_x_y_sample_weight(x, y, sw)


def make_batches(x, y=None, sample_weight=None, batch_size=None, shuffle=False,
                 class_weight=None, steps=None, what="fit", workers=None,
                 use_multiprocessing=None, max_queue_size=None):
    from tensorlite.keras.utils.sequence import PyDataset, SequenceBatches  # noqa: PLC0415
    if isinstance(x, PyDataset):
        if y is not None or sample_weight is not None:
            raise ValueError(f"`y` and `sample_weight` are not supported with a Sequence / "
                             f"PyDataset input to {what}: its items are (x, y, ...)")
        return SequenceBatches(x, steps, workers if workers not in (None, 1) else None,
                               use_multiprocessing or None, max_queue_size)
    if isinstance(x, DatasetV2) or (hasattr(x, "__next__") and not _is_array_like(x)) or \
            (hasattr(x, "__iter__") and not _is_array_like(x) and not isinstance(x, dict)):
        if y is not None:
            raise ValueError(f"`y` argument is not supported when using a dataset or a "
                             f"generator as input to {what}; the dataset yields (x, y)")
        if batch_size is not None and isinstance(x, DatasetV2):
            raise ValueError(f"The `batch_size` argument must not be specified for the given "
                             f"input type: the dataset is batched already ({what})")
        return DatasetBatches(x, steps, class_weight)
    if x is None:
        raise ValueError(f"{what} needs input data `x`")
    return ArrayBatches(x, y, sample_weight, batch_size, shuffle, class_weight)


def split_validation(x, y, sample_weight, validation_split):
    """The last `validation_split` fraction of the arrays, as Keras (before shuffling)."""
    if not 0 < validation_split < 1:
        raise ValueError(f"validation_split must be in (0, 1), got {validation_split}")
    if not _is_array_like(x):
        raise ValueError("`validation_split` is only supported for Tensors or NumPy arrays, "
                         f"found {type(x).__name__}")
    xa = nest.map_structure(_to_array, x)
    n = nest.flatten(xa)[0].shape[0]
    cut = int(math.floor(n * (1.0 - validation_split)))
    if cut == 0 or cut == n:
        raise ValueError(f"validation_split={validation_split} leaves an empty training or "
                         f"validation set for {n} samples")

    def head(a):
        return None if a is None else a[:cut]

    def tail(a):
        return None if a is None else a[cut:]
    ya = None if y is None else nest.map_structure(_to_array, y)
    swa = None if sample_weight is None else _to_array(sample_weight)
    return ((nest.map_structure(head, xa), None if ya is None else nest.map_structure(head, ya),
             head(swa)),
            (nest.map_structure(tail, xa), None if ya is None else nest.map_structure(tail, ya),
             tail(swa)))
