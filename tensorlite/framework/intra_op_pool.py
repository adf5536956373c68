"""Splits one kernel's runs of images across a few threads (intra-op parallelism).

OpenBLAS's own threads only speed up the GEMM of a convolution; the im2col copies, the
Winograd transforms and the output writes around it stay on one core, so at 2 threads the
CIFAR CNN step gained 1.3x where TensorFlow's gained 2x. Instead, a kernel that works in
runs of images (each run: copy patches, one single-threaded GEMM, write the output) hands
its runs to `map_runs`, which runs them on the calling thread and `ways() - 1` persistent
helper threads. NumPy releases the GIL in copies, ufuncs and BLAS calls, so the runs
overlap. Runs are pulled one at a time from a shared iterator, so a thread slowed by
another process on its core simply takes fewer runs (nothing spin-waits).

`ways()` is 1 unless `blas_threads.run(..., split=True)` chose more threads for the calling
kernel; helper threads always see 1, so kernels never nest splits (no deadlock). After a
fork the child starts fresh helpers on first use (the parent's threads are not in it).

Example:
    >>> with splitting(2):
    ...     partial_sums = map_runs([(0, 4), (4, 8)], lambda pull: sum(e - s for s, e in pull))
    >>> sum(p for p in partial_sums if p is not None)
    8
"""
import contextlib
import os
import queue
import threading

_local = threading.local()
_pool = {"pid": None, "tasks": None, "threads": 0}
_lock = threading.Lock()


def ways():
    """How many threads the kernel running on this thread may use (1 outside a split)."""
    return getattr(_local, "ways", 1)


@contextlib.contextmanager
def splitting(n):
    """Lets kernels called in the block split their runs over `n` threads."""
    saved = ways()
    _local.ways = max(1, int(n))
    try:
        yield
    finally:
        _local.ways = saved


def _helper(tasks):
    while True:
        tasks.get()()


def _tasks(helpers):
    """The task queue, with at least `helpers` helper threads serving it."""
    with _lock:
        if _pool["pid"] != os.getpid():  # first use, or the child of a fork
            _pool.update(pid=os.getpid(), tasks=queue.SimpleQueue(), threads=0)
        while _pool["threads"] < helpers:
            threading.Thread(target=_helper, args=(_pool["tasks"],), daemon=True,
                             name=f"tensorlite-intra-op-{_pool['threads']}").start()
            _pool["threads"] += 1
        return _pool["tasks"]


def map_runs(runs, worker):
    """worker(pull) on up to `ways()` threads, each pulling (start, end) runs from one shared
    iterator; returns the workers' results (None from a thread that got no run, if the
    worker returns None then). The worker should allocate its scratch after its first pull.
    The first exception raised in any thread is raised here once all have stopped."""
    n = min(ways(), len(runs))
    pull = iter(runs)  # a list iterator's next() is atomic under the GIL
    if n <= 1:
        return [worker(pull)]
    results, failures = [None] * n, []
    done = threading.Semaphore(0)

    def job(i):
        try:
            results[i] = worker(pull)
        except BaseException as e:  # noqa: BLE001 - re-raised in the calling thread
            failures.append(e)
        finally:
            if i:  # the helpers' count: the caller waits for each of them
                done.release()
    tasks = _tasks(n - 1)
    for i in range(1, n):
        tasks.put(lambda i=i: job(i))
    job(0)
    for _ in range(n - 1):
        done.acquire()
    if failures:
        raise failures[0]
    return results


def sum_partials(parts, empty):
    """The sum of workers' partial results from `map_runs` (None from a thread that got no
    run), summed in place into the first; `empty()` where no thread got a run."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return empty()
    total = parts[0]
    for p in parts[1:]:
        total += p
    return total


def split_runs(n, per, ways_now=None):
    """(start, end) runs over n items, at most `per` items each and, when splitting, at least
    two per thread (so a slowed thread can hand work to the others)."""
    k = ways() if ways_now is None else ways_now
    if k > 1:
        per = max(1, min(per, -(-n // (2 * k))))
    per = max(1, per)
    return [(s, min(s + per, n)) for s in range(0, n, per)]
