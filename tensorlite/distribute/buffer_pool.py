"""Receive buffers for all-reduce, reused across steps once nobody holds them any more.

An all-reduce result written into a fresh array costs the allocation and first touch of
that memory on every step; NumPy also asks the kernel for huge pages on every fresh
allocation of 4 MiB or more, which measured here made a 4 MiB `Allreduce` into a fresh
array 1.4-2.6x slower than into a reused one (2 ranks, MPICH shared memory). So results go
into buffers this pool keeps. The caller owns what it is handed: a buffer is handed out
again only when nothing outside the pool refers to it, neither the array nor any view of it
(a NumPy view, a Tensor wrapping it, a memoryview all hold a reference to the buffer), so a
result the caller still holds is never overwritten by a later step; the pool then allocates
a new buffer instead. Each slot keeps at most `per_slot` buffers (two: the previous step's
result is often still alive while the next is reduced), so the pool holds at most
slots x per_slot buffers of the largest recent size.

Example:
    >>> pool = BufferPool()
    >>> a = pool.take(0, (4,), np.float32)
    >>> pool.take(0, (4,), np.float32) is a      # `a` is still held: a different buffer
    False
    >>> del a
    >>> b = pool.take(0, (4,), np.float32)       # one of the two, free again, is reused
"""
import sys

import numpy as np

# Reuse relies on exact reference counts, which CPython has; elsewhere every take allocates.
COUNTS_REFERENCES = sys.implementation.name == "cpython"
# Buffers from this size up start on a 2 MiB boundary, so that the huge pages NumPy asks for
# (on allocations of 4 MiB and up) cover them whole: a 4 MiB Allreduce into an aligned
# receive buffer took 0.75-0.86x the time of one into a malloc-placed buffer, 4 runs of 2
# ranks here (MPICH's CMA copies pin memory page by page).
HUGE_PAGE = 2 << 20


class BufferPool:
    """NumPy buffers by slot (a bucket's position), reused while unreferenced."""

    def __init__(self, per_slot=2):
        self._per_slot = per_slot
        self._slots = {}   # slot -> [ndarray], most recently handed out last

    def slot(self, slot):
        """The list of `slot`'s buffers, most recently handed out last (created empty if
        new), for a caller that inlines take's first check on its hot path: a buffer in it
        with no base is free when only the list refers to it."""
        return self._slots.setdefault(slot, [])

    def take(self, slot, shape, dtype):
        """An array of `shape` (a tuple) and `dtype` that nobody else references; its
        contents are undefined."""
        buffers = self._slots.get(slot)
        if buffers is None:
            buffers = self._slots[slot] = []
        elif COUNTS_REFERENCES and buffers:   # the common case first: the last one handed
            # out is free
            last = buffers[-1]
            # 3 = the list's, `last` and getrefcount's argument; 2 for the base: see below
            # (`is` first: builtin dtypes are singletons, and == on dtypes costs ~0.1 us)
            if (sys.getrefcount(last) <= 3 and last.shape == shape
                    and (last.dtype is dtype or last.dtype == dtype)
                    and (last.base is None or sys.getrefcount(last.base) <= 2)):
                return last
        if COUNTS_REFERENCES:
            for i in range(len(buffers) - 1, -1, -1):   # the most recent first
                # 2 = the list's reference and getrefcount's argument: nobody else's. An
                # aligned buffer's views refer to its base, not to it: that must be free too
                # (2 = the buffer's own reference and getrefcount's argument).
                if (sys.getrefcount(buffers[i]) <= 2 and buffers[i].shape == shape and
                        buffers[i].dtype == dtype and
                        (buffers[i].base is None or sys.getrefcount(buffers[i].base) <= 2)):
                    if i != len(buffers) - 1:
                        buffers.append(buffers.pop(i))
                    return buffers[-1]
        buf = allocate(shape, dtype)
        if len(buffers) >= self._per_slot:
            buffers.pop(0)   # the holder keeps it; the pool forgets it
        buffers.append(buf)
        return buf


def allocate(shape, dtype):
    """An uninitialised C-contiguous array placed as the pool places its buffers: from
    HUGE_PAGE bytes up on a HUGE_PAGE boundary (a view of a larger block), else np.empty's.

    Example:
        >>> allocate((1 << 20,), np.float32).ctypes.data % HUGE_PAGE
        0
    """
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if nbytes < HUGE_PAGE:
        return np.empty(shape, dtype)
    raw = np.empty(nbytes + HUGE_PAGE, np.uint8)
    start = (-raw.ctypes.data) % HUGE_PAGE
    return raw[start:start + nbytes].view(dtype).reshape(shape)
