"""AUTOTUNE's guard on a parallel map plan: never slower than running the map inline.

A parallel plan (threads or worker processes) is chosen from a short probe; load from
other processes can later make it slower than the plain sequential loop (its workers
contend for the same cores, its hand-offs cost more than they save). The guard measures
what the consumer actually pays per element - time spent inside the stage's `next()` - in
windows, for the parallel plan and for the inline loop, each measured recently:
  * parallel slower than inline -> fall back to inline;
  * while inline, retry the parallel plan after a back-off (doubling on each failed retry,
    reset by a success), so a plan that pays off again when the load goes away comes back.
A parallel plan's ramp-up (forking workers, filling the pipeline: the elements in flight)
is a one-off cost, not its steady per-element cost: `start_parallel(warmup)` skips those
elements before the first window, so a plan is never judged, and dropped, on its start.

Example (what a pipeline's stats say after a fall-back):
    >>> stats.choice  # doctest: +SKIP
    'inline x1 (AUTOTUNE: threads x2 cost 41 us/element > inline 35 us; retry in 0.5 s)'
"""
import time

_WINDOW_ELEMENTS = 16
_WINDOW_SECONDS = 0.05
_FIRST_RETRY_S = 0.5
_MAX_RETRY_S = 30.0


class PlanGuard:
    """Per-element cost bookkeeping for one AUTOTUNE map; `observe` says what to do."""

    def __init__(self, sequential_cost):
        self.seq_cost = sequential_cost  # seconds per element inline (probe, then measured)
        self.par_cost = None
        self._count, self._spent, self._start = 0, 0.0, time.perf_counter()
        self._retry_after = _FIRST_RETRY_S
        self._retry_at = None
        self._skip = 0
        self.fallbacks = 0

    def start_parallel(self, warmup):
        """A parallel plan (re)starts: its first `warmup` elements are not measured."""
        self._skip = warmup
        self._reset_window()

    def _window_done(self):
        return self._count >= _WINDOW_ELEMENTS and \
            time.perf_counter() - self._start >= _WINDOW_SECONDS

    def _reset_window(self):
        self._count, self._spent, self._start = 0, 0.0, time.perf_counter()

    def observe(self, cost, parallel):
        """Records one element's cost in the current plan. Returns "fallback" (parallel
        measured slower than inline), "retry" (time to try the parallel plan again) or
        None."""
        if parallel and self._skip > 0:
            self._skip -= 1
            if self._skip == 0:
                self._reset_window()
            return None
        self._count += 1
        self._spent += cost
        if parallel:
            if not self._window_done():
                return None
            self.par_cost = self._spent / self._count
            self._reset_window()
            if self.par_cost > self.seq_cost:
                self.fallbacks += 1
                self._retry_at = time.perf_counter() + self._retry_after
                self._retry_after = min(2 * self._retry_after, _MAX_RETRY_S)
                return "fallback"
            self._retry_after = _FIRST_RETRY_S
            return None
        if self._window_done():
            self.seq_cost = self._spent / self._count
            self._reset_window()
        if self._retry_at is not None and time.perf_counter() >= self._retry_at and \
                self._count == 0:
            self._retry_at = None
            return "retry"
        return None

    def explain(self, plan):
        return (f"AUTOTUNE: {plan} cost {self.par_cost * 1e6:.0f} us/element > inline "
                f"{self.seq_cost * 1e6:.0f} us; retry in {self._retry_after / 2:.1f} s")
