"""How pipeline stages report to the profiler (see framework/trace_hook.py).

This module is the one place where iterators are hooked to the profiler. A node iterator's
`next()` is its plain body; every `RawIterator` subclass that defines one is registered
here (`hook`, from `RawIterator.__init_subclass__`), and while a profiler runs the class's
`next` is swapped for a traced one (`_switch`, called by `trace_hook.set_active`), so that
when no profiler runs iterators pay nothing. The traced `next` calls the body (with the
iterator's `_tracing` set, so a body that calls another class's `next` on itself runs it
plain) inside a "data" span named after the stage; spans of upstream stages pulled by it
land inside it on the same thread, so its self time is its span minus theirs. The stage's
identity is stamped on the iterator when its dataset node makes it (`stamp`, called by
`DatasetV2`'s wrapper of `_make_iterator`): `it._trace = (span name, stage key, pipeline
id)`. `OwnedIterator.__next__` is swapped the same way for the consumer's "input" span.

Span args: "stage" (the key, stable across epochs: the node's key, or inside an
interleave/flat_map "<outer key>/<label>" so all inner datasets share one stage),
"pipeline", and what the iterator's `_trace_args()` adds at the moment of the call (buffer
fill and capacity, parallelism). Background producers add spans with "role": "producer"
(a prefetch thread fetching one element upstream, an interleave slot thread) and parallel
map workers spans with "role": "worker" (one per element, in threads or worker processes);
they read the running collector with `collector()`.
"""
import itertools
import threading
import time

from tensorlite.framework import trace_hook

_thread_ids = itertools.count(1)
_HOOKED = []  # (class, attribute, plain function, traced function)


def collector():
    """The running profiler's collector, or None (background producers and workers)."""
    return trace_hook.ACTIVE


def hook(cls, name, traced):
    """Makes `cls.<name>` be `traced` while a profiler runs and its own function
    otherwise (also for a class made while one runs: parallel_map is imported lazily)."""
    plain = cls.__dict__[name]
    _HOOKED.append((cls, name, plain, traced))
    if trace_hook.ACTIVE is not None:
        setattr(cls, name, traced)


def hook_next(cls):
    """Hooks a node iterator class's own `next` (see the module docstring), unless the
    class says `_profiled = False`: the iterators that reported no span before the hook
    had one installation point (group_by_window's, rejection_resample's, load's shards,
    the data service's, choose_from_datasets' selector) still report none, so profiles
    are what they were; tracing them adds their stages to the Input Pipeline Analyzer."""
    body = cls.__dict__.get("next")
    if body is None or not getattr(cls, "_profiled", True):
        return

    def next(self):
        if self._tracing:  # inside a traced call on this iterator: the plain body
            return body(self)
        return traced_next(self, body)
    next.__doc__ = body.__doc__
    next.__wrapped__ = body
    hook(cls, "next", next)


def _switch(active):
    """Swaps every hooked class's traced functions in (a profiler started) or out."""
    for cls, name, plain, traced in _HOOKED:
        setattr(cls, name, plain if active is None else traced)


trace_hook.on_change(_switch)


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


def traced_next(it, body):
    """`body(it)` (its class's plain `next`) inside a "data" span (called only while a
    profiler runs)."""
    c = trace_hook.ACTIVE
    info = it._trace
    it._tracing = True
    if c is None or info is None:
        try:
            return body(it)
        finally:
            it._tracing = False
    name, key, pipeline = info
    args = {"stage": key, "pipeline": pipeline}
    extra = it._trace_args()
    if extra:
        args.update(extra)
    t0 = time.perf_counter_ns()
    try:
        return body(it)
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
