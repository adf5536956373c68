"""AUTOTUNE's choice of how a parallel map runs (parallel_map.py runs the choice): the
pure decision from measurements (`decide`, `decide_after_gil_probe`: tests call them
without threads), and `AutotuneProbe`, which takes those measurements on the map's first
elements.

The probe runs real elements: every result or error it gets goes to the map's buffer for
the consumer, so measuring costs no work twice.
"""
import collections
import os
import threading
import time

from tensorlite.data.dataset import AUTOTUNE
from tensorlite.data.stats import element_nbytes

_INLINE_BELOW = 40e-6  # seconds: cheaper than a hand-off to a worker
_PROBE_ELEMENTS = 3  # run inline first; the first is a warm-up, the others are measured
_PROBE_MORE_BELOW = 10 * _INLINE_BELOW  # a function this cheap is measured on ...
_PROBE_MORE = 8  # ... this many more elements (at most ~3 ms)
_COPY_BYTES_PER_S = 1.5e9  # rough cost of moving bytes through shared memory
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
    """The choice after the GIL round (`AutotuneProbe.gil_round`): `runs` holds each thread's
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


Choice = collections.namedtuple("Choice", "mode n why latency own")
Choice.__doc__ = """The probe's verdict: run the map as `mode` ("inline", "thread" or
"process") on `n`, because `why`; `latency`, the function's measured wall time per element
(None when nothing was measured), which a PlanGuard compares the plan against; `own`, its
own time on a core, which sizes chunks."""


class AutotuneProbe:
    """Measures a map's first elements and decides how it runs (`choose`).

    It works through the map iterator's own hands: `pull()` gives the next input element
    and its index (None at the end), `run_one(element, index)` runs the function on one,
    `run_chunk(elements, indices)` on several (-> results by index, CPU seconds), and
    `store(index, value)` hands a result or error to the consumer. For the GIL round,
    `start_threads(n, own)` puts the map on `n` threads (each element of `own` seconds) and
    returns their ThreadRunner; the map stays on them when the verdict is threads."""

    def __init__(self, pull, run_one, run_chunk, store, start_threads):
        self._pull, self._run_one, self._run_chunk = pull, run_one, run_chunk
        self._store, self._start_threads = store, start_threads

    def choose(self, requested, forced, options):
        """The Choice for num_parallel_calls `requested` (AUTOTUNE or a number), with the
        mechanism `forced` by the options (None: measured) and the options' CPU budget."""
        cores = cpu_count()
        for cap in (options.autotune.cpu_budget, options.threading.private_threadpool_size):
            if cap:  # the user's CPU budget bounds what AUTOTUNE may use
                cores = min(cores, int(cap))
        n = cores if requested == AUTOTUNE else max(int(requested), 1)
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
        mode, n, why = decide(Measurements(probe, requested, n, cores, forced))
        if not probe:
            return Choice(mode, n, why, None, None)
        latency, own, _, moved = summarize(probe)
        if mode == "gil_probe":
            return self.gil_round(n, latency, own, moved)
        return Choice(mode, n, why, latency, own)

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
                self._store(index, e)
                continue
            wall += time.perf_counter() - t0
            nbytes = max(nbytes, element_nbytes(element) + element_nbytes(out))
            self._store(index, out)
            done += 1
        if not done:
            return () if pulled else None
        cpu, waited = time.thread_time() - cpu0, _runqueue_wait() - rq0
        return wall / done, cpu / done, nbytes, min(waited, wall) / done

    def gil_round(self, n, latency, own, moved):
        """One round on `n` threads started together, each running ~2 ms of elements.
        Threads of a GIL-bound function take turns: together they never run on more than
        one core at a time, so their CPU time adds up to at most the round's wall time.
        Clearly more than that, and the function releases the GIL: threads. Otherwise
        worker processes, which run either kind in parallel (only a GIL-free function
        whose outputs cost more to move than to compute stays on threads). Under load
        from other programs the threads may use little more than a core even when the
        function releases the GIL: processes are the choice that cannot go wrong then."""
        threads = self._start_threads(n, own)
        per_thread = max(1, min(64, int(_GIL_PROBE_SECONDS / max(own, 1e-6))))
        barrier = threading.Barrier(n)
        futures, runs = [], []
        try:
            for _ in range(n):
                items = [x for x in (self._pull() for _ in range(per_thread)) if x is not None]
                if not items:
                    break
                futures.append(threads.submit(self._probe_chunk, barrier, items))
        finally:
            if len(futures) < n:  # the input ended (too few elements left to matter) or
                barrier.abort()  # failed: the threads waiting for the others go on
            for f in futures:  # kept, even when the input's error is on its way out
                results, run = f.result()
                runs.append(run)
                for index, value in results:
                    self._store(index, value)
        return Choice(*decide_after_gil_probe(runs, n, latency, moved), latency, own)

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
