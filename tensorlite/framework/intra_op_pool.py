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
kernel; a helper running another thread's share sees 1, so shares never split again. After
a fork the child starts fresh helpers on first use (the parent's threads are not in it).

`submit(fn)` queues a whole op for a helper (graph/passes/overlap_outputs.py runs a training
step's weight gradients so, beside the chain of input gradients). Every queued thing is a
`Task` that whoever claims it first runs, so nothing waits on work no thread has started:
a split whose helper is busy with a submitted op does all its runs itself and drops the
helper's share; a thread waiting for a submitted op runs it if no helper has started it,
and otherwise runs what is queued meanwhile (the op's own split shares), helping it finish.

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


class _Local(threading.local):
    """Per-thread state with class defaults: a thread that never set them reads them
    without the AttributeError a bare threading.local raises inside getattr (a caught
    exception before a 256x256 GEMM measured ~4 us slower, twice its own cost)."""
    ways = 1
    helper = False


_local = _Local()
_pool = {"pid": None, "tasks": None, "threads": 0}
_lock = threading.Lock()


def ways():
    """How many threads the kernel running on this thread may use (1 outside a split)."""
    return _local.ways


@contextlib.contextmanager
def splitting(n):
    """Lets kernels called in the block split their runs over `n` threads."""
    saved = ways()
    _local.ways = max(1, int(n))
    try:
        yield
    finally:
        _local.ways = saved


def on_helper():
    """True on one of the pool's helper threads."""
    return _local.helper


class Task:
    """A call queued for the helper threads. Whoever claims it first runs it: a helper, or
    a thread waiting for a result (see `result`)."""
    __slots__ = ("fn", "args", "claimed", "value", "error", "done")

    def __init__(self, fn, args=()):
        self.fn, self.args, self.claimed = fn, args, False
        self.value = self.error = None
        self.done = threading.Event()

    def claim(self):
        with _claims:
            if self.claimed:
                return False
            self.claimed = True
            return True

    def run(self):
        try:
            self.value = self.fn(*self.args)
        except BaseException as e:  # noqa: BLE001 - re-raised by result()
            self.error = e
        finally:
            self.done.set()
            with _work:
                _work.notify_all()

    def result(self):
        """The call's value (or its exception). A task no helper has started yet runs on
        the calling thread; while a helper runs it, the caller runs the tasks queued
        meanwhile (the helper's kernel hands out its runs that way), so it helps rather
        than idles."""
        if self.claim():
            self.run()
        tasks = _pool["tasks"]
        while not self.done.is_set():
            try:
                other = tasks.get_nowait()
            except queue.Empty:
                with _work:
                    _work.wait_for(lambda: self.done.is_set() or not tasks.empty())
                continue
            if other.claim():
                other.run()
        if self.error is not None:
            raise self.error
        return self.value


_claims = threading.Lock()
_work = threading.Condition()  # notified when a task is queued or finishes


_running = [0]  # helper threads running a task now


def running_helpers():
    """How many helper threads are running a task now: this process's own load, which
    blas_threads.free_cores does not count against it."""
    return _running[0]


def _helper(tasks):
    _local.helper = True
    while True:
        task = tasks.get()
        if task.claim():
            with _claims:
                _running[0] += 1
            try:
                task.run()
            finally:
                with _claims:
                    _running[0] -= 1


def _put(tasks, task):
    tasks.put(task)
    with _work:
        _work.notify_all()


def submit(fn, *args):
    """fn(*args) queued for a helper thread (started when needed); returns its Task."""
    task = Task(fn, args)
    _put(_tasks(1), task)
    return task


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
    tasks = _tasks(n - 1)
    helpers = [Task(worker, (pull,)) for _ in range(n - 1)]
    for task in helpers:
        _put(tasks, task)
    error = None
    try:
        results = [worker(pull)]
    except BaseException as e:  # noqa: BLE001 - raised once the helpers have stopped
        results, error = [None], e
    for task in helpers:
        if task.claim():  # busy elsewhere (a submitted task), it never started its share:
            results.append(None)  # the runs are all taken by now, so it is dropped
            continue
        task.done.wait()
        error = error or task.error
        results.append(task.value)
    if error is not None:
        raise error
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
