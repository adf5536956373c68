"""Recording side of the profiler: a dispatch observer that keeps one event buffer per thread.

An op event gets a real start time only when dispatch calls `before(op)` ahead of the forward
computation (see `install`); without that hook every op is recorded at its end time with a
zero duration, so counts and shapes are right but times are not.
"""
import os
import sys
import threading
import time

from tensorlite.framework import dispatch, trace_hook

_ACTIVE = None  # the running Collector, or None (Trace checks this; nothing else costs)
_LOCK = threading.Lock()


class _ThreadBuffer:
    __slots__ = ("tid", "name", "events", "stack")

    def __init__(self):
        t = threading.current_thread()
        self.tid = threading.get_ident()
        self.name = t.name
        self.events = []  # appended only by the owning thread: no lock on the hot path
        self.stack = []  # [op, start_ns, child_ns] for ops whose forward is running


def _shape(t):
    return tuple(getattr(getattr(t, "_value", None), "shape", ()))


class Collector:
    """Dispatch observer recording (op, shapes, times) per thread while the profiler runs."""

    def __init__(self):
        self.pid = os.getpid()
        self.start_ns = time.perf_counter_ns()
        self.start_wall = time.time()
        self.stop_ns = None
        self.buffers = []
        self.remote = []  # (pid, tid, thread name, kind, name, start, dur, args): worker processes
        self._remote_lock = threading.Lock()
        self.timed = False  # True when dispatch offers the `before` hook
        self._local = threading.local()
        self._blist_lock = threading.Lock()
        self.data_baseline = data_contexts_snapshot()
        self.data_pipelines = {}  # pipeline id -> Context of its latest iterator (tf.data)

    def _buffer(self):
        try:
            return self._local.buf
        except AttributeError:
            buf = self._local.buf = _ThreadBuffer()
            with self._blist_lock:
                self.buffers.append(buf)
            return buf

    def before(self, op):
        """Called by dispatch just before `op`'s forward computation (when it supports it);
        `before(None)` says the op just started failed and will never reach `record`."""
        stack = self._buffer().stack
        if op is None:
            if stack:
                _drop_top(stack)
            return
        if len(stack) >= _MAX_DEPTH:  # stale entries of failed ops, without before(None)
            del stack[:_MAX_DEPTH // 2]
        stack.append([op, time.perf_counter_ns(), 0])

    def record(self, op, inputs, attrs, outputs):
        end = time.perf_counter_ns()
        buf = self._buffer()
        stack = buf.stack
        # An op whose forward raised never reaches record: drop its stale entry.
        while stack and stack[-1][0] is not op:
            _drop_top(stack)
        if stack:
            _, start, child = stack.pop()
            dur = end - start
            self_ns = dur - child
            if stack:
                stack[-1][2] += dur
        else:
            start, dur, self_ns = end, 0, 0
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        buf.events.append(("op", op.name, start, dur, self_ns,
                           tuple(map(_shape, inputs)), tuple(map(_shape, outs))))

    def add_trace(self, name, start, end, args, step):
        self._buffer().events.append(("step" if step else "trace", name, start, end - start,
                                      end - start, args, None))

    def add_span(self, kind, name, start, end, args=None):
        """A span of the calling thread (see framework/trace_hook.py for the kinds)."""
        self._buffer().events.append((kind, name, start, end - start, end - start,
                                      args or {}, None))

    def add_remote(self, pid, tid, thread_name, kind, name, start, end, args=None):
        """A span timed in another process (a tf.data worker) with perf_counter_ns."""
        with self._remote_lock:
            self.remote.append((pid, tid, thread_name, kind, name, start, end - start,
                                args or {}))


_MAX_DEPTH = 256  # ops nest only through control flow; deeper stacks hold stale entries


def _drop_top(stack):
    # A failed op's children stay children of the op around it.
    child = stack.pop()[2]
    if stack:
        stack[-1][2] += child


def active():
    return _ACTIVE


def install():
    """Starts a Collector and registers it with dispatch; returns it (None if one runs)."""
    global _ACTIVE
    with _LOCK:
        if _ACTIVE is not None:
            return None
        c = Collector()
        hooks = getattr(dispatch, "BEFORE", None)
        if hooks is not None:
            hooks.append(c.before)
            c.timed = True
        dispatch.OBSERVERS.append(c)
        _ACTIVE = c
        trace_hook.set_active(c)
        return c


def uninstall():
    """Unregisters and returns the running Collector (None if none runs)."""
    global _ACTIVE
    with _LOCK:
        c = _ACTIVE
        if c is None:
            return None
        _ACTIVE = None
        trace_hook.set_active(None)
        c.stop_ns = time.perf_counter_ns()
        _remove(dispatch.OBSERVERS, c)
        hooks = getattr(dispatch, "BEFORE", None)
        if hooks is not None:
            _remove(hooks, c.before)
        return c


def _remove(lst, item):
    # observers_paused may have swapped the list's content; remove by identity if present
    for i, x in enumerate(lst):
        if x is item or x == item:
            del lst[i]
            return


def data_contexts_snapshot():
    """id(Context) -> (Context, {stage key: (count, total)}) for every live tf.data pipeline
    context (the data package keeps a weak set of them); taken when the profiler starts,
    so that stage stats can be reported as what happened while profiling."""
    mod = sys.modules.get("tensorlite.data.iterator")
    if mod is None or not hasattr(mod, "live_contexts"):
        return {}
    out = {}
    for ctx in mod.live_contexts():
        stages = getattr(getattr(ctx, "stats", None), "stages", None)
        if stages is not None:
            out[id(ctx)] = (ctx, {k: (s.count, s.total) for k, s in list(stages.items())})
    return out


def data_stats_during(baseline, contexts=None):
    """Stage stats of pipelines that produced elements since `baseline` was taken, one entry
    per pipeline id (contexts of several epochs of one pipeline summed). `contexts`: extra
    contexts to include even if no longer alive (the collector's `data_pipelines`)."""
    found = {id(c): c for c, _ in data_contexts_snapshot().values()}
    for ctx in (contexts or {}).values():
        found.setdefault(id(ctx), ctx)
    pipelines = {}
    for cid, ctx in found.items():
        base = baseline.get(cid)
        base_stages = base[1] if base is not None and base[0] is ctx else {}
        rows = pipelines.setdefault(getattr(ctx, "pipeline", None), {})
        for key, s in list(ctx.stats.stages.items()):
            c0, t0 = base_stages.get(key, (0, 0.0))
            r = rows.get(str(key))
            if r is None:
                r = rows[str(key)] = {
                    "key": str(key), "name": s.name, "count": 0, "total_s": 0.0,
                    "max_s": 0.0, "wait_s": 0.0, "count_while_profiling": 0,
                    "total_s_while_profiling": 0.0}
            r["count"] += s.count
            r["total_s"] += s.total
            r["max_s"] = max(r["max_s"], s.max)
            r["wait_s"] += s.wait
            r["count_while_profiling"] += s.count - c0
            r["total_s_while_profiling"] += s.total - t0
            if s.count - c0 or "choice" not in r:  # the latest context that ran decides
                r.update(choice=s.choice, buffer=s.buffer, capacity=s.capacity,
                         parallelism=s.parallelism)
    result = []
    for pid, rows in sorted(pipelines.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
        rows = list(rows.values())
        for r in rows:
            r["mean_s"] = r["total_s"] / r["count"] if r["count"] else 0.0
        if any(r["count_while_profiling"] for r in rows):
            result.append({"pipeline": pid, "stages": rows})
    return result
