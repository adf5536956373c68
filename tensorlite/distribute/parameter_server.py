"""`ParameterServerStrategy` and `coordinator.ClusterCoordinator`: asynchronous training in
the parameter-server style of the Google I/O 2018 talk "Distributed TensorFlow
training". With a cluster resolver whose
rpc_layer is "dask" (master: a Dask scheduler address) the workers are Dask worker processes
(parameter_server_dask.py), reached with the cluster's TLS credentials (`security=`, ours: a
Dask `Security` or a credentials file's path; by default those of a tf.data service
dispatcher started in this process at that address, see data/service/credentials.py);
otherwise they are threads in this process, as follows.

The coordinator hands closures (`schedule(fn, args)`) to a pool of worker threads and
returns at once with a RemoteValue; each worker takes the next closure when it is free, reads
the current variables (the parameter server's state, held by this process), and applies its
gradients as soon as it has them, with no barrier between workers: updates are asynchronous
and may be computed from values another worker has since changed. A worker's
PerWorkerValues (its own dataset iterator) are resolved when its closure runs. Closures take
turns on the interpreter (the tape and tracer observe one op stream), so this gives the
programming model and the update semantics; parallel speed on one box comes from
MultiWorkerMirroredStrategy's processes or the Dask workers. A cluster_resolver naming
remote gRPC tasks (TF's own servers) is refused: use rpc_layer="dask".

Example:
    >>> strategy = tf.distribute.experimental.ParameterServerStrategy(num_workers=2)
    >>> coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    >>> with strategy.scope():
    ...     v = tf.Variable(0.0)
    >>> for _ in range(4):
    ...     _ = coordinator.schedule(lambda: v.assign_add(1.0))
    >>> coordinator.join(); float(v.numpy())
    4.0
"""
import queue
import threading

from tensorlite.distribute import distribute_lib
from tensorlite.distribute.values import PerReplica
from tensorlite.framework import nest

_LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")

class ParameterServerStrategy(distribute_lib.Strategy):
    """Asynchronous parameter-server training with in-process workers."""

    def __init__(self, cluster_resolver=None, variable_partitioner=None, num_workers=None,
                 security=None):
        super().__init__()
        n = num_workers
        self._dask_address = None
        self._security = security
        self._variables = []     # created in scope(): the parameter server's state
        if cluster_resolver is not None and \
                getattr(cluster_resolver, "rpc_layer", None) == "dask":
            self._dask_address = cluster_resolver.master()
            cluster_resolver = None
        if cluster_resolver is not None:
            spec = cluster_resolver.cluster_spec().as_dict()
            remote = [a for job in ("worker", "ps") for a in spec.get(job, [])
                      if a.rsplit(":", 1)[0] not in _LOCAL_HOSTS]
            if remote:
                raise NotImplementedError(
                    f"ParameterServerStrategy with remote gRPC tasks ({remote[0]}, ...): "
                    f"TensorFlow's task servers are not implemented; give a resolver with "
                    f"rpc_layer='dask' and master=<Dask scheduler address> (workers are Dask "
                    f"workers), or train with MultiWorkerMirroredStrategy over MPI")
            n = n or len(spec.get("worker", [])) or None
        self._ps_workers = n or 2
        if self._ps_workers < 1:
            raise ValueError(f"ParameterServerStrategy needs at least one worker, got {n}")
        self._variable_partitioner = variable_partitioner
        self._devices = tuple(f"/job:worker/replica:0/task:{i}/device:CPU:0"
                              for i in range(self._ps_workers))

    def _variable_scope(self):
        from tensorlite.framework.variables import variable_creator_scope  # noqa: PLC0415

        def record(next_creator, **kwargs):
            v = next_creator(**kwargs)
            self._variables.append(v)
            return v
        return variable_creator_scope(record)

    def __getstate__(self):
        # travels to Dask workers inside scheduled functions: no threads or clients, and
        # not the cluster's credentials (a private key has no business in a payload)
        return {k: v for k, v in self.__dict__.items() if k not in ("extended", "_security")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._security = None
        self.extended = distribute_lib.StrategyExtended(self)

class RemoteValue:
    """The eventual result of a scheduled function."""

    def __init__(self):
        self._done = threading.Event()
        self._value = self._error = None

    def _set(self, value=None, error=None):
        self._value, self._error = value, error
        self._done.set()

    def fetch(self):
        """Waits for the result; NumPy values (as TF's fetch), or raises the function's
        error."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return nest.map_structure(lambda v: v.numpy() if hasattr(v, "numpy") else v,
                                  self._value)

    def get(self):
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

class PerWorkerValues(PerReplica):
    """One value per worker; a scheduled function receives its own worker's."""

class PerWorkerDataset:
    def __init__(self, per_worker):
        self._per_worker = per_worker

    def __iter__(self):
        return PerWorkerIterator([iter(d) for d in self._per_worker])


class ScheduledIterator:
    """An iterator that stands for each worker's own: passed to scheduled functions, which
    call next() on their worker's."""

    def __iter__(self):
        return self

    def __next__(self):
        raise TypeError("a per-worker iterator is consumed inside scheduled functions: pass "
                        "it to coordinator.schedule(fn, args=(iterator,)) and call next() "
                        "there")


class PerWorkerIterator(ScheduledIterator, PerWorkerValues):
    """iter(per_worker_dataset) with in-process workers: one iterator per worker."""

class ClusterCoordinator:
    """Schedules functions on the strategy's workers and collects their results."""

    def __init__(self, strategy):
        if not isinstance(strategy, ParameterServerStrategy):
            raise ValueError(f"ClusterCoordinator needs a ParameterServerStrategy, got "
                             f"{type(strategy).__name__}")
        self.strategy = strategy
        self._backend = None
        if strategy._dask_address is not None:
            from tensorlite.distribute.parameter_server_dask import DaskBackend  # noqa
            self._backend = DaskBackend(strategy, strategy._dask_address)
        self._queue = queue.Queue()
        self._turn = threading.Lock()
        self._pending = 0
        self._cv = threading.Condition()
        self._errors = []
        self._threads = [threading.Thread(target=self._work, args=(i,), daemon=True,
                                          name=f"ps-worker-{i}")
                         for i in range(strategy._ps_workers)]
        for t in self._threads:
            t.start()

    def _work(self, index):
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, args, kwargs, remote = item
            try:
                with self._turn, distribute_lib.replica_scope(
                        distribute_lib.ReplicaContext(self.strategy, 0)):
                    own = _resolve(index, (args, kwargs))
                    remote._set(fn(*own[0], **own[1]))
            except Exception as e:  # noqa: BLE001 - delivered by fetch() and join()
                remote._set(error=e)
                with self._cv:
                    self._errors.append(e)
            finally:
                with self._cv:
                    self._pending -= 1
                    self._cv.notify_all()

    def schedule(self, fn, args=None, kwargs=None):
        """Queues fn(*args, **kwargs) for the next free worker; returns a RemoteValue."""
        remote = RemoteValue()
        with self._cv:
            if self._errors:
                raise self._errors[0]
            self._pending += 1
        if self._backend is not None:
            self._backend.submit(fn, tuple(args or ()), dict(kwargs or {}), remote,
                                 self._remote_done)
            return remote
        self._queue.put((fn, tuple(args or ()), dict(kwargs or {}), remote))
        return remote

    def _remote_done(self, error):
        with self._cv:
            if error is not None:
                self._errors.append(error)
            self._pending -= 1
            self._cv.notify_all()

    def join(self):
        """Waits for every scheduled function; raises the first error one raised."""
        with self._cv:
            self._cv.wait_for(lambda: self._pending == 0)
            if self._errors:
                error, self._errors = self._errors[0], []
                raise error

    def done(self):
        with self._cv:
            return self._pending == 0

    def create_per_worker_dataset(self, dataset_fn):
        """Each worker's own dataset: dataset_fn() called once per worker (or a dataset)."""
        if self._backend is not None:
            from tensorlite.distribute.parameter_server_dask import (  # noqa: PLC0415
                RemotePerWorkerDataset)
            return RemotePerWorkerDataset(dataset_fn)
        n = self.strategy._ps_workers
        if callable(dataset_fn) and not hasattr(dataset_fn, "element_spec"):
            return PerWorkerDataset([dataset_fn() for _ in range(n)])
        return PerWorkerDataset([dataset_fn] * n)

    def fetch(self, val):
        return nest.map_structure(lambda v: v.fetch() if isinstance(v, RemoteValue) else v,
                                  val)

def _resolve(index, structure):
    def pick(v):
        if isinstance(v, PerWorkerValues):
            return v.values[index]
        return v
    return nest.map_structure(pick, structure)
