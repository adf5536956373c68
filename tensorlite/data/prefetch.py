"""prefetch: a background thread keeps a buffer of upcoming elements filled.

With `buffer_size=AUTOTUNE` the buffer starts at 2 and grows (within the RAM budget) while
the consumer keeps finding it empty. Errors from upstream are raised in the consumer at the
position where they happened, with their original traceback.
"""
import collections
import threading
import time

from tensorlite.data.dataset import AUTOTUNE, DatasetV2
from tensorlite.data.iterator import RawIterator
from tensorlite.data.stats import element_nbytes
from tensorlite.data.structure import from_numpy_element, to_numpy_element
from tensorlite.data.tracing import collector, span_args, thread_name
from tensorlite.data.transforms import UnaryDataset
from tensorlite.framework import errors

_END = object()
_MAX_AUTOTUNE_BUFFER = 64


class _Failure:
    __slots__ = ("exc",)

    def __init__(self, exc):
        self.exc = exc


class PrefetchDataset(UnaryDataset):
    _name = "Prefetch"

    def __init__(self, input_dataset, buffer_size=AUTOTUNE, name=None):
        super().__init__(input_dataset)
        self._buffer = AUTOTUNE if buffer_size is None else int(buffer_size)
        if self._buffer == 0 or self._buffer < AUTOTUNE:
            raise errors.InvalidArgumentError(None, None, f"prefetch: buffer_size must be "
                                              f"positive or AUTOTUNE, got {buffer_size}")

    def _describe(self):
        return "buffer_size=AUTOTUNE" if self._buffer == AUTOTUNE else \
            f"buffer_size={self._buffer}"

    def _label(self):
        return f"Prefetch({'AUTOTUNE' if self._buffer == AUTOTUNE else self._buffer})"

    def _make_iterator(self, ctx):
        stats = ctx.stats.stage(self._key, "Prefetch")
        return PrefetchIterator(self._input._make_iterator(ctx), self._buffer, stats, ctx)


class PrefetchIterator(RawIterator):
    """Also used by other stages that want a producer thread in front of them."""

    def __init__(self, inner, buffer_size, stats, ctx, stage="Prefetch"):
        self._in = inner
        self._autotune = buffer_size == AUTOTUNE
        self._cap = 2 if self._autotune else buffer_size
        self._stats, self._ram, self._stage = stats, ctx.ram, stage
        self._buf = collections.deque()
        self._cond = threading.Condition()
        self._thread = None
        self._stop = False
        self._finished = False
        self._empty_hits = 0
        self._calls = 0
        stats.capacity = self._cap
        stats.choice = f"buffer={'AUTOTUNE' if self._autotune else self._cap}"

    # -- producer ------------------------------------------------------------------------
    def _run(self):
        cond, buf = self._cond, self._buf
        while True:
            with cond:
                while len(buf) >= self._cap and not self._stop:
                    cond.wait()
                if self._stop:
                    return
            c = collector()
            t0 = time.perf_counter_ns()
            try:
                item = self._in.next()
                nbytes = element_nbytes(item)
                self._ram.reserve(self._stage, nbytes)
            except StopIteration:
                item, nbytes = _END, 0
            except BaseException as e:  # noqa: BLE001 - handed to the consumer
                item, nbytes = _Failure(e), 0
            t1 = time.perf_counter_ns()
            self._stats.add((t1 - t0) * 1e-9)
            if c is not None:
                self._producer_span(c, t0, t1, item)
            with cond:
                buf.append((item, nbytes))
                self._stats.buffer = len(buf)
                cond.notify_all()
            if item is _END or isinstance(item, _Failure):
                return

    def _producer_span(self, c, t0, t1, item):
        """The background thread fetching one element upstream (its upstream stages' spans
        nest inside)."""
        args = span_args(self, "producer", buffer=len(self._buf), capacity=self._cap)
        if args is not None:
            if item is _END:
                args["end_of_sequence"] = True
            c.add_span("data", self._trace[0], t0, t1, args)

    def _trace_args(self):
        return {"buffer": len(self._buf), "capacity": self._cap}

    def _ensure_thread(self):
        if self._thread is None and not self._finished:
            self._stop = False
            name = thread_name(self._trace[0] if self._trace else self._stage)
            self._thread = threading.Thread(target=self._run, name=name, daemon=True)
            self._thread.start()

    # -- consumer ------------------------------------------------------------------------
    def next(self):
        if self._finished:
            raise StopIteration
        self._ensure_thread()
        cond, buf = self._cond, self._buf
        with cond:
            self._calls += 1
            if not buf:
                self._empty_hits += 1
                t0 = time.perf_counter()
                while not buf:
                    cond.wait()
                self._stats.wait += time.perf_counter() - t0
                self._maybe_grow()
            item, nbytes = buf.popleft()
            self._stats.buffer = len(buf)
            cond.notify_all()
        if item is _END:
            self._finished = True
            self._thread = None
            raise StopIteration
        if isinstance(item, _Failure):
            self._thread = None
            raise item.exc
        self._ram.release(self._stage, nbytes)
        return item

    def _maybe_grow(self):
        if self._autotune and self._calls > 4 and self._empty_hits * 10 > self._calls and \
                self._cap < _MAX_AUTOTUNE_BUFFER:
            self._cap *= 2
            self._stats.capacity = self._cap
            self._empty_hits = 0
            self._calls = 0

    # -- lifecycle -------------------------------------------------------------------------
    def _halt(self):
        t = self._thread
        if t is not None:
            with self._cond:
                self._stop = True
                self._cond.notify_all()
            t.join()
            self._thread = None

    def save(self):
        self._halt()
        items = []
        for item, _ in self._buf:
            if isinstance(item, _Failure):
                raise errors.FailedPreconditionError(
                    None, None, f"cannot checkpoint: an upstream stage failed with {item.exc!r}")
            items.append(None if item is _END else to_numpy_element(item))
        return (items, self._finished, self._cap, self._in.save())

    def restore(self, state):
        self._halt()
        self._release_all()
        items, self._finished, self._cap, inner = state
        self._in.restore(inner)
        for it in items:
            element = _END if it is None else from_numpy_element(it)
            nbytes = 0 if it is None else element_nbytes(element)
            self._ram.reserve(self._stage, nbytes)
            self._buf.append((element, nbytes))

    def _release_all(self):
        for _, nbytes in self._buf:
            self._ram.release(self._stage, nbytes)
        self._buf.clear()

    def close(self):
        self._halt()
        self._release_all()
        self._in.close()


def _prefetch(self, buffer_size=None, name=None):
    """`dataset.prefetch(buffer_size)`: `buffer_size` is required, as in TensorFlow."""
    if buffer_size is None:
        raise TypeError("prefetch() missing 1 required positional argument: 'buffer_size'; "
                        "pass tf.data.AUTOTUNE to let tf.data tune it (the tf.data talk's "
                        "`dataset.prefetch()` is shorthand for that)")
    return PrefetchDataset(self, buffer_size)


DatasetV2.prefetch = _prefetch
