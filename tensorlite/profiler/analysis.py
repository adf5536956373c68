"""One profile: everything the four tools show, computed once when the profiler stops and
stored as `profile.json` in the run directory; the HTML and text reports render it."""
import os
import socket

from tensorlite.profiler import input_pipeline as _input_pipeline
from tensorlite.profiler import op_stats as _op_stats
from tensorlite.profiler import overview as _overview

VERSION = 1


def threads(trace_events):
    """One row per trace row (process, thread): its name, event count and busy time (the
    union of its events)."""
    names, procs, spans = {}, {}, {}
    for e in trace_events:
        key = (e["pid"], e["tid"])
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                names[key] = e["args"]["name"]
            elif e["name"] == "process_name":
                procs[e["pid"]] = e["args"]["name"]
            continue
        spans.setdefault(key, []).append((e["ts"], e["ts"] + e["dur"]))
    rows = []
    for key, ss in spans.items():
        busy, end = 0.0, float("-inf")
        for s, e in sorted(ss):
            if e > end:
                busy += e - max(s, end)
                end = e
        rows.append({"pid": key[0], "tid": key[1], "process": procs.get(key[0], str(key[0])),
                     "name": names.get(key, str(key[1])), "events": len(ss), "busy_us": busy})
    rows.sort(key=lambda r: (r["pid"] != os.getpid(), r["pid"], -r["busy_us"]))
    return rows


def build(collector, trace_events, trace_file):
    ops = _op_stats.op_table(collector)
    steps = _overview.step_breakdown(collector)
    ip = _input_pipeline.analyze(collector, steps)
    return {
        "version": VERSION,
        "host": socket.gethostname(),
        "pid": collector.pid,
        "start_wall": collector.start_wall,
        "duration_us": _overview.profiled_us(collector),
        "op_timing": "measured" if collector.timed else "end-time only",
        "total_self_us": sum(r["total_self_us"] for r in ops),
        "ops": ops,
        "overview": _overview.analyze(collector, ops, ip, steps),
        "input_pipeline": ip,
        "threads": threads(trace_events),
        "trace_file": trace_file,
    }
