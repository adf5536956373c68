"""Worker processes for user functions that hold the GIL, with arrays moved through shared
memory instead of pickles.

Each worker is forked (it inherits the function, so lambdas and closures work), runs BLAS
single-threaded, and owns SLOTS_PER_WORKER slot pairs (input, output) of shared memory that grow
on demand. Only small metadata travels through the pipe. The parent creates every segment and
unlinks them on close, so nothing leaks; workers are told to stop on close, on error and
when the iterator is garbage collected. Close does not wait for them to exit (a process
exit takes 5-15 ms, paid at the end of every epoch otherwise): the exiting workers are
reaped later, and one still running 2 s after its stop is terminated.

Each worker is pinned to one of the CPUs this process may use, the one with the fewest of
its live workers. Linux's load balancer evens out run-queue lengths, not what each task
gets: with another program busy on one of two cores, two workers sharing the other core
(2 tasks against 1) look as balanced to it as one worker beside that program, yet the
second layout gives the map 1.5 cores and the first 1. Measured (bench/data_parallel_map.py,
a pure-Python map beside a busy process): 1.09-1.18x the inline loop spread this way,
0.98-1.15x left to the scheduler; on a quiet machine the same as unpinned.
"""
import weakref
import multiprocessing as mp
import os
import pickle
import time
import traceback
from multiprocessing import resource_tracker, shared_memory
from time import perf_counter_ns

import numpy as np

from tensorlite.data import structure
from tensorlite.framework import blas_threads, nest
from tensorlite.framework.tensor import wrap

# Tasks queued per worker: one running, the next ones ready when it ends (the parent may
# be off a core for a while under load). Few: a task assigned to a worker that other
# programs slow down is waited for in order, while a pull from a shared queue would have
# given it to a free one.
SLOTS_PER_WORKER = 3
_MIN_SLOT = 1 << 16
_STOP_GRACE_S = 2.0
_EXITING = []  # [(terminate-after time, process)] of closed workers not yet reaped
_PINNED = weakref.WeakSet()  # live workers, each pinned to its `cpu`


def _pin(worker):
    """Pins a new worker process to the allowed CPU with the fewest live workers; returns
    that CPU, or None where there is one CPU or no affinity call."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    if len(cpus) < 2:
        return None
    load = dict.fromkeys(cpus, 0)
    for other in list(_PINNED):
        if other.cpu in load and not other.closed and other.proc.is_alive():
            load[other.cpu] += 1
    cpu = min(cpus, key=load.__getitem__)
    try:
        os.sched_setaffinity(worker.pid, {cpu})
    except OSError:  # it exited already
        return None
    _PINNED.add(worker)
    return cpu


def reap_exited():
    """Reaps closed workers that have exited; terminates those past their grace time."""
    now = time.monotonic()
    still = []
    for deadline, proc in _EXITING:
        if proc.is_alive():  # polls (and reaps) without blocking
            if now > deadline:
                proc.terminate()
            still.append((deadline, proc))
    _EXITING[:] = still


def _layout(arrays):
    """(offsets, total bytes) packing arrays at 64-byte alignment."""
    offsets, total = [], 0
    for a in arrays:
        offsets.append(total)
        total += (a.nbytes + 63) // 64 * 64
    return offsets, total


def pack_into(buf, element):
    """Writes an element's arrays into `buf`; returns its metadata, or None when it does not
    fit (the caller then grows the segment) or is not made of plain arrays."""
    flat = nest.flatten(element, expand_composites=True)  # a RaggedTensor: its components
    arrays = [t._value for t in flat]
    if any(a.dtype == object for a in arrays):
        return "pickle", pickle.dumps(structure.to_numpy_element(element), protocol=5)
    offsets, total = _layout(arrays)
    if total > len(buf):
        return "grow", total
    for a, off in zip(arrays, offsets):
        np.ndarray(a.shape, a.dtype, buffer=buf, offset=off)[...] = a
    template = nest.map_structure(lambda t: None, element, expand_composites=True)
    return "shm", (template, [(a.dtype.str, a.shape, off) for a, off in zip(arrays, offsets)])


def unpack_from(buf, meta, copy):
    kind, data = meta
    if kind == "pickle":
        return structure.from_numpy_element(pickle.loads(data))
    template, parts = data
    arrays = []
    for dt, shape, off in parts:
        a = np.ndarray(shape, np.dtype(dt), buffer=buf, offset=off)
        arrays.append(a.copy() if copy else a)
    return nest.pack_like(template, [wrap(a) for a in arrays], expand_composites=True)


def _attach(name):
    # Forked workers share the parent's resource tracker: attaching re-adds the name to
    # its set (a no-op) and the parent's unlink removes it, so nothing is reported leaked.
    return shared_memory.SharedMemory(name=name)


def _pickled_error(e):
    tb = traceback.format_exc()
    try:
        return pickle.dumps(e), tb
    except Exception:  # noqa: BLE001 - an unpicklable exception still reaches the parent
        return pickle.dumps(RuntimeError(repr(e))), tb


def _worker_main(conn, fn_bytes_or_fn, seed):
    from tensorlite.data.blas_threads import limit_blas_threads  # noqa: PLC0415
    from tensorlite.data.seeding import element_seed  # noqa: PLC0415
    limit_blas_threads(1)
    fn = fn_bytes_or_fn
    attached = {}

    def seg(name):
        s = attached.get(name)
        if s is None:
            s = attached[name] = _attach(name)
        return s
    pending = []

    def receive_slot():
        """The parent's answer to "grow"; tasks that arrive first wait their turn."""
        while True:
            m = conn.recv()
            if m[0] == "slot":
                return m[1]
            pending.append(m)
    while True:
        try:
            msg = pending.pop(0) if pending else conn.recv()
        except EOFError:
            break
        if msg[0] == "stop":
            break
        if msg[0] == "drop":  # a segment the parent replaced
            s = attached.pop(msg[1], None)
            if s is not None:
                s.close()
            continue
        _, seq, indices, in_name, in_meta, out_name = msg
        try:
            chunk = unpack_from(seg(in_name).buf, in_meta, copy=False)
        except FileNotFoundError:  # the parent closed, freeing the segments, before this task
            break
        outputs, failures, times = [], {}, []
        cpu0 = time.thread_time()
        for j, (index, element) in enumerate(zip(indices, chunk)):
            t0 = perf_counter_ns()  # the parent reports these spans while profiling
            try:
                with element_seed(seed, index):
                    out = fn(element, index)
                outputs.append(fn.convert(out, index))
            except BaseException as e:  # noqa: BLE001 - sent to the parent, in order
                failures[j] = _pickled_error(e)
            times.append((index, t0, perf_counter_ns()))
        try:
            packed = pack_into(seg(out_name).buf, tuple(outputs))
            if packed[0] == "grow":
                conn.send(("grow", seq, packed[1]))
                packed = pack_into(seg(receive_slot()).buf, tuple(outputs))
            conn.send(("ok", seq, packed, failures, times, time.thread_time() - cpu0))
        except (OSError, EOFError):  # the parent closed while this task ran: nobody to tell
            break
    for s in attached.values():
        s.close()
    os._exit(0)


class _Segment:
    def __init__(self, size):
        self.shm = shared_memory.SharedMemory(create=True, size=max(size, _MIN_SLOT))
        self.name = self.shm.name

    @property
    def buf(self):
        return self.shm.buf

    def free(self):
        try:
            self.shm.close()
            self.shm.unlink()
        except FileNotFoundError:
            pass


class Worker:
    """One forked process and its slots."""

    def __init__(self, fn, seed, name="tf.data worker process"):
        reap_exited()
        # The resource tracker must exist before the fork so the worker shares it.
        resource_tracker.ensure_running()
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.name = name  # its row in the profiler's trace
        self.proc = ctx.Process(target=_worker_main, args=(child, fn, seed), daemon=True,
                                name=name)
        with blas_threads.safe_to_fork():  # never fork under a running BLAS thread pool
            self.proc.start()
        self.pid = self.proc.pid
        child.close()
        self.closed = False
        self.cpu = _pin(self)
        self.inputs = [_Segment(_MIN_SLOT) for _ in range(SLOTS_PER_WORKER)]
        self.outputs = [_Segment(_MIN_SLOT) for _ in range(SLOTS_PER_WORKER)]
        self.free_slots = list(range(SLOTS_PER_WORKER))
        self.busy = {}  # seq -> slot

    def submit(self, seq, indices, elements):
        """Sends a chunk of elements (one message, one shared-memory slot)."""
        slot = self.free_slots.pop()
        chunk = tuple(elements)
        packed = pack_into(self.inputs[slot].buf, chunk)
        if packed[0] == "grow":
            self._replace(self.inputs, slot, packed[1])
            packed = pack_into(self.inputs[slot].buf, chunk)
        self.busy[seq] = (slot, list(indices))
        self.conn.send(("task", seq, list(indices), self.inputs[slot].name, packed,
                        self.outputs[slot].name))

    def _replace(self, segments, slot, size):
        old = segments[slot]
        segments[slot] = _Segment(size * 2)
        self.conn.send(("drop", old.name))
        old.free()

    def receive(self):
        """Blocks for one reply: a list of (index, element or exception), the
        (index, start ns, end ns) of each element's run in the worker, and the CPU
        seconds the chunk took there."""
        msg = self.conn.recv()
        if msg[0] == "grow":
            _, seq, size = msg
            slot = self.busy[seq][0]
            old = self.outputs[slot]
            self.outputs[slot] = _Segment(size * 2)
            self.conn.send(("slot", self.outputs[slot].name))
            self.conn.send(("drop", old.name))
            old.free()
            msg = self.conn.recv()
        _, seq, packed, failures, times, cpu = msg
        slot, indices = self.busy.pop(seq)
        self.free_slots.append(slot)
        outputs = iter(unpack_from(self.outputs[slot].buf, packed, copy=True))
        results = []
        for j, index in enumerate(indices):
            if j in failures:
                payload, tb = failures[j]
                exc = pickle.loads(payload)
                exc.add_note("raised in a tf.data worker process; its traceback:\n" + tb)
                results.append((index, exc))
            else:
                results.append((index, next(outputs)))
        return results, times, cpu

    def close(self):
        """Tells the worker to stop and frees its segments, without waiting for its exit
        (see reap_exited)."""
        self.closed = True
        try:
            self.conn.send(("stop",))
        except (BrokenPipeError, OSError):
            pass
        self.conn.close()
        for seg in self.inputs + self.outputs:
            seg.free()
        _EXITING.append((time.monotonic() + _STOP_GRACE_S, self.proc))
        reap_exited()
