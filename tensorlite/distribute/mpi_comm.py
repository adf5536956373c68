"""MPI through mpi4py: finding it (with a clear error when it is missing) and the fused,
bucketed gradient all-reduce MultiWorkerMirroredStrategy uses.

Gradients are packed, per dtype, into contiguous buckets of up to `bucket_bytes` (Horovod's
tensor fusion: one collective for many small tensors instead of one each), each reduced by
one MPI_Allreduce into a receive buffer reused across calls (in place for a fused bucket
or a donated array); the reduction algorithm (ring or recursive
doubling, by size) is the MPI library's own. Keras fit's gradients take the overlapped
path instead (distribute/overlap.py: buckets start during the backward pass); this reducer
serves the other collectives (strategy.reduce, ReplicaContext.all_reduce, custom steps).

Example (under `mpiexec -n 2`):
    >>> reducer = BucketAllReducer(comm_world())
    >>> [a.tolist() for a in reducer.sum([np.ones(2)])]
    [[2.0, 2.0]]
"""
import sys

import numpy as np

from tensorlite.distribute import buffer_pool
from tensorlite.framework import errors

_getrefcount = sys.getrefcount
_copyto = np.copyto

INSTALL_HINT = ("install the pip-packaged MPICH and mpi4py (`pip install mpich mpi4py`, or "
                "`pip install '.[distributed]'` in a clone of tensorlite) and launch with "
                "`mpiexec -n 2 python train.py` or `tensorlite-launch -n 2 train.py`")


def comm_world(what="MultiWorkerMirroredStrategy"):
    """MPI.COMM_WORLD, or UnavailableError saying how to get MPI."""
    try:
        from mpi4py import MPI  # noqa: PLC0415
    except ImportError as e:
        raise errors.UnavailableError(None, None, f"{what} needs MPI, which is not available "
                                      f"here ({e}): {INSTALL_HINT}") from None
    return MPI.COMM_WORLD


def mpi_module():
    from mpi4py import MPI  # noqa: PLC0415
    return MPI


class PersistentSums:
    """In-place sums over ranks of small arrays through MPI-4 persistent collectives: one
    `Allreduce_init` request per (dtype, shape) on a private buffer of this cache, then
    `Start` + `Wait` per call. MPICH sets up a blocking Allreduce on every call: at 1 KB
    on 2 ranks a persistent one took 0.67-0.71x its time (4.2-5.0 against 5.9-7.4 us), and
    with a copy into and out of its buffer 0.87-0.92x; from 16 KB the copies cost what it
    saves, so callers use it up to `MAX_BYTES` (one copy) or `MAX_BYTES_TWO_COPIES`.

    `Allreduce_init` is itself collective: every rank must create requests in the same
    order. Callers already reduce the same shapes in the same order on every rank (data
    parallelism needs it for the sums themselves), and which entries exist and which is
    evicted (the oldest, beyond `MAX_ENTRIES`) depends only on that order, so the ranks'
    caches stay in step. Requests are freed at exit, before MPI is finalized.

    Example (under `mpiexec -n 2`):
        >>> sums = persistent_sums(comm_world())
        >>> buf, request = sums.entry(np.dtype(np.float32), (256,))
        >>> buf[...] = 1.0; request.Start(); request.Wait()   # buf now holds 2.0 everywhere
    """

    MAX_BYTES = 64 << 10
    MAX_BYTES_TWO_COPIES = 8 << 10
    MAX_ENTRIES = 64

    def __init__(self, comm):
        self._comm = comm
        self._entries = {}   # (dtype, shape) -> (buffer, request), oldest first
        self.available = comm.Get_size() > 1 and hasattr(comm, "Allreduce_init")

    def entry(self, dtype, shape):
        """(a buffer of `shape` and `dtype`, its request: Start, then Wait, sums it)."""
        key = (dtype, shape)
        e = self._entries.get(key)
        if e is None:
            if len(self._entries) >= self.MAX_ENTRIES:
                _free(self._entries.pop(next(iter(self._entries)))[1])
            mpi = mpi_module()
            buf = np.zeros(shape, dtype)
            e = self._entries[key] = (buf, self._comm.Allreduce_init(mpi.IN_PLACE, buf,
                                                                    mpi.SUM))
        return e

    def free(self):
        for _, request in self._entries.values():
            _free(request)
        self._entries.clear()


_PERSISTENT = {}   # communicator's Fortran handle -> its PersistentSums (freed at exit)


def persistent_sums(comm):
    """The PersistentSums of `comm` (one per communicator, so that every caller's requests
    are created in one order)."""
    key = comm.py2f()
    sums = _PERSISTENT.get(key)
    if sums is None:
        if not _PERSISTENT:
            import atexit  # noqa: PLC0415
            atexit.register(_free_all)   # runs before mpi4py's finalize (registered first)
        sums = _PERSISTENT[key] = PersistentSums(comm)
    return sums


def _free(request):
    try:
        request.Free()
    except Exception:  # noqa: BLE001 - MPI already finalized: nothing left to free
        pass


def _free_all():
    for sums in _PERSISTENT.values():
        sums.free()


# Horovod's and PyTorch DDP's default fusion size: large enough that per-collective latency
# is amortised, small enough that the first buckets of a large model start early.
BUCKET_BYTES = 25 << 20


class BucketAllReducer:
    """Sums lists of arrays over every rank of `comm`, fused into buckets."""

    def __init__(self, comm, bucket_bytes=BUCKET_BYTES):
        self.comm = comm
        self.bucket_bytes = bucket_bytes
        self._size = comm.Get_size()
        self._sum_op = mpi_module().SUM if self._size > 1 else None
        self._in_place = mpi_module().IN_PLACE if self._size > 1 else None
        self._pool = buffer_pool.BufferPool()
        self._allreduce = comm.Allreduce if self._size > 1 else None
        # the pool's list for slot 0 (see sum); where reference counts are not exact, an
        # empty list of our own: every call then goes through take
        self._slot0 = self._pool.slot(0) if buffer_pool.COUNTS_REFERENCES else []
        self._persistent = persistent_sums(comm) if self._size > 1 else None
        self._small = (PersistentSums.MAX_BYTES_TWO_COPIES
                       if self._persistent is not None and self._persistent.available else -1)
        self._last = (None, None, None)   # (shape, dtype, entry) of the last persistent sum

    def _buckets(self, arrays):
        """Groups array indices into (dtype, [indices]) buckets of bounded byte size."""
        by_dtype = {}
        for i, a in enumerate(arrays):
            by_dtype.setdefault(a.dtype, []).append(i)
        out = []
        for dtype, idx in by_dtype.items():
            current, size = [], 0
            for i in idx:
                nbytes = arrays[i].nbytes
                if current and size + nbytes > self.bucket_bytes:
                    out.append((dtype, current))
                    current, size = [], 0
                current.append(i)
                size += nbytes
            if current:
                out.append((dtype, current))
        return out

    def sum(self, arrays, donate=False):
        """The elementwise sum over ranks of each array (same shapes and dtypes on every
        rank, as data-parallel gradients are).

        The inputs are left alone unless `donate`: the caller then gives them up (fresh
        gradients, partial sums it computed), and a contiguous writable one that is a bucket
        by itself is reduced in place and returned (no receive buffer at all; MPICH then
        skips its copy of the input, measured 0.6-0.85x of a separate receive buffer's time
        from 4 MB up). Results are otherwise views of this reducer's receive buffers
        (buffer_pool.BufferPool): the caller owns them, and a buffer is reused by a later
        call only once nothing refers to it any more."""
        if len(arrays) == 1 and self._size > 1:   # one buffer: no bucketing, least Python
            send = arrays[0]
            if type(send) is not np.ndarray:
                send = np.asarray(send)
            if send.nbytes <= self._small:   # copied through a persistent request's buffer
                # (each 0.1 us of Python shows: the last entry is checked before the dict)
                shape, dtype, entry = self._last
                if send.shape != shape or send.dtype is not dtype:
                    entry = self._persistent.entry(send.dtype, send.shape)
                    self._last = (send.shape, send.dtype, entry)
                buf, request = entry
                _copyto(buf, send)
                request.Start()
                request.Wait()
                if donate and send.flags.writeable:
                    _copyto(send, buf)
                    return [send]
                return [buf.copy()]
            if not send.flags.c_contiguous:
                send = np.asarray(send, order="C")
            if donate:
                return [self._reduce_one(0, send, donate)]
            # inlined _reduce_one: at 1 KB a call is ~5 us and each 0.1 us of Python shows.
            # The pool's own first check, inlined for a small buffer (no base): slot 0's
            # last buffer, free when only the pool's list refers to it (3 = the list's,
            # `recv` and getrefcount's argument); ~0.15 us less than BufferPool.take
            last = self._slot0
            recv = last[-1] if last else None
            if (recv is None or recv.base is not None or _getrefcount(recv) > 3
                    or recv.shape != send.shape or recv.dtype is not send.dtype):
                recv = self._pool.take(0, send.shape, send.dtype)
            self._allreduce(send, recv, self._sum_op)
            return [recv]
        arrays = [np.asarray(a, order="C") for a in arrays]
        if self._size == 1 or not arrays:
            return arrays
        out = [None] * len(arrays)
        for b, (dtype, idx) in enumerate(self._buckets(arrays)):
            if len(idx) == 1:
                out[idx[0]] = self._reduce_one(b, arrays[idx[0]], donate)
                continue
            recv = self._pool.take(b, (sum(arrays[i].size for i in idx),), dtype)
            np.concatenate([arrays[i].reshape(-1) for i in idx], out=recv)
            self._allreduce(self._in_place, recv, self._sum_op)
            offset = 0
            for i in idx:
                n = arrays[i].size
                out[i] = recv[offset:offset + n].reshape(arrays[i].shape)
                offset += n
        return out

    def _reduce_one(self, slot, send, donate):
        """One C-contiguous array reduced on its own: in place when donated, else into a
        reused receive buffer (even at 1 KB: a fresh one cost ~0.5 us more per 7 us call,
        a free pooled one ~0.2 us to find)."""
        if donate and send.flags.writeable:
            self._allreduce(self._in_place, send, self._sum_op)
            return send
        recv = self._pool.take(slot, send.shape, send.dtype)
        self._allreduce(send, recv, self._sum_op)
        return recv

    def gather(self, arrays):
        """Each array concatenated along axis 0 over ranks, in rank order."""
        if self._size == 1:
            return arrays
        return [np.concatenate(self.comm.allgather(np.array(a, order="C")), axis=0)
                for a in arrays]

    def broadcast(self, arrays, root=0):
        """Every rank gets root's arrays (in place where possible)."""
        if self._size == 1:
            return arrays
        out = []
        for a in arrays:
            buf = np.array(a, order="C", copy=True)
            self.comm.Bcast(buf, root=root)
            out.append(buf)
        return out
