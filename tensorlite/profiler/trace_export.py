"""Chrome trace event JSON (chrome://tracing, Perfetto, TensorBoard's trace viewer)."""
from tensorlite.profiler.op_stats import display_name


def _us(ns):
    return ns / 1000.0


def _args(kind, payload, out_shapes):
    if kind == "op":
        return {"input_shapes": [list(s) for s in payload],
                "output_shapes": [list(s) for s in out_shapes]}
    return {k: (v if isinstance(v, (int, float, str, bool)) or v is None else str(v))
            for k, v in payload.items()}


def trace_events(collector):
    """Chrome "X" complete events (sorted by start per thread) plus "M" metadata naming the
    process and each thread. Times are microseconds since the profiler started."""
    pid = collector.pid
    t0 = collector.start_ns
    events = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
               "args": {"name": f"tensorlite host (pid {pid})"}}]
    for i, buf in enumerate(sorted(collector.buffers, key=lambda b: b.tid)):
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": buf.tid,
                       "args": {"name": buf.name}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": buf.tid,
                       "args": {"sort_index": i}})
        # Outer events first at equal starts, so viewers nest them correctly.
        for kind, name, start, dur, _self, payload, outs in sorted(
                list(buf.events), key=lambda e: (e[2], -e[3])):
            if kind == "op":
                name = display_name(name, payload)
            events.append({"name": name, "cat": kind, "ph": "X", "ts": _us(start - t0),
                           "dur": _us(dur), "pid": pid, "tid": buf.tid,
                           "args": _args(kind, payload, outs)})
    events += _remote_events(collector)
    return events


def _remote_events(collector):
    """Worker processes' spans: one process row each, one thread row per worker thread."""
    t0 = collector.start_ns
    out, named = [], set()
    for pid, tid, tname, kind, name, start, dur, args in sorted(
            list(collector.remote), key=lambda e: (e[0], e[1], e[5], -e[6])):
        if pid not in named:
            named.add(pid)
            out.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                        "args": {"name": f"tf.data worker (pid {pid})"}})
        if (pid, tid) not in named:
            named.add((pid, tid))
            out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"name": tname}})
        out.append({"name": name, "cat": kind, "ph": "X", "ts": _us(max(start - t0, 0)),
                    "dur": _us(dur), "pid": pid, "tid": tid, "args": _args(kind, args, None)})
    return out


def chrome_trace(collector):
    return {"traceEvents": trace_events(collector), "displayTimeUnit": "ms",
            "otherData": {"producer": "tensorlite.profiler",
                          "op_timing": "measured" if collector.timed else "end-time only"}}
