"""AUTOTUNE's guard: a parallel map plan measured slower than the inline loop falls back
to inline and is retried later; switching plans mid-stream keeps every element, in order."""
import time

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.data import plan_guard
from tensorlite.data.parallel_map import cpu_count as parallel_cores
from tensorlite.data.plan_guard import PlanGuard


@pytest.fixture
def fast_windows(monkeypatch):
    monkeypatch.setattr(plan_guard, "_WINDOW_ELEMENTS", 4)
    monkeypatch.setattr(plan_guard, "_WINDOW_SECONDS", 0.0)
    monkeypatch.setattr(plan_guard, "_FIRST_RETRY_S", 0.01)


def test_guard_falls_back_retries_and_backs_off(fast_windows):
    g = PlanGuard(sequential_cost=1e-3)
    assert [g.observe(0.5e-3, True) for _ in range(4)] == [None] * 4  # faster: stays
    actions = [g.observe(2e-3, True) for _ in range(4)]
    assert actions == [None, None, None, "fallback"] and g.fallbacks == 1
    assert "2000 us/element > inline 1000 us" in g.explain("threads x2")
    assert [g.observe(1e-3, False) for _ in range(3)] == [None] * 3  # before the retry time
    time.sleep(0.02)
    assert g.observe(1e-3, False) == "retry"  # at the inline window's end, after the wait
    assert [g.observe(3e-3, True) for _ in range(4)][-1] == "fallback"
    assert g._retry_after == pytest.approx(0.04)  # doubled after each failed retry


def test_guard_keeps_a_plan_within_the_noise_of_inline(fast_windows):
    # a window 5% over the inline cost is load's noise, not a verdict: the plan stays;
    # 20% over falls back
    g = PlanGuard(sequential_cost=1e-3)
    assert [g.observe(1.05e-3, True) for _ in range(8)] == [None] * 8
    assert g.fallbacks == 0 and g.par_cost == pytest.approx(1.05e-3)
    assert [g.observe(1.2e-3, True) for _ in range(4)][-1] == "fallback"


def slow_python(x):
    s = 0
    for k in range(3000):
        s += (k * int(x)) % 7
    return np.int64(s)


@pytest.fixture
def never_worth_it(monkeypatch):
    """An inline cost of 0 makes every parallel window "slower"; returns the actions.
    (Small tasks, so the plan switches many times within the test's elements.)"""
    from tensorlite.data import map_autotune, parallel_map
    monkeypatch.setattr(parallel_map, "_CHUNK_SECONDS", 1e-3)
    monkeypatch.setattr(parallel_map, "_THREAD_CHUNK_SECONDS", 1e-4)
    decide = map_autotune.decide

    def parallel_first(m):  # a loaded machine may make AUTOTUNE choose inline at once:
        mode, n, why = decide(m)  # the guard is what is tested, so start a parallel plan
        return ("thread", 2, "the test starts a parallel plan") if mode == "inline" and \
            m.probe else (mode, n, why)
    monkeypatch.setattr(map_autotune, "decide", parallel_first)
    original = PlanGuard.__init__

    def zero_cost(self, sequential_cost, **kwargs):
        original(self, 0.0, **kwargs)
    monkeypatch.setattr(PlanGuard, "__init__", zero_cost)
    seen = []
    monkeypatch.setattr(PlanGuard, "observe", _no_sequential_update(PlanGuard.observe, seen))
    return seen


def test_autotune_falls_back_and_keeps_order(fast_windows, never_worth_it):
    # The map falls back, is retried, falls back again... while the elements keep coming,
    # all of them, in order.
    seen = never_worth_it
    ds = tf.data.Dataset.range(300).map(
        lambda x: tf.numpy_function(slow_python, [x], tf.int64),
        num_parallel_calls=tf.data.AUTOTUNE)
    out = [int(v) for v in ds]
    assert out == [int(slow_python(i)) for i in range(300)]
    assert "fallback" in seen and "retry" in seen


def _no_sequential_update(observe, seen):
    def wrapped(self, cost, parallel):
        action = observe(self, cost, parallel)
        self.seq_cost = 0.0
        seen.append(action)
        return action
    return wrapped


def test_threads_that_pay_off_are_kept():
    def wait(x):
        time.sleep(0.003)
        return x
    it = iter(tf.data.Dataset.range(60).map(
        lambda x: tf.numpy_function(wait, [x], tf.int64),
        num_parallel_calls=tf.data.AUTOTUNE))
    assert [int(v) for v in it] == list(range(60))


def test_a_plan_is_not_judged_on_its_ramp_up(fast_windows):
    """Forking workers and filling the pipeline make the first elements slow: those are
    skipped, the plan is judged on its steady cost."""
    g = PlanGuard(sequential_cost=1e-3)
    g.start_parallel(5)
    assert [g.observe(1.0, True) for _ in range(5)] == [None] * 5
    # then windows of two rounds of tasks (10 elements) at least
    assert [g.observe(0.5e-3, True) for _ in range(9)] == [None] * 9 and g.par_cost is None
    assert g.observe(0.5e-3, True) is None
    assert g.fallbacks == 0 and g.par_cost == pytest.approx(0.5e-3)


def test_retry_reuses_the_worker_processes(fast_windows, never_worth_it, monkeypatch):
    from tensorlite.data import map_autotune, parallel_map, workers
    seen = never_worth_it
    # The function is GIL-bound: AUTOTUNE's plan is worker processes (chosen directly here,
    # whatever the machine's load makes the thread probe measure).
    monkeypatch.setattr(map_autotune.AutotuneProbe, "gil_round",
                        lambda self, n, latency, own, moved: map_autotune.Choice(
                            "process", n, "test", latency, own))
    forks = []
    init = workers.Worker.__init__

    def counted(self, *args, **kwargs):
        forks.append(1)
        init(self, *args, **kwargs)
    monkeypatch.setattr(workers.Worker, "__init__", counted)
    ds = tf.data.Dataset.range(300).map(lambda x: np.int64(slow_python(x)),
                                        num_parallel_calls=tf.data.AUTOTUNE)
    assert [int(v) for v in ds] == [int(slow_python(i)) for i in range(300)]
    assert seen.count("retry") >= 1 and seen.count("fallback") >= 2
    assert len(forks) == parallel_map.cpu_count()  # forked once, reused by every retry


def test_closed_workers_exit_without_blocking_the_consumer():
    from tensorlite.data import workers
    w = workers.Worker(lambda e, i: e, 0)
    proc = w.proc
    w.close()
    assert any(p is proc for _, p in workers._EXITING)
    proc.join(5)
    assert not proc.is_alive()
    workers.reap_exited()
    assert all(p is not proc for _, p in workers._EXITING)


def test_inline_cost_is_re_measured_while_parallel_wins(fast_windows, monkeypatch):
    """The probe's inline cost goes stale when the load changes: while the parallel plan
    wins, one inline window now and then re-measures it; parallel stays only if it still
    wins against that fresh figure."""
    monkeypatch.setattr(plan_guard, "_FIRST_SAMPLE_S", 0.0)
    g = PlanGuard(sequential_cost=1e-3)  # a stale, high inline cost from the probe
    assert [g.observe(0.5e-3, True) for _ in range(4)][-1] == "sample"
    assert [g.observe(0.8e-3, False) for _ in range(4)][-1] == "retry"  # parallel still wins
    assert g._sample_every == pytest.approx(0.0) and g.fallbacks == 0
    assert [g.observe(0.5e-3, True) for _ in range(4)][-1] == "sample"
    assert [g.observe(0.3e-3, False) for _ in range(4)][-1] == "stay"  # inline is faster now
    assert g.fallbacks == 1 and "500 us/element > inline 300 us" in g.explain("process x2")


def test_no_inline_sample_when_parallel_beats_the_cpu_time(fast_windows, monkeypatch):
    """Inline never costs less than the function's CPU time: a parallel plan clearly below
    it is not stalled for a sample, and one near it still is."""
    monkeypatch.setattr(plan_guard, "_FIRST_SAMPLE_S", 0.0)
    g = PlanGuard(sequential_cost=1e-3)
    g.add_cpu(4 * 1e-3, 4)  # workers spent 1 ms of CPU per element
    assert [g.observe(0.55e-3, True) for _ in range(4)] == [None] * 4  # 2 workers: no sample
    assert g.cpu_cost == pytest.approx(1e-3) and not g._sampling
    g.add_cpu(4 * 1e-3, 4)
    assert [g.observe(0.9e-3, True) for _ in range(4)][-1] == "sample"  # inline might win


def _cpu_bound_python(x):
    s = 0
    for k in range(20_000):
        s += (k * int(x)) % 7
    return np.int64(s)


def _map_iterator(ds):
    from tensorlite.data import parallel_map
    raw = iter(ds)._raw
    while not isinstance(raw, parallel_map.ParallelMapIterator):
        raw = raw._in
    return raw


@pytest.mark.skipif(parallel_cores() < 2, reason="needs 2 cores to run threads side by side")
def test_gil_probe_sends_a_gil_bound_function_to_worker_processes():
    """Threads of a GIL-bound function take turns (they never run on more than one core
    at once, whatever the load): one round of the probe moves it to worker processes."""
    raw = _map_iterator(tf.data.Dataset.range(16).map(
        lambda x: _cpu_bound_python(int(x)), num_parallel_calls=2))
    raw._apply(raw._autotune.gil_round(2, 1e-3, 1e-3, 64))
    try:
        assert raw._stats.choice.startswith("process x2 (GIL-bound: threads started "
                                             "together ran on"), raw._stats.choice
        out = []
        while True:
            try:
                out.append(int(raw.next()))
            except StopIteration:
                break
        assert out == [int(_cpu_bound_python(i)) for i in range(16)]
    finally:
        raw.close()


def test_gil_probe_counts_cores_used_at_once(monkeypatch):
    """The probe's verdict from its threads' (ready, end, CPU) times: 2 threads each with
    8 ms of CPU in an 8.5 ms round released the GIL; in a 16 ms round they took turns."""
    def verdict(end):
        raw = _map_iterator(tf.data.Dataset.range(40).map(lambda x: x, num_parallel_calls=2))
        monkeypatch.setattr(raw._autotune, "_probe_chunk",
                            lambda barrier, items: ([], (1.0 - 0.001 * items[0][1], end,
                                                         0.008)))
        raw._apply(raw._autotune.gil_round(2, 1e-3, 1e-3, 64))
        raw.close()
        return raw._stats.choice
    assert "ran on 1.9 cores at once: the function releases the GIL" in verdict(1.0085)
    assert verdict(1.016).startswith("process x2 (GIL-bound: threads started together ran "
                                     "on 1.0 cores")


@pytest.mark.skipif(parallel_cores() < 2, reason="needs 2 cores to run threads side by side")
def test_an_input_error_during_the_gil_probe_does_not_hang():
    """The input fails while the probe hands elements to its threads started together:
    the threads already given work do not wait forever for the others, and the error
    reaches the consumer."""
    def check(x):
        tf.debugging.assert_less(x, tf.constant(3, tf.int64))
        return x
    ds = tf.data.Dataset.range(12).map(check).map(
        lambda x: _cpu_bound_python(int(x)), num_parallel_calls=tf.data.AUTOTUNE)
    with pytest.raises(tf.errors.InvalidArgumentError, match="element 3"):
        list(ds)


def test_autotune_judges_a_function_by_its_calls_after_the_first(monkeypatch):
    """The first call pays one-off costs (a function's first run, its conversion's setup):
    judged on it, AUTOTUNE sent an 11 us function to worker processes. Here the first call
    takes 20 ms and the others almost nothing: the map runs inline."""
    from tensorlite.data import map_autotune
    monkeypatch.setattr(map_autotune, "_INLINE_BELOW", 2e-3)   # whatever this machine's speed
    monkeypatch.setattr(map_autotune, "_PROBE_MORE_BELOW", 20e-3)
    calls = []

    def f(x):
        if not calls:
            time.sleep(0.02)
        calls.append(1)
        return x + 1
    ds = tf.data.Dataset.range(40).map(f, num_parallel_calls=tf.data.AUTOTUNE)
    raw = _map_iterator(ds)
    try:
        assert [int(raw.next()) for _ in range(40)] == list(range(1, 41))
        assert raw._stats.choice.startswith("inline x1 (function takes"), raw._stats.choice
    finally:
        raw.close()
