"""`OneDeviceStrategy` and `MirroredStrategy`: replicas inside one process.

MirroredStrategy runs each replica of a step in its own thread over one of this process's
logical devices; variables are shared (so they are mirrored by construction) and the
replicas meet at a rendezvous for every collective (all_reduce, merge_call, the optimizer's
gradient sum). The replicas take turns between collectives: the tape and the tracer observe
a process-wide stream of ops, so two replicas dispatching at once would see each other's
ops. MirroredStrategy therefore gives TF's API and data-parallel arithmetic on one box;
parallel speed across cores comes from MultiWorkerMirroredStrategy's processes.

Example:
    >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    >>> strategy.num_replicas_in_sync
    2
    >>> strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None).numpy()
    2.0
"""
import threading

import numpy as np

from tensorlite.distribute import distribute_lib, values as values_lib
from tensorlite.distribute.reduce_op import ReduceOp


def _canonical_device(name):
    text = str(name).strip()
    if not text:
        raise ValueError("a device name is empty; use e.g. '/cpu:0' or '/gpu:0'")
    return text


class OneDeviceStrategy(distribute_lib.Strategy):
    """Everything on one device: one replica (useful to test strategy code paths)."""

    def __init__(self, device):
        super().__init__()
        self._devices = (_canonical_device(device),)


class _Rendezvous:
    """Where the replica threads meet: each deposits a value and all see all of them."""

    def __init__(self, n, turn):
        self._n = n
        self._turn = turn
        self._slots = [None] * n
        self._barrier = threading.Barrier(n)

    def exchange(self, i, value):
        self._slots[i] = value
        self._turn.release()
        try:
            self._barrier.wait()
            out = list(self._slots)
            self._barrier.wait()
        finally:
            self._turn.acquire()
        return out

    def abort(self):
        self._barrier.abort()


class MirroredStrategy(distribute_lib.Strategy):
    """Synchronous data parallelism over this process's devices (one replica each)."""

    def __init__(self, devices=None, cross_device_ops=None):
        super().__init__()
        if devices is None:
            from tensorlite import config  # noqa: PLC0415
            devices = [d.name for d in config.list_logical_devices("CPU")] or ["/cpu:0"]
        devices = [_canonical_device(d) for d in devices]
        if len(set(devices)) != len(devices):
            raise ValueError(f"MirroredStrategy: duplicate devices in {devices}; each replica "
                             f"needs its own device")
        self._devices = tuple(devices)
        self._num_local_replicas = len(devices)
        self._cross_device_ops = cross_device_ops
        self._rendezvous = None

    def _run_replicas(self, fn, args, kwargs, grad_weights):
        n = self._num_local_replicas
        if n == 1:
            return super()._run_replicas(fn, args, kwargs, grad_weights)
        turn = threading.Lock()
        self._rendezvous = rendezvous = _Rendezvous(n, turn)
        results, failures = [None] * n, [None] * n

        def replica(i):
            ctx = distribute_lib.ReplicaContext(self, i, grad_weights[i] if grad_weights
                                                else 1.0)
            with turn, distribute_lib.replica_scope(ctx):
                try:
                    results[i] = fn(*values_lib.select_replica(i, args),
                                    **values_lib.select_replica(i, kwargs))
                except BaseException as e:  # noqa: BLE001 - re-raised in the caller
                    failures[i] = e
                    rendezvous.abort()
        threads = [threading.Thread(target=replica, args=(i,), name=f"replica-{i}",
                                    daemon=True) for i in range(n)]
        distribute_lib._scopes.append(self)
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            distribute_lib._scopes.remove(self)
            self._rendezvous = None
        first = next((e for e in failures if e is not None and
                      not isinstance(e, threading.BrokenBarrierError)), None) or \
            next((e for e in failures if e is not None), None)
        if first is not None:
            raise first
        return results

    def _exchange(self, ctx, value):
        if self._rendezvous is None:
            return [value]
        return self._rendezvous.exchange(ctx._replica_id, value)

    def _all_reduce_among_replicas(self, ctx, op, flat, donate=False):
        gathered = self._exchange(ctx, flat)
        local = [np.sum([g[i] for g in gathered], axis=0) for i in range(len(flat))]
        total = self._cross_worker_sum(local, donate=True)   # the sums are fresh arrays
        if op is ReduceOp.MEAN:
            total = [t / self.num_replicas_in_sync for t in total]
        return total

    def _merge_call(self, ctx, merge_fn, args, kwargs):
        deposits = self._exchange(ctx, (args, kwargs))
        result = None
        if ctx._replica_id == 0:
            grouped_args = values_lib.regroup([d[0] for d in deposits]) if args else ()
            grouped_kwargs = values_lib.regroup([d[1] for d in deposits]) if kwargs else {}
            result = super()._merge_call(ctx, merge_fn, tuple(grouped_args) if args else (),
                                         grouped_kwargs)
        return self._exchange(ctx, result)[0]
