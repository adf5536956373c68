"""`MultiWorkerMirroredStrategy` over MPI: one replica per rank, synchronous all-reduce.

Launch with `mpiexec -n 2 python train.py` (the pip-installed MPICH provides `mpiexec`) or
`tensorlite-launch -n 2 train.py`; on a cluster, `mpiexec -f hostfile -n 64 ...`. Each rank
builds the same model; variables created in scope() take the chief's (rank 0's) initial
values; Keras fit splits every global batch among the ranks and sums the gradients with a
fused all-reduce that starts bucket by bucket during the backward pass
(distribute/overlap.py); only the chief writes checkpoints and saved models.

Example:
    >>> strategy = tf.distribute.MultiWorkerMirroredStrategy()   # under mpiexec -n 2
    >>> strategy.num_replicas_in_sync
    2
"""
import contextlib

import numpy as np

from tensorlite.distribute import distribute_lib, mpi_comm, overlap, tf_config
from tensorlite.distribute.cluster_resolver import SimpleClusterResolver, \
    TFConfigClusterResolver
from tensorlite.framework.variables import variable_creator_scope


class MultiWorkerMirroredStrategy(distribute_lib.Strategy):
    """Synchronous data parallelism over MPI ranks (one replica each)."""

    def __init__(self, cluster_resolver=None, communication_options=None):
        super().__init__()
        self._comm = mpi_comm.comm_world()
        self._rank, self._size = self._comm.Get_rank(), self._comm.Get_size()
        bucket = getattr(communication_options, "bytes_per_pack", 0) or mpi_comm.BUCKET_BYTES
        self._reducer = mpi_comm.BucketAllReducer(self._comm, bucket)
        self._plans = {}
        self.last_reduction = None   # the last step's OverlappedReduction (its events)
        self.cluster_resolver = cluster_resolver or self._resolve_cluster()
        self._devices = (f"/job:worker/replica:0/task:{self._rank}/device:CPU:0",)
        distribute_lib.set_worker_strategy(self)

    def _resolve_cluster(self):
        cfg = tf_config.parse()
        if cfg.cluster:
            if cfg.num_workers != self._size:
                raise ValueError(f"TF_CONFIG lists {cfg.num_workers} worker(s) but MPI runs "
                                 f"{self._size} rank(s): launch with `mpiexec -n "
                                 f"{cfg.num_workers}` or fix TF_CONFIG")
            return TFConfigClusterResolver()
        workers = [f"mpi-rank-{r}" for r in range(self._size)]
        return SimpleClusterResolver({"worker": workers}, task_type="worker",
                                     task_id=self._rank)

    def _num_workers(self):
        return self._size

    def _worker_index(self):
        return self._rank

    def _cross_worker_sum(self, arrays, donate=False):
        return self._reducer.sum([np.asarray(a) for a in arrays], donate)

    def _bucket_plan(self, grad_shapes, grad_dtypes):
        if self._size == 1:
            return None
        key = tuple((tuple(s), np.dtype(d)) for s, d in zip(grad_shapes, grad_dtypes))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = overlap.BucketPlan(grad_shapes, grad_dtypes,
                                                         self._reducer.bucket_bytes)
        return plan

    def _overlap_plan(self, grad_shapes, grad_dtypes):
        # One bucket is full only when the backward pass ends: nothing to overlap, and the
        # compiled step (faster than the eager one the tape's hooks need) runs instead.
        plan = self._bucket_plan(grad_shapes, grad_dtypes)
        return plan if plan is not None and len(plan.buckets) > 1 else None

    def _overlapped_reduction(self, grad_shapes, grad_dtypes, weight):
        # Also for one bucket after a compiled step: each gradient is scaled straight into
        # the bucket (one pass), instead of zeros + weighted add + concatenate.
        plan = self._bucket_plan(grad_shapes, grad_dtypes)
        if plan is None:
            return None
        self.last_reduction = None   # let the last step's buckets go back to the pool
        self.last_reduction = overlap.OverlappedReduction(self._comm, plan, weight,
                                                          record_events=True)
        return self.last_reduction

    def _cross_worker_gather(self, arrays):
        return self._reducer.gather(arrays)

    def _broadcast_from_chief(self, arrays):
        return self._reducer.broadcast(arrays)

    def _variable_scope(self):
        if self._size == 1:
            return contextlib.nullcontext()

        def creator(next_creator, **kwargs):
            v = next_creator(**kwargs)
            if hasattr(v, "assign") and hasattr(v, "numpy"):
                v.assign(self._reducer.broadcast([np.asarray(v.numpy())])[0])
            return v
        return variable_creator_scope(creator)

    def barrier(self):
        self._comm.Barrier()
