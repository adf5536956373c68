"""Parallel map on every core: threads for functions that release the GIL (NumPy, I/O,
sleeps), forked worker processes with shared-memory transfer for pure-Python functions.

With `num_parallel_calls=AUTOTUNE` the mechanism and the parallelism are chosen from
measurements of the first elements:
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
import collections
import os
import threading
import time

from tensorlite.data.dataset import AUTOTUNE
from tensorlite.data.iterator import RawIterator
from tensorlite.data.map_buffer import ResultBuffer
from tensorlite.data.map_runners import ProcessRunner, ThreadRunner
from tensorlite.data.plan_guard import PlanGuard
from tensorlite.data.seeding import element_seed
from tensorlite.data.stats import element_nbytes
from tensorlite.data.structure import from_numpy_element, to_numpy_element
from tensorlite.data.tracing import collector, span_args

_INLINE_BELOW = 40e-6  # seconds: cheaper than a hand-off to a worker
_PROBE_ELEMENTS = 3  # run inline first; the first is a warm-up, the others are measured
_PROBE_MORE_BELOW = 10 * _INLINE_BELOW  # a function this cheap is measured on ...
_PROBE_MORE = 8  # ... this many more elements (at most ~3 ms)
_COPY_BYTES_PER_S = 1.5e9  # rough cost of moving bytes through shared memory
_CHUNK_SECONDS = 5e-3  # work per message to a worker process: amortises ~0.1 ms of IPC
_THREAD_CHUNK_SECONDS = 1e-3  # work per thread task: amortises ~30 us of future handling
# Results buffered per worker process: more than each worker holds queued
# (workers.SLOTS_PER_WORKER), so while the consumer waits in order for a worker slowed by
# other programs' load, the others keep getting new work instead of idling.
_RUN_AHEAD_TASKS = 4
_GIL_PROBE_SECONDS = 2e-3  # work per thread in the GIL probe: several GIL hand-offs' worth
_GIL_FREE_CORES = 1.2  # probe threads ran on more cores at once: the GIL is released


def _runqueue_wait():
    """Seconds this thread has spent runnable but waiting for a core (Linux schedstat),
    or 0.0 where the kernel does not say: under load from other programs a CPU-bound
    function's wall time exceeds its CPU time by this much, which is not waiting on I/O."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            return int(f.read().split()[1]) * 1e-9
    except (OSError, IndexError, ValueError):
        return 0.0


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


Measurements = collections.namedtuple("Measurements", "probe requested n cores forced")
Measurements.__doc__ = """What AUTOTUNE's choice is made from: `probe`, the inline runs of
the first elements [(wall, CPU, bytes in and out, run-queue wait) seconds/bytes per
element]; `requested`, num_parallel_calls (AUTOTUNE or a number); `n`, the parallelism it
allows; `cores`, the cores the pipeline may use; `forced`, the mechanism the options force
(None: measured)."""


def summarize(probe):
    """(latency, own latency, CPU fraction, bytes moved) of inline probe runs: the lower
    median wall time; the function's own time on a core (wall less run-queue waits, which
    other programs' load adds), which sizes chunks; its CPU time over that time; the most
    bytes one element moved in and out."""
    latency = sorted(p[0] for p in probe)[(len(probe) - 1) // 2]  # the lower median
    own = max(min(p[0] - p[3] for p in probe), 0.1 * latency)
    cpu_frac = sum(p[1] for p in probe) / max(sum(p[0] - p[3] for p in probe), 1e-9)
    return latency, own, cpu_frac, max(p[2] for p in probe)


def decide(m):
    """AUTOTUNE's first choice from `m` (Measurements), without threads: (mode, n, why)
    with mode "inline", "thread", "process" or "gil_probe" (a CPU-bound function: one
    round on n threads started together decides, `decide_after_gil_probe`)."""
    if not m.probe:
        return "inline", 1, "input ended or failed while probing"
    latency, _, cpu_frac, _ = summarize(m.probe)
    if m.forced:
        return m.forced, m.n, "forced by options.threading.worker_mechanism"
    if latency < _INLINE_BELOW and m.requested == AUTOTUNE:
        return "inline", 1, (f"function takes {latency * 1e6:.0f} us: cheaper inline than "
                             f"handed to workers")
    if cpu_frac < 0.5:
        threads = m.n if m.requested != AUTOTUNE else min(4 * m.cores, 32)
        return "thread", threads, (f"function waits {100 * (1 - cpu_frac):.0f}% of its "
                                   f"time: threads")
    if m.n == 1:
        return "thread", 1, "num_parallel_calls=1"
    return "gil_probe", m.n, "probing the GIL"


def decide_after_gil_probe(runs, n, latency, moved):
    """The choice after the GIL round (`_probe_threads`): `runs` holds each thread's
    (ready time, end time, CPU seconds); fewer than `n` when the input ended. Returns
    (mode, n, why): threads when they ran on clearly more than one core at once (the
    function releases the GIL) or when moving an element between processes costs more
    than computing it, worker processes otherwise."""
    if len(runs) < n:
        return "thread", n, "the input ended while probing the GIL"
    # from the round's start: when the last thread was ready (the others waited)
    start = max(r[0] for r in runs)
    cores = sum(r[2] for r in runs) / max(max(r[1] for r in runs) - start, 1e-9)
    transfer = 2 * moved / _COPY_BYTES_PER_S
    if cores >= _GIL_FREE_CORES:
        return "thread", n, (f"threads started together ran on {cores:.1f} cores at once: "
                             f"the function releases the GIL")
    if transfer > latency / 2:
        return "thread", n, (f"GIL-bound: threads ran on {cores:.1f} cores, but moving "
                             f"{moved / 1e6:.2f} MB per element costs more than computing it")
    return "process", n, (f"GIL-bound: threads started together ran on {cores:.1f} cores "
                          f"at once; worker processes")


class ParallelMapIterator(RawIterator):
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
    def _choose(self):
        cores = cpu_count()
        opts = self._ctx.options
        for cap in (opts.autotune.cpu_budget, opts.threading.private_threadpool_size):
            if cap:  # the user's CPU budget bounds what AUTOTUNE may use
                cores = min(cores, int(cap))
        n = cores if self._requested == AUTOTUNE else max(int(self._requested), 1)
        probe = self._probe_inline(_PROBE_ELEMENTS)
        # The first call pays one-off costs (the function's first run, its conversion's
        # setup: 2 ms for `lambda x: x * 2`, whose later calls take 11 us); judged on it,
        # AUTOTUNE sent an 11 us function to worker processes at 0.65x the inline speed.
        if len(probe) > 1:
            probe = probe[1:]
        # A cheap function is judged on more elements (a few cost nothing): one hiccup of
        # tens of microseconds would otherwise decide between inline and workers.
        if probe and min(p[0] for p in probe) < _PROBE_MORE_BELOW:
            probe = self._probe_inline(_PROBE_MORE, together=True) or probe
        m = Measurements(probe, self._requested, n, cores, self._forced)
        mode, n, why = decide(m)
        if not probe:
            self._set_mode(mode, n, why)
            return
        latency, self._latency, _, moved = summarize(probe)
        if mode == "gil_probe":
            self._probe_threads(n, latency, moved)
        else:
            self._set_mode(mode, n, why)
        self._guard_plan(latency)

    def _probe_inline(self, count, together=False):
        """Runs up to `count` elements inline (stored for the consumer) and measures them:
        [(wall, CPU, bytes in and out, run-queue wait)] per element, or with `together` one
        such entry averaged over them all, its CPU-time and run-queue readings (system
        calls, which cost a cheap function's next call ~20 us of cold caches) taken once
        around the run instead of around each element."""
        probe = []
        for _ in range(1 if together else count):
            run = self._probe_run(count if together else 1)
            if run is None:
                break
            if run:
                probe.append(run)
        return probe

    def _probe_run(self, count):
        """Up to `count` elements inline, measured as one run: (wall, CPU, largest bytes in
        and out, run-queue wait) per element; () when each one failed, None when the input
        had none left."""
        cpu0, rq0 = time.thread_time(), _runqueue_wait()
        wall, nbytes, done, pulled = 0.0, 0, 0, False
        for _ in range(count):
            item = self._pull()
            if item is None:
                break
            pulled = True
            element, index = item
            t0 = time.perf_counter()
            try:
                out = self._run_one(element, index)
            except BaseException as e:  # noqa: BLE001 - delivered in order later
                self._done.put(index, e)
                continue
            wall += time.perf_counter() - t0
            nbytes = max(nbytes, element_nbytes(element) + element_nbytes(out))
            self._done.put(index, out)
            done += 1
        if not done:
            return () if pulled else None
        cpu, waited = time.thread_time() - cpu0, _runqueue_wait() - rq0
        return wall / done, cpu / done, nbytes, min(waited, wall) / done

    def _probe_threads(self, n, latency, moved):
        """One round on `n` threads started together, each running ~2 ms of elements.
        Threads of a GIL-bound function take turns: together they never run on more than
        one core at a time, so their CPU time adds up to at most the round's wall time.
        Clearly more than that, and the function releases the GIL: threads. Otherwise
        worker processes, which run either kind in parallel (only a GIL-free function
        whose outputs cost more to move than to compute stays on threads). Under load
        from other programs the threads may use little more than a core even when the
        function releases the GIL: processes are the choice that cannot go wrong then."""
        self._set_mode("thread", n, "probing the GIL")
        per_thread = max(1, min(64, int(_GIL_PROBE_SECONDS / max(self._latency, 1e-6))))
        barrier = threading.Barrier(n)
        futures, runs = [], []
        try:
            for _ in range(n):
                items = [x for x in (self._pull() for _ in range(per_thread)) if x is not None]
                if not items:
                    break
                futures.append(self._threads.submit(self._probe_chunk, barrier, items))
        finally:
            if len(futures) < n:  # the input ended (too few elements left to matter) or
                barrier.abort()  # failed: the threads waiting for the others go on
            for f in futures:  # kept, even when the input's error is on its way out
                results, run = f.result()
                runs.append(run)
                for index, value in results:
                    self._done.put(index, value)
        mode, n, why = decide_after_gil_probe(runs, n, latency, moved)
        if mode == "thread":
            self._stats.choice = f"threads x{n} ({why})"
        else:
            self._shutdown_pool()
            self._set_mode(mode, n, why)

    def _probe_chunk(self, barrier, items):
        """Runs elements once every probe thread is ready; returns their results and
        (ready time, end time, CPU seconds) of this thread."""
        ready = time.perf_counter()
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass
        results, cpu = self._run_chunk([e for e, _ in items], [i for _, i in items])
        return results, (ready, time.perf_counter(), cpu)

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
