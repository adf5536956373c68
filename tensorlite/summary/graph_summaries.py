"""Graphs for TensorBoard's Graphs dashboard: `tf.summary.graph`, the trace API
(`trace_on` / `trace_export` / `trace_off`) and the Keras model summary.

- `graph(graph_data)` writes a graph as `Event.graph_def` at step 0 (the run's op graph).
- `trace_on()` notes the graph of every tf.function traced or run from then on, in every
  thread; `trace_export(name, step)` writes them as one summary tagged `name` (plugin
  `graph_run_metadata_graph`) holding a serialized `RunMetadata` whose `function_graphs`
  carry each function's graph, as TensorFlow does. With `trace_on(profiler=True)` the
  tensorlite profiler records meanwhile and `trace_export` saves its run under
  `profiler_outdir` (default: the default writer's logdir); the summary's plugin is then
  `graph_run_metadata`.
- `keras_model(name, data, step)` writes a Keras model's JSON (plugin `graph_keras_model`),
  from which TensorBoard draws the conceptual graph.

While a trace is on, every tf.function call tells the trace its ConcreteFunction
(`tensorlite.graph.function.CALL_LISTENERS`); the functions themselves run as usual.

Example:
    >>> writer = tf.summary.create_file_writer("/tmp/logs")
    >>> tf.summary.trace_on(graph=True)
    >>> y = my_function(x)
    >>> with writer.as_default():
    ...     tf.summary.trace_export("my_function", step=0)
"""
import os
import shutil
import tempfile
import threading
import warnings

import numpy as np

from tensorlite.framework import errors
from tensorlite.summary import ops as _ops
from tensorlite.summary.event_writer import Event, SummaryMetadata
from tensorlite.summary.graph_def import RunMetadata, graph_def

_LOCK = threading.Lock()
_TRACE = [None]  # the running _Trace, or None


def _ir_graph(graph_data):
    """The tensorlite IR graph inside `graph_data` (a ConcreteFunction's `graph`, or a
    tf.compat.v1.Graph), or None."""
    from tensorlite.graph.ir import Graph  # noqa: PLC0415 - summary sits above graph
    if isinstance(graph_data, Graph):
        return graph_data
    inner = getattr(graph_data, "_ir", None)
    return inner if isinstance(inner, Graph) else None


def _is_graph_def(message):
    descriptor = getattr(message, "DESCRIPTOR", None)
    return descriptor is not None and descriptor.full_name.endswith(".GraphDef") and \
        hasattr(message, "SerializeToString")


def _declared_inputs(graph_data):
    """A tf.compat.v1.Graph's placeholders: slot -> (name, declared dims)."""
    out = {}
    for slot, t in (getattr(graph_data, "_placeholders", None) or {}).items():
        declared = getattr(t, "_declared", None)
        out[slot] = (getattr(t, "_op_name", f"Placeholder_{slot}"),
                     None if declared is None else declared.dims)
    return out


def _serialized_graph(graph_data):
    ir = _ir_graph(graph_data)
    if ir is not None:
        return graph_def(ir, _declared_inputs(graph_data)).SerializeToString()
    if _is_graph_def(graph_data):
        return graph_data.SerializeToString()
    hint = ""
    if hasattr(graph_data, "graph"):
        hint = "; pass its `.graph` (e.g. f.get_concrete_function(x).graph)"
    elif hasattr(graph_data, "get_concrete_function"):
        hint = "; pass f.get_concrete_function(...).graph"
    raise ValueError(f"'graph_data' is not tf.Graph or tf.compat.v1.GraphDef: got "
                     f"{type(graph_data).__name__}{hint}")


def graph(graph_data):
    """`tf.summary.graph`: writes a graph (a ConcreteFunction's `.graph`, a
    tf.compat.v1.Graph or a GraphDef message) to the default writer as the run's op graph;
    False when there is no default writer or recording is off.
    >>> with writer.as_default():
    ...     tf.summary.graph(f.get_concrete_function(x).graph)
    True"""
    if _ops._context() != "eager":
        raise ValueError("graph() cannot be invoked inside a graph context.")
    writer = _ops._get("writer", None)
    if writer is None or writer._closed or not _ops.should_record_summaries():
        return False
    serialized = _serialized_graph(graph_data)
    if not hasattr(writer, "_events"):  # the no-op writer
        return False
    writer.write_event(Event(step=0, graph_def=serialized))  # a graph has no step
    return True


def _plugin_metadata(plugin_name):
    meta = SummaryMetadata()
    meta.plugin_data.plugin_name = plugin_name
    meta.plugin_data.content = b"1"  # the plugins' version number
    return meta


def _string_scalar(data):
    arr = np.empty((), dtype=object)
    arr[()] = data
    return arr


def keras_model_json(name, json_string, step=None):
    """Writes a Keras model's JSON (what `model.to_json()` returns) for the Graphs
    dashboard's conceptual graph; True when written."""
    if isinstance(json_string, str):
        json_string = json_string.encode("utf-8")
    return _ops.write(name, _string_scalar(json_string), step=step,
                      metadata=_plugin_metadata("graph_keras_model"))


def keras_model(name, data, step=None):
    """Writes `data.to_json()` of a Keras model (TensorBoard's `keras_model` summary); a
    model that cannot be serialised is skipped with a warning (False), never an error."""
    try:
        json_string = data.to_json()
    except Exception as e:  # noqa: BLE001 - a summary must not break the user's model code
        warnings.warn(f"Model failed to serialize as JSON. Ignoring... {e}", stacklevel=2)
        return False
    return keras_model_json(name, json_string, step)


# -- the trace API -------------------------------------------------------------------------------
class _GraphCollector:
    """Notes the graphs of the tf.functions called while a trace is on (through
    `tensorlite.graph.function.CALL_LISTENERS`; a call that traces counts)."""

    def __init__(self):
        self.graphs = {}  # id(graph) -> [graph, its ConcreteFunction]
        self._lock = threading.Lock()

    def __call__(self, concrete):
        self._add(concrete.graph, concrete)

    def _add(self, graph, concrete):
        if graph is None:
            return
        with self._lock:
            entry = self.graphs.get(id(graph))
            if entry is None:
                self.graphs[id(graph)] = [graph, concrete]
            elif concrete is not None:
                entry[1] = concrete

    def run_metadata(self):
        meta = RunMetadata()
        for graph_ir, concrete in list(self.graphs.values()):
            entry = meta.function_graphs.add()
            entry.pre_optimization_graph.CopyFrom(graph_def(graph_ir))
            optimized = getattr(concrete, "__dict__", {}).get("optimized_graph")
            if optimized is not None:
                entry.post_optimization_graph.CopyFrom(graph_def(optimized))
        return meta


class _Trace:
    def __init__(self, graph, profiler):
        self.graph = graph
        self.profiler = profiler
        self.collector = _GraphCollector()
        self.profile_dir = None  # where the profiler writes until trace_export moves it


def _inside_function():
    return _ops._context() == "trace"


def trace_on(graph=True, profiler=False):
    """`tf.summary.trace_on`: starts noting the graphs of the tf.functions traced or run
    from now on (and, with `profiler=True`, profiling with tf.profiler) until
    `trace_export` or `trace_off`."""
    if _inside_function():
        warnings.warn("Cannot enable trace inside a tf.function.", stacklevel=2)
        return
    with _LOCK:
        if _TRACE[0] is not None:
            warnings.warn("Trace already enabled", stacklevel=2)
            return
        trace = _Trace(bool(graph), bool(profiler))
        if profiler:
            _start_profiler(trace)
        if graph or profiler:  # the profiler implies graph collection, as in TensorFlow
            from tensorlite.graph import function  # noqa: PLC0415 - upper layer
            function.CALL_LISTENERS.append(trace.collector)
        _TRACE[0] = trace


def _start_profiler(trace):
    from tensorlite import profiler  # noqa: PLC0415 - an upper layer, loaded on demand
    trace.profile_dir = tempfile.mkdtemp(prefix="tensorlite-trace-")
    try:
        profiler.experimental.start(trace.profile_dir)
    except Exception:
        shutil.rmtree(trace.profile_dir, ignore_errors=True)
        raise


def trace_export(name, step=None, profiler_outdir=None):
    """`tf.summary.trace_export`: stops the trace and writes what it collected to the
    default writer as one summary tagged `name` at `step` (default:
    tf.summary.experimental.get_step()); with the profiler on, saves the profile under
    `profiler_outdir` (default: the default writer's logdir)."""
    if _inside_function():
        warnings.warn("Cannot export trace inside a tf.function.", stacklevel=2)
        return
    with _LOCK:
        trace = _TRACE[0]
        if trace is None:
            raise ValueError("Must enable trace before export.")
        writer = _ops._get("writer", None)
        if trace.profiler and profiler_outdir is None:
            profiler_outdir = getattr(writer, "logdir", None)
            if profiler_outdir is None:
                raise ValueError("Must set profiler_outdir or enable summary writer with "
                                 "logdir.")
    try:
        plugin = "graph_run_metadata_graph" if trace.graph and not trace.profiler else \
            "graph_run_metadata"
        meta = trace.collector.run_metadata()
        _ops.write(name, _string_scalar(meta.SerializeToString()), step=step,
                   metadata=_plugin_metadata(plugin))
        if trace.profiler:
            _save_profile(trace, os.fspath(profiler_outdir))
    finally:
        trace_off()


def _save_profile(trace, outdir):
    from tensorlite import profiler  # noqa: PLC0415
    run = profiler.experimental.stop()
    trace.profiler = False  # stopped: trace_off has nothing left to stop
    dest_root = os.path.join(outdir, "plugins", "profile")
    dest, n = os.path.join(dest_root, os.path.basename(run)), 1
    while os.path.exists(dest):
        dest = os.path.join(dest_root, f"{os.path.basename(run)}_{n}")
        n += 1
    try:
        os.makedirs(dest_root, exist_ok=True)
        shutil.move(run, dest)
    except OSError as e:
        raise errors.PermissionDeniedError(
            None, None, f"tf.summary.trace_export: cannot write the profile to {dest!r}: "
            f"{e}; pass a profiler_outdir you can write to") from e


def trace_off():
    """`tf.summary.trace_off`: stops the trace and drops what it collected."""
    with _LOCK:
        trace, _TRACE[0] = _TRACE[0], None
    if trace is None:
        return
    from tensorlite.graph import function  # noqa: PLC0415
    if trace.collector in function.CALL_LISTENERS:
        function.CALL_LISTENERS.remove(trace.collector)
    if trace.profiler:
        from tensorlite import profiler  # noqa: PLC0415
        try:
            profiler.experimental.stop(save=False)
        except errors.OpError:
            pass  # stopped by someone else already
    if trace.profile_dir is not None:
        shutil.rmtree(trace.profile_dir, ignore_errors=True)


__all__ = ["graph", "keras_model", "keras_model_json", "trace_on", "trace_export",
           "trace_off"]
