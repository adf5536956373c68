"""The two mechanisms a parallel map runs its chunks of elements on (parallel_map.py
decides which and owns ordering): a thread pool, and worker processes forked one at a
time as the pipeline fills (workers.py). Each hands back, for a chunk, the results by
element index and the CPU seconds they took."""
import concurrent.futures as cf
import multiprocessing.connection as mpc

from tensorlite.data.tracing import name_thread, thread_name


class ThreadRunner:
    """Chunks run by `run_chunk(elements, indices)` on `n` threads; a chunk's handle is its
    Future."""

    def __init__(self, n, what):
        self._pool = cf.ThreadPoolExecutor(max_workers=n, thread_name_prefix="tf.data",
                                           initializer=name_thread, initargs=(what,))

    def submit(self, fn, *args):
        """Runs `fn(*args)` on a pool thread; returns its Future."""
        return self._pool.submit(fn, *args)

    @staticmethod
    def collect(futures, block):
        """[(results, CPU seconds)] of the futures finished now (`block`: at least one)."""
        done, _ = cf.wait(futures, timeout=None if block else 0,
                          return_when=cf.FIRST_COMPLETED)
        return [f.result() for f in done]

    def shutdown(self, futures):
        """Cancels what has not started and waits for what has."""
        for f in futures:
            f.cancel()
        self._pool.shutdown(wait=True, cancel_futures=True)


class ProcessRunner:
    """Worker processes running the map function: a chunk's handle is the worker it was
    sent to. Workers outlive a plan (an inline fall-back keeps them for the retry)."""

    def __init__(self, fn, seed):
        self._fn, self._seed = fn, seed
        self.workers = []
        self._to_fork = 0  # worker processes the plan still needs
        self._what = None

    def start(self, n, what):
        """Plans `n` workers (reusing the live ones), forking the first now: the others
        fork as `has_room` needs them, so the first works while the next one forks (a
        fork of a large process takes milliseconds)."""
        self._what = what
        self.workers = [w for w in self.workers if w.proc.is_alive()][:n]
        self._to_fork = n - len(self.workers)
        if not self.workers:
            self._fork()

    def _fork(self):
        from tensorlite.data.workers import Worker  # noqa: PLC0415
        self.workers.append(Worker(self._fn, self._seed, thread_name(self._what)))
        self._to_fork -= 1

    def has_room(self):
        """Whether a worker can take a chunk now (forking the next planned one if needed)."""
        if any(w.free_slots for w in self.workers):
            return True
        if self._to_fork <= 0:
            return False
        self._fork()
        return True

    def submit(self, indices, elements):
        """Sends a chunk to the least busy worker with a free slot; returns that worker."""
        worker = min((w for w in self.workers if w.free_slots), key=lambda w: len(w.busy))
        worker.submit(indices[0], indices, elements)
        return worker

    @staticmethod
    def collect(workers, block):
        """[(worker, results, spans timed there, CPU seconds)] of the workers whose chunks
        finished now (`block`: at least one)."""
        ready = mpc.wait([w.conn for w in workers], timeout=None if block else 0)
        return [(w, *w.receive()) for w in workers if w.conn in ready]

    def close(self):
        for w in self.workers:
            w.close()
        self.workers = []
