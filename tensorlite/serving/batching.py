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
    __slots__ = ("inputs", "rows", "future", "loop", "key", "enqueued")

    def __init__(self, inputs, loop=None):
        self.inputs = inputs
        sizes = {np.shape(a)[0] if np.ndim(a) else None for a in inputs.values()}
        if len(sizes) != 1 or None in sizes:
            raise errors.InvalidArgumentError(
                None, None, "Batching: every input of a request must have the same 0-th "
                "(batch) dimension")
        (self.rows,) = sizes
        self.key = tuple(sorted((n, np.shape(a)[1:], np.asarray(a).dtype.str)
                                for n, a in inputs.items()))
        # an asyncio future is settled on its own loop, one wake-up per batch (_settle)
        self.loop = loop
        self.future = loop.create_future() if loop is not None else \
            concurrent.futures.Future()
        self.enqueued = time.monotonic()


class Batcher:
    """Merges concurrent calls of `run(inputs) -> outputs` (dicts of arrays, batch-major)."""

    def __init__(self, run, params, name="batcher"):
        self._run, self._p = run, params
        self._queue = collections.deque()
        self._queued_rows = 0
        self._cond = threading.Condition()
        self._closed = False
        self.batch_sizes = collections.Counter()  # rows per model call, for stats and tests
        self._threads = [threading.Thread(target=self._loop, daemon=True,
                                          name=f"tensorlite-serving-{name}-{i}")
                         for i in range(params.num_batch_threads)]
        for t in self._threads:
            t.start()

    def submit(self, inputs):
        """A concurrent Future of this request's outputs; UnavailableError when the queue
        is full."""
        return self._enqueue(_Task(inputs))

    def submit_async(self, inputs):
        """An asyncio Future (of the running loop) of this request's outputs. The batch
        thread settles all of a batch's futures on a loop with one call, so a batch costs
        the event loop one wake-up, not one per request."""
        import asyncio  # noqa: PLC0415 - only async callers need it
        return self._enqueue(_Task(inputs, asyncio.get_running_loop()))

    @property
    def closed(self):
        """Whether close() was called (its version is unloading): submits are refused."""
        return self._closed

    def _enqueue(self, task):
        max_rows = self._p.max_batch_size
        if task.rows > max_rows:
            raise errors.InvalidArgumentError(
                None, None, f"Batching: the request has {task.rows} rows, more than "
                f"max_batch_size {max_rows}; split it into smaller requests")
        with self._cond:
            if self._closed:
                raise errors.UnavailableError(None, None, "the model version is unloading")
            before = self._queued_rows
            if before + task.rows > max_rows * self._p.max_enqueued_batches:
                raise errors.UnavailableError(
                    None, None, f"The batch scheduling queue is full ({self._p.max_enqueued_batches}"
                    f" batches of {max_rows} are waiting); retry later")
            self._queue.append(task)
            self._queued_rows = after = before + task.rows
            # Wake the batch threads only when there is something new for them to do: a
            # first request to wait on, or enough rows for one more full batch. Waking them
            # on every request would cost a GIL hand-over and a queue scan per request.
            if before == 0:
                self._cond.notify()
            elif before // max_rows != after // max_rows:
                self._cond.notify_all()
        return task.future

    def _take_batch(self):
        """Blocks for the first task, then gathers more until the batch is full or the
        oldest task has waited batch_timeout_micros."""
        with self._cond:
            while True:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    return None
                left = self._queue[0].enqueued + self._p.batch_timeout_micros / 1e6 \
                    - time.monotonic()
                batch, rows = self._fill()
                if rows >= self._p.max_batch_size or self._closed or left <= 0:
                    break
                self._cond.wait(left)
            taken = set(map(id, batch))
            self._queue = collections.deque(t for t in self._queue if id(t) not in taken)
            self._queued_rows -= rows
            if self._queue:  # more waiting: another batch thread may start on it
                self._cond.notify()
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
            outputs = {n: np.asarray(v) for n, v in self._run(inputs).items()}
        except BaseException as e:  # noqa: BLE001 - every request of the batch gets it
            _deliver([(t, None, e) for t in batch])
            return
        settled, start = [], 0
        for t in batch:
            settled.append((t, {n: v[start:start + t.rows] for n, v in outputs.items()}, None))
            start += t.rows
        _deliver(settled)

    def close(self):
        """Stops the batch threads after the queued requests are served."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout=30)


def _deliver(settled):
    """Settles (task, result, exception) triples: concurrent futures here, asyncio futures
    with one call_soon_threadsafe per event loop."""
    by_loop = {}
    for item in settled:
        if item[0].loop is None:
            _settle([item])
        else:
            by_loop.setdefault(item[0].loop, []).append(item)
    for loop, items in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, items)
        except RuntimeError:  # the loop has closed: nobody waits for these any more
            pass


def _settle(items):
    for task, result, exc in items:
        if task.future.cancelled():
            continue
        if exc is not None:
            task.future.set_exception(exc)
        else:
            task.future.set_result(result)


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
