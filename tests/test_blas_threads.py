"""Run-time BLAS thread control: the per-size choice by measurement, its back-off, the
real OpenBLAS setting (read back through threadpoolctl) and tf.config.threading."""
import os

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import blas_threads, intra_op_pool


RUN_QUEUE = [1]


@pytest.fixture
def fresh(monkeypatch):
    """A clean policy on a pretend 4-core machine, with set_threads recorded."""
    monkeypatch.setattr(blas_threads, "_classes", {})
    monkeypatch.setattr(blas_threads, "cpu_count", lambda: 4)
    # OpenBLAS's idle threads sleep (pytest loaded NumPy before tensorlite could cut the
    # timeout: the spinning case has a test of its own)
    monkeypatch.setattr(blas_threads, "OPENBLAS_SPINS", False)
    monkeypatch.setitem(blas_threads._state, "intra", 0)
    monkeypatch.setitem(blas_threads._state, "current", None)  # whatever earlier tests left
    seen = []

    def fake_set(n, force=False):
        seen.append(n)
        blas_threads._state["current"] = n
        return True
    monkeypatch.setattr(blas_threads, "set_threads", fake_set)
    monkeypatch.setattr(blas_threads.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    # the run queue: this thread alone unless a test says otherwise; re-read on every call
    monkeypatch.setattr(blas_threads, "_running_tasks", lambda: RUN_QUEUE[0])
    monkeypatch.setattr(blas_threads, "_free", dict(blas_threads._free, at=-1.0, ended=-1.0))
    monkeypatch.setattr(blas_threads, "FREE_CORES_TTL", -1.0)
    monkeypatch.setattr(blas_threads, "CONTENDED_TTL", -1.0)
    RUN_QUEUE[0] = 1
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
    """A slowdown the run queue does not show (a bursty neighbour) is caught by timing."""
    busy = [True]  # with a busy core, 4 threads are 60x slower than 1
    work = _clocked(monkeypatch, lambda n: (60.0 if busy[0] else 0.3) if n == 4 else 1.0)
    macs = 1 << 24
    used = [blas_threads.run(macs, work) for _ in range(40)]
    # an untimed warm-up, one sample of one thread, two of four (the first pays start-up)
    assert used[:4] == [1, 1, 4, 4]
    assert used[4:].count(1) == 36  # then one thread: the next re-try is 16 * 60 calls away
    busy[0] = False
    used = [blas_threads.run(macs, work) for _ in range(blas_threads.EXPLORE_MAX + 100)]
    assert used[-20:] == [4] * 20  # a re-try found the quiet machine again


def test_one_unlucky_or_lucky_call_does_not_decide(fresh, monkeypatch):
    """The choice is the lower median of the last three timings: a 4-thread start-up call
    that cost 60x does not rule four threads out, and a lucky one stops deciding after two
    more slow ones."""
    times = iter([60.0, 0.1] + [60.0] * 10)  # a slow start-up, then one lucky call
    work = _clocked(monkeypatch, lambda n: next(times) if n == 4 else 1.0)
    used = [blas_threads.run(1 << 24, work) for _ in range(12)]
    assert used[:5] == [1, 1, 4, 4, 4] and used[5:] == [1] * 7


def test_retries_cost_a_small_share_of_the_time(fresh, monkeypatch):
    work = _clocked(monkeypatch, lambda n: 60.0 if n == 4 else 1.0)
    used = [blas_threads.run(1 << 24, work) for _ in range(5000)]
    tries = [i for i, n in enumerate(used) if n == 4]
    assert tries[:2] == [2, 3]  # after the warm-up and one 1-thread sample: 4 threads twice
    assert 3 <= len(tries) <= 8 and min(np.diff(tries[1:])) >= 16 * 60 - 3
    assert 60 * len(tries) / (5000 - len(tries)) < 0.1  # under a tenth of the time


def test_threads_capped_at_the_cores_other_tasks_leave_free(fresh, monkeypatch):
    work = _clocked(monkeypatch, lambda n: 1.0 / n)
    RUN_QUEUE[0] = 4  # this thread and three others on 4 cores: no threaded try at all
    assert {blas_threads.run(1 << 24, work) for _ in range(3000)} == {1}
    RUN_QUEUE[0] = 3  # two others: two cores free (warm-up, a 1-thread sample, then 2)
    assert [blas_threads.run(1 << 24, work) for _ in range(3)] == [1, 1, 2]


def test_pinned_to_some_cores_only_our_share_of_the_others_counts(fresh, monkeypatch):
    """A container's cpuset: 4 of the host's 64 cores, the host's run queue 33 deep."""
    work = _clocked(monkeypatch, lambda n: 1.0 / n)
    monkeypatch.setitem(blas_threads._state, "machine_cpus", 64)
    RUN_QUEUE[0] = 33  # 32 others across 64 cores: 2 expected on our 4
    assert [blas_threads.run(1 << 24, work) for _ in range(3)] == [1, 1, 2]
    RUN_QUEUE[0] = 65  # 64 others: every one of our cores taken
    assert blas_threads.run(1 << 24, work) == 1


def test_our_own_spinning_workers_do_not_count_as_contention(fresh, monkeypatch):
    """After a threaded kernel OpenBLAS's idle workers spin (runnable) for a while, unless
    blas_tuning cut OpenBLAS's thread timeout (SPIN_SECONDS 0)."""
    work = _clocked(monkeypatch, lambda n: 1.0 / n)
    monkeypatch.setattr(blas_threads, "SPIN_SECONDS", 0.25)
    used = [blas_threads.run(1 << 24, work) for _ in range(3)]
    assert used[-1] == 4
    RUN_QUEUE[0] = 4  # this thread and our three spinning workers
    assert [blas_threads.run(1 << 24, work) for _ in range(5)] == [4] * 5
    monkeypatch.setattr(blas_threads, "SPIN_SECONDS", 0.0)  # workers asleep: three others
    assert blas_threads.run(1 << 24, work) == 1


def test_a_reading_that_found_every_core_taken_is_kept_longer(fresh, monkeypatch):
    """Re-reading the run queue every 5 ms measured ~1% of a contended 256x256 GEMM. A stale
    "taken" costs at most one-thread kernels for a moment, a stale "free" a collapse, so a
    "taken" reading is kept longer; and a cached reading is capped by each caller's `most`."""
    monkeypatch.setattr(blas_threads, "FREE_CORES_TTL", 0.005)
    monkeypatch.setattr(blas_threads, "CONTENDED_TTL", 0.05)
    monkeypatch.setattr(blas_threads, "cpu_count", lambda: 2)
    now = [100.0]
    monkeypatch.setattr(blas_threads.time, "monotonic", lambda: now[0])
    assert blas_threads.free_cores(1) == 1  # a caller's own cap: the machine's 2 are kept
    assert blas_threads.free_cores(2) == 2
    RUN_QUEUE[0] = 2  # another program takes a core
    now[0] += 0.004
    assert blas_threads.free_cores(2) == 2  # not re-read yet
    now[0] += 0.002
    assert blas_threads.free_cores(2) == 1
    RUN_QUEUE[0] = 1  # it ends
    now[0] += 0.03
    assert blas_threads.free_cores(2) == 1  # "taken" kept for CONTENDED_TTL
    a = np.arange(256 * 256, dtype=np.float32).reshape(256, 256) / 65536
    seen = len(fresh)
    np.testing.assert_array_equal(blas_threads.matmul(a, a), a @ a)  # contended: 1 thread,
    assert fresh[seen:] in ([], [1]) and not blas_threads._classes  # untimed
    now[0] += 0.03
    assert blas_threads.free_cores(2) == 2


def test_our_own_helper_threads_do_not_count_as_contention(fresh, monkeypatch):
    """An intra-op helper running an overlapped op (graph/passes/overlap_outputs.py) is
    this process's load, not another program's."""
    monkeypatch.setattr(blas_threads, "cpu_count", lambda: 2)
    RUN_QUEUE[0] = 2  # this thread and one more
    monkeypatch.setattr(intra_op_pool, "running_helpers", lambda: 1)  # ours
    assert blas_threads.free_cores(2) == 2
    monkeypatch.setattr(intra_op_pool, "running_helpers", lambda: 0)  # another program's
    assert blas_threads.free_cores(2) == 1


def test_without_a_run_queue_count_the_load_average_decides(fresh, monkeypatch):
    work = _clocked(monkeypatch, lambda n: 1.0 / n)
    monkeypatch.setattr(blas_threads, "_running_tasks", lambda: None)
    monkeypatch.setattr(blas_threads.os, "getloadavg", lambda: (6.0, 6.0, 6.0))
    assert {blas_threads.run(1 << 24, work) for _ in range(50)} == {1}
    monkeypatch.setattr(blas_threads.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert [blas_threads.run(1 << 24, work) for _ in range(3)] == [1, 1, 4]  # warm-up, samples


def test_the_run_queue_is_read_from_the_kernel():
    if not os.path.exists("/proc/loadavg"):
        pytest.skip("no /proc/loadavg here")
    assert blas_threads._running_tasks() >= 1  # this thread is running while it reads


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
        with blas_threads.fork_excluded():
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


def test_split_kernels_are_timed_even_when_no_core_is_free(fresh, monkeypatch):
    """Split kernels' threads block rather than spin: they are sampled beside a busy core,
    while OpenBLAS's own threads are not."""
    work = _clocked(monkeypatch, lambda n: 1.0 / n)
    RUN_QUEUE[0] = 4  # this thread and three others on 4 cores
    assert {blas_threads.run(1 << 24, work) for _ in range(50)} == {1}
    now = [0.0]

    def split_work():  # a split kernel's time falls with the ways it is split into
        now[0] += 1.0 / intra_op_pool.ways()
        return intra_op_pool.ways()
    monkeypatch.setattr(blas_threads.time, "perf_counter", lambda: now[0])
    used = [blas_threads.run(1 << 24, split_work, split=True) for _ in range(5)]
    assert used == [1, 1, 4, 4, 4]  # warm-up, one-thread sample, two of four, then four wins


def test_spinning_openblas_threads_are_not_used_beside_split_kernels(fresh, monkeypatch):
    """NumPy loaded before tensorlite: OpenBLAS's idle threads spin after each threaded
    call. While split kernels run, its own threads stay unused (they would hold the cores
    the split kernels need next); alone, a plain kernel still gets them."""
    monkeypatch.setattr(blas_threads, "OPENBLAS_SPINS", True)
    work = _clocked(monkeypatch, lambda n: 1.0 / n)
    monkeypatch.setattr(blas_threads, "_last_split", [-1e9])   # no split kernel near
    assert [blas_threads.run(1 << 24, work) for _ in range(5)] == [1, 1, 4, 4, 4]
    blas_threads._classes.clear()
    monkeypatch.setattr(blas_threads, "_last_split", [blas_threads.time.monotonic()])
    assert {blas_threads.run(1 << 24, work) for _ in range(200)} == {1}
    now = [0.0]

    def split_work():
        now[0] += 1.0 / intra_op_pool.ways()
        return intra_op_pool.ways()
    monkeypatch.setattr(blas_threads.time, "perf_counter", lambda: now[0])
    assert [blas_threads.run(1 << 24, split_work, split=True) for _ in range(5)] == \
        [1, 1, 4, 4, 4]


def test_the_spin_flag_follows_the_import_order():
    """In a fresh process, tensorlite imported before NumPy cuts the timeout (no spin);
    imported after it, without OPENBLAS_THREAD_TIMEOUT set, it cannot."""
    import subprocess
    import sys
    code = ("{first}; {second}; from tensorlite.framework import blas_threads; "
            "print(blas_threads.OPENBLAS_SPINS)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_THREAD_TIMEOUT", "TENSORLITE_BLAS_TUNING")}
    out = {}
    for name, first, second in (("tl_first", "import tensorlite", "import numpy"),
                                ("np_first", "import numpy", "import tensorlite")):
        out[name] = subprocess.run([sys.executable, "-c", code.format(first=first,
                                                                       second=second)],
                                   capture_output=True, text=True, env=env,
                                   check=True).stdout.strip()
    assert out == {"tl_first": "False", "np_first": "True"}


@pytest.mark.parametrize("shape", [(256, 256, 256), (7, 300, 5), (1, 64, 3000), (513, 40, 1),
                                   (4, 300, 200)])
def test_split_matmul_equals_numpy(shape):
    m, k, n = shape
    rng = np.random.default_rng(0)
    a = rng.normal(size=(m, k)).astype(np.float32)
    b = rng.normal(size=(k, n)).astype(np.float32)
    for ways in (1, 2, 3):
        with intra_op_pool.splitting(ways):
            got = blas_threads._split_matmul(a, b)
        np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-4)
        assert got.dtype == np.float32 and got.shape == (m, n)
    with intra_op_pool.splitting(2):   # transposed (non-contiguous) operands
        np.testing.assert_allclose(blas_threads._split_matmul(a.T.copy().T, b), a @ b,
                                   rtol=1e-5, atol=1e-4)
        # b a transpose: split by its columns
        np.testing.assert_allclose(blas_threads._split_matmul(a, b.T.copy().T), a @ b,
                                   rtol=1e-5, atol=1e-4)
        # a short a and a large b: split by the contraction, the parts added
        short = a[:2]
        np.testing.assert_allclose(blas_threads._split_matmul(short, b), short @ b,
                                   rtol=1e-5, atol=1e-4)


def test_matmul_splits_rows_when_openblas_threads_would_spin(fresh, monkeypatch):
    monkeypatch.setattr(blas_threads, "OPENBLAS_SPINS", True)
    monkeypatch.setattr(blas_threads, "_last_split", [blas_threads.time.monotonic()])
    a = np.ones((512, 512), np.float32)
    for _ in range(6):
        np.testing.assert_array_equal(blas_threads.matmul(a, a), np.full((512, 512), 512.0))
    assert any(k[0] == "_split_matmul" and k[1] for k in blas_threads._classes)


def test_few_rows_times_a_wide_transpose_runs_as_the_transposed_product(fresh, monkeypatch):
    """g @ W^T (a Dense layer's input gradient) is computed as (W @ g^T)^T, OpenBLAS's
    faster form there; the values are the same, on one thread and split."""
    rng = np.random.default_rng(3)
    g = rng.normal(size=(32, 512)).astype(np.float32)
    w = rng.normal(size=(2304, 512)).astype(np.float32)
    assert blas_threads._wide_transposed(g, w.T)
    assert not blas_threads._wide_transposed(w, g.T)  # many rows: as it is
    assert not blas_threads._wide_transposed(g, np.ascontiguousarray(w.T))  # no transpose
    seen = []
    real = np.matmul
    monkeypatch.setattr(blas_threads.np, "matmul", lambda a, b, **k: (
        seen.append((a.shape, b.shape)), real(a, b, **k))[1])
    want = g.astype(np.float64) @ w.T.astype(np.float64)
    for spins in (False, True):  # OpenBLAS threads, or split over the intra-op pool
        monkeypatch.setattr(blas_threads, "OPENBLAS_SPINS", spins)
        monkeypatch.setattr(blas_threads, "_last_split", [blas_threads.time.monotonic()])
        for _ in range(4):
            seen.clear()
            got = blas_threads.matmul(g, w.T)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
            assert got.shape == (32, 2304) and seen and all(a[1] == 512 and b == (512, 32)
                                                            for a, b in seen)
