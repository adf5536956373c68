"""The one point through which code below the profiler (tf.data stages, iterators, worker
processes) reports timed spans, without importing the profiler.

`ACTIVE` is the running profiler's collector, or None. Reporting code reads it once per
span; when it is None nothing else is done, so not profiling costs one attribute load:

    c = trace_hook.ACTIVE
    if c is not None:
        t0 = time.perf_counter_ns()
        ...
        c.add_span("data", "Map(parse)", t0, time.perf_counter_ns(), {"stage": key})

Kinds used: "input" (a consumer waiting for the next element: `IteratorGetNext`, args
{"pipeline": id}), "data" (a tf.data stage producing one element, args {"stage": key,
"pipeline": id, ...}; "role": "producer" marks a background thread fetching for its stage,
"role": "worker" a parallel map worker running the function on one element). Worker
processes have no collector of their own: they time their work with
`time.perf_counter_ns()` (CLOCK_MONOTONIC, shared by every process on the machine) and the
parent reports it with `add_remote(pid, ...)`. See data/tracing.py for how stages report.

A collector also offers `data_pipelines`, a dict the iterators fill with pipeline id ->
the latest pipeline context seen while profiling (its optimised root dataset and stage
stats), which the Input Pipeline Analyzer (profiler/input_pipeline.py) reads.
"""
ACTIVE = None
_LISTENERS = []  # called with the new collector (or None) whenever ACTIVE changes


def on_change(listener):
    """Calls `listener(collector)` each time a profiler starts or stops (`set_active`):
    tf.data swaps its stages' traced `next` in and out there (data/tracing.py), so that
    not profiling costs its iterators nothing at all."""
    _LISTENERS.append(listener)


def set_active(collector):
    """Makes `collector` (or None) the running profiler's collector and tells the
    listeners. Only the profiler calls this, under its lock."""
    global ACTIVE
    ACTIVE = collector
    for listener in _LISTENERS:
        listener(collector)
