"""interleave: maps each input element to a dataset and cycles through `cycle_length` of
them, taking `block_length` elements from each in turn.

With `num_parallel_calls`, each active inner dataset (and the next few waiting ones) is
produced by its own thread into a small buffer, so opening and reading files overlap;
input elements are still assigned to cycle slots in the sequential order, so a
deterministic pipeline gives exactly the sequential output.
"""
import collections
import threading
import time

from tensorlite.data.dataset import AUTOTUNE, DatasetV2, parallel_calls
from tensorlite.data.functions import StageFunction
from tensorlite.data.iterator import RawIterator
from tensorlite.data.parallel_map import cpu_count
from tensorlite.data.stats import element_nbytes
from tensorlite.data.structure import from_numpy_element, to_numpy_element
from tensorlite.data.tracing import collector, inner_context, span_args, thread_name
from tensorlite.data.transforms import UnaryDataset, _as_dataset
from tensorlite.framework import dtypes, errors
from tensorlite.ops.array_ops import checked_dims

_END = object()


def _is_element(item):
    return item is not _END and not isinstance(item, BaseException)


class InterleaveDataset(UnaryDataset):
    _name = "Interleave"

    def __init__(self, input_dataset, map_func, cycle_length=None, block_length=None,
                 num_parallel_calls=None, deterministic=None, name=None):
        super().__init__(input_dataset)
        self._fn = map_func
        cycle = AUTOTUNE if cycle_length is None else int(cycle_length)
        self._cycle = cpu_count() if cycle == AUTOTUNE else cycle
        self._block = 1 if block_length is None else int(block_length)
        if self._cycle <= 0 or self._block <= 0:
            raise errors.InvalidArgumentError(None, None, "interleave: cycle_length and "
                                              "block_length must be positive")
        checked_dims((self._cycle,), "Interleave", dtypes.int64)  # its slots, before use
        self._parallel = parallel_calls(num_parallel_calls, "interleave")
        self._deterministic = deterministic

    def _compute_spec(self):
        from tensorlite.data.iterator import make_raw_iterator  # noqa: PLC0415
        from tensorlite.data.structure import call_with_element  # noqa: PLC0415
        it = make_raw_iterator(self._input, optimize=False)
        try:
            return _as_dataset(call_with_element(self._fn, it.next()), "interleave",
                               0).element_spec
        finally:
            it.close()

    def _cardinality(self):
        from tensorlite.data.dataset import UNKNOWN  # noqa: PLC0415
        return UNKNOWN

    def _label(self):
        from tensorlite.data.transforms import fn_label  # noqa: PLC0415
        kind = "Interleave" if self._parallel is None else "ParallelInterleave"
        return f"{kind}({fn_label(self._fn)})"

    def _describe(self):
        par = "" if self._parallel is None else \
            f", num_parallel_calls={'AUTOTUNE' if self._parallel == AUTOTUNE else self._parallel}"
        return f"cycle_length={self._cycle}, block_length={self._block}{par}"

    def _make_iterator(self, ctx):
        stats = ctx.stats.stage(self._key, "Interleave")
        stats.choice = f"cycle={self._cycle}, " + (
            "sequential" if self._parallel is None else
            f"threads x{2 * self._cycle} (one per active and waiting input)")
        return _InterleaveIterator(self, self._input._make_iterator(ctx), ctx)


class _Slot:
    """One inner dataset: its input element, its iterator and (parallel) a producer.
    `ctx` is the interleave's scoped context; `owner` the interleave's iterator (whose
    stage the producer's spans report)."""

    def __init__(self, ds, element, index, ctx, threaded, inner_state=None, buffered=(),
                 owner=None):
        self.element, self.index = element, index
        self.owner = owner
        fn = StageFunction(ds._fn, "Interleave", check_spec=False)
        self._ds_factory = lambda: _as_dataset(fn(element, index), "interleave", index)
        self.ctx = ctx
        self.it = None
        self.inner_state = inner_state
        self.buf = collections.deque(buffered)
        self.cap = max(2, 2 * ds._block)
        self.cond = threading.Condition()
        self.thread = None
        self.stop = False
        self.threaded = threaded
        if threaded:  # elements restored from a checkpoint are buffered again
            for item in self.buf:
                if _is_element(item):
                    ctx.ram.reserve("Interleave", element_nbytes(item))
        self.resume()

    def resume(self):
        ended = self.buf and (self.buf[-1] is _END or isinstance(self.buf[-1], BaseException))
        if self.threaded and self.thread is None and not ended:
            self.stop = False
            info = getattr(self.owner, "_trace", None)
            self.thread = threading.Thread(target=self._produce, daemon=True,
                                           name=thread_name(info[0] if info else "Interleave"))
            self.thread.start()

    def _open(self):
        if self.it is None:
            self.it = self._ds_factory()._make_iterator(self.ctx)
            if self.inner_state is not None:
                self.it.restore(self.inner_state)

    def _fetch(self):
        try:
            self._open()
            return self.it.next()
        except StopIteration:
            return _END
        except BaseException as e:  # noqa: BLE001 - raised in the consumer in order
            return e

    def _produce(self):
        while True:
            with self.cond:
                while len(self.buf) >= self.cap and not self.stop:
                    self.cond.wait()
                if self.stop:
                    return
            c = collector()
            t0 = time.perf_counter_ns()
            item = self._fetch()
            if c is not None:
                self._producer_span(c, t0, item)
            if _is_element(item):  # buffered elements count against the RAM budget
                try:
                    self.ctx.ram.reserve("Interleave", element_nbytes(item))
                except BaseException as e:  # noqa: BLE001 - surfaces in the consumer
                    item = e
            with self.cond:
                self.buf.append(item)
                self.cond.notify_all()
            if item is _END or isinstance(item, BaseException):
                return

    def _producer_span(self, c, t0, item):
        """One element fetched by this slot's thread (the inner stages nest inside)."""
        args = span_args(self.owner, "producer", slot_input=self.index,
                         buffer=len(self.buf), capacity=self.cap) if self.owner else None
        if args is not None:
            if item is _END:
                args["end_of_sequence"] = True
            c.add_span("data", self.owner._trace[0], t0, time.perf_counter_ns(), args)

    def get(self):
        if self.thread is None:
            item = self.buf.popleft() if self.buf else self._fetch()
        else:
            with self.cond:
                while not self.buf:
                    self.cond.wait()
                item = self.buf.popleft()
                self.cond.notify_all()
            if _is_element(item):
                self.ctx.ram.release("Interleave", element_nbytes(item))
        if isinstance(item, BaseException):
            # The producer stopped at the error; if the consumer goes on (ignore_errors),
            # a new producer continues after it.
            self.thread = None
            self.resume()
            raise item
        return item

    def halt(self):
        if self.thread is not None:
            with self.cond:
                self.stop = True
                self.cond.notify_all()
            self.thread.join()
            self.thread = None

    def save(self):
        self.halt()
        buffered = []
        for item in self.buf:
            if isinstance(item, BaseException):
                raise item
            buffered.append(None if item is _END else to_numpy_element(item))
        inner = self.it.save() if self.it is not None else self.inner_state
        return (to_numpy_element(self.element), self.index, inner, buffered)

    def close(self):
        self.halt()
        if self.threaded:
            for item in self.buf:
                if _is_element(item):
                    self.ctx.ram.release("Interleave", element_nbytes(item))
        self.buf.clear()
        if self.it is not None:
            self.it.close()


class _InterleaveIterator(RawIterator):
    _scoped = None  # the inner datasets' context, made on first use
    def __init__(self, ds, inner, ctx):
        self._ds, self._in, self._ctx = ds, inner, ctx
        from tensorlite.data import debug_mode  # noqa: PLC0415
        self._threaded = ds._parallel is not None and not debug_mode.enabled()
        self._slots = [None] * ds._cycle
        self._waiting = collections.deque()  # opened ahead, in input order (parallel only)
        self._pos = 0  # current slot
        self._taken = 0  # elements taken from the current slot in this block
        self._index = 0
        self._input_done = False
        self._lookahead = ds._cycle if self._threaded else 0

    def _new_slot(self):
        if self._waiting:
            slot = self._waiting.popleft()
        else:
            slot = self._open_next()
        self._top_up()
        return slot

    def _open_next(self):
        if self._input_done:
            return None
        try:
            element = self._in.next()
        except StopIteration:
            self._input_done = True
            return None
        index = self._index
        self._index += 1
        return _Slot(self._ds, element, index, inner_context(self), self._threaded, owner=self)

    def _trace_args(self):
        return {"parallelism": len(self._slots) if self._threaded else 1}

    def _top_up(self):
        while len(self._waiting) < self._lookahead:
            slot = self._open_next()
            if slot is None:
                break
            self._waiting.append(slot)

    def next(self):
        n = len(self._slots)
        while True:
            if all(s is None for s in self._slots) and self._input_done and not self._waiting:
                raise StopIteration
            slot = self._slots[self._pos]
            if slot is None:
                slot = self._slots[self._pos] = self._new_slot()
                self._taken = 0
                if slot is None:
                    if self._input_done and not self._waiting and \
                            all(s is None for s in self._slots):
                        raise StopIteration
                    self._advance(n)
                    continue
            item = slot.get()
            if item is _END:
                slot.close()
                self._slots[self._pos] = None
                self._advance(n)
                continue
            self._taken += 1
            if self._taken >= self._ds._block:
                self._advance(n)
            return item

    def _advance(self, n):
        self._pos = (self._pos + 1) % n
        self._taken = 0

    def save(self):
        slots = [None if s is None else s.save() for s in self._slots]
        waiting = [s.save() for s in self._waiting]
        state = (slots, waiting, self._pos, self._taken, self._index, self._input_done,
                 self._in.save())
        self._resume()
        return state

    def _resume(self):
        """Saving halted the producers; start them again."""
        for s in list(self._slots) + list(self._waiting):
            if s is not None:
                s.resume()

    def restore(self, state):
        self.close_slots()
        slots, waiting, self._pos, self._taken, self._index, self._input_done, inner = state
        self._in.restore(inner)

        def build(saved):
            if saved is None:
                return None
            element, index, inner_state, buffered = saved
            items = [_END if b is None else from_numpy_element(b) for b in buffered]
            return _Slot(self._ds, from_numpy_element(element), index, inner_context(self),
                         self._threaded, inner_state, items, owner=self)
        self._slots = [build(s) for s in slots]
        self._waiting = collections.deque(build(s) for s in waiting)

    def close_slots(self):
        for s in list(self._slots) + list(self._waiting):
            if s is not None:
                s.close()
        self._slots = [None] * len(self._slots)
        self._waiting.clear()

    def close(self):
        self.close_slots()
        self._in.close()


DatasetV2.interleave = lambda self, map_func, cycle_length=None, block_length=None, \
    num_parallel_calls=None, deterministic=None, name=None: InterleaveDataset(
        self, map_func, cycle_length, block_length, num_parallel_calls, deterministic)
