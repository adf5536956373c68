"""`tf.data.experimental.at(dataset, index)`: the element at `index`, computed without
iterating up to it, for the pipelines TF gives random access to: range, from_tensors,
from_tensor_slices, map, batch, skip, take, repeat, enumerate, zip, concatenate, prefetch,
cache and with_options. Any other stage (filter, flat_map, shuffle, a file reader, ...)
raises UnimplementedError naming it; an index outside [0, cardinality) raises
OutOfRangeError, with TF's messages.

Example (the TF API doc's):
    >>> ds = tf.data.Dataset.range(10)
    >>> int(tf.data.experimental.at(ds, 3))
    3
"""
import numpy as np

from tensorlite.data import composite, structure
from tensorlite.data.batching import BatchDataset
from tensorlite.data.cache import CacheDataset
from tensorlite.data.options import OptionsDataset
from tensorlite.data.prefetch import PrefetchDataset
from tensorlite.data.sources import (ConcatenateDataset, FromTensorSlicesDataset,
                                     FromTensorsDataset, RangeDataset, ZipDataset)
from tensorlite.data.transforms import (EnumerateDataset, MapDataset, RepeatDataset,
                                        SkipDataset, TakeDataset)
from tensorlite.framework import errors, nest
from tensorlite.framework.tensor import wrap


def _range(ds, i):
    start, _, step = ds._range
    return wrap(np.array(start + i * step, dtype=ds._dtype.as_numpy_dtype))


def _slices(ds, i):
    return nest.pack_like(ds._element, [composite.row(a, i) for a in ds._arrays])


def _map(ds, i):
    out = structure.call_with_element(ds._fn, element_at(ds._input, i))
    return structure.to_element(tuple(out) if type(out) is list else out, "at: map result")


def _batch(ds, i):
    n = ds._input._cardinality()
    rows = [element_at(ds._input, j) for j in range(i * ds._batch, min((i + 1) * ds._batch, n))]
    flat = [[composite.values_of(t) for t in nest.flatten(r)] for r in rows]
    if any(not isinstance(a, np.ndarray) for a in flat[0]):
        raise errors.UnimplementedError(None, None, "Random access is not implemented for a "
                                        "batch of ragged or sparse components")
    return nest.pack_like(rows[0], [wrap(np.stack(c)) for c in zip(*flat)])


def _repeat(ds, i):
    return element_at(ds._input, i % ds._input._cardinality())


def _concatenate(ds, i):
    first, second = ds._inputs
    n = first._cardinality()
    return element_at(first, i) if i < n else element_at(second, i - n)


_RULES = {
    RangeDataset: _range,
    FromTensorsDataset: lambda ds, i: ds._element,
    FromTensorSlicesDataset: _slices,
    MapDataset: _map,
    BatchDataset: _batch,
    SkipDataset: lambda ds, i: element_at(ds._input, i + max(ds._count, 0)),
    TakeDataset: lambda ds, i: element_at(ds._input, i),
    RepeatDataset: _repeat,
    EnumerateDataset: lambda ds, i: (wrap(np.array(ds._start + i, dtype=np.int64)),
                                     element_at(ds._input, i)),
    ZipDataset: lambda ds, i: nest.pack_like(ds._structure,
                                             [element_at(d, i) for d in ds._inputs]),
    ConcatenateDataset: _concatenate,
    PrefetchDataset: lambda ds, i: element_at(ds._input, i),
    CacheDataset: lambda ds, i: element_at(ds._input, i),
    OptionsDataset: lambda ds, i: element_at(ds._input, i),
}


def _check(ds):
    """Every stage of the pipeline supports random access (checked before any work)."""
    if type(ds) not in _RULES:  # exact types: padded/ragged batch are not plain batch
        raise errors.UnimplementedError(
            None, None, f"Random access is not implemented for dataset {ds._name} "
            f"({type(ds).__name__}); iterate it (e.g. skip(index).take(1)) instead")
    for d in ds._inputs:
        _check(d)


def element_at(ds, i):
    return _RULES[type(ds)](ds, i)


def at(dataset, index):
    """The element of `dataset` at position `index` (0-based)."""
    numpy = getattr(index, "numpy", None)
    i = int(np.asarray(numpy() if callable(numpy) else index))
    _check(dataset)
    n = dataset._cardinality()
    if i < 0 or (n >= 0 and i >= n):
        raise errors.OutOfRangeError(None, None, f"Index out of range [0, {n}):{i}")
    return element_at(dataset, i)
