"""Dataset sources: range, from_tensors, from_tensor_slices, from_generator, zip,
concatenate, sample_from_datasets and choose_from_datasets."""
import numpy as np

from tensorlite.data import composite
from tensorlite.data import structure
from tensorlite.data.dataset import INFINITE, UNKNOWN, DatasetV2  # noqa: F401
from tensorlite.data.iterator import RawIterator
from tensorlite.framework import dtypes, errors, nest
from tensorlite.framework.convert import convert_to_tensor, to_numpy
from tensorlite.framework.tensor import wrap
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.tensor_spec import TensorSpec


# -- range --------------------------------------------------------------------------------------
class RangeDataset(DatasetV2):
    _name = "Range"

    def __init__(self, start, stop, step, dtype):
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "Dataset.range: step must not be 0")
        self._range = (start, stop, step)
        self._dtype = dtypes.as_dtype(dtype)

    def _compute_spec(self):
        return TensorSpec([], self._dtype)

    def _cardinality(self):
        return len(range(*self._range))

    def _describe(self):
        return "start=%d, stop=%d, step=%d" % self._range

    def _make_iterator(self, ctx):
        return _RangeIterator(self._range, self._dtype.as_numpy_dtype)


class _RangeIterator(RawIterator):
    def __init__(self, rng, np_dtype):
        self._next, self._stop, self._step = rng
        self._np = np_dtype

    def next(self):
        v = self._next
        if (self._step > 0 and v >= self._stop) or (self._step < 0 and v <= self._stop):
            raise StopIteration
        self._next = v + self._step
        return wrap(np.array(v, dtype=self._np))

    def save(self):
        return self._next

    def restore(self, state):
        self._next = state


def _range(*args, output_type=dtypes.int64, name=None):
    """`Dataset.range(stop)`, `range(start, stop[, step])`: int64 scalars."""
    ints = [int(np.asarray(a)) for a in args]
    if not 1 <= len(ints) <= 3:
        raise ValueError("Dataset.range takes 1 to 3 arguments (start, stop, step)")
    start, stop, step = (0, ints[0], 1) if len(ints) == 1 else (ints + [1])[:3]
    return RangeDataset(start, stop, step, output_type)


# -- from_tensors / from_tensor_slices ----------------------------------------------------------
class FromTensorsDataset(DatasetV2):
    _name = "FromTensors"

    def _label(self):
        return "Tensor"

    def __init__(self, element):
        self._element = structure.to_element(element, "from_tensors")

    def _compute_spec(self):
        return structure.spec_of(self._element)

    def _cardinality(self):
        return 1

    def _make_iterator(self, ctx):
        return _SlicesIterator([self._element], 1, lambda e, i: e[0])


class _SlicesIterator(RawIterator):
    def __init__(self, data, n, get):
        self._data, self._n, self._get, self._i = data, n, get, 0

    def next(self):
        i = self._i
        if i >= self._n:
            raise StopIteration
        self._i = i + 1
        return self._get(self._data, i)

    def save(self):
        return self._i

    def restore(self, state):
        self._i = state


class FromTensorSlicesDataset(DatasetV2):
    _name = "FromTensorSlices"

    def __init__(self, tensors):
        element = structure.to_element(tensors, "from_tensor_slices")
        flat = nest.flatten(element)
        if not flat:
            raise ValueError("from_tensor_slices needs at least one tensor")
        sizes = set()
        for t in flat:
            if t.shape.rank == 0:
                raise errors.InvalidArgumentError(
                    None, None, "from_tensor_slices: every component must have rank >= 1 (the "
                    "first dimension is sliced); got a scalar. Use from_tensors for scalars")
            sizes.add(t.shape[0])
        if len(sizes) > 1:
            raise errors.InvalidArgumentError(
                None, None, f"from_tensor_slices: all components must have the same size in "
                f"dimension 0, got sizes {sorted(sizes)}")
        self._element = element
        self._arrays = [composite.values_of(t) for t in flat]
        self._n = sizes.pop()

    def _compute_spec(self):
        return nest.map_structure(composite.row_spec, self._element)

    def _cardinality(self):
        return self._n

    def _describe(self):
        return f"{self._n} slices"

    def _label(self):
        return "TensorSlice"

    def _make_iterator(self, ctx):
        arrays, like = self._arrays, self._element
        if len(arrays) == 1 and not isinstance(like, (tuple, dict)):
            return _SlicesIterator(arrays[0], self._n, composite.row)
        return _SlicesIterator(arrays, self._n, lambda arrs, i: nest.pack_like(
            like, [composite.row(a, i) for a in arrs]))


# -- from_generator -----------------------------------------------------------------------------
def _signature(output_types, output_shapes, output_signature):
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError("from_generator: give either output_signature or "
                            "output_types/output_shapes, not both")
        return output_signature
    if output_types is None:
        raise TypeError("from_generator: output_signature (or the older output_types) is "
                        "required")
    if output_shapes is None:
        return nest.map_structure(lambda t: TensorSpec(None, t), output_types)
    return _map2(output_types, output_shapes)


class FromGeneratorDataset(DatasetV2):
    _name = "FromGenerator"

    def __init__(self, generator, output_types=None, output_shapes=None, args=None,
                 output_signature=None, name=None):
        if not callable(generator):
            raise TypeError("from_generator: `generator` must be a callable that returns an "
                            "iterator")
        self._spec_decl = _signature(output_types, output_shapes, output_signature)
        self._generator = generator
        self._args = tuple(convert_to_tensor(a) for a in (args or ()))

    def _compute_spec(self):
        return self._spec_decl

    def _label(self):
        return f"Generator({getattr(self._generator, '__name__', 'generator')})"

    def _make_iterator(self, ctx):
        return _GeneratorIterator(self)


def _map2(types, shapes):
    """Pairs output_types with output_shapes (shapes are tuples of ints at the leaves)."""
    if isinstance(types, dict):
        return {k: _map2(types[k], shapes[k]) for k in types}
    if isinstance(types, tuple):
        return tuple(_map2(t, s) for t, s in zip(types, shapes))
    return TensorSpec(shapes, types)


class _GeneratorIterator(RawIterator):
    def __init__(self, ds):
        self._ds = ds
        self._it = None
        self._index = 0

    def next(self):
        if self._it is None:
            args = [a.numpy() for a in self._ds._args]
            self._it = iter(self._ds._generator(*args))
        value = next(self._it)
        element = _convert_to_spec(value, self._ds._spec_decl, self._index)
        self._index += 1
        return element

    def save(self):
        raise errors.UnimplementedError(
            None, None, "from_generator keeps its position inside a Python generator, which "
            "cannot be checkpointed; checkpoint a pipeline built from files or tensors, or "
            "cache() the generator's output first")


def _convert_to_spec(value, spec, index):
    where = f"from_generator element {index}"
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            raise errors.InvalidArgumentError(None, None, f"{where}: expected a dict with keys "
                                              f"{sorted(spec)}, got {value!r:.80}")
        return {k: _convert_to_spec(value[k], spec[k], index) for k in spec}
    if isinstance(spec, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(spec):
            raise errors.InvalidArgumentError(
                None, None, f"{where}: the generator yielded {value!r:.80} but the declared "
                f"structure has {len(spec)} components")
        return tuple(_convert_to_spec(v, s, index) for v, s in zip(value, spec))
    try:
        arr = to_numpy(value, spec.dtype, allow_cast=False) if not hasattr(value, "numpy") \
            else to_numpy(np.asarray(value), spec.dtype)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: `generator` yielded an element that could not be converted "
            f"to the expected type {spec.dtype.name}: {e}") from None
    if not spec.shape.is_compatible_with(arr.shape):
        raise errors.InvalidArgumentError(
            None, None, f"{where}: `generator` yielded an element of shape "
            f"{TensorShape(arr.shape)} where an element of shape {spec.shape} was expected")
    return wrap(arr)


# -- zip / concatenate --------------------------------------------------------------------------
class ZipDataset(DatasetV2):
    _name = "Zip"

    def __init__(self, datasets):
        for d in nest.flatten(datasets):
            if not isinstance(d, DatasetV2):
                raise TypeError(f"Dataset.zip expects a (nested) structure of datasets, got "
                                f"{type(d).__name__}")
        self._structure = datasets
        self._inputs = tuple(nest.flatten(datasets))

    def _compute_spec(self):
        return nest.pack_like(self._structure, [d.element_spec for d in self._inputs])

    def _cardinality(self):
        cards = [d._cardinality() for d in self._inputs]
        finite = [c for c in cards if c >= 0]
        if finite:
            return min(finite)
        return INFINITE if all(c == INFINITE for c in cards) else UNKNOWN

    def _make_iterator(self, ctx):
        return _ZipIterator([d._make_iterator(ctx) for d in self._inputs], self._structure)


class _ZipIterator(RawIterator):
    def __init__(self, its, like):
        self._its, self._like = its, like

    def next(self):
        return nest.pack_like(self._like, [it.next() for it in self._its])

    def save(self):
        return [it.save() for it in self._its]

    def restore(self, state):
        for it, s in zip(self._its, state):
            it.restore(s)

    def close(self):
        for it in self._its:
            it.close()


class ConcatenateDataset(DatasetV2):
    _name = "Concatenate"

    def __init__(self, first, second):
        a, b = first.element_spec, second.element_spec
        if structure._structure_key(a) != structure._structure_key(b) or any(
                x.dtype != y.dtype for x, y in zip(nest.flatten(a), nest.flatten(b))):
            raise TypeError(f"Incompatible dataset elements for concatenate: {a} vs {b}")
        self._inputs = (first, second)

    def _compute_spec(self):
        return structure.relax(self._inputs[0].element_spec, self._inputs[1].element_spec)

    def _cardinality(self):
        a, b = (d._cardinality() for d in self._inputs)
        if INFINITE in (a, b):
            return INFINITE
        return UNKNOWN if UNKNOWN in (a, b) else a + b

    def _make_iterator(self, ctx):
        return _SequenceIterator(self._inputs, ctx)


class _SequenceIterator(RawIterator):
    """Iterates datasets one after another."""

    def __init__(self, datasets, ctx):
        self._datasets, self._ctx = datasets, ctx
        self._k = 0
        self._it = datasets[0]._make_iterator(ctx)

    def next(self):
        while True:
            try:
                return self._it.next()
            except StopIteration:
                self._it.close()
                self._k += 1
                if self._k >= len(self._datasets):
                    self._k = len(self._datasets) - 1
                    raise
                self._it = self._datasets[self._k]._make_iterator(self._ctx)

    def save(self):
        return (self._k, self._it.save())

    def restore(self, state):
        self._k, inner = state
        self._it.close()
        self._it = self._datasets[self._k]._make_iterator(self._ctx)
        self._it.restore(inner)

    def close(self):
        self._it.close()


# -- sampling -----------------------------------------------------------------------------------
class ChooseDataset(DatasetV2):
    """Picks each element from datasets[k], k from a selector iterator."""

    _name = "ChooseFromDatasets"

    def __init__(self, datasets, selector, stop_on_empty, describe):
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        self._inputs = tuple(datasets) + (selector,)
        self._stop_on_empty = stop_on_empty
        self._what = describe

    def _compute_spec(self):
        spec = self._inputs[0].element_spec
        for d in self._inputs[1:-1]:
            spec = structure.relax(spec, d.element_spec)
        return spec

    def _describe(self):
        return self._what

    def _make_iterator(self, ctx):
        return _ChooseIterator([d._make_iterator(ctx) for d in self._inputs[:-1]],
                               self._inputs[-1]._make_iterator(ctx), self._stop_on_empty)


class _ChooseIterator(RawIterator):
    def __init__(self, its, selector, stop_on_empty):
        self._its, self._sel, self._stop = its, selector, stop_on_empty
        self._done = [False] * len(its)

    def next(self):
        while not all(self._done):
            k = int(self._sel.next())
            if not 0 <= k < len(self._its):
                raise errors.InvalidArgumentError(
                    None, None, f"choose_from_datasets: selector value {k} is out of range "
                    f"[0, {len(self._its)})")
            if self._done[k]:
                continue
            try:
                return self._its[k].next()
            except StopIteration:
                self._done[k] = True
                if self._stop:
                    raise
        raise StopIteration

    def save(self):
        return ([it.save() for it in self._its], self._sel.save(), list(self._done))

    def restore(self, state):
        its, sel, done = state
        for it, s in zip(self._its, its):
            it.restore(s)
        self._sel.restore(sel)
        self._done = done

    def close(self):
        for it in self._its + [self._sel]:
            it.close()


class _WeightedSelector(DatasetV2):
    """An infinite stream of dataset indices drawn with `weights` from a seeded RNG; while
    some datasets are exhausted the choice renormalises (the chooser skips them)."""

    _name = "WeightedSelector"

    def __init__(self, weights, seed):
        w = np.asarray(weights, dtype=np.float64)
        if np.any(w < 0) or w.sum() <= 0:
            raise errors.InvalidArgumentError(None, None, "sample_from_datasets: weights must "
                                              "be non-negative and not all zero")
        self._p = w / w.sum()
        self._seed = seed

    def _compute_spec(self):
        return TensorSpec([], dtypes.int64)

    def _cardinality(self):
        return INFINITE

    def _make_iterator(self, ctx):
        return _SelectorIterator(self._p, self._seed)


class _SelectorIterator(RawIterator):
    _profiled = False  # no span of its own yet (tracing.hook_next)
    def __init__(self, p, seed):
        self._p = p
        self._rng = np.random.default_rng(seed)

    def next(self):
        return int(self._rng.choice(len(self._p), p=self._p))

    def save(self):
        return self._rng.bit_generator.state

    def restore(self, state):
        self._rng.bit_generator.state = state


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    """`Dataset.sample_from_datasets`: each element from a randomly chosen dataset."""
    datasets = list(datasets)
    if weights is None:
        weights = [1.0] * len(datasets)
    weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    if len(weights) != len(datasets):
        raise ValueError(f"sample_from_datasets: got {len(weights)} weights for "
                         f"{len(datasets)} datasets")
    return ChooseDataset(datasets, _WeightedSelector(weights, seed), stop_on_empty_dataset,
                         f"weights={weights.tolist()}")


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    """`Dataset.choose_from_datasets`: element i from datasets[choice_dataset[i]]."""
    spec = choice_dataset.element_spec
    if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.int64 or spec.shape.rank != 0:
        raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar "
                        "`tf.int64` tensors.")
    return ChooseDataset(datasets, choice_dataset, stop_on_empty_dataset, "")


def _zip(*datasets, name=None):
    if len(datasets) == 1:
        datasets = datasets[0]
    return ZipDataset(datasets)


DatasetV2.range = staticmethod(_range)
DatasetV2.from_tensors = staticmethod(lambda tensors, name=None: FromTensorsDataset(tensors))
DatasetV2.from_tensor_slices = staticmethod(
    lambda tensors, name=None: FromTensorSlicesDataset(tensors))
DatasetV2.from_generator = staticmethod(FromGeneratorDataset)
DatasetV2.zip = staticmethod(_zip)
DatasetV2.concatenate = lambda self, dataset, name=None: ConcatenateDataset(self, dataset)
DatasetV2.sample_from_datasets = staticmethod(sample_from_datasets)
DatasetV2.choose_from_datasets = staticmethod(choose_from_datasets)
