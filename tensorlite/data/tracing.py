"""How pipeline stages report to the profiler (see framework/trace_hook.py).

Every node iterator's `next()` starts with

    if trace_hook.ACTIVE is not None and not self._tracing:
        return traced_next(self)

so that when no profiler runs the only cost is that one load. While one runs, `traced_next`
calls `next()` again (with `_tracing` set) inside a "data" span named after the stage; spans
of upstream stages pulled by it land inside it on the same thread, so its self time is its
span minus theirs. The stage's identity is stamped on the iterator when its dataset node
makes it (`stamp`, called by `DatasetV2`'s wrapper of `_make_iterator`):
`it._trace = (span name, stage key, pipeline id)`.

Span args: "stage" (the key, stable across epochs: the node's key, or inside an
interleave/flat_map "<outer key>/<label>" so all inner datasets share one stage),
"pipeline", and what the iterator's `_trace_args()` adds at the moment of the call (buffer
fill and capacity, parallelism). Background producers add spans with "role": "producer"
(a prefetch thread fetching one element upstream, an interleave slot thread) and parallel
map workers spans with "role": "worker" (one per element, in threads or worker processes).
"""
import itertools
import threading
import time

from tensorlite.framework import trace_hook

_thread_ids = itertools.count(1)


def stamp(it, node, ctx):
    """Names `it` after its dataset node unless an inner node already did (a node may
    return the iterator of another, e.g. with_options or TFRecord's interleave).

    Attributes only (never `it.__dict__`: on CPython 3.11+ touching it turns the object's
    inline attribute values into a dict, and every attribute access in `next()` slows)."""
    if getattr(it, "_trace", None) is not None:
        return
    scope = getattr(ctx, "scope", "")
    label = node._label()
    key = scope[0] + "/" + label if scope else str(node._key)
    name = scope[1] + " > " + label if scope else label
    try:
        it._trace = (name, key, getattr(ctx, "pipeline", None))
    except AttributeError:  # an iterator with __slots__: it just is not traced
        pass


def inner_context(it):
    """The context an interleave's or flat_map's inner datasets run in: each gets the same
    stage keys under the outer stage, so the profiler shows one row per inner stage rather
    than one per input element. Made once per iterator (`it._scoped`)."""
    inner = it._scoped
    if inner is None:
        info = it._trace
        inner = it._ctx if info is None else it._ctx.scoped(info[1], info[0])
        it._scoped = inner
    return inner


def traced_next(it):
    """`it.next()` inside a "data" span (called only while a profiler runs)."""
    c = trace_hook.ACTIVE
    info = it._trace
    it._tracing = True
    if c is None or info is None:
        try:
            return it.next()
        finally:
            it._tracing = False
    name, key, pipeline = info
    args = {"stage": key, "pipeline": pipeline}
    extra = it._trace_args()
    if extra:
        args.update(extra)
    t0 = time.perf_counter_ns()
    try:
        return it.next()
    except StopIteration:
        args["end_of_sequence"] = True
        raise
    except BaseException as e:
        args["error"] = type(e).__name__
        raise
    finally:
        it._tracing = False
        c.add_span("data", name, t0, time.perf_counter_ns(), args)


def span_args(it, role, **more):
    """Args of a producer/worker span of stage `it` (None when `it` is not stamped)."""
    info = it._trace
    if info is None:
        return None
    args = {"stage": info[1], "pipeline": info[2], "role": role}
    args.update(more)
    return args


def name_thread(what):
    """Gives the calling thread a row name for the trace viewer: "tf.data <what> <n>"."""
    threading.current_thread().name = f"tf.data {what} {next(_thread_ids)}"


def thread_name(what):
    return f"tf.data {what} {next(_thread_ids)}"
