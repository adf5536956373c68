"""AUTOTUNE's guard on a parallel map plan: never slower than running the map inline.

A parallel plan (threads or worker processes) is chosen from a short probe; load from
other processes can later make it slower than the plain sequential loop (its workers
contend for the same cores, its hand-offs cost more than they save). The guard measures
what the consumer actually pays per element - time spent inside the stage's `next()` - in
windows, for the parallel plan and for the inline loop, each measured recently:
  * parallel clearly slower than inline (by more than _FALLBACK_MARGIN) -> fall back
    to inline;
  * while inline, retry the parallel plan after a back-off (doubling on each failed retry,
    reset by a success), so a plan that pays off again when the load goes away comes back;
  * while parallel wins, re-measure the inline loop now and then ("sample": one inline
    window, at 0.5 s, then at doubling intervals up to 8 s while parallel keeps winning),
    because the inline cost it is compared with changes with the load too: a stale one
    (the probe's two elements, measured under another load) can keep a plan that has
    become slower than inline. A sample is skipped when it cannot change the verdict:
    the inline loop never costs less per element than the function's CPU time (which
    the workers measure while they run it), so a parallel plan that costs clearly less
    than that wins whatever the load, and the sample's stall is not paid for nothing.
Only elements the inline loop computes count as inline cost (not ones the parallel plan
left buffered), and a parallel plan's ramp-up (forking workers, filling the pipeline: the
elements in flight) is a one-off cost, not its steady per-element cost: `start_parallel`
skips those elements before its first window, so a plan is never dropped on its start.

Example (what a pipeline's stats say after a fall-back):
    >>> stats.choice  # doctest: +SKIP
    'inline x1 (AUTOTUNE: threads x2 cost 41 us/element > inline 35 us; retry in 0.5 s)'
"""
import time

_WINDOW_ELEMENTS = 16
_WINDOW_SECONDS = 0.05
_FIRST_RETRY_S = 0.1
_MAX_RETRY_S = 30.0
_FIRST_SAMPLE_S = 0.5
_MAX_SAMPLE_S = 8.0
_SURE_WIN = 0.8  # parallel cost below this share of the CPU time: inline cannot beat it
# A parallel plan is dropped only when it costs clearly more than inline: a window's mean
# under other programs' load varies by ~10%, and the inline cost it is compared with is
# the probe's lower median (or a window's mean measured under another load). Without the
# margin, threads at 1009 us/element against an inline 960 us fell back at once, and the
# plan that scaled when the neighbours paused was off for the rest of a 64-image pass.
_FALLBACK_MARGIN = 1.1


class PlanGuard:
    """Per-element cost bookkeeping for one AUTOTUNE map; `observe` says what to do."""

    def __init__(self, sequential_cost):
        self.seq_cost = sequential_cost  # seconds per element inline (probe, then measured)
        self.par_cost = None
        self._count, self._spent, self._start = 0, 0.0, time.perf_counter()
        self._retry_after = _FIRST_RETRY_S
        self._retry_at = None
        self._sample_every = _FIRST_SAMPLE_S
        self._sample_at = time.perf_counter() + _FIRST_SAMPLE_S
        self._sampling = False
        self._skip = 0
        self._par_window = 0  # elements in a parallel window beyond _WINDOW_ELEMENTS
        self._cpu, self._cpu_elements = 0.0, 0  # the workers' CPU time in this window
        self.cpu_cost = None  # CPU seconds per element, measured by the workers
        self.fallbacks = 0

    def start_parallel(self, warmup):
        """A parallel plan (re)starts: its first `warmup` elements (one task per worker)
        are not measured, and its windows span at least two more rounds of tasks, so the
        ramp-up does not blur its steady cost."""
        self._skip = warmup
        self._par_window = 2 * warmup
        self._reset_window()

    def add_cpu(self, seconds, elements):
        """The CPU time workers spent on `elements` elements (a lower bound on what each
        costs inline: a single-threaded function's wall time is at least its CPU time)."""
        self._cpu += seconds
        self._cpu_elements += elements

    def _window_done(self, elements=0):
        return self._count >= max(elements, _WINDOW_ELEMENTS) and \
            time.perf_counter() - self._start >= _WINDOW_SECONDS

    def _reset_window(self):
        self._count, self._spent, self._start = 0, 0.0, time.perf_counter()

    def _lost(self):
        """Parallel measured slower than inline: back off before trying it again."""
        self.fallbacks += 1
        self._retry_at = time.perf_counter() + self._retry_after
        self._retry_after = min(2 * self._retry_after, _MAX_RETRY_S)
        self._sample_every = _FIRST_SAMPLE_S

    def observe(self, cost, parallel):
        """Records one element's cost in the current plan. Returns "fallback" (parallel
        measured slower than inline), "sample" (time to re-measure inline: run inline for
        one window), "retry" (back to the parallel plan), "stay" (the sample found inline
        faster: stay inline, as after a fall-back) or None."""
        if parallel and self._skip > 0:
            self._skip -= 1
            if self._skip == 0:
                self._reset_window()
            return None
        self._count += 1
        self._spent += cost
        if parallel:
            return self._observe_parallel()
        return self._observe_inline()

    def _observe_parallel(self):
        if not self._window_done(self._par_window):
            return None
        self.par_cost = self._spent / self._count
        self._reset_window()
        if self._cpu_elements:
            self.cpu_cost = self._cpu / self._cpu_elements
            self._cpu, self._cpu_elements = 0.0, 0
        if self.par_cost > _FALLBACK_MARGIN * self.seq_cost:
            self._lost()
            return "fallback"
        self._retry_after = _FIRST_RETRY_S
        if time.perf_counter() >= self._sample_at:
            if self.cpu_cost is not None and self.par_cost <= _SURE_WIN * self.cpu_cost:
                self._next_sample()  # inline cannot win now: as if a sample said so
                return None
            self._sampling = True
            return "sample"
        return None

    def _next_sample(self):
        self._sample_every = min(2 * self._sample_every, _MAX_SAMPLE_S)
        self._sample_at = time.perf_counter() + self._sample_every

    def _observe_inline(self):
        if self._window_done():
            self.seq_cost = self._spent / self._count
            self._reset_window()
            if self._sampling:
                self._sampling = False
                if self.par_cost is not None and \
                        self.par_cost > _FALLBACK_MARGIN * self.seq_cost:
                    self._lost()
                    return "stay"
                self._next_sample()
                return "retry"
        if not self._sampling and self._retry_at is not None and \
                time.perf_counter() >= self._retry_at and self._count == 0:
            self._retry_at = None
            return "retry"
        return None

    def explain(self, plan):
        return (f"AUTOTUNE: {plan} cost {self.par_cost * 1e6:.0f} us/element > inline "
                f"{self.seq_cost * 1e6:.0f} us; retry in {self._retry_after / 2:.1f} s")
