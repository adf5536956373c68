"""Gradient all-reduce fused into buckets and overlapped with the backward pass, as Horovod
and PyTorch DDP do it.

Before a step, the trainable variables are grouped (in reverse order, since the backward
pass produces the last layers' gradients first) into buckets of at most `bucket_bytes` of one
dtype. During the backward pass the tape tells us (autodiff.tape.GRADIENT_HOOKS) as soon as
a variable's gradient is final; it is scaled by this replica's share of the global batch
and copied into its bucket's flat buffer, and when a bucket is full its non-blocking
`Iallreduce` starts at once, while the tape goes on computing the earlier layers. Buckets
start in plan order on every rank (MPI needs collectives in the same order everywhere).
MPICH has no progress thread here (one would steal a core from the backward pass on a
small machine), so every later hook call drives the pending reductions with `Testall`;
`finish` waits for them before the optimizer applies the sums. Bucket buffers come from the
plan's BufferPool: the summed gradients `finish` returns are views of them, and the next
step reuses a buffer once nothing holds those views. A model whose gradients fit
in one bucket has nothing to overlap (the bucket is full when the backward pass ends), so
MultiWorkerMirroredStrategy then runs the compiled step and hands its gradients to `finish`:
each is scaled straight into the bucket and one blocking all-reduce follows (a single bucket
is never started from a hook: BucketPlan.overlaps).

Example (under `mpiexec -n 2`):
    >>> plan = BucketPlan([(3,), (2,)], [np.float32, np.float32], bucket_bytes=8)
    >>> reduction = OverlappedReduction(comm_world(), plan, weight=0.5)
    >>> with reduction.listening():
    ...     grads = tape.gradient(loss, [v0, v1])   # v1's bucket starts before v0's gradient
    >>> summed, scalars = reduction.finish(grads, [loss_value])
"""
import contextlib
import time

import numpy as np

from tensorlite.autodiff import tape as tape_lib
from tensorlite.distribute import buffer_pool, mpi_comm, values as values_lib
from tensorlite.graph import tracing


class BucketPlan:
    """Which bucket, and where in it, each gradient goes: variables in reverse order, cut
    into buckets of one dtype and at most `bucket_bytes` (a larger variable is alone)."""

    def __init__(self, shapes, dtypes, bucket_bytes):
        self.shapes = [tuple(s) for s in shapes]
        self.dtypes = [np.dtype(d) for d in dtypes]
        self.buckets = []         # per bucket: (dtype, total elements, [variable positions])
        self.pool = buffer_pool.BufferPool()   # the buckets' buffers, reused across steps
        self.where = {}           # variable position -> (bucket index, offset, size)
        current, dtype, size = [], None, 0
        for i in reversed(range(len(self.shapes))):
            n = int(np.prod(self.shapes[i]))
            nbytes = n * self.dtypes[i].itemsize
            if current and (self.dtypes[i] != dtype or
                            size * dtype.itemsize + nbytes > bucket_bytes):
                self.buckets.append((dtype, size, current))
                current, size = [], 0
            dtype = self.dtypes[i]
            self.where[i] = (len(self.buckets), size, n)
            current.append(i)
            size += n
        if current:
            self.buckets.append((dtype, size, current))
        # the same, as a list by variable position (a list index is cheaper than a dict
        # lookup on the per-step path), and which variables fill their bucket alone: their
        # bucket buffer is the gradient itself, with no slice or reshape (at 1 KB each
        # saved view is ~0.3 us of a ~5 us reduction)
        self.locations = [self.where[i] for i in range(len(self.shapes))]
        self.alone = [len(self.buckets[self.where[i][0]][2]) == 1
                      for i in range(len(self.shapes))]
        self.counts = tuple(len(members) for _, _, members in self.buckets)
        # 1-D and alone in its bucket: finish() returns the bucket buffer as it is
        self.whole = [alone and len(shape) == 1 for alone, shape in zip(self.alone, self.shapes)]
        self.bucket_specs = [(b, (n,), dtype) for b, (dtype, n, _) in enumerate(self.buckets)]
        self.weights = None   # (weight, [as a 0-d array per bucket]): OverlappedReduction's
        # One bucket is full only when the backward pass ends: nothing to overlap it with,
        # so it is reduced by a blocking Allreduce in finish() instead of Iallreduce +
        # Waitall (~0.5 us less Python and request handling at 1 KB, the same MPI time).
        # Decided by the plan, which every rank shares: a blocking collective never has to
        # match a non-blocking one (MPI forbids that).
        self.overlaps = len(self.buckets) > 1
        # (communicator, mpi4py's MPI or None on one rank, (buffer, request) or None): what
        # OverlappedReduction needs of the communicator, found on its first step (`_bind`)
        self.bound = None


def _bind(comm, plan):
    """A plan's per-communicator state (see BucketPlan.bound). One bucket of at most
    PersistentSums.MAX_BYTES is summed through a persistent request's buffer: its gradients
    are scaled into that buffer and `finish` copies the sum out (at 1 KB the request saves
    more than the copy costs)."""
    mpi = _mpi() if comm.Get_size() > 1 else None
    persistent = None
    if mpi is not None and len(plan.buckets) == 1:
        dtype, n, _ = plan.buckets[0]
        sums = mpi_comm.persistent_sums(comm)
        if sums.available and n * dtype.itemsize <= sums.MAX_BYTES:
            persistent = sums.entry(dtype, (n,))
    return comm, mpi, persistent


class OverlappedReduction:
    """One step's gradient sum over all ranks, started bucket by bucket during the
    backward pass. `events` records (what, index, perf_counter time) for tests and bench:
    ("grad", variable position), ("start", bucket), ("done", -1)."""

    # (a new one each step: slots make its ~12 attribute writes cheaper)
    __slots__ = ("_comm", "_plan", "_weights", "_mpi", "_buffers", "_missing", "_received",
                 "_requests", "_next", "_sources", "_persistent", "events")

    def __init__(self, comm, plan, weight, record_events=False):
        self._comm = comm
        self._plan = plan
        # the weight as a 0-d array of each bucket's dtype, kept by the plan while the weight
        # stays the same: np.multiply by one takes half the time of a multiply by a Python
        # float (~0.5 us less at 1 KB: NumPy resolves a Python scalar's type on every call)
        if plan.weights is None or plan.weights[0] != weight:
            plan.weights = (weight, [np.array(weight, d) for d, _, _ in plan.buckets])
        self._weights = plan.weights[1]
        bound = plan.bound
        if bound is None or bound[0] is not comm:
            bound = plan.bound = _bind(comm, plan)
        _, self._mpi, persistent = bound
        if persistent is None:
            take = plan.pool.take
            self._buffers = [take(b, shape, dtype) for b, shape, dtype in plan.bucket_specs]
            self._persistent = None
        else:   # scaled into the request's buffer; finish copies the sum out
            self._buffers = [persistent[0]]
            self._persistent = persistent[1]
        self._missing = None     # per bucket, gradients not yet in it (made by _put)
        self._received = None    # variable positions already put (made by _put)
        self._requests = None    # Iallreduce requests (made by _start)
        self._next = 0           # the next bucket to start (plan order on every rank)
        self._sources = None     # the gradient() call we listen to, once recognised
        self.events = [] if record_events else None

    def _event(self, what, index):
        # (callers test `self.events is not None` first: a call costs ~0.1 us per event)
        if self.events is not None:
            self.events.append((what, index, time.perf_counter()))

    @contextlib.contextmanager
    def listening(self):
        """While inside, every tape.gradient() over exactly the planned variables feeds its
        final gradients into the buckets (the first such call only)."""
        tape_lib.GRADIENT_HOOKS.append(self._on_gradient)
        try:
            yield self
        finally:
            tape_lib.GRADIENT_HOOKS.remove(self._on_gradient)

    def _on_gradient(self, sources, i, grad):
        if tracing.is_tracing():
            return   # a tf.function being traced: its gradients are not this step's values
        if sources is not self._sources:
            if self._sources is not None or not self._matches(sources):
                return   # another gradient() call (a nested tape, a penalty term)
            self._sources = sources
        self._put(i, grad)
        if self._requests:
            self._mpi.Request.Testall(self._requests)   # MPICH progresses only inside MPI

    def _matches(self, sources):
        return (len(sources) == len(self._plan.shapes) and
                all(tuple(s.shape.as_list()) == shape
                    for s, shape in zip(sources, self._plan.shapes)))

    def _put(self, i, grad):
        received = self._received
        if received is None:
            received = self._received = set()
            self._missing = list(self._plan.counts)
        elif i in received:
            return
        received.add(i)
        if self.events is not None:
            self._event("grad", i)
        b = self._scale(i, grad)
        if self._plan.overlaps:   # (one bucket starts in finish: see BucketPlan.overlaps)
            missing = self._missing
            missing[b] -= 1
            while self._next < len(missing) and missing[self._next] == 0:
                self._start(self._next)
                self._next += 1

    def _scale(self, i, grad):
        """Variable i's gradient times the weight, into its place in its bucket (zeros for
        None); returns the bucket's index."""
        b, offset, n = self._plan.locations[i]
        view = self._buffers[b]
        if not self._plan.alone[i]:
            view = view[offset:offset + n]
        if grad is None:
            view.fill(0)
        else:
            if type(grad) is not np.ndarray:
                grad = values_lib.to_numpy(grad)
            if grad.ndim != 1:
                grad = grad.reshape(-1)
            _multiply(grad, self._weights[b], view)   # (out positional: ~0.2 us less at 1 KB)
        return b

    def _start(self, b):
        if self.events is not None:
            self._event("start", b)
        if self._mpi is not None:
            if self._requests is None:
                self._requests = []
            self._requests.append(self._comm.Iallreduce(self._mpi.IN_PLACE, self._buffers[b],
                                                        self._mpi.SUM))

    def finish(self, grads=None, scalars=()):
        """Waits for every bucket and returns (summed gradients in variable order, summed
        scalars). Gradients the hook never saw (the step ran as a compiled graph, or this
        rank had no rows) come from `grads` (unweighted, None for zero) or are zero."""
        received, plan = self._received, self._plan
        if received or plan.overlaps:
            for i in range(len(plan.shapes)):
                if received is None or i not in received:   # (_put makes the set)
                    self._put(i, None if grads is None else grads[i])
                    received = self._received
        else:   # one bucket, no hook saw this step (a compiled step): no bookkeeping
            for i in range(len(plan.shapes)):
                if self.events is not None:
                    self._event("grad", i)
                self._scale(i, None if grads is None else grads[i])
        mpi = self._mpi
        if not self._plan.overlaps and self._buffers:
            if self.events is not None:
                self._event("start", 0)
            request = self._persistent
            if request is not None:
                request.Start()
                request.Wait()
                # a copy the caller owns: the request's buffer is the next step's
                self._buffers = [self._buffers[0].copy()]
            elif mpi is not None:
                self._comm.Allreduce(mpi.IN_PLACE, self._buffers[0], mpi.SUM)
        if scalars:
            scalar_buf = np.array([values_lib.to_numpy(s) for s in scalars], np.float64)
            if mpi is not None:   # every rank sums them here: a blocking collective is in order
                self._comm.Allreduce(mpi.IN_PLACE, scalar_buf, mpi.SUM)
            scalars = list(scalar_buf)
        else:
            scalars = []   # (no empty array to build and reduce: ~1 us at 1 KB)
        if self._requests:
            mpi.Request.Waitall(self._requests)
            self._requests = None   # a request may keep its buffer referenced
        if self.events is not None:
            self._event("done", -1)
        buffers = self._buffers
        out = []
        for i, shape in enumerate(plan.shapes):
            b, offset, n = plan.locations[i]
            if plan.whole[i]:
                out.append(buffers[b])
            elif plan.alone[i]:
                out.append(buffers[b].reshape(shape))
            else:
                out.append(buffers[b][offset:offset + n].reshape(shape))
        self._buffers = None   # the caller's views own them now: free for the next step once
        return out, scalars    # it drops them


_multiply = np.multiply
_MPI = []


def _mpi():
    """mpi4py's MPI module, imported once (an import statement per step costs ~0.3 us)."""
    if not _MPI:
        _MPI.append(mpi_comm.mpi_module())
    return _MPI[0]
