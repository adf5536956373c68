"""BLAS threads chosen at run time, per kernel size, by measurement.

NumPy's OpenBLAS starts one thread per core and splits every large GEMM across all of them.
When another process holds a core, the half of the work on that core waits for the
scheduler while the caller spins: a 256x256 float32 matmul measured 16 ms instead of
0.27 ms (60x) on this project's 2-core machine. So each GEMM-heavy kernel runs through
`run(macs, fn, *args)`, which

* runs kernels under `SMALL_MACS` multiply-adds single-threaded (threads cost more than
  they give there, and they are the ones that collapse worst);
* for larger ones keeps, per kernel and power-of-two size class, a running time per
  multiply-add on one thread and on `intra_op_threads()`, and uses the faster. The other is re-tried after
  a wait that doubles while it keeps losing (from `EXPLORE_EVERY` to `EXPLORE_MAX` calls,
  and at least 16x its slowdown, so re-tries cost about 1/16 of the time). So it backs off
  to one thread while the machine is contended and returns to all of them when it is quiet;
  while the load average says every core is taken, it does not re-try more threads at all.

The thread count is set through OpenBLAS's own `openblas_set_num_threads`, found by
threadpoolctl when installed (it knows every BLAS build's symbol names) or in NumPy's
bundled library otherwise; with neither, everything runs as NumPy would. The setting is
process-wide: NumPy code outside tensorlite runs on whatever count the last tensorlite
kernel left (threadpoolctl's `threadpool_limits` pins it for a block of one's own).

Example:
    >>> run(256 ** 3, np.matmul, a, b)   # a 256x256 GEMM on the thread count measured best
"""
import contextlib
import ctypes
import glob
import os
import threading
import time

import numpy as np

from tensorlite.framework import intra_op_pool

SMALL_MACS = 1 << 21
EXPLORE_EVERY = 32
EXPLORE_MAX = 1024
_ALPHA = 0.3  # weight of the newest timing in the running estimate
_SYMBOLS = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
            "openblas_set_num_threads")
_state = {"setter": None, "found": False, "current": None, "intra": 0, "inter": 0,
          "cpus": None}
_classes = {}  # (kernel, split, size class) -> {"rates": {threads: seconds per MAC}, calls, wait, best}


def cpu_count():
    """Cores this process may run on (read once: the affinity mask rarely changes)."""
    if _state["cpus"] is None:
        try:
            _state["cpus"] = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            _state["cpus"] = os.cpu_count() or 1
    return _state["cpus"]


def _openblas_paths():
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415 - optional
        return [i["filepath"] for i in threadpool_info() if i.get("internal_api") == "openblas"]
    except ImportError:
        import numpy  # noqa: PLC0415
        root = os.path.dirname(numpy.__file__)
        return glob.glob(os.path.join(root, "..", "numpy.libs", "*blas*")) + \
            glob.glob(os.path.join(root, ".libs", "*blas*"))


def _setter():
    """OpenBLAS's set-threads function (ctypes), or None where it isn't found."""
    if not _state["found"]:
        _state["found"] = True
        for path in _openblas_paths():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            fn = next((getattr(lib, s) for s in _SYMBOLS if hasattr(lib, s)), None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                _state["setter"] = fn
                break
    return _state["setter"]


def set_threads(n, force=False):
    """Sets OpenBLAS's thread count now (`force`: even where this module set it last);
    returns False where no OpenBLAS was found."""
    if _state["current"] == n and not force:
        return True
    fn = _setter()
    if fn is None:
        return False
    fn(int(n))
    _state["current"] = n
    return True


def intra_op_threads():
    """The most threads one kernel may use (`tf.config.threading`'s intra-op setting;
    0 there means every core)."""
    return _state["intra"] or cpu_count()


def set_intra_op(n):
    """`tf.config.threading.set_intra_op_parallelism_threads`: 0 restores the default."""
    if int(n) < 0:
        raise ValueError(f"intra_op_parallelism_threads must be >= 0, got {n}")
    _state["intra"] = int(n)
    _classes.clear()  # the timings were for another thread count


def set_inter_op(n):
    """`tf.config.threading.set_inter_op_parallelism_threads` (0: the default)."""
    if int(n) < 0:
        raise ValueError(f"inter_op_parallelism_threads must be >= 0, got {n}")
    _state["inter"] = int(n)


def get_setting(which):
    return _state[which]


def _pick(cls, most):
    """(threads, entry) for a size class. The other thread count is re-tried after
    `EXPLORE_EVERY` calls, and each time it loses the wait doubles (to `EXPLORE_MAX`): a
    multi-threaded try on a contended machine can cost 60x a single-threaded call."""
    entry = _classes.get(cls)
    if entry is None:
        entry = _classes[cls] = {"calls": 0, "wait": EXPLORE_EVERY, "best": None, "rates": {},
                                 "samples": {}}
    entry["calls"] += 1
    rates = entry["rates"]
    # A sample of each before choosing (the safe one first); more threads twice, as the
    # first multi-threaded call also pays for starting threads and their first scratch.
    samples = entry["samples"]
    if not samples.get(1):
        return 1, entry
    if samples.get(most, 0) < 2:
        return most, entry
    best = min(rates, key=rates.get)
    other = 1 if best != 1 else most
    # Keep re-tries to about 1/16 of the time spent: a 15x slower option waits 240 calls.
    floor = int(16 * rates[other] / max(rates[best], 1e-30))
    if best != entry["best"]:
        entry["best"], entry["wait"] = best, min(max(EXPLORE_EVERY, floor), EXPLORE_MAX)
    if entry["calls"] >= entry["wait"]:
        entry["calls"] = 0
        if other != 1 and _busy(most):  # every core already has a runnable job: no re-try
            return best, entry
        entry["wait"] = min(max(entry["wait"] * 2, floor), EXPLORE_MAX)
        return other, entry
    return best, entry


def _busy(most):
    """True while the 1-minute load average says every core we would use is taken."""
    try:
        return os.getloadavg()[0] >= most
    except (AttributeError, OSError):  # no load average on this platform
        return False


def _class(fn, macs, split):
    return getattr(fn, "__qualname__", None), split, macs.bit_length()


def choose(macs, fn=np.matmul, split=False):
    """The thread count kernel `fn` of `macs` multiply-adds would run on now."""
    most = intra_op_threads()
    if macs < SMALL_MACS or most == 1:
        return 1
    return _pick(_class(fn, macs, split), most)[0]


# A fork while OpenBLAS's thread pool runs a kernel deadlocks: its at-fork handler shuts the
# pool down under the running GEMM, which then waits forever for its threads. Multi-threaded
# kernels and forks (tf.data worker processes) therefore exclude each other.
_fork_cv = threading.Condition()
_fork_state = {"kernels": 0, "forking": False}


@contextlib.contextmanager
def _threaded_kernel():
    with _fork_cv:
        while _fork_state["forking"]:
            _fork_cv.wait()
        _fork_state["kernels"] += 1
    try:
        yield
    finally:
        with _fork_cv:
            _fork_state["kernels"] -= 1
            if not _fork_state["kernels"]:
                _fork_cv.notify_all()


@contextlib.contextmanager
def safe_to_fork():
    """Holds multi-threaded BLAS kernels off (waiting for running ones to finish) while the
    block forks a process; the pool runs on 1 thread meanwhile."""
    with _fork_cv:
        while _fork_state["forking"] or _fork_state["kernels"]:
            _fork_cv.wait()
        _fork_state["forking"] = True
    try:
        set_threads(1, force=True)  # also for NumPy calls made outside run()
        yield
    finally:
        with _fork_cv:
            _fork_state["forking"] = False
            _fork_cv.notify_all()


def run(macs, fn, *args, split=False):
    """fn(*args) on the thread count measured best for kernels of this size. `split`: fn
    splits its own runs of images over threads (intra_op_pool.map_runs), each calling
    single-threaded BLAS, so its copies and transforms run in parallel too."""
    most = intra_op_threads()
    if macs < SMALL_MACS or most == 1:
        set_threads(1)
        return fn(*args)
    if intra_op_pool.ways() > 1:  # inside a split kernel already: it holds the threads
        return fn(*args)
    # Timings are kept per kernel and size class: an im2col convolution, a Winograd one and
    # a filter gradient of the same size gain very differently from a second thread.
    n, entry = _pick(_class(fn, macs, split), most)
    if n > 1:
        with _threaded_kernel():
            try:
                if split:
                    with intra_op_pool.splitting(n):
                        return _timed(macs, n, entry, fn, args, blas=1)
                return _timed(macs, n, entry, fn, args)
            finally:  # BLAS calls outside run() stay single-threaded, hence fork-safe
                set_threads(1)
    return _timed(macs, n, entry, fn, args)


def _timed(macs, n, entry, fn, args, blas=None):
    if not set_threads(n if blas is None else blas) and blas is None:
        return fn(*args)
    start = time.perf_counter()
    out = fn(*args)
    rate = (time.perf_counter() - start) / macs
    old = entry["rates"].get(n)
    entry["samples"][n] = entry["samples"].get(n, 0) + 1
    # A re-try replaces the old figure: the machine it measured may be long gone.
    entry["rates"][n] = rate if old is None or n != entry["best"] else \
        old + _ALPHA * (rate - old)
    return out


def matmul(a, b):
    """np.matmul(a, b) on the thread count measured best for its size."""
    if a.ndim < 2 or b.ndim < 2:
        return np.matmul(a, b)
    macs = max(a.size * b.shape[-1], b.size * a.shape[-2])
    if macs < SMALL_MACS:
        if _state["current"] != 1:
            set_threads(1)
        return np.matmul(a, b)
    return run(macs, np.matmul, a, b)
