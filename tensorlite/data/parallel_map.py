"""Parallel map on every core: threads for functions that release the GIL (NumPy, I/O,
sleeps), forked worker processes with shared-memory transfer for pure-Python functions.

With `num_parallel_calls=AUTOTUNE` the mechanism and the parallelism are chosen from
measurements of the first elements (map_autotune.py measures and decides; this module
runs the plan chosen, with map_runners.py and map_buffer.py):
  * a function cheaper than the cost of handing it to a worker runs inline;
  * one that mostly waits (CPU time well below wall time) gets threads, more than cores;
  * a CPU-bound one runs one short round on `cores` threads started together: if their
    CPU times add up to more than one core's worth (the function releases the GIL) it
    stays on threads, otherwise it moves to worker processes (forked one at a time as
    the pipeline fills) — unless moving its inputs and outputs between processes would
    cost more than computing them.
An explicit `num_parallel_calls=N` fixes the parallelism; the mechanism is still measured
(`options.threading.worker_mechanism` can force "thread" or "process").
Under AUTOTUNE a parallel plan is then watched while it runs (plan_guard.py): measured
slower than the inline loop it falls back to inline, and it is retried later. Other
programs' load does not keep a plan from starting: worker processes spread one per core
(workers.py) get the map a share of every core, which beside a busy process measured
1.09-1.18x the inline loop, and 1.8x with every core busy; the guard judges the rest.
Order is kept unless `deterministic=False`, which yields in completion order.
"""
import time

from tensorlite.data.dataset import AUTOTUNE
from tensorlite.data.iterator import RawIterator
from tensorlite.data.map_autotune import AutotuneProbe, cpu_count
from tensorlite.data.map_buffer import ResultBuffer
from tensorlite.data.map_runners import ProcessRunner, ThreadRunner
from tensorlite.data.plan_guard import PlanGuard
from tensorlite.data.seeding import element_seed
from tensorlite.data.structure import from_numpy_element, to_numpy_element
from tensorlite.data.tracing import collector, span_args

_CHUNK_SECONDS = 5e-3  # work per message to a worker process: amortises ~0.1 ms of IPC
_THREAD_CHUNK_SECONDS = 1e-3  # work per thread task: amortises ~30 us of future handling
# Results buffered per worker process: more than each worker holds queued
# (workers.SLOTS_PER_WORKER), so while the consumer waits in order for a worker slowed by
# other programs' load, the others keep getting new work instead of idling.
_RUN_AHEAD_TASKS = 4


__all__ = ["ParallelMapIterator", "cpu_count"]


class ParallelMapIterator(RawIterator):
    """A map's elements computed by the plan AUTOTUNE's probe chose (map_autotune.py):
    inline, on threads or on worker processes, yielded in order unless not deterministic."""

    def __init__(self, ds, inner, fn, stats, ctx):
        self._in, self._fn, self._stats, self._ctx = inner, fn, stats, ctx
        self._requested = ds._parallel
        det = ds._deterministic
        if det is None:
            det = ctx.options.deterministic if ctx.options.deterministic is not None else True
        self._deterministic = det
        forced = ctx.options.threading.worker_mechanism
        self._forced = None if forced in (None, "auto") else forced
        self._mode = None
        self._n = 0
        self._next_index = 0  # index of the next input element
        self._next_out = 0  # deterministic: index of the next element to yield
        self._done = ResultBuffer(ctx.ram, stats.name)  # finished, not yet taken
        self._pending = {}  # index -> Future (threads) or worker (processes)
        self._exhausted = False
        self._threads = None  # ThreadRunner while threads run the map
        self._procs = ProcessRunner(fn, ctx.seed)  # its workers outlive a plan
        self._stage = stats.name
        self._latency = 1e-3
        self._chunk = 1
        self._guard = None  # AUTOTUNE's PlanGuard once a parallel plan runs
        self._plan = None  # (mode, n, why) of that plan, to return to after a fall-back
        self._autotune = AutotuneProbe(self._pull, self._run_one, self._run_chunk,
                                       self._done.put, self._start_threads)

    # -- running one element -----------------------------------------------------------
    def _run_one(self, element, index):
        t0 = time.perf_counter()
        with element_seed(self._ctx.seed, index):
            out = self._fn(element, index)
        out = self._fn.convert(out, index)
        self._stats.add(time.perf_counter() - t0)
        return out

    def _run_chunk(self, elements, indices):
        """Runs several elements in one task; each result or exception keeps its index.
        Returns those and the CPU seconds the task took on its thread."""
        cpu0 = time.thread_time()
        c = collector()
        if c is not None:
            return self._run_chunk_traced(c, elements, indices), time.thread_time() - cpu0
        out = []
        for element, index in zip(elements, indices):
            try:
                out.append((index, self._run_one(element, index)))
            except BaseException as e:  # noqa: BLE001 - delivered in order
                out.append((index, e))
        return out, time.thread_time() - cpu0

    def _run_chunk_traced(self, c, elements, indices):
        """`_run_chunk` with a "worker" span per element on the worker thread."""
        out = []
        name = self._trace[0] if self._trace else self._stage
        for element, index in zip(elements, indices):
            t0 = time.perf_counter_ns()
            try:
                out.append((index, self._run_one(element, index)))
            except BaseException as e:  # noqa: BLE001 - delivered in order
                out.append((index, e))
            args = span_args(self, "worker", index=index)
            if args is not None:
                c.add_span("data", name, t0, time.perf_counter_ns(), args)
        return out

    def _trace_args(self):
        requested = "AUTOTUNE" if self._requested == AUTOTUNE else str(self._requested)
        return {"mode": self._mode or "choosing", "parallelism": self._n,
                "requested": requested, "buffer": len(self._done),
                "capacity": self._window() if self._mode else 0}

    def _report_remote(self, c, worker, times):
        """Spans timed in a worker process (perf_counter_ns there is CLOCK_MONOTONIC too)."""
        name = self._trace[0] if self._trace else self._stage
        for index, t0, t1 in times:
            args = span_args(self, "worker", index=index)
            if args is not None:
                c.add_remote(worker.pid, worker.pid, worker.name, "data", name, t0, t1, args)

    def _pull(self):
        """Next input element with its index, or None at the end of the input."""
        if self._exhausted:
            return None
        try:
            element = self._in.next()
        except StopIteration:
            self._exhausted = True
            return None
        index = self._next_index
        self._next_index += 1
        return element, index

    # -- choosing the mechanism ------------------------------------------------------------
    # -- running the plan the probe chose -------------------------------------------------
    def _choose(self):
        self._apply(self._autotune.choose(self._requested, self._forced, self._ctx.options))

    def _start_threads(self, n, own):
        """The GIL round's threads (map_autotune.AutotuneProbe.gil_round): the map runs on
        them from now on, unless the round's verdict moves it."""
        self._latency = own
        self._set_mode("thread", n, "probing the GIL")
        return self._threads

    def _apply(self, choice):
        """Runs the map as the probe's Choice says, watched by a PlanGuard under AUTOTUNE."""
        if choice.latency is None:  # nothing measured: the input ended or failed
            self._set_mode(choice.mode, choice.n, choice.why)
            return
        self._latency = choice.own
        if self._mode == "thread" and choice.mode == "thread":  # the GIL round's threads
            self._stats.choice = f"threads x{choice.n} ({choice.why})"
        else:
            self._shutdown_pool()
            self._set_mode(choice.mode, choice.n, choice.why)
        self._guard_plan(choice.latency)

    def _guard_plan(self, latency):
        """Under AUTOTUNE, watch the parallel plan just chosen (see plan_guard.py)."""
        if self._requested == AUTOTUNE and self._mode in ("thread", "process") and \
                not self._forced:
            self._guard = PlanGuard(latency)
            self._guard.start_parallel(self._n * self._chunk)  # each worker's first task
            self._plan = (self._mode, self._n, self._stats.choice)

    def _to_inline(self):
        """Runs the map inline from here on (what is in flight is collected first)."""
        while self._pending:
            self._collect(block=True)
        # Idle worker processes cost nothing: they are kept for the retry (no new fork).
        self._shutdown_pool()
        self._mode, self._n = "inline", 1
        self._stats.parallelism = 1

    def _explain_fallback(self):
        why = self._guard.explain(f"{self._plan[0]} x{self._plan[1]}")
        self._stats.choice = f"inline x1 ({why})"

    def _retry_plan(self):
        mode, n, choice = self._plan
        self._set_mode(mode, n, "AUTOTUNE retry")
        self._stats.choice = choice
        self._guard.start_parallel(self._n * self._chunk)  # each worker's first task

    def _set_mode(self, mode, n, why):
        self._mode, self._n = mode, n
        self._stats.parallelism = n
        self._stats.choice = f"{mode} x{n} ({why})"
        if mode == "thread":
            waits = n > cpu_count()  # a waiting function wants every element in flight
            self._chunk = 1 if waits else max(1, min(16, int(_THREAD_CHUNK_SECONDS /
                                                             max(self._latency, 1e-6))))
            if self._chunk > 1:
                self._stats.choice += f", {self._chunk} elements per task"
            self._threads = ThreadRunner(n, f"{self._trace_name()} worker")
        elif mode == "process":
            self._chunk = max(1, min(64, int(_CHUNK_SECONDS / max(self._latency, 1e-6))))
            self._stats.choice += f", {self._chunk} elements per message"
            self._procs.start(n, f"{self._trace_name()} worker process")

    def _trace_name(self):
        return self._trace[0] if self._trace else self._stage

    @property
    def _workers(self):
        """The worker processes alive for this map (kept across an inline fall-back)."""
        return self._procs.workers

    # -- submitting and collecting -------------------------------------------------------
    def _window(self):
        if self._mode == "process":
            return self._n * _RUN_AHEAD_TASKS * self._chunk
        return 2 * self._n * self._chunk

    def _submit_next(self):
        item = self._pull()
        if item is None:
            return False
        element, index = item
        # a chunk of elements per task, sized so the hand-off cost is amortised
        indices, elements = [index], [element]
        while len(indices) < self._chunk:
            item = self._pull()
            if item is None:
                break
            elements.append(item[0])
            indices.append(item[1])
        if self._mode == "thread":
            handle = self._threads.submit(self._run_chunk, elements, indices)
        else:
            handle = self._procs.submit(indices, elements)
        for i in indices:
            self._pending[i] = handle
        return True

    def _fill(self):
        while len(self._pending) + len(self._done) < self._window() and not self._exhausted:
            if self._mode == "process" and not self._procs.has_room():
                break
            if not self._submit_next():
                break

    def _collect(self, block, want=None):
        """Moves finished work into self._done; `want` waits for that index."""
        if self._mode == "thread":
            futures = [self._pending[want]] if want is not None else \
                list(self._pending.values())
            for results, cpu in self._threads.collect(futures, block):
                self._add_cpu(cpu, len(results))
                for index, value in results:
                    if self._pending.pop(index, None) is not None:
                        self._done.put(index, value)
        else:
            workers = [self._pending[want]] if want is not None else \
                list({id(w): w for w in self._pending.values()}.values())
            for w, results, times, cpu in self._procs.collect(workers, block):
                self._add_cpu(cpu, len(results))
                for index, value in results:
                    self._pending.pop(index, None)
                    self._done.put(index, value)
                c = collector()
                if c is not None:
                    self._report_remote(c, w, times)

    def _add_cpu(self, seconds, elements):
        if self._guard is not None:
            self._guard.add_cpu(seconds, elements)

    # -- the iterator protocol -------------------------------------------------------------
    def next(self):
        if self._mode is None:
            self._choose()
        if self._guard is not None:
            return self._next_guarded()
        if self._mode == "inline":
            return self._next_inline()
        return self._next_parallel()

    def _next_guarded(self):
        parallel = self._mode != "inline"
        # Elements the parallel plan left buffered cost nothing now: not an inline cost.
        buffered = not parallel and bool(self._done)
        t0 = time.perf_counter()
        try:
            return self._next_parallel() if parallel else self._next_inline()
        finally:
            if not buffered:
                action = self._guard.observe(time.perf_counter() - t0, parallel)
                if action == "fallback":
                    self._to_inline()
                    self._explain_fallback()
                elif action == "sample":
                    self._to_inline()
                elif action == "stay":
                    self._explain_fallback()
                elif action == "retry":
                    self._retry_plan()

    def _next_parallel(self):
        self._fill()
        t0 = time.perf_counter()
        if self._deterministic:
            index = self._next_out
            while index not in self._done:
                if index not in self._pending:
                    self._fill()
                    if index not in self._pending and index not in self._done:
                        raise StopIteration
                # Whatever finishes first, not only the element wanted: a worker that runs
                # ahead (another one shares its core with other programs) gets new work at
                # once instead of idling until the slow one catches up.
                self._collect(block=True)
                self._fill()
            self._next_out += 1
        else:
            while not self._done:
                if not self._pending:
                    self._fill()
                    if not self._pending:
                        raise StopIteration
                self._collect(block=True)
            index = self._done.lowest()
        self._stats.wait += time.perf_counter() - t0
        value = self._done.take(index)
        self._fill()
        if isinstance(value, BaseException):
            raise value
        return value

    def _next_inline(self):
        if self._done:
            index = self._next_out if self._deterministic else self._done.lowest()
            if index in self._done:
                self._next_out = index + 1
                value = self._done.take(index)
                if isinstance(value, BaseException):
                    raise value
                return value
        item = self._pull()
        if item is None:
            raise StopIteration
        self._next_out = item[1] + 1
        return self._run_one(*item)

    # -- checkpointing and shutdown --------------------------------------------------------
    def save(self):
        while self._pending:
            self._collect(block=True)
        results = self._done.results()
        for value in results.values():
            if isinstance(value, BaseException):
                raise value
        done = {i: to_numpy_element(v) for i, v in results.items()}
        return (self._next_index, self._next_out, self._exhausted, done, self._in.save())

    def restore(self, state):
        self._shutdown()
        self._mode = None
        self._done.clear()
        self._next_index, self._next_out, self._exhausted, done, inner = state
        for i, v in done.items():
            self._done.put(i, from_numpy_element(v))
        self._in.restore(inner)

    def _shutdown_pool(self):
        if self._threads is not None:
            self._threads.shutdown(list(self._pending.values()))
            self._threads = None

    def _shutdown(self):
        self._shutdown_pool()
        self._procs.close()
        self._pending = {}

    def close(self):
        self._shutdown()
        self._in.close()
