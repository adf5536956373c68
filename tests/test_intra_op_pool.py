"""Intra-op splitting of a kernel's runs of images over threads: every run done once, errors
and forks handled, and each convolution kernel that splits (im2col, Winograd, the filter
gradient) giving the single-threaded answer and passing op_check while split."""
import contextlib
import os
import threading
import time

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import blas_threads, intra_op_pool
from tensorlite.ops import conv_kernels, conv_select, numba_winograd, winograd
from tests.op_check import check_op, rand
from tests.test_conv_ops import ref_conv2d


def test_every_run_is_done_once_across_threads():
    seen, names = [], set()

    def worker(pull):
        mine = 0
        for s, e in pull:
            seen.append((s, e))
            names.add(threading.current_thread().name)
            time.sleep(0.002)  # lets the other thread take runs too
            mine += e - s
        return mine
    runs = intra_op_pool.split_runs(40, 100, ways_now=2)
    with intra_op_pool.splitting(2):
        out = intra_op_pool.map_runs(runs, worker)
    assert sorted(seen) == runs and len(runs) == 4  # two runs per thread at least
    assert sum(x for x in out if x is not None) == 40 and len(out) == 2
    assert len(names) == 2


def test_outside_a_split_everything_runs_on_the_caller():
    names = []
    out = intra_op_pool.map_runs([(0, 1), (1, 2)],
                                 lambda pull: names.extend(threading.current_thread().name
                                                           for _ in pull))
    assert out == [None] and names == [threading.current_thread().name] * 2


def test_helpers_never_split_again():
    inner = []

    def worker(pull):
        for _ in pull:
            inner.append(intra_op_pool.ways())
            time.sleep(0.002)
    with intra_op_pool.splitting(2):
        assert intra_op_pool.ways() == 2
        intra_op_pool.map_runs([(i, i + 1) for i in range(6)], worker)
    assert intra_op_pool.ways() == 1
    # the caller sees 2 (it is inside the split); a helper thread always sees 1
    assert set(inner) <= {1, 2} and 1 in inner


def test_an_error_in_a_helper_reaches_the_caller_after_all_stop():
    def worker(pull):
        for s, _ in pull:
            time.sleep(0.002)
            if threading.current_thread() is not threading.main_thread():
                raise ValueError(f"run {s} failed")
    with intra_op_pool.splitting(2), pytest.raises(ValueError, match="failed"):
        intra_op_pool.map_runs([(i, i + 1) for i in range(8)], worker)


@contextlib.contextmanager
def _helpers_busy(free=0):
    """Occupies all the pool's helper threads but `free` (a machine with more cores has
    more of them) until the block ends."""
    intra_op_pool.submit(lambda: None).result()  # at least one helper exists
    blockers, release = [], threading.Event()
    for _ in range(intra_op_pool._pool["threads"] - free):
        started = threading.Event()
        blockers.append(intra_op_pool.submit(lambda s=started: (s.set(), release.wait(10))))
        assert started.wait(10)
    try:
        yield release
    finally:
        release.set()
        for task in blockers:
            task.result()


def test_a_task_no_helper_has_started_runs_on_the_caller():
    with _helpers_busy():
        task = intra_op_pool.submit(lambda: threading.current_thread().name)
        assert task.result() == threading.current_thread().name


def test_a_split_beside_a_busy_helper_neither_waits_nor_loses_runs():
    with _helpers_busy() as release:
        seen = []
        with intra_op_pool.splitting(2):
            out = intra_op_pool.map_runs([(i, i + 1) for i in range(6)],
                                         lambda pull: seen.extend(s for s, _ in pull) or 1)
        # the helper never started its share: dropped, not waited for (the helpers are
        # still blocked here), and the caller did every run
        assert not release.is_set() and sorted(seen) == list(range(6)) and out == [1, None]


def test_waiting_for_a_running_task_helps_with_its_runs():
    names, started = set(), threading.Event()

    def kernel():  # a split kernel, as an overlapped op runs it on the helper
        def worker(pull):
            for _ in pull:
                started.set()
                names.add(threading.current_thread().name)
                time.sleep(0.01)
        with intra_op_pool.splitting(2):
            intra_op_pool.map_runs([(i, i + 1) for i in range(20)], worker)
        return "done"
    with _helpers_busy(free=1):  # only the caller can take the kernel's share
        task = intra_op_pool.submit(kernel)
        assert started.wait(10)
        assert task.result() == "done"  # the caller took runs while it waited
        assert threading.current_thread().name in names and len(names) == 2


def test_a_failing_task_raises_in_the_thread_that_waits():
    def fail():
        raise KeyError("missing")
    with pytest.raises(KeyError, match="missing"):
        intra_op_pool.submit(fail).result()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_helpers_of_its_own():
    with intra_op_pool.splitting(2):  # the parent's helpers exist now
        intra_op_pool.map_runs([(0, 1), (1, 2)], lambda pull: [time.sleep(0.001) for _ in pull])
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: would hang on the parent's (absent) helper threads otherwise
        try:
            with intra_op_pool.splitting(2):
                out = intra_op_pool.map_runs([(i, i + 1) for i in range(6)],
                                             lambda pull: sum(e - s for s, e in pull))
            os.write(write, str(sum(x or 0 for x in out)).encode())
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.01)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung in map_runs")
    assert os.read(read, 100) == b"6"
    os.close(read)


GEOMETRIES = [((7, 6, 5, 8), (3, 3, 8, 4), (1, 1, 1, 1)),
              ((6, 7, 7, 16), (3, 3, 16, 5), (0, 0, 0, 0)),
              ((5, 9, 8, 3), (3, 3, 3, 6), (2, 1, 0, 1))]


@pytest.mark.parametrize("xs,ws,pads", GEOMETRIES)
def test_split_kernels_equal_single_threaded(xs, ws, pads, monkeypatch):
    monkeypatch.setattr(conv_kernels, "_CHUNK_BYTES", 1)  # one image per run: many runs
    monkeypatch.setattr(winograd, "CHUNK_BYTES", 1)
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    geo = ((1, 1), (1, 1), pads)
    y = conv_kernels._conv_im2col(x, w, *geo)
    kernels = [lambda: conv_kernels._conv_im2col(x, w, *geo),
               lambda: conv_kernels._conv_bf_fwd(x, y, ws[:2], *geo)]
    if xs[-1] >= 8:
        kernels.append(lambda: winograd.conv3x3(x, w, pads))
        if numba_winograd.available():
            kernels.append(lambda: winograd.conv3x3(x, w, pads, m=4))
            kernels.append(lambda: winograd.filter_grad3x3(x, y, pads, m=4))
    for kernel in kernels:
        want = kernel()
        with intra_op_pool.splitting(2):
            for _ in range(5):  # the threads interleave differently each time
                np.testing.assert_allclose(kernel(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("algo", ["im2col", "winograd", pytest.param(
    "winograd4", marks=pytest.mark.skipif(not numba_winograd.available(),
                                          reason="needs numba (the jit extra)"))])
def test_split_algorithms_pass_op_check(algo, monkeypatch):
    """Values against the loop reference, gradients (whose filter gradient and stride-1
    input gradient split too) against finite differences, all with two threads."""
    monkeypatch.setattr(conv_kernels, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(winograd, "CHUNK_BYTES", 1)
    x, w = rand(4, 5, 6, 16, seed=41), rand(3, 3, 16, 3, seed=42)
    with conv_select.forced(algo), intra_op_pool.splitting(2):
        check_op(lambda a, b: tf.nn.conv2d(a, b, 1, "SAME"),
                 lambda a, b: ref_conv2d(a, b, (1, 1), "SAME"), [x, w])


def test_run_splits_kernels_that_ask_and_times_them_apart(monkeypatch):
    monkeypatch.setattr(blas_threads, "_classes", {})
    monkeypatch.setattr(blas_threads, "cpu_count", lambda: 2)
    monkeypatch.setitem(blas_threads._state, "intra", 0)
    # a quiet machine whatever this one is doing: only this thread in the run queue
    monkeypatch.setattr(blas_threads, "_running_tasks", lambda: 1)
    monkeypatch.setattr(blas_threads, "_free", dict(blas_threads._free, at=-1.0))
    monkeypatch.setattr(blas_threads, "OPENBLAS_SPINS", False)  # whatever the import order

    def kernel():
        return intra_op_pool.ways()
    seen = [blas_threads.run(1 << 24, kernel, split=True) for _ in range(4)]
    assert seen == [1, 1, 2, 2]  # warm-up, the one-thread sample, then two samples of 2
    assert blas_threads.run(1 << 24, np.add, 1, 2) == 3  # a whole-BLAS kernel: 1 way
    assert ("kernel" in str(list(blas_threads._classes)))
    assert len(blas_threads._classes) == 2  # timed apart from other kernels of that size


def test_sum_partials_skips_threads_without_runs():
    parts = [np.ones(3), None, np.full(3, 2.0)]
    np.testing.assert_array_equal(intra_op_pool.sum_partials(parts, lambda: np.zeros(3)),
                                  np.full(3, 3.0))
    np.testing.assert_array_equal(intra_op_pool.sum_partials([None, None],
                                                             lambda: np.zeros(2)), np.zeros(2))
