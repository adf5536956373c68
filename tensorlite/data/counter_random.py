"""Infinite sources: `Dataset.counter` (tf.data.experimental.Counter) and `Dataset.random`
(tf.data.experimental.RandomDataset).

Example:
    >>> [int(x) for x in tf.data.Dataset.counter(start=2, step=5).take(3)]
    [2, 7, 12]
"""
import itertools

import numpy as np

from tensorlite.data.dataset import INFINITE, DatasetV2
from tensorlite.data.iterator import RawIterator
from tensorlite.framework import dtypes, errors, random_context
from tensorlite.framework.tensor import wrap
from tensorlite.framework.tensor_spec import TensorSpec


def _scalar(value, what):
    numpy = getattr(value, "numpy", None)
    arr = np.asarray(numpy() if callable(numpy) else value)
    if arr.shape != ():
        raise errors.InvalidArgumentError(None, None, f"counter: {what} must be a scalar, "
                                          f"got shape {arr.shape}")
    return arr.item()


class _ScalarStream(DatasetV2):
    """A source of scalars of dtype `_dtype`, forever."""

    _dtype = dtypes.int64

    def _compute_spec(self):
        return TensorSpec([], self._dtype)

    def _cardinality(self):
        return INFINITE


class CounterDataset(_ScalarStream):
    """start, start + step, start + 2*step, ... forever, in `dtype`."""

    _name = "Counter"

    def __init__(self, start=0, step=1, dtype=dtypes.int64, name=None):
        self._dtype = dtypes.as_dtype(dtype)
        if not (self._dtype.is_integer or self._dtype.is_floating):
            raise TypeError(f"counter: dtype must be an integer or floating dtype, got "
                            f"{self._dtype.name}")
        self._start, self._step = _scalar(start, "start"), _scalar(step, "step")

    def _describe(self):
        return f"start={self._start}, step={self._step}"

    def _make_iterator(self, ctx):
        return _CounterIterator(self._start, self._step, self._dtype.as_numpy_dtype)


class _CounterIterator(RawIterator):
    def __init__(self, start, step, np_dtype):
        self._i, self._start, self._step, self._np = 0, start, step, np_dtype

    def next(self):
        v = self._start + self._i * self._step
        self._i += 1
        return wrap(np.array(v, dtype=self._np))

    def save(self):
        return self._i

    def restore(self, state):
        self._i = state


def Counter(start=0, step=1, dtype=dtypes.int64):  # noqa: N802 - TF's spelling
    """`tf.data.experimental.Counter`: `Dataset.counter(start, step, dtype)`."""
    return CounterDataset(start, step, dtype)


class RandomDataset(_ScalarStream):
    """`tf.data.experimental.RandomDataset` / `Dataset.random`: uniformly distributed int64
    scalars in [0, 2**32), as TF's, forever. With a seed (or the global seed) the sequence is reproducible; each
    iteration repeats it unless `rerandomize_each_iteration=True`, when iteration k draws
    the k-th deterministic sequence of that seed (TF's values themselves come from TF's
    Philox kernel: the same seed gives different numbers here than in TF)."""

    _name = "Random"

    def __init__(self, seed=None, rerandomize_each_iteration=None, name=None):
        if seed is None:
            seed = random_context.global_seed()
        self._seed = None if seed is None else int(_scalar(seed, "seed")) % (1 << 64)
        self._rerandomize = bool(rerandomize_each_iteration)
        self._epochs = itertools.count()
        # without a seed: one random seed per dataset, so epochs still repeat by default
        self._fixed = np.random.SeedSequence().entropy if self._seed is None else None

    def _describe(self):
        return f"seed={self._seed}"

    def _make_iterator(self, ctx):
        epoch = next(self._epochs) if self._rerandomize else 0
        base = self._seed if self._seed is not None else self._fixed
        return _RandomIterator([base, epoch])


class _RandomIterator(RawIterator):
    def __init__(self, seed):
        self._rng = np.random.Generator(np.random.Philox(np.random.SeedSequence(seed)))

    def next(self):
        # TF's RandomDataset yields a uint32 draw as int64: values in [0, 2**32)
        return wrap(np.array(self._rng.integers(0, 1 << 32, dtype=np.int64)))

    def save(self):
        return self._rng.bit_generator.state

    def restore(self, state):
        self._rng.bit_generator.state = state


DatasetV2.counter = staticmethod(
    lambda start=0, step=1, dtype=dtypes.int64, name=None: CounterDataset(start, step, dtype))
DatasetV2.random = staticmethod(
    lambda seed=None, rerandomize_each_iteration=None, name=None: RandomDataset(
        seed, rerandomize_each_iteration))
