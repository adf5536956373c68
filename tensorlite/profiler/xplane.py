"""The profile as an XSpace (`<host>.xplane.pb`): the file TensorBoard's Profile plugin
(xprof) reads to build its Overview, Input Pipeline Analyzer, TensorFlow Stats and Trace
Viewer, written in the layout TensorFlow's own profiler uses, so that xprof's converters
classify it as they classify a TensorFlow profile:

  * one plane, "/host:CPU", with one line per Python thread that recorded events and one
    per tf.data worker process thread;
  * an op is an event named "<name>:<type>" (`MatMul:MatMul`): xprof counts events whose
    name parses as a TensorFlow op in TensorFlow Stats, with self time = duration minus the
    op events nested in it on the same line, as tensorlite's own op table does;
  * a step marker (`Trace("train", step_num=..., _r=1)`) is an event named as the Trace with
    stats `step_num` and `_r` = 1: xprof's grouping makes it a root event and gives every
    event nested in it that step's `group_id`. Its span is the step's window as the
    Overview counts it (from the end of the previous step), so that the fetch of the step's
    batch lies inside it, as it lies inside TensorFlow's `train` function call;
  * the wait for input is an `IteratorGetNext` op event, which xprof counts as waiting for
    input (HOST_WAIT_INPUT);
  * each tf.data stage producing an element is an event named after TensorFlow's iterator
    prefix, the path from the pipeline's root stage: `Iterator::Prefetch::BatchV2::Map`.
    xprof counts events starting with `Iterator::` as input ops, per stage. Background work
    is named as TensorFlow names it: `PrefetchProduce` / `ParallelInterleaveProduce` (a
    background thread fetching one element; xprof hides these in the trace viewer, showing
    the upstream stages' events nested in them), and `InstantiatedCapturedFunction::Run` (a
    parallel map worker, thread or process, running the function on one element).

Needs the protobuf runtime (the `profile` extra); the bindings (proto/xplane_pb2.py) are
generated from proto/xplane.proto by proto/generate.py.
"""
import socket

from tensorlite.profiler import overview
from tensorlite.profiler.op_stats import display_name

HOST_PLANE = "/host:CPU"
SUFFIX = ".xplane.pb"

# tensorlite's stage kinds whose TensorFlow iterator prefix differs from the kind itself
# (TensorFlow stamps op versions into some: BatchDatasetV2 iterates as "BatchV2").
_TF_ITERATOR = {
    "Batch": "BatchV2", "PaddedBatch": "PaddedBatchV2", "ParallelMap": "ParallelMapV2",
    "ParallelInterleave": "ParallelInterleaveV4", "FromTensorSlices": "TensorSlice",
    "FromTensors": "FromTensor", "FromGenerator": "Generator",
    "ChooseFromDatasets": "DirectedInterleave", "WeightedSelector": "DirectedInterleave",
}
# The event TensorFlow records around a background thread's fetch for a stage of this kind.
_PRODUCE = {"Prefetch": "PrefetchProduce", "ParallelInterleave": "ParallelInterleaveProduce"}
_RUN_FUNCTION = "InstantiatedCapturedFunction::Run"


def file_name(host=None):
    """`<host>.xplane.pb`, the name xprof lists a run's hosts by.

    >>> file_name("worker0")
    'worker0.xplane.pb'"""
    return (host or socket.gethostname()) + SUFFIX


def _kind(stage_name):
    """"Map" of "Map(parse)" or of "Interleave(f) > Map(parse)"."""
    return stage_name.rsplit(" > ", 1)[-1].split("(", 1)[0]


class _Builder:
    """Interns event and stat names into the plane's metadata maps."""

    def __init__(self, plane):
        self.plane = plane
        self._events, self._stats = {}, {}

    @staticmethod
    def _intern(ids, metadata, name):
        i = ids.get(name)
        if i is None:
            i = ids[name] = len(ids) + 1
            md = metadata[i]
            md.id, md.name = i, name
        return i

    def event_id(self, name):
        return self._intern(self._events, self.plane.event_metadata, name)

    def stat_id(self, name):
        return self._intern(self._stats, self.plane.stat_metadata, name)

    def add_stat(self, stats, name, value):
        st = stats.add()
        st.metadata_id = self.stat_id(name)
        if isinstance(value, bool):
            st.int64_value = int(value)
        elif isinstance(value, int) and -2**63 <= value < 2**63:
            st.int64_value = value
        elif isinstance(value, float):
            st.double_value = value
        else:
            st.str_value = str(value)


class _Stages:
    """TensorFlow iterator names of one profile's tf.data stages, from each pipeline's
    dataset graph (stage key -> path of kinds from the root)."""

    def __init__(self, collector):
        from tensorlite.profiler.input_pipeline import _graph  # noqa: PLC0415
        self._paths = {}
        for pid, ctx in (getattr(collector, "data_pipelines", None) or {}).items():
            nodes, parent, _ = _graph(getattr(ctx, "root", None))
            for key in nodes:
                path, k = [], key
                while k is not None:
                    path.append(self._tf_kind(_kind(nodes[k]._label())))
                    k = parent.get(k)
                self._paths[(pid, key)] = path[::-1]

    @staticmethod
    def _tf_kind(kind):
        return _TF_ITERATOR.get(kind, kind)

    def name(self, span_name, args):
        """`Iterator::...` for a stage span; the produce event's name for background work."""
        kind = _kind(span_name)
        role = args.get("role")
        if role == "worker":
            return _RUN_FUNCTION
        if role == "producer" and kind in _PRODUCE:
            return _PRODUCE[kind]
        pid, key = args.get("pipeline"), str(args.get("stage"))
        path = self._paths.get((pid, key))
        if path is None and "/" in key:  # a stage inside an interleave or flat_map
            outer = self._paths.get((pid, key.split("/", 1)[0]))
            path = outer + [self._tf_kind(kind)] if outer else None
        return "Iterator::" + "::".join(path or [self._tf_kind(kind)])


def _event_name(kind, name, payload, stages):
    if kind == "op":
        op = display_name(name, payload)
        return f"{op}:{op}"
    if kind == "input":
        return "IteratorGetNext:IteratorGetNext"
    if kind == "data":
        return stages.name(name, payload)
    return name


def _name_key(kind, name, payload):
    """What an event's XPlane name depends on (see `_event_name`)."""
    if kind == "op":
        return kind, name, payload
    if kind == "data":
        return (kind, name, payload.get("pipeline"), str(payload.get("stage")),
                payload.get("role"))
    return kind, name


def _add_line(b, line_id, name, t0_wall_ns, duration_ps, events, stages, start_ns):
    """One XLine from (kind, name, start, dur, payload, out_shapes) tuples."""
    line = b.plane.lines.add(id=line_id, display_id=line_id, name=name, display_name=name,
                             timestamp_ns=t0_wall_ns, duration_ps=duration_ps)
    add, names, shapes = line.events.add, {}, {}
    shapes_id = b.stat_id("input_shapes")
    # Outer events first at equal starts, so that nesting is read correctly.
    for kind, ename, start, dur, payload, _outs in sorted(events, key=lambda e: (e[2], -e[3])):
        key = _name_key(kind, ename, payload)
        mid = names.get(key)
        if mid is None:
            mid = names[key] = b.event_id(_event_name(kind, ename, payload, stages))
        ev = add(metadata_id=mid, offset_ps=max(start - start_ns, 0) * 1000,
                 duration_ps=dur * 1000)
        if kind == "op":
            text = shapes.get(payload)
            if text is None:
                text = shapes[payload] = ";".join("x".join(map(str, s)) or "scalar"
                                                  for s in payload)
            ev.stats.add(metadata_id=shapes_id, str_value=text)
            continue
        for k, v in (payload or {}).items():
            if v is not None and k != "role":
                b.add_stat(ev.stats, k, v)
        if kind == "step":
            b.add_stat(ev.stats, "_r", 1)


def _thread_events(buf):
    """The buffer's events as (kind, name, start, dur, payload, outs), steps spanning their
    Overview windows."""
    windows = {(end, name): lo for lo, end, name, _a in overview.step_windows(buf)}
    out = []
    for kind, name, start, dur, _self, payload, outs in list(buf.events):
        if kind == "step":
            lo = windows.get((start + dur, name), start)
            start, dur = lo, start + dur - lo
        out.append((kind, name, start, dur, payload, outs))
    return out


def xspace(collector, host=None):
    """The XSpace message of what `collector` recorded (needs protobuf).

    >>> space = xspace(collector)  # doctest: +SKIP
    >>> space.planes[0].name
    '/host:CPU'"""
    from tensorlite.profiler.proto import xplane_pb2  # noqa: PLC0415 - optional protobuf
    host = host or socket.gethostname()
    space = xplane_pb2.XSpace()
    space.hostnames.append(host)
    plane = space.planes.add()
    plane.id, plane.name = 0, HOST_PLANE
    b = _Builder(plane)
    b.add_stat(plane.stats, "process_id", collector.pid)
    start_ns = collector.start_ns
    t0_wall_ns = int(collector.start_wall * 1e9)
    duration_ps = ((collector.stop_ns or start_ns) - start_ns) * 1000
    stages = _Stages(collector)
    line_id = 0
    for buf in sorted(list(collector.buffers), key=lambda b_: b_.tid):
        events = _thread_events(buf)
        if events:
            line_id += 1
            _add_line(b, line_id, buf.name, t0_wall_ns, duration_ps, events, stages,
                      start_ns)
    remote = {}
    for pid, tid, tname, kind, name, start, dur, args in list(collector.remote):
        remote.setdefault((pid, tid, tname), []).append((kind, name, start, dur, args, None))
    for (pid, _tid, tname), events in sorted(remote.items(), key=lambda kv: kv[0][:2]):
        line_id += 1
        _add_line(b, line_id, f"tf.data worker (pid {pid}) {tname}", t0_wall_ns,
                  duration_ps, events, stages, start_ns)
    return space


def write(collector, directory, host=None):
    """Writes `<host>.xplane.pb` into `directory` (a run directory being assembled) and
    returns its path."""
    import os  # noqa: PLC0415
    path = os.path.join(directory, file_name(host))
    with open(path, "wb") as f:
        f.write(xspace(collector, host).SerializeToString())
    return path
