"""The Input Pipeline Analyzer: what each tf.data stage cost while profiling, which stage
limits the training loop, and what to change (the advice of TensorFlow's guide "Better
performance with the tf.data API", made concrete).

Inputs, all recorded in the profiled window only (see data/tracing.py):
  * "input" spans (`IteratorGetNext`): the consumer waiting for its next element;
  * "data" spans, one per element per stage, on the thread that produced it. Stages pull
    from upstream stages on the same thread, so spans nest; a span's *self time* is its
    duration minus the spans of the same pipeline directly inside it. Background producers
    (a prefetch thread, an interleave slot thread) add "producer" spans around each element
    they fetch; parallel map workers add a "worker" span per element (threads of this
    process, or worker processes, reported with their own pid);
  * the pipelines' stage stats (AUTOTUNE's choices), as deltas since the profiler started.

How input time is attributed ("percent_of_input"):
  The consumer threads of a pipeline are the threads that called `IteratorGetNext` on it.
  Every stage span on a consumer thread (outside producers) blocks the training loop for
  its self time; those self times sum to the pipeline's input time (the denominator).
  A synchronous stage keeps its share. An asynchronous stage (prefetch, parallel
  interleave) spends its consumer-side self time waiting for its producer thread(s): that
  wait is handed on to the stages that run on those threads, in proportion to their self
  time there (recursively, when one of them is itself asynchronous). A parallel map's wait
  stays with the map: its own workers are what it waits for. So the percentages of one
  pipeline sum to 100 and the largest one is the stage that limits the input rate: the
  bottleneck, reported when the training loop is input-bound (it waits for input at least
  5% of step time, the Overview's threshold; of the profiled time when there are no steps).

Advice, each from what was measured plus the (optimised) dataset graph, only while
input-bound except the ordering rule:
  parallelize_map        a map taking >= 20% of input time one element at a time (or at a
                         fixed num_parallel_calls), unless it is cheap (< 100 us/element)
  vectorize              a cheap map (median < 100 us/element) right before batch, >= 10%
  cache                  a map >= 10% re-run over a finite input every epoch (a repeat after
                         it, or more calls than input elements), no cache after it and no
                         shuffle before it
  interleave             >= 10% in TextLine/TFRecord reading several files one by one, or a
                         flat_map / sequential interleave over file readers
  add_prefetch           the pipeline does not end with prefetch
  shuffle_before_repeat  a shuffle after a repeat (always: epochs blur)
  ok                     not input-bound (first, alone unless the ordering rule applies)
"""
import collections
import statistics

from tensorlite.profiler.collector import data_stats_during
from tensorlite.profiler.overview import (MODERATELY_INPUT_BOUND_PERCENT, input_percent,
                                          step_breakdown)

INPUT_BOUND_PERCENT = MODERATELY_INPUT_BOUND_PERCENT
_SIGNIFICANT = 20.0  # % of input time that makes a stage worth changing
_NOTABLE = 10.0
_CHEAP_US = 100.0  # per-element work below this is dominated by per-call cost
_MAX_DEPTH = 32


class _Span:
    __slots__ = ("thread", "kind", "name", "start", "end", "args", "self_ns", "owner")

    def __init__(self, thread, kind, name, start, end, args):
        self.thread, self.kind, self.name = thread, kind, name
        self.start, self.end, self.args = start, end, args
        self.self_ns = end - start
        self.owner = None  # stage key of the producer span this one runs under


# -- collecting spans ----------------------------------------------------------------------
def _threads(collector):
    """(thread key, thread name, remote?, [(kind, name, start, end, args)])."""
    for buf in list(collector.buffers):
        evs = [(k, n, s, s + d, a) for k, n, s, d, _self, a, _o in list(buf.events)
               if k in ("data", "input")]
        if evs:
            yield (collector.pid, buf.tid), buf.name, False, evs
    remote = collections.defaultdict(list)
    names = {}
    for pid, tid, tname, kind, name, start, dur, args in list(getattr(collector, "remote", ())):
        if kind in ("data", "input"):
            remote[(pid, tid)].append((kind, name, start, start + dur, args))
            names[(pid, tid)] = tname
    for key, evs in remote.items():
        yield key, names[key], True, evs


def _nest(thread, events):
    """Spans of one thread with self times (minus same-pipeline children) and owners."""
    spans = sorted((_Span(thread, *e) for e in events), key=lambda s: (s.start, -s.end))
    stack = []
    for s in spans:
        while stack and stack[-1].end <= s.start:
            stack.pop()
        parent = stack[-1] if stack and stack[-1].end >= s.end else None
        if parent is not None:
            if parent.args.get("pipeline") == s.args.get("pipeline"):
                parent.self_ns -= s.end - s.start
            if parent.args.get("role") == "producer":
                s.owner = parent.args.get("stage")
            else:
                s.owner = parent.owner
        else:
            stack.clear()
        stack.append(s)
    return spans


# -- per pipeline --------------------------------------------------------------------------
class _Stage:
    def __init__(self, key):
        self.key = key
        self.name = key
        self.calls = 0
        self.call_self = []  # consumer-side self time per produced element
        self.total_self = 0
        self.work = []  # worker spans' self times
        self.work_where = set()
        self.producer = False
        self.call_threads = set()
        self.buffers = []  # (fill, capacity) at each call
        self.args = {}  # the latest call's args
        # (mode, parallelism) -> calls served: an AUTOTUNE map switches plans while it runs
        # (a short inline sample, a fall-back), and the plan that served most calls is
        # the one to report, not whichever the last call happened to see
        self.plans = collections.Counter()


def _collect(collector):
    """pipeline id -> {"stages": {key: _Stage}, "consumers": set, "input_ns": int,
    "under": {boundary key: {stage key: self ns}}, "mass": {stage key: self ns}}."""
    per_thread = [(key, name, remote, _nest(key, evs))
                  for key, name, remote, evs in _threads(collector)]
    pipes = collections.defaultdict(lambda: {
        "stages": {}, "consumers": set(), "input_ns": 0,
        "under": collections.defaultdict(lambda: collections.defaultdict(int)),
        "mass": collections.defaultdict(int)})
    for key, _name, _remote, spans in per_thread:
        for s in spans:
            if s.kind == "input":
                p = pipes[s.args.get("pipeline")]
                p["consumers"].add(key)
                p["input_ns"] += s.end - s.start
    for key, _name, remote, spans in per_thread:
        for s in spans:
            if s.kind != "data" or s.args.get("pipeline") not in pipes:
                continue
            p = pipes[s.args["pipeline"]]
            _account(p, s, key, remote)
    return {pid: p for pid, p in pipes.items() if p["input_ns"] or p["stages"]}


def _account(p, s, thread, remote):
    key = s.args.get("stage")
    st = p["stages"].get(key)
    if st is None:
        st = p["stages"][key] = _Stage(key)
    st.name = s.name
    st.total_self += s.self_ns
    role = s.args.get("role")
    if role == "worker":
        st.work.append(s.self_ns)
        st.work_where.add("remote" if remote else thread)
    elif role == "producer":
        st.producer = True
    else:
        st.call_threads.add(thread)
        st.args = s.args
        if not s.args.get("end_of_sequence") and "error" not in s.args:
            st.calls += 1
            st.plans[(s.args.get("mode"), s.args.get("parallelism", 1))] += 1
            st.call_self.append(s.self_ns)
        if s.args.get("capacity") and "buffer" in s.args:
            st.buffers.append((s.args["buffer"], s.args["capacity"]))
    owner = key if role == "producer" else s.owner
    if owner is not None:  # work of a background producer: blamed via its stage
        p["under"][owner][key] += s.self_ns
    elif thread in p["consumers"]:  # the training loop waits for this directly
        p["mass"][key] += s.self_ns


def _blame(p):
    """Stage key -> ns of the consumer's input time attributed to it (module docstring)."""
    blame = collections.defaultdict(float)
    under = p["under"]

    def assign(key, mass, depth):
        sub = under.get(key)
        total = sum(sub.values()) if sub else 0
        if not total or depth > _MAX_DEPTH:
            blame[key] += mass
            return
        for k, v in sub.items():
            if k == key:
                blame[key] += mass * v / total
            else:
                assign(k, mass * v / total, depth + 1)
    for key, mass in p["mass"].items():
        assign(key, mass, 0)
    return blame


# -- describing stages ---------------------------------------------------------------------
def _parallelism(st):
    a = st.args
    mode, n = st.plans.most_common(1)[0][0] if st.plans else (a.get("mode"),
                                                              a.get("parallelism", 1))
    auto = "AUTOTUNE->" if a.get("requested") == "AUTOTUNE" else ""
    if mode == "thread":
        return f"{auto}{n} thread{'s' if n != 1 else ''}"
    if mode == "process":
        return f"{auto}{n} process{'es' if n != 1 else ''}"
    if mode == "inline":
        return f"{auto}inline" if auto else "1"
    if isinstance(n, int) and n > 1:
        return f"{n} threads"
    if st.producer:
        return "1 thread"
    return "1"


def _buffer(st):
    if not st.buffers:
        return ""
    fill = sum(b for b, _ in st.buffers) / len(st.buffers)
    return f"avg {fill:.1f}/{max(c for _, c in st.buffers)}"


def _where(st, consumers):
    if st.work:
        if "remote" in st.work_where:
            return "worker processes"
        return "consumer thread" if st.work_where <= consumers else "background thread(s)"
    if st.producer or not st.call_threads <= consumers:
        return "background thread(s)"
    return "consumer thread"


def _row(st, blame_ns, input_total, consumers):
    lat = st.work if st.work else st.call_self
    return {
        "stage": st.name, "key": st.key, "calls": st.calls or len(st.work),
        "avg_us": sum(lat) / len(lat) / 1e3 if lat else 0.0,
        "median_us": statistics.median(lat) / 1e3 if lat else 0.0,
        "max_us": max(lat) / 1e3 if lat else 0.0,
        "total_self_us": st.total_self / 1e3,
        "percent_of_input": 100.0 * blame_ns / input_total if input_total else 0.0,
        "parallelism": _parallelism(st), "buffer": _buffer(st),
        "where": _where(st, consumers),
    }


# -- the dataset graph ---------------------------------------------------------------------
def _graph(root):
    """(nodes by stage key, parent key by stage key, structure string) of a pipeline."""
    from tensorlite.data.optimize import MapAndBatchDataset  # noqa: PLC0415
    from tensorlite.data.options import OptionsDataset  # noqa: PLC0415
    nodes, parent = {}, {}

    def chain(node, down):
        while isinstance(node, OptionsDataset):
            node = node._inputs[0]
        key = str(node._key)
        nodes[key], parent[key] = node, down
        if isinstance(node, MapAndBatchDataset):
            m = node._map
            nodes[str(m._key)], parent[str(m._key)] = m, key
            return chain(m._input, str(m._key)) + [m._label(), node._label()]
        ins = [chain(i, key) for i in node._inputs]
        if not ins:
            return [node._label()]
        if len(ins) == 1:
            return ins[0] + [node._label()]
        return ["(" + " | ".join(" -> ".join(c) for c in ins) + ")", node._label()]
    if root is None:
        return nodes, parent, ""
    return nodes, parent, " -> ".join(chain(root, None))


def _upstream(node):
    """Every node feeding `node` (not itself)."""
    out, todo = [], list(node._inputs)
    while todo:
        n = todo.pop()
        out.append(n)
        todo.extend(n._inputs)
    return out


def _downstream(key, parent, nodes):
    out = []
    k = parent.get(key)
    while k is not None:
        out.append(nodes[k])
        k = parent.get(k)
    return out


# -- advice --------------------------------------------------------------------------------
def _kinds():
    """The dataset node classes the rules look for (imported late: the profiler does not
    need tf.data unless a pipeline ran)."""
    import types  # noqa: PLC0415

    from tensorlite.data import batching, cache, prefetch, shuffle, transforms  # noqa: PLC0415
    from tensorlite.data.dataset import AUTOTUNE  # noqa: PLC0415
    return types.SimpleNamespace(
        Batch=batching.BatchDataset, PaddedBatch=batching.PaddedBatchDataset,
        Cache=cache.CacheDataset, Prefetch=prefetch.PrefetchDataset,
        Shuffle=shuffle.ShuffleDataset, Map=transforms.MapDataset,
        Repeat=transforms.RepeatDataset, AUTOTUNE=AUTOTUNE, fn_label=transforms.fn_label)


def _advice(pid, rows, nodes, parent, input_bound, input_percent):
    """[(score, advice dict)] for one pipeline: higher scores first."""
    k = _kinds()
    by_key = {r["key"]: r for r in rows}
    out = []

    def add(score, kind, stage, text):
        out.append((score, {"kind": kind, "stage": stage, "text": text}))
    for node in nodes.values():
        if isinstance(node, k.Shuffle):
            rep = next((n for n in _upstream(node) if isinstance(n, k.Repeat)), None)
            if rep is not None:
                add(-1.0, "shuffle_before_repeat", node._label(),
                    f"{node._label()} comes after {rep._label()}: elements of neighbouring "
                    f"epochs mix, so an epoch is not one full pass over the data; shuffle "
                    f"first, then repeat: .shuffle({node._size}).repeat(...)")
    if not input_bound:
        return out
    for key, node in nodes.items():
        if isinstance(node, k.Map) and key in by_key:
            _map_advice(add, k, node, by_key[key], _downstream(key, parent, nodes))
    _reader_advice(add, nodes, rows)
    top = next(iter(n for key, n in nodes.items() if parent.get(key) is None), None)
    if top is not None and not isinstance(top, k.Prefetch) and rows:
        add(50.0, "add_prefetch", top._label(),
            f"Pipeline {pid} ends with {top._label()}, not prefetch, so the training loop "
            f"waits while each element is made ({input_percent:.0f}% of step time): add "
            f".prefetch(tf.data.AUTOTUNE) as its last transformation")
    return out


def _map_advice(add, k, node, r, down):
    """parallelize_map, vectorize and cache for one map stage (`down`: the nodes after
    it, nearest first)."""
    fn, label = k.fn_label(node._fn), r["stage"]
    avg, pct = r["avg_us"], r["percent_of_input"]
    cheap = r["median_us"] < _CHEAP_US  # the typical call: preemptions inflate the mean
    where = "on the consumer thread" if r["where"] == "consumer thread" else \
        f"on {r['where']}"
    if not cheap and pct >= _SIGNIFICANT:
        if node._parallel is None:
            add(pct, "parallelize_map", label,
                f"{label} takes {pct:.0f}% of input time {where}, one element at a time "
                f"(avg {avg / 1e3:.2f} ms each): pass num_parallel_calls=tf.data.AUTOTUNE to "
                f".map({fn}) so elements are made on every core")
        elif node._parallel != k.AUTOTUNE:
            add(pct, "parallelize_map", label,
                f"{label} takes {pct:.0f}% of input time at num_parallel_calls="
                f"{node._parallel} ({r['parallelism']}): pass num_parallel_calls="
                f"tf.data.AUTOTUNE to .map({fn}) (or raise it)")
        else:  # AUTOTUNE already: more parallelism is not to be had, less work per element is
            add(pct * 0.8, "vectorize", label,
                f"{label} already runs at {r['parallelism']} and still takes {pct:.0f}% of "
                f"input time (avg {avg / 1e3:.2f} ms per element): the function itself is the "
                f"limit; vectorise it over whole batches (.batch(n).map({fn})), cache its "
                f"output if it does not change between epochs, or precompute it offline")
    if cheap and pct >= _NOTABLE and down and isinstance(down[0], k.Batch) and \
            not isinstance(down[0], k.PaddedBatch):
        n = down[0]._batch
        add(pct, "vectorize", label,
            f"{label} runs once per element ({r['calls']} calls at {avg:.0f} us each, "
            f"{pct:.0f}% of input time) right before Batch({n}): per-call cost dominates such "
            f"a cheap function; batch first and map whole batches: .batch({n}).map({fn}) "
            f"(the function must accept a batch)")
    if pct >= _NOTABLE and not any(isinstance(n, k.Cache) for n in down):
        card = node._input._cardinality()
        shuffled = any(isinstance(n, k.Shuffle) for n in _upstream(node))
        repeated = any(isinstance(n, k.Repeat) for n in down) or 0 < card < r["calls"]
        if card >= 0 and repeated and not shuffled:
            add(pct * 0.9, "cache", label,
                f"{label} recomputes the same {card} elements every epoch ({r['calls']} calls "
                f"while profiling, {pct:.0f}% of input time): if its result does not change "
                f"between epochs, cache it: .map({fn}).cache() before shuffle, batch and "
                f"repeat")


def _reader_advice(add, nodes, rows):
    from tensorlite.data.interleave import InterleaveDataset  # noqa: PLC0415
    from tensorlite.data.readers import TextLineDataset  # noqa: PLC0415
    from tensorlite.data.tfrecord import TFRecordDataset  # noqa: PLC0415
    from tensorlite.data.transforms import FlatMapDataset, fn_label  # noqa: PLC0415

    def share(key):  # the stage and every stage inside it (an interleave's inputs)
        return sum(r["percent_of_input"] for r in rows
                   if r["key"] == key or r["key"].startswith(key + "/"))

    def reads_files(key):
        return any(r["key"].startswith(key + "/") and
                   ("TFRecord(" in r["stage"] or "TextLine(" in r["stage"]) for r in rows)
    for key, node in nodes.items():
        pct = share(key)
        if pct < _NOTABLE:
            continue
        label = node._label()
        if isinstance(node, (TextLineDataset, TFRecordDataset)) and \
                getattr(node, "_parallel", None) is None:
            files = node._files
            if files is not None and len(files) < 2:
                continue
            cls = type(node).__name__
            n = "several" if files is None else str(len(files))
            extra = " (or TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE))" \
                if cls == "TFRecordDataset" else ""
            add(pct, "interleave", label,
                f"{label} reads {n} files one after another ({pct:.0f}% of input time): read "
                f"several at once with tf.data.Dataset.from_tensor_slices(files).interleave("
                f"tf.data.{cls}, cycle_length={min(4, len(files or [0] * 4))}, "
                f"num_parallel_calls=tf.data.AUTOTUNE){extra}")
        elif isinstance(node, FlatMapDataset) and reads_files(key):
            add(pct, "interleave", label,
                f"{label} reads its files one after another ({pct:.0f}% of input time): use "
                f".interleave({fn_label(node._fn)}, cycle_length=4, num_parallel_calls="
                f"tf.data.AUTOTUNE) instead of .flat_map({fn_label(node._fn)})")
        elif isinstance(node, InterleaveDataset) and node._parallel is None and \
                reads_files(key):
            add(pct, "interleave", label,
                f"{label} opens and reads its files on the consumer thread ({pct:.0f}% of "
                f"input time): pass num_parallel_calls=tf.data.AUTOTUNE to "
                f".interleave({fn_label(node._fn)}, ...) so files are read in parallel")


# -- the analysis --------------------------------------------------------------------------
def _choices(collector):
    """pipeline id -> {stage key: AUTOTUNE's/the user's choice} from the stage stats."""
    stats = data_stats_during(collector.data_baseline or {}, collector.data_pipelines)
    return {p["pipeline"]: {s["key"]: s["choice"] for s in p["stages"] if s.get("choice")}
            for p in stats}


def _bottleneck(pid, row, input_percent, choice):
    where = row["where"]
    avg = row["avg_us"] / 1e3
    how = f" ({choice})" if choice else ""
    if where == "consumer thread":
        why = (f"it runs on the consumer thread and takes {row['percent_of_input']:.0f}% of "
               f"the time the training loop waits for input (avg {avg:.2f} ms per element, "
               f"parallelism {row['parallelism']}{how})")
    else:
        why = (f"{row['percent_of_input']:.0f}% of the time the training loop waits for "
               f"input is spent waiting for it (avg {avg:.2f} ms per element on {where}, "
               f"parallelism {row['parallelism']}{how})")
    why += f"; the loop waits for input {input_percent:.0f}% of step time"
    return {"pipeline": pid, "stage": row["stage"], "why": why}


def analyze(collector, steps=None):
    """The Input Pipeline Analyzer of what `collector` recorded (`steps`: the Overview's
    step_breakdown, computed when not given):

    {"input_us": time in IteratorGetNext, all consumer threads,
     "pipelines": [{"pipeline": id, "structure": "TensorSlice -> Map(f) -> Batch(32)",
                    "stages": [{"stage", "key", "calls", "avg_us", "max_us",
                                "total_self_us", "percent_of_input", "parallelism",
                                "buffer", "where"}, ...by total self time]}],
     "bottleneck": None (not input-bound) or {"pipeline", "stage", "why"},
     "advice": [{"kind", "stage", "text"}, ...most important first]}

    avg/max are per element: the function's time for parallel map workers, else the self
    time of a call as its consumer sees it (for prefetch: the wait)."""
    pipes = _collect(collector)
    contexts = getattr(collector, "data_pipelines", {}) or {}
    choices = _choices(collector)
    input_ns = sum(p["input_ns"] for p in pipes.values())
    input_us = input_ns / 1e3
    if steps is None:
        steps = step_breakdown(collector)
    waiting = input_percent(collector, steps, input_us)
    input_bound = waiting >= INPUT_BOUND_PERCENT
    pipelines, scored, best = [], [], None
    for pid in sorted(pipes, key=lambda k: (k is None, k if k is not None else 0)):
        p = pipes[pid]
        if not p["input_ns"]:  # element_spec probes and other internal runs
            continue
        blame = _blame(p)
        total = sum(blame.values())
        rows = [_row(st, blame.get(k, 0.0), total, p["consumers"])
                for k, st in p["stages"].items()]
        rows.sort(key=lambda r: (-r["total_self_us"], r["stage"]))
        ctx = contexts.get(pid)
        nodes, parent, structure = _graph(getattr(ctx, "root", None))
        if not structure:
            structure = " -> ".join(r["stage"] for r in reversed(rows))
        pipelines.append({"pipeline": pid, "structure": structure, "stages": rows})
        if rows:
            top = max(rows, key=lambda r: r["percent_of_input"])
            weight = p["input_ns"]
            if best is None or weight > best[0]:
                best = (weight, pid, top)
        scored += _advice(pid, rows, nodes, parent, input_bound, waiting)
    bottleneck = None
    if input_bound and best is not None:
        _, pid, row = best
        bottleneck = _bottleneck(pid, row, waiting,
                                 choices.get(pid, {}).get(row["key"], ""))
    advice = [a for _, a in sorted(scored, key=lambda sa: -sa[0])]
    if pipelines and not input_bound:
        advice.insert(0, {"kind": "ok", "stage": "", "text": (
            f"The input pipeline keeps up: the training loop waited for data "
            f"{waiting:.1f}% of step time ({input_us / 1e3:.1f} ms in all); nothing "
            f"to change.")})
    return {"input_us": input_us, "pipelines": pipelines, "bottleneck": bottleneck,
            "advice": advice}
