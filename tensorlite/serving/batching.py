"""Dynamic request batching, with TF Serving's batching parameters.

Concurrent requests to one signature are queued; a batch thread takes the oldest request,
waits up to `batch_timeout_micros` for more until `max_batch_size` rows are gathered, runs
the model once on the concatenation and hands every request its rows of the outputs. When
`max_enqueued_batches` batches are already waiting, a new request is refused at once with
UnavailableError (HTTP 503) instead of growing memory without bound. Requests whose inputs
differ beyond the batch dimension are padded when `pad_variable_length_inputs` is set (with
zeros or empty strings, as TF Serving pads; outputs keep the padded length), else they form
separate batches.

Example:
    >>> batcher = Batcher(lambda inputs: model(inputs), BatchingParameters(max_batch_size=32))
    >>> future = batcher.submit({"x": np.ones((1, 4), np.float32)})
    >>> future.result()["y"].shape
    (1, 2)
"""
import collections
import concurrent.futures
import threading
import time

import numpy as np

from tensorlite.framework import errors


class _Task:
    __slots__ = ("inputs", "rows", "future", "key", "enqueued")

    def __init__(self, inputs):
        self.inputs = inputs
        sizes = {np.shape(a)[0] if np.ndim(a) else None for a in inputs.values()}
        if len(sizes) != 1 or None in sizes:
            raise errors.InvalidArgumentError(
                None, None, "Batching: every input of a request must have the same 0-th "
                "(batch) dimension")
        (self.rows,) = sizes
        self.key = tuple(sorted((n, np.shape(a)[1:], np.asarray(a).dtype.str)
                                for n, a in inputs.items()))
        self.future = concurrent.futures.Future()
        self.enqueued = time.monotonic()


class Batcher:
    """Merges concurrent calls of `run(inputs) -> outputs` (dicts of arrays, batch-major)."""

    def __init__(self, run, params, name="batcher"):
        self._run, self._p = run, params
        self._queue = collections.deque()
        self._cond = threading.Condition()
        self._closed = False
        self.batch_sizes = collections.Counter()  # rows per model call, for stats and tests
        self._threads = [threading.Thread(target=self._loop, daemon=True,
                                          name=f"tensorlite-serving-{name}-{i}")
                         for i in range(params.num_batch_threads)]
        for t in self._threads:
            t.start()

    def submit(self, inputs):
        """A Future of this request's outputs; UnavailableError when the queue is full."""
        task = _Task(inputs)
        if task.rows > self._p.max_batch_size:
            raise errors.InvalidArgumentError(
                None, None, f"Batching: the request has {task.rows} rows, more than "
                f"max_batch_size {self._p.max_batch_size}; split it into smaller requests")
        with self._cond:
            if self._closed:
                raise errors.UnavailableError(None, None, "the model version is unloading")
            queued_rows = sum(t.rows for t in self._queue)
            if queued_rows + task.rows > self._p.max_batch_size * self._p.max_enqueued_batches:
                raise errors.UnavailableError(
                    None, None, f"The batch scheduling queue is full ({self._p.max_enqueued_batches}"
                    f" batches of {self._p.max_batch_size} are waiting); retry later")
            self._queue.append(task)
            self._cond.notify()
        return task.future

    def _take_batch(self):
        """Blocks for the first task, then gathers more until the batch is full or the
        first task has waited batch_timeout_micros."""
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if not self._queue:
                return None
            deadline = self._queue[0].enqueued + self._p.batch_timeout_micros / 1e6
            while True:
                batch, rows = self._fill()
                if rows >= self._p.max_batch_size or self._closed:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            for t in batch:
                self._queue.remove(t)
            return batch

    def _fill(self):
        """The tasks the next batch would hold now (same shapes unless padding)."""
        first = self._queue[0]
        batch, rows = [], 0
        for t in self._queue:
            if rows + t.rows > self._p.max_batch_size:
                break
            if t.key != first.key and not self._compatible(first, t):
                continue
            batch.append(t)
            rows += t.rows
        return batch, rows

    def _compatible(self, a, b):
        if not self._p.pad_variable_length_inputs:
            return False
        return all(na == nb and len(sa) == len(sb) and da == db
                   for (na, sa, da), (nb, sb, db) in zip(a.key, b.key)) \
            and len(a.key) == len(b.key)

    def _loop(self):
        while True:
            batch = self._take_batch()
            if batch is None:
                return
            self._execute(batch)

    def _execute(self, batch):
        try:
            inputs = {n: _concat([t.inputs[n] for t in batch]) for n in batch[0].inputs}
            rows = sum(t.rows for t in batch)
            padded = _padded_rows(rows, self._p.allowed_batch_sizes)
            if padded > rows:  # TF Serving pads up to an allowed batch size
                inputs = {n: _pad_rows(a, padded) for n, a in inputs.items()}
            self.batch_sizes[rows] += 1
            outputs = self._run(inputs)
        except BaseException as e:  # noqa: BLE001 - every request of the batch gets it
            for t in batch:
                t.future.set_exception(e)
            return
        start = 0
        for t in batch:
            t.future.set_result({n: np.asarray(v)[start:start + t.rows]
                                 for n, v in outputs.items()})
            start += t.rows

    def close(self):
        """Stops the batch threads after the queued requests are served."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout=30)


def _padded_rows(rows, allowed):
    for size in allowed:
        if size >= rows:
            return size
    return rows


def _pad_rows(a, rows):
    pad = [(0, rows - a.shape[0])] + [(0, 0)] * (a.ndim - 1)
    return np.pad(a, pad) if a.dtype != object else np.concatenate(
        [a, np.full((rows - a.shape[0],) + a.shape[1:], b"", dtype=object)])


def _concat(arrays):
    """Concatenates along the batch axis, zero-padding other axes to the longest."""
    shapes = [a.shape for a in arrays]
    if len(set(s[1:] for s in shapes)) == 1:
        return np.concatenate(arrays) if len(arrays) > 1 else arrays[0]
    target = [max(s[i] for s in shapes) for i in range(1, len(shapes[0]))]
    out = []
    for a in arrays:
        pad = [(0, 0)] + [(0, t - d) for t, d in zip(target, a.shape[1:])]
        out.append(np.pad(a, pad, constant_values=b"" if a.dtype == object else 0))
    return np.concatenate(out)
