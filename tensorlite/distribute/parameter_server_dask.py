"""ClusterCoordinator's workers on a Dask cluster: asynchronous parameter-server training
across processes and machines (the async parameter server of the Google
I/O 2018 talk "Distributed TensorFlow training").

The coordinator process is the parameter server: it holds the variables created in
`strategy.scope()`. A scheduled function travels to a Dask worker once (cloudpickled with
the variables it uses); each task carries the variables' current values, the worker loads
them into its copy, runs the function (its optimizer steps update the copy, keeping the
optimizer's slots on that worker) and sends back the change to every variable, which the
server adds to its own values as soon as it arrives: workers never wait for each other and
may compute from values another worker has since changed (asynchronous SGD, with at most one
task in flight per worker so staleness stays bounded). A per-worker dataset is created once
on each worker process and kept there between tasks.

Example:
    >>> resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
    ...     {}, master="tls://127.0.0.1:8786", rpc_layer="dask")
    >>> strategy = tf.distribute.experimental.ParameterServerStrategy(
    ...     resolver, security="/path/to/credentials.pem")   # or a dispatcher in this process
"""
import threading
import uuid

import numpy as np

from tensorlite.distribute.parameter_server import ScheduledIterator
from tensorlite.framework import nest

_PAYLOADS = {}   # per worker process: payload key -> (fn, args, variables)
_ITERATORS = {}  # per worker process: per-worker iterator token -> iterator


class RemotePerWorkerIterator(ScheduledIterator):
    """Stands for each worker's own iterator over dataset_fn(); resolved on the worker."""

    def __init__(self, dataset_fn):
        self.token = uuid.uuid4().hex
        self.dataset_fn = dataset_fn

    def _local(self):
        it = _ITERATORS.get(self.token)
        if it is None:
            it = _ITERATORS[self.token] = iter(self.dataset_fn())
        return it


class RemotePerWorkerDataset:
    def __init__(self, dataset_fn):
        self._dataset_fn = dataset_fn if callable(dataset_fn) else (lambda: dataset_fn)

    def __iter__(self):
        return RemotePerWorkerIterator(self._dataset_fn)


def run_on_worker(key, blob, values):
    """Runs a scheduled function on this worker's copy of the variables; returns (its result
    as NumPy, each variable's change)."""
    payload = _PAYLOADS.get(key)
    if payload is None:
        import cloudpickle  # noqa: PLC0415
        payload = _PAYLOADS[key] = cloudpickle.loads(blob)
    fn, args, kwargs, variables = payload
    for v, value in zip(variables, values):
        v.assign(value)
    resolved = nest.map_structure(
        lambda a: a._local() if isinstance(a, RemotePerWorkerIterator) else a, (args, kwargs))
    result = fn(*resolved[0], **resolved[1])
    deltas = [np.asarray(v.numpy()) - value for v, value in zip(variables, values)]
    out = nest.map_structure(lambda r: np.asarray(r.numpy()) if hasattr(r, "numpy") else r,
                             result)
    return out, deltas


class DaskBackend:
    """Submits scheduled functions to the Dask workers, one in flight per worker."""

    def __init__(self, strategy, address):
        from tensorlite.data.service.connection import connect  # noqa: PLC0415
        self.strategy = strategy
        self.client = connect(address, strategy._security)
        self.slots = threading.Semaphore(max(1, len(self.client.scheduler_info()["workers"])))
        self._payloads = {}
        self._lock = threading.Lock()

    def _payload(self, fn, args, kwargs):
        import cloudpickle  # noqa: PLC0415
        key = (id(fn), id(args[0]) if args else None)
        found = self._payloads.get(key)
        if found is None:
            blob = cloudpickle.dumps((fn, args, kwargs, list(self.strategy._variables)))
            found = self._payloads[key] = (uuid.uuid4().hex, blob, (fn, args))
        return found[0], found[1]

    def submit(self, fn, args, kwargs, remote, done):
        """Runs fn remotely; applies its variable changes here, then completes `remote`."""
        key, blob = self._payload(fn, args, kwargs)
        self.slots.acquire()
        values = [np.asarray(v.numpy()) for v in self.strategy._variables]
        future = self.client.submit(run_on_worker, key, blob, values, pure=False)

        def finished(fut):
            try:
                result, deltas = fut.result()
                with self._lock:
                    for v, d in zip(self.strategy._variables, deltas):
                        v.assign(np.asarray(v.numpy()) + d)
                remote._set(result)
            except Exception as e:  # noqa: BLE001 - delivered by fetch() and join()
                remote._set(error=e)
                done(e)
            else:
                done(None)
            finally:
                self.slots.release()
        future.add_done_callback(finished)
