"""shuffle: a buffer of `buffer_size` elements, each output drawn uniformly from it.

Seeds follow TF: an explicit seed (or the global seed) makes the order reproducible, and
with `reshuffle_each_iteration=True` (the default) each new iteration — each epoch under
`repeat()` — draws a fresh order from that seed. The buffer's bytes count against the
pipeline's RAM budget.
"""
import itertools

import numpy as np

from tensorlite.data.dataset import DatasetV2
from tensorlite.data.stats import element_nbytes
from tensorlite.data.structure import from_numpy_element, to_numpy_element
from tensorlite.data.transforms import PassThroughIterator, UnaryDataset
from tensorlite.framework import errors, random_context


class ShuffleDataset(UnaryDataset):
    _name = "Shuffle"

    def __init__(self, input_dataset, buffer_size, seed=None, reshuffle_each_iteration=None,
                 name=None):
        super().__init__(input_dataset)
        self._size = int(np.asarray(buffer_size))
        if self._size <= 0:
            raise errors.InvalidArgumentError(None, None, f"shuffle: buffer_size must be greater "
                                              f"than zero, got {self._size}")
        gseed = random_context.global_seed()
        if seed is None and gseed is not None:
            seed = gseed
        # TF's seeds are any int64; NumPy's SeedSequence wants them nonnegative
        self._seed = None if seed is None else int(seed) % (1 << 64)
        self._reshuffle = True if reshuffle_each_iteration is None else \
            bool(reshuffle_each_iteration)
        self._epochs = itertools.count()
        self._fixed = np.random.SeedSequence(self._seed).entropy if self._seed is None else None

    def _describe(self):
        return f"buffer_size={self._size}, seed={self._seed}"

    def _label(self):
        return f"Shuffle({self._size})"

    def _rng(self):
        epoch = next(self._epochs) if self._reshuffle else 0
        base = self._seed if self._seed is not None else self._fixed
        if self._seed is None and self._reshuffle:
            return np.random.default_rng()
        return np.random.default_rng([base, epoch])

    def _make_iterator(self, ctx):
        return _ShuffleIterator(self._input._make_iterator(ctx), self._size, self._rng(), ctx,
                                f"Shuffle(buffer_size={self._size})")


class _ShuffleIterator(PassThroughIterator):
    def __init__(self, inner, size, rng, ctx, stage):
        super().__init__(inner)
        self._size, self._rng, self._ram, self._stage = size, rng, ctx.ram, stage
        self._buf = []
        self._bytes = []
        self._exhausted = False

    def _fill(self):
        while not self._exhausted and len(self._buf) < self._size:
            try:
                e = self._in.next()
            except StopIteration:
                self._exhausted = True
                break
            n = element_nbytes(e)
            self._ram.reserve(self._stage, n)
            self._buf.append(e)
            self._bytes.append(n)

    def next(self):
        self._fill()
        if not self._buf:
            raise StopIteration
        k = int(self._rng.integers(len(self._buf)))
        buf, sizes = self._buf, self._bytes
        buf[k], buf[-1] = buf[-1], buf[k]
        sizes[k], sizes[-1] = sizes[-1], sizes[k]
        self._ram.release(self._stage, sizes.pop())
        return buf.pop()

    def _trace_args(self):
        return {"buffer": len(self._buf), "capacity": self._size}

    def save(self):
        return ([to_numpy_element(e) for e in self._buf], self._rng.bit_generator.state,
                self._exhausted, self._in.save())

    def restore(self, state):
        buf, rng_state, self._exhausted, inner = state
        self._ram.release(self._stage, sum(self._bytes))
        self._buf = [from_numpy_element(e) for e in buf]
        self._bytes = [element_nbytes(e) for e in self._buf]
        self._ram.reserve(self._stage, sum(self._bytes))
        self._rng.bit_generator.state = rng_state
        self._in.restore(inner)

    def close(self):
        self._ram.release(self._stage, sum(self._bytes))
        self._buf, self._bytes = [], []
        self._in.close()


DatasetV2.shuffle = lambda self, buffer_size, seed=None, reshuffle_each_iteration=None, \
    name=None: ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)
