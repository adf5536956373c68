"""Run-time BLAS thread control: the per-size choice by measurement, its back-off, the
real OpenBLAS setting (read back through threadpoolctl) and tf.config.threading."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import blas_threads


@pytest.fixture
def fresh(monkeypatch):
    """A clean policy on a pretend 4-core machine, with set_threads recorded."""
    monkeypatch.setattr(blas_threads, "_classes", {})
    monkeypatch.setattr(blas_threads, "cpu_count", lambda: 4)
    monkeypatch.setitem(blas_threads._state, "intra", 0)
    seen = []

    def fake_set(n, force=False):
        seen.append(n)
        blas_threads._state["current"] = n
        return True
    monkeypatch.setattr(blas_threads, "set_threads", fake_set)
    monkeypatch.setattr(blas_threads.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    yield seen
    blas_threads._state["current"] = None


def _clocked(monkeypatch, seconds_for):
    """A fake clock: each timed call takes seconds_for(current threads)."""
    now = [0.0]

    def work():
        now[0] += seconds_for(blas_threads._state["current"])
        return blas_threads._state["current"]
    monkeypatch.setattr(blas_threads.time, "perf_counter", lambda: now[0])
    return work


def test_small_kernels_run_single_threaded(fresh):
    assert blas_threads.run(1000, lambda: "done") == "done"
    assert fresh == [1] and blas_threads.choose(1000) == 1


def test_contention_backs_off_to_one_thread_and_recovers(fresh, monkeypatch):
    busy = [True]  # with a busy core, 4 threads are 60x slower than 1
    work = _clocked(monkeypatch, lambda n: (60.0 if busy[0] else 0.3) if n == 4 else 1.0)
    macs = 1 << 24
    used = [blas_threads.run(macs, work) for _ in range(40)]
    assert used[:3] == [1, 4, 4]  # one sample of each first (of 4 threads past its warm-up)
    assert used[2:].count(1) >= 37  # then one thread, re-trying four rarely
    busy[0] = False
    used = [blas_threads.run(macs, work) for _ in range(blas_threads.EXPLORE_MAX + 100)]
    assert used[-20:] == [4] * 20  # a re-try found the quiet machine again


def test_retries_cost_a_small_share_of_the_time(fresh, monkeypatch):
    work = _clocked(monkeypatch, lambda n: 60.0 if n == 4 else 1.0)
    used = [blas_threads.run(1 << 24, work) for _ in range(5000)]
    tries = [i for i, n in enumerate(used) if n == 4]
    assert tries[:2] == [1, 2]  # the first sample of 4 threads is taken twice (warm-up)
    assert 3 <= len(tries) <= 8 and min(np.diff(tries[1:])) >= 16 * 60 - 3
    assert 60 * len(tries) / (5000 - len(tries)) < 0.1  # under a tenth of the time


def test_no_retries_of_more_threads_while_every_core_is_loaded(fresh, monkeypatch):
    work = _clocked(monkeypatch, lambda n: 60.0 if n == 4 else 1.0)
    monkeypatch.setattr(blas_threads.os, "getloadavg", lambda: (6.0, 6.0, 6.0))
    used = [blas_threads.run(1 << 24, work) for _ in range(3000)]
    assert used.count(4) == 2  # the first samples only (the first also pays for warm-up)


def test_intra_op_setting_caps_threads(fresh, monkeypatch):
    work = _clocked(monkeypatch, lambda n: 1.0)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    try:
        assert tf.config.threading.get_intra_op_parallelism_threads() == 1
        assert {blas_threads.run(1 << 26, work) for _ in range(50)} == {1}
    finally:
        tf.config.threading.set_intra_op_parallelism_threads(0)
    assert tf.config.threading.get_intra_op_parallelism_threads() == 0


def test_inter_op_setting_round_trips_and_rejects_negatives():
    tf.config.threading.set_inter_op_parallelism_threads(3)
    try:
        assert tf.config.threading.get_inter_op_parallelism_threads() == 3
    finally:
        tf.config.threading.set_inter_op_parallelism_threads(0)
    with pytest.raises(ValueError, match="inter_op"):
        tf.config.threading.set_inter_op_parallelism_threads(-1)
    with pytest.raises(ValueError, match="intra_op"):
        tf.config.threading.set_intra_op_parallelism_threads(-2)


def test_openblas_really_changes_threads():
    """The setting reaches NumPy's OpenBLAS, as threadpoolctl (its own reader) sees it.
    Other OpenBLAS copies in the process (SciPy's, when loaded) are not NumPy's and are
    left alone."""
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def numpy_openblas():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["internal_api"] == "openblas" and "numpy" in i.get("filepath", "")]
    before = numpy_openblas()
    if not before:
        pytest.skip("NumPy here is not built on OpenBLAS")
    try:
        assert blas_threads.set_threads(1, force=True)
        assert set(numpy_openblas()) == {1}
        if before[0] > 1:  # back up to NumPy's own count
            assert blas_threads.set_threads(before[0], force=True)
            assert set(numpy_openblas()) == {before[0]}
    finally:
        blas_threads.set_threads(before[0], force=True)


def test_matmul_values_unchanged_on_any_thread_count(fresh):
    a = np.random.default_rng(0).random((300, 200))
    b = np.random.default_rng(1).random((200, 150))
    for _ in range(3):
        np.testing.assert_allclose(tf.matmul(tf.constant(a), tf.constant(b)).numpy(), a @ b,
                                   rtol=1e-12)


def test_a_fork_waits_for_a_running_threaded_kernel():
    """OpenBLAS deadlocks when a process forks while its pool runs a kernel (its at-fork
    handler stops the pool under the GEMM): tf.data's worker forks wait for such kernels,
    and kernels started meanwhile wait for the fork."""
    import threading
    import time
    inside, release, order = threading.Event(), threading.Event(), []

    def kernel():
        with blas_threads._threaded_kernel():
            inside.set()
            release.wait(10)
            order.append("kernel done")

    def fork():
        with blas_threads.safe_to_fork():
            order.append("forked")
    k = threading.Thread(target=kernel)
    k.start()
    assert inside.wait(10)
    f = threading.Thread(target=fork)
    f.start()
    time.sleep(0.2)
    assert order == []  # the fork is held while the kernel runs
    release.set()
    k.join(10)
    f.join(10)
    assert order == ["kernel done", "forked"]
