"""The Overview Page: step time over the profiled steps, each step split into input, compute
and other time, their averages, and the one recommendation to act on first.

A step is the window from the end of the previous step marker (on the same thread) to the end
of this one, so the fetch of the next batch counts towards the step that uses it, whether
the loop fetches inside its `Trace('train', step_num=...)` block or just before it (as
`for x in dataset: with Trace(...)` does). The first step's window starts at the input wait
that immediately precedes it, if any.

Within a window, on the stepping thread:
  input   = time in `IteratorGetNext` ("input" spans): waiting for the tf.data pipeline,
            including map functions that run on that thread;
  compute = time in ops (outermost op events only, ops inside an input wait excluded);
  other   = the rest: Python between ops, callbacks, the optimizer's bookkeeping.

The classification follows TensorFlow's: input-bound when at least 20% of step time waits for
input, moderately input-bound from 5%, not input-bound below.
"""
import bisect
import statistics

HIGHLY_INPUT_BOUND_PERCENT = 20.0
MODERATELY_INPUT_BOUND_PERCENT = 5.0


def _outermost(spans):
    """(start, end) spans sorted by start with those nested in an earlier one removed."""
    out = []
    for s, e in sorted(spans):
        if out and s < out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
            continue
        out.append((s, e))
    return out


def _overlap(spans, ends, lo, hi):
    """Total length of the disjoint sorted `spans` (`ends` their ends) clipped to [lo, hi];
    starts at the first span ending after `lo`, so a profile's steps cost n log n."""
    total = 0
    for i in range(bisect.bisect_right(ends, lo), len(spans)):
        s, e = spans[i]
        if s >= hi:
            break
        total += min(e, hi) - max(s, lo)
    return total


def _inside(spans, starts, s, e):
    """Whether [s, e] lies in one of the disjoint sorted `spans` (`starts` their starts)."""
    i = bisect.bisect_right(starts, s) - 1
    return i >= 0 and e <= spans[i][1]


def _thread_spans(buf):
    steps, inputs, ops = [], [], []
    for kind, name, start, dur, _self, payload, _outs in list(buf.events):
        if kind == "step":
            steps.append((start, start + dur, name, payload))
        elif kind == "input":
            inputs.append((start, start + dur))
        elif kind == "op":
            ops.append((start, start + dur))
    return sorted(steps, key=lambda s: s[0]), _outermost(inputs), ops


def _windows(steps, inputs):
    """(window start, step) for each of one thread's sorted steps (see the module doc)."""
    prev_end = None
    for step in steps:
        start = step[0]
        lo = prev_end
        if lo is None:
            before = [s for s, e in inputs if e <= start]
            lo = before[-1] if before else start
        yield min(lo, start), step
        prev_end = step[1]


def step_windows(buf):
    """[(window start ns, end ns, name, args)] of one thread buffer's step markers: each
    step's window as the Overview counts it, in time order.

    >>> step_windows(buf)  # doctest: +SKIP
    [(1200, 5600, 'train', {'step_num': 0, 'epoch_num': 0}), ...]"""
    steps, inputs, _ops = _thread_spans(buf)
    return [(lo, end, name, args) for lo, (_s, end, name, args) in _windows(steps, inputs)]


def step_breakdown(collector):
    """Rows {step_num, name, start_us, step_us, input_us, compute_us, other_us} in time
    order."""
    rows = []
    t0 = collector.start_ns
    for buf in list(collector.buffers):
        steps, inputs, ops = _thread_spans(buf)
        if not steps:
            continue
        starts = [s for s, _ in inputs]
        input_ends = [e for _, e in inputs]
        compute = _outermost([o for o in ops if not _inside(inputs, starts, *o)])
        compute_ends = [e for _, e in compute]
        for i, (lo, (_start, end, name, args)) in enumerate(_windows(steps, inputs)):
            step_ns = end - lo
            inp = _overlap(inputs, input_ends, lo, end)
            comp = min(_overlap(compute, compute_ends, lo, end), step_ns - inp)
            rows.append({"step_num": args.get("step_num", i), "name": name,
                         "start_us": (lo - t0) / 1e3, "step_us": step_ns / 1e3,
                         "input_us": inp / 1e3, "compute_us": comp / 1e3,
                         "other_us": max(step_ns - inp - comp, 0) / 1e3})
    rows.sort(key=lambda r: r["start_us"])
    return rows


def profiled_us(collector):
    return ((collector.stop_ns or collector.start_ns) - collector.start_ns) / 1e3


def input_percent(collector, steps, input_us):
    """Share of step time spent waiting for input (of the profiled time when no steps were
    marked, `input_us` being the Input Pipeline Analyzer's total)."""
    if steps:
        total = sum(s["step_us"] for s in steps)
        return 100.0 * sum(s["input_us"] for s in steps) / total if total else 0.0
    total = profiled_us(collector)
    return 100.0 * input_us / total if total > 0 else 0.0


def _classify(input_percent):
    if input_percent >= HIGHLY_INPUT_BOUND_PERCENT:
        return "input-bound"
    if input_percent >= MODERATELY_INPUT_BOUND_PERCENT:
        return "moderately input-bound"
    return "not input-bound"


def _input_advice(input_pipeline):
    if not input_pipeline:
        return None, None
    bottleneck = input_pipeline.get("bottleneck")
    advice = [a for a in input_pipeline.get("advice", ()) if a.get("kind") != "ok"]
    return bottleneck, advice[0] if advice else None


def recommendation(verdict, input_percent, parts, input_pipeline, ops):
    """The one sentence the Overview puts first, pointing at the tool to open next."""
    if verdict != "not input-bound":
        text = (f"Your program is {verdict}: {input_percent:.1f}% of step time waits for "
                f"data; see the Input Pipeline Analyzer.")
        bottleneck, advice = _input_advice(input_pipeline)
        if bottleneck:
            text += f" The bottleneck is {bottleneck['stage']}."
        if advice:
            text += f" {advice['text']}"
        return {"tool": "input_pipeline", "text": text}
    text = (f"Your program is not input-bound: only {input_percent:.1f}% of step time waits "
            f"for data.")
    if parts["other"] > parts["compute"]:
        return {"tool": "trace_viewer", "text": text + (
            f" Most step time ({parts['other']:.1f}%) is outside ops and input: Python "
            f"between ops, callbacks and bookkeeping. Run the step as a tf.function (Keras "
            f"fit does unless run_eagerly=True) and look for gaps in the Trace Viewer.")}
    if ops:
        top = ops[0]
        return {"tool": "op_stats", "text": text + (
            f" Focus on compute ({parts['compute']:.1f}% of step time): see TensorFlow Stats, "
            f"where {top['name']} takes {top['percent']:.1f}% of op time.")}
    return {"tool": "op_stats", "text": text}


def analyze(collector, ops, input_pipeline=None, steps=None):
    """The Overview as a dict: steps (`step_breakdown`'s, computed when not given),
    averages, verdict and recommendation."""
    if steps is None:
        steps = step_breakdown(collector)
    if steps:
        total = sum(s["step_us"] for s in steps) or 1.0
        sums = {k: sum(s[f"{k}_us"] for s in steps) for k in ("input", "compute", "other")}
        source = "steps"
    else:  # no step markers: the whole profile is the window
        total = profiled_us(collector) or 1.0
        inp = (input_pipeline or {}).get("input_us", 0.0)
        comp = min(sum(r["total_self_us"] for r in ops), total - inp)
        sums = {"input": inp, "compute": comp, "other": max(total - inp - comp, 0.0)}
        source = "whole profile (no step markers)"
    parts = {k: 100.0 * v / total for k, v in sums.items()}
    verdict = _classify(parts["input"])
    step_times = [s["step_us"] for s in steps]
    result = {
        "source": source,
        "steps": steps,
        "num_steps": len(steps),
        "avg_step_us": statistics.fmean(step_times) if steps else 0.0,
        "stddev_step_us": statistics.pstdev(step_times) if len(steps) > 1 else 0.0,
        "min_step_us": min(step_times) if steps else 0.0,
        "max_step_us": max(step_times) if steps else 0.0,
        "avg_input_us": sums["input"] / len(steps) if steps else sums["input"],
        "avg_compute_us": sums["compute"] / len(steps) if steps else sums["compute"],
        "avg_other_us": sums["other"] / len(steps) if steps else sums["other"],
        "input_percent": parts["input"],
        "compute_percent": parts["compute"],
        "other_percent": parts["other"],
        "verdict": verdict,
        "recommendation": recommendation(verdict, parts["input"], parts, input_pipeline, ops),
    }
    if not steps:
        result["note"] = ("No step markers were recorded: wrap each training step in "
                          "tf.profiler.experimental.Trace('train', step_num=step, _r=1) (Keras "
                          "fit does) to get the per-step breakdown.")
    return result
