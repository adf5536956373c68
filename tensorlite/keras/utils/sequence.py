"""`tf.keras.utils.Sequence` and `PyDataset`: batches by index, for fit/evaluate/predict.

A subclass implements `__len__` (batches per epoch) and `__getitem__(index)` (one batch:
x, (x, y) or (x, y, sample_weight)); `on_epoch_end` runs after each epoch (reshuffle
there). With `workers` > 1 (PyDataset's constructor, or fit's `workers=` for a Sequence)
batches are computed ahead in a thread pool (processes with use_multiprocessing=True),
at most `max_queue_size` ahead, and still delivered in index order.

Example:
    >>> class Batches(tf.keras.utils.Sequence):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return np.full((8, 2), i, "float32"), np.zeros((8, 1), "float32")
    >>> model.fit(Batches(), epochs=2)  # doctest: +SKIP
"""
import collections
import concurrent.futures

__all__ = ["Sequence", "PyDataset", "SequenceBatches"]


class PyDataset:
    """Base class of index-addressed datasets (Keras 3's name; `Sequence` is Keras 2's)."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self):
        return getattr(self, "_workers", 1)

    @property
    def use_multiprocessing(self):
        return getattr(self, "_use_multiprocessing", False)

    @property
    def max_queue_size(self):
        return getattr(self, "_max_queue_size", 10)

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__(index)")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __len__()")

    @property
    def num_batches(self):
        return len(self)

    def on_epoch_end(self):
        """Called after every epoch (shuffle here)."""

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


class Sequence(PyDataset):
    """`tf.keras.utils.Sequence` (Keras 2): the same protocol; workers come from fit."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


def _get(seq, index):
    return seq[index]


class SequenceBatches:
    """What fit/evaluate/predict iterate for a Sequence: one pass per epoch in index order,
    prefetched by `workers`, then `on_epoch_end`."""

    def __init__(self, seq, steps=None, workers=None, use_multiprocessing=None,
                 max_queue_size=None):
        self.seq = seq
        self.steps_given = steps
        self.workers = max(1, int(workers if workers is not None else seq.workers))
        self.processes = use_multiprocessing if use_multiprocessing is not None else \
            seq.use_multiprocessing
        self.queue = max(1, int(max_queue_size or seq.max_queue_size))

    def steps(self):
        return self.steps_given if self.steps_given is not None else len(self.seq)

    def _items(self, n):
        if self.workers == 1:
            for i in range(n):
                yield self.seq[i]
            return
        pool_cls = concurrent.futures.ProcessPoolExecutor if self.processes else \
            concurrent.futures.ThreadPoolExecutor
        with pool_cls(self.workers) as pool:
            pending = collections.deque()
            index = 0
            while index < n or pending:
                while index < n and len(pending) < self.queue:
                    pending.append(pool.submit(_get, self.seq, index))
                    index += 1
                yield pending.popleft().result()

    def epoch(self):
        from tensorlite.keras.engine.data_adapter import (  # noqa: PLC0415
            pack_x_y_sample_weight, unpack)
        for item in self._items(min(self.steps(), len(self.seq))):
            yield pack_x_y_sample_weight(*unpack(item))
        self.seq.on_epoch_end()
