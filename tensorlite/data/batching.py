"""batch, padded_batch, unbatch and rebatch."""
import numpy as np

from tensorlite.data import composite
from tensorlite.data.dataset import (INFINITE, UNKNOWN, DatasetV2, batch_size_arg,
                                     parallel_calls)
from tensorlite.data.transforms import PassThroughIterator, UnaryDataset
from tensorlite.framework import dtypes, errors, nest
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.ops.array_ops import checked_dims


def _stack_component(arrays, k, first_index):
    try:
        return np.stack(arrays)
    except ValueError:
        shapes = [a.shape for a in arrays]
        bad = next(i for i, s in enumerate(shapes) if s != shapes[0])
        raise errors.InvalidArgumentError(
            None, None, f"Cannot batch tensors with different shapes in component {k}. First "
            f"element had shape {list(shapes[0])} and element {first_index + bad} had shape "
            f"{list(shapes[bad])}; use padded_batch, or make the shapes equal first") from None


class BatchDataset(UnaryDataset):
    _name = "Batch"

    def __init__(self, input_dataset, batch_size, drop_remainder=False, num_parallel_calls=None,
                 deterministic=None, name=None):
        super().__init__(input_dataset)
        self._batch = batch_size_arg(batch_size, "batch")
        self._drop = bool(drop_remainder)
        self._parallel = parallel_calls(num_parallel_calls, "batch")

    _ragged = False  # ragged_batch: every component batches into a RaggedTensor

    def _compute_spec(self):
        dim = self._batch if self._drop else None
        return nest.map_structure(
            lambda s: composite.batched_spec(s, dim, self._ragged) or
            TensorSpec(TensorShape([dim]) + s.shape, s.dtype), self._input.element_spec)

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return n // self._batch if self._drop else -(-n // self._batch)

    def _describe(self):
        return f"batch_size={self._batch}, drop_remainder={self._drop}"

    def _label(self):
        return f"{self._name}({self._batch})"

    def _make_iterator(self, ctx):
        it = _BatchIterator(self._input._make_iterator(ctx), self._batch, self._drop,
                            _stack_component)
        it._ragged = self._ragged
        if self._ragged:  # components whose declared shape is not fully known stay ragged
            it._ragged_parts = [composite.unknown_shape(sp)
                                for sp in nest.flatten(self._input.element_spec)]
        return it


class _BatchIterator(PassThroughIterator):
    _position = "_seen"  # saved beside the input's state
    _ragged = False
    _ragged_parts = ()

    def __init__(self, inner, size, drop, combine):
        super().__init__(inner)
        self._size, self._drop, self._combine = size, drop, combine
        self._seen = 0

    def next(self):
        inner = self._in
        if type(inner).__dict__.get("next_lines") is not None:  # lines of text files
            return self._next_lines(inner)
        items = []
        try:
            for _ in range(self._size):
                items.append(inner.next())
        except StopIteration:
            if not items or (self._drop and len(items) < self._size):
                raise
        first = self._seen
        self._seen += len(items)
        like = items[0]
        flats = [nest.flatten(e) for e in items]
        comps = []
        for k in range(len(flats[0])):
            leaves = [f[k] for f in flats]
            if self._ragged and leaves[0].shape.rank and not self._ragged_parts[k] and \
                    len({t._value.shape for t in leaves}) > 1:
                self._ragged_parts[k] = True  # shapes vary: this component stays ragged
            # rows of a ragged tensor (from_tensor_slices, unbatch) batch into one again
            rows = composite.ragged_rows(leaves) and leaves[0].shape.rank
            if any(type(t) is not Tensor for t in leaves) or rows or (
                    self._ragged and leaves[0].shape.rank and self._ragged_parts[k]):
                comps.append(composite.batch_rows(leaves, self._ragged or bool(rows)))
            else:
                comps.append(wrap(self._combine([t._value for t in leaves], k, first)))
        return nest.pack_like(like, comps)

    def _next_lines(self, inner):
        """A batch of lines read in one go (TextLineDataset().batch(n)): the same batches,
        without a scalar Tensor per line."""
        lines = inner.next_lines(self._size)
        if not len(lines) or (self._drop and len(lines) < self._size):
            raise StopIteration
        self._seen += len(lines)
        if self._ragged:
            raise TypeError("ragged_batch of scalar lines")
        return wrap(lines)


class PaddedBatchDataset(BatchDataset):
    _name = "PaddedBatch"

    def __init__(self, input_dataset, batch_size, padded_shapes=None, padding_values=None,
                 drop_remainder=False, name=None):
        super().__init__(input_dataset, batch_size, drop_remainder)
        spec = input_dataset.element_spec
        if padded_shapes is None:
            padded_shapes = nest.map_structure(lambda s: TensorShape([None] * s.shape.rank),
                                               spec)
        else:
            padded_shapes = _pack_shapes(spec, padded_shapes)
        self._shapes = padded_shapes
        if padding_values is None:
            padding_values = nest.map_structure(
                lambda s: b"" if s.dtype.is_string else 0, spec)
        elif not isinstance(padding_values, (tuple, dict)):
            padding_values = nest.map_structure(lambda s: padding_values, spec)
        self._values = padding_values
        _check_padding(nest.flatten(spec), nest.flatten(self._shapes),
                       nest.flatten(padding_values))

    def _compute_spec(self):
        dim = self._batch if self._drop else None
        specs = nest.flatten(self._input.element_spec)
        shapes = nest.flatten(self._shapes)
        flat = [TensorSpec(TensorShape([dim]) + TensorShape(
            [d if d is not None and d >= 0 else None for d in sh.as_list()]), s.dtype)
            for s, sh in zip(specs, shapes)]
        return nest.pack_like(self._input.element_spec, flat)

    def _make_iterator(self, ctx):
        shapes = [sh.as_list() for sh in nest.flatten(self._shapes)]
        values = [np.asarray(v.numpy() if hasattr(v, "numpy") else v)
                  for v in nest.flatten(self._values)]

        def combine(arrays, k, first):
            target = [max(a.shape[i] for a in arrays) if d is None or d < 0 else d
                      for i, d in enumerate(shapes[k])]
            checked_dims([len(arrays)] + target, "PaddedBatch", dtypes.as_dtype(
                arrays[0].dtype if arrays[0].dtype.kind not in "SUO" else "string"))
            out = np.full([len(arrays)] + target, values[k], dtype=arrays[0].dtype)
            for j, a in enumerate(arrays):
                if a.ndim != len(target) or any(s > t for s, t in zip(a.shape, target)):
                    raise errors.InvalidArgumentError(
                        None, None, f"padded_batch: element {first + j} component {k} has "
                        f"shape {list(a.shape)}, larger than the padded shape {target}")
                out[(j,) + tuple(slice(0, s) for s in a.shape)] = a
            return out
        return _BatchIterator(self._input._make_iterator(ctx), self._batch, self._drop, combine)


def _check_padding(specs, shapes, values):
    """TensorFlow's checks of padded_batch's arguments, made when the dataset is built:
    each padded shape fits its component (ValueError), each padding value is a scalar
    (ValueError) of the component's dtype (TypeError)."""
    for k, (spec, shape, value) in enumerate(zip(specs, shapes, values)):
        dims = shape.as_list() if shape.rank is not None else None
        known = spec.shape.as_list() if spec.shape.rank is not None else None
        if dims is not None and (
                any(d is not None and d < -1 for d in dims) or
                (known is not None and (len(dims) != len(known) or any(
                    d is not None and d >= 0 and k_ is not None and d < k_
                    for d, k_ in zip(dims, known))))):
            raise ValueError(f"padded_batch: the padded shape {dims} is not compatible with "
                             f"the shape {known} of component {k}")
        arr = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        if arr.ndim:
            raise ValueError(f"padded_batch: padding value of component {k} must be a scalar, "
                             f"got shape {list(arr.shape)}")
        if spec.dtype.is_string != (arr.dtype.kind in "SUO"):
            raise TypeError(f"padded_batch: padding value {arr[()]!r} of component {k} does "
                            f"not match its dtype {spec.dtype.name}")


def _pack_shapes(spec, shapes):
    if isinstance(spec, dict):
        return {k: _pack_shapes(spec[k], shapes[k]) for k in spec}
    if isinstance(spec, tuple):
        return tuple(_pack_shapes(s, sh) for s, sh in zip(spec, shapes))
    return TensorShape(shapes)


class UnbatchDataset(UnaryDataset):
    _name = "Unbatch"

    def _compute_spec(self):
        def strip(s):
            ragged = composite.unbatched_spec(s)
            if ragged is not None:
                return ragged
            if s.shape.rank == 0:
                raise errors.InvalidArgumentError(None, None, "unbatch: every component must "
                                                  "have rank >= 1")
            return TensorSpec(s.shape[1:], s.dtype)
        return nest.map_structure(strip, self._input.element_spec)

    def _cardinality(self):
        return INFINITE if self._input._cardinality() == INFINITE else UNKNOWN

    def _make_iterator(self, ctx):
        return _UnbatchIterator(self._input._make_iterator(ctx))


class _UnbatchIterator(PassThroughIterator):
    def __init__(self, inner):
        super().__init__(inner)
        self._cur, self._like, self._i, self._n = None, None, 0, 0

    def next(self):
        while self._cur is None or self._i >= self._n:
            element = self._in.next()
            flat = [composite.values_of(t) for t in nest.flatten(element)]
            sizes = {a.shape[0] if a.ndim else -1 for a in flat}
            if len(sizes) != 1 or -1 in sizes:
                raise errors.InvalidArgumentError(
                    None, None, f"unbatch: components must have rank >= 1 and the same first "
                    f"dimension, got shapes {[list(a.shape) for a in flat]}")
            self._cur, self._like, self._i, self._n = flat, element, 0, sizes.pop()
        i = self._i
        self._i += 1
        return nest.pack_like(self._like, [composite.row(a, i) for a in self._cur])

    def save(self):
        pending = None if self._cur is None else (self._cur, self._i, self._n,
                                                  nest.map_structure(lambda t: None, self._like))
        return (pending, self._in.save())

    def restore(self, state):
        pending, inner = state
        self._in.restore(inner)
        if pending is None:
            self._cur = None
        else:
            self._cur, self._i, self._n, like = pending
            self._like = like


DatasetV2.batch = lambda self, batch_size, drop_remainder=False, num_parallel_calls=None, \
    deterministic=None, name=None: BatchDataset(self, batch_size, drop_remainder,
                                                num_parallel_calls, deterministic)
DatasetV2.padded_batch = lambda self, batch_size, padded_shapes=None, padding_values=None, \
    drop_remainder=False, name=None: PaddedBatchDataset(self, batch_size, padded_shapes,
                                                        padding_values, drop_remainder)
DatasetV2.unbatch = lambda self, name=None: UnbatchDataset(self)
DatasetV2.rebatch = lambda self, batch_size, drop_remainder=False, name=None: \
    BatchDataset(UnbatchDataset(self), batch_size, drop_remainder)


class RaggedBatchDataset(BatchDataset):
    """`Dataset.ragged_batch`: components of any shapes batch into RaggedTensors."""
    _name = "RaggedBatch"
    _ragged = True


DatasetV2.ragged_batch = lambda self, batch_size, drop_remainder=False, \
    row_splits_dtype=None, name=None: RaggedBatchDataset(self, batch_size, drop_remainder)
