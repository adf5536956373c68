"""`MultiWorkerMirroredStrategy` over MPI: one replica per rank, synchronous all-reduce.

Launch with `mpiexec -n 2 python train.py` (the pip-installed MPICH provides `mpiexec`) or
`tensorlite-launch -n 2 train.py`; on a cluster, `mpiexec -f hostfile -n 64 ...`. Each rank
builds the same model; variables created in scope() take the chief's (rank 0's) initial
values; Keras fit splits every global batch among the ranks and sums the gradients with a
fused all-reduce, which starts bucket by bucket during the backward pass where the ranks
span several hosts (distribute/overlap.py; _overlap_pays says why;
TENSORLITE_OVERLAP_ALLREDUCE=1/0 forces it on or off); only the chief writes checkpoints
and saved models.

Example:
    >>> strategy = tf.distribute.MultiWorkerMirroredStrategy()   # under mpiexec -n 2
    >>> strategy.num_replicas_in_sync
    2
"""
import contextlib
import os

import numpy as np

from tensorlite.distribute import distribute_lib, mpi_comm, overlap, tf_config
from tensorlite.distribute.cluster_resolver import SimpleClusterResolver, \
    TFConfigClusterResolver
from tensorlite.framework import blas_threads
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
        local = _local_ranks(self._comm, self._size)
        self._overlap = _overlap_pays(self._size, local)
        _share_cores(local)
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
        # compiled step (faster than the eager one the tape's hooks need) runs instead; so
        # it does where overlap does not pay (_overlap_pays: ranks all on one host).
        if not self._overlap:
            return None
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


OVERLAP_ENV = "TENSORLITE_OVERLAP_ALLREDUCE"


def _local_ranks(comm, size):
    """How many ranks of `comm` run on this host (this one included). Collective: every
    rank calls it."""
    if size == 1:
        return 1
    local = comm.Split_type(mpi_comm.mpi_module().COMM_TYPE_SHARED)
    try:
        return local.Get_size()
    finally:
        local.Free()


def _share_cores(local):
    """Each of `local` ranks on this host takes its share of the host's cores as its
    intra-op threads, as Horovod advises (threads per process = cores / local processes),
    unless the intra-op setting was made (tf.config.threading) before the strategy.
    Otherwise each rank's kernels time and choose every core, and the ranks' threads meet
    on the same cores: the 2-rank MLP step of bench/allreduce.py took 7.3 against 7.9 ms
    (medians of 7 interleaved runs on 2 cores; two independent processes gained nothing
    from it)."""
    if local > 1 and blas_threads.get_setting("intra") == 0:
        blas_threads.set_intra_op(max(1, blas_threads.cpu_count() // local))


def _overlap_pays(size, local):
    """Whether fit overlaps the gradient all-reduce with the backward pass (where the
    gradients span several buckets). TENSORLITE_OVERLAP_ALLREDUCE=1 or 0 forces it; "auto"
    (the default) overlaps only when the ranks span several hosts (`local`, the ranks on
    this host, fewer than `size`). On one host MPICH moves
    the data by shared-memory or CMA copies that each rank's own thread makes inside MPI
    calls (no progress thread, no network card doing it meanwhile), so there is no transfer
    to hide behind the backward pass, while the eager step the tape's hooks need costs ~10%
    more CPU than the compiled one; measured on 2 ranks of this host (bench/allreduce.py
    --overlap), overlap was 0.76-1.11x of reducing after the compiled step for 2.7-38 MB of
    gradients, no consistent winner. Across hosts the network moves the data while the
    backward pass runs, which is what Horovod's and PyTorch DDP's overlap relies on."""
    value = os.environ.get(OVERLAP_ENV, "auto").strip().lower()
    if value in ("1", "true", "on"):
        return True
    if value in ("0", "false", "off"):
        return False
    if value != "auto":
        raise ValueError(f"{OVERLAP_ENV}={value!r}: use 1 (always overlap the all-reduce "
                         f"with the backward pass), 0 (never) or auto (only when the ranks "
                         f"span several hosts)")
    return size > 1 and local < size
