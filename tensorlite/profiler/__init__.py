"""`tf.profiler`: records every executed op, tf.data stage and `Trace` step marker while
running, then writes one run directory `logdir/plugins/profile/<run>/` holding

    trace.json    the Chrome trace (Perfetto, chrome://tracing)
    profile.json  the four tools' data (Overview, Input Pipeline Analyzer, TensorFlow Stats,
                  the trace's threads), see analysis.py
    report.html   the four tools as one self-contained page
    summary.txt   the same as text (`python -m tensorlite.profiler LOGDIR` prints it)
    <host>.xplane.pb  the XSpace TensorBoard's Profile plugin (xprof) reads, see xplane.py
                  (written when protobuf is installed: the `profile` extra)

When no profiler runs nothing is registered with dispatch, so there is no overhead; the
analyses and reports load only when a profile is written or read (Keras imports this module
for `Trace`).
"""
import collections
import json
import os
import shutil
import time
import types
import warnings

from tensorlite.framework import errors
from tensorlite.profiler import collector as _collector

_LOGDIR = None
TRACE_FILE = "trace.json"
PROFILE_FILE = "profile.json"
REPORT_FILE = "report.html"
SUMMARY_FILE = "summary.txt"

ProfilerOptions = collections.namedtuple(
    "ProfilerOptions", ["host_tracer_level", "python_tracer_level", "device_tracer_level",
                        "delay_ms"], defaults=[2, 0, 1, None])
ProfilerOptions.__doc__ = "tf.profiler.experimental.ProfilerOptions (accepted; levels unused)."


def _check_writable(logdir):
    if not isinstance(logdir, (str, bytes, os.PathLike)) or not os.fspath(logdir):
        raise ValueError(f"tf.profiler.experimental.start: logdir must be a non-empty path, "
                         f"got {logdir!r}")
    try:
        os.makedirs(logdir, exist_ok=True)
    except OSError as e:
        raise errors.PermissionDeniedError(
            None, None, f"Cannot create profiler logdir {logdir!r}: {e}. "
                        "Pass a directory you can write to.") from e
    if not os.access(logdir, os.W_OK | os.X_OK):
        raise errors.PermissionDeniedError(
            None, None, f"Profiler logdir {logdir!r} is not writable. "
                        "Pass a directory you can write to.")


def start(logdir, options=None):
    """tf.profiler.experimental.start: starts recording ops until `stop()`."""
    global _LOGDIR
    if options is not None and not isinstance(options, ProfilerOptions):
        raise TypeError(f"options must be a tf.profiler.experimental.ProfilerOptions, "
                        f"got {type(options).__name__}")
    if _collector.active() is not None:
        raise errors.AlreadyExistsError(
            None, None, "Another profiler is running. Call tf.profiler.experimental.stop() "
                        "before starting a new one.")
    _check_writable(logdir)
    if _collector.install() is None:
        raise errors.AlreadyExistsError(None, None, "Another profiler is running.")
    _LOGDIR = os.fspath(logdir)


def _run_dir(logdir, wall):
    base = os.path.join(logdir, "plugins", "profile",
                        time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(wall)))
    path, n = base, 1
    while os.path.exists(path):  # two runs within one second keep separate directories
        path = f"{base}_{n}"
        n += 1
    return path


def stop(save=True):
    """tf.profiler.experimental.stop: stops recording and writes the run directory; returns
    its path (None when `save=False`)."""
    global _LOGDIR
    c = _collector.uninstall()
    if c is None:
        raise errors.UnavailableError(
            None, None, "Cannot export profiling results. No profiler is running.")
    logdir, _LOGDIR = _LOGDIR, None
    if not save:
        return None
    from tensorlite.profiler import analysis, trace_export  # noqa: PLC0415 - see docstring
    trace = trace_export.chrome_trace(c)
    profile = analysis.build(c, trace["traceEvents"], TRACE_FILE)
    run = _run_dir(logdir, c.start_wall)
    # Written into a temporary directory renamed into place: an interrupted stop leaves no
    # half-written run for the reports to trip over.
    tmp = os.path.join(os.path.dirname(run), f".{os.path.basename(run)}.tmp")
    try:
        os.makedirs(tmp, exist_ok=True)
        with open(os.path.join(tmp, TRACE_FILE), "w") as f:
            json.dump(trace, f)
        _write_reports(tmp, profile, trace["traceEvents"])
        _write_xplane(tmp, c)
        os.rename(tmp, run)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise errors.PermissionDeniedError(
            None, None, f"Cannot write profiling results to {run!r}: {e}") from e
    return run


def _write_reports(run, profile, trace_events):
    from tensorlite.profiler import report_html, report_text  # noqa: PLC0415
    with open(os.path.join(run, PROFILE_FILE), "w") as f:
        json.dump(profile, f, indent=1)
    with open(os.path.join(run, REPORT_FILE), "w", encoding="utf-8") as f:
        f.write(report_html.render(profile, trace_events))
    with open(os.path.join(run, SUMMARY_FILE), "w", encoding="utf-8") as f:
        f.write(report_text.render(profile))


def _write_xplane(run, collector):
    try:
        import google.protobuf  # noqa: F401, PLC0415 - optional: the `profile` extra
    except ImportError:
        global _WARNED_NO_PROTOBUF
        if not _WARNED_NO_PROTOBUF:
            _WARNED_NO_PROTOBUF = True
            warnings.warn("tensorlite.profiler: protobuf is not installed, so no .xplane.pb "
                          "for TensorBoard's Profile plugin was written (report.html and "
                          "trace.json were); pip install '.[profile]' in a clone of tensorlite.",
                          stacklevel=3)
        return
    from tensorlite.profiler import xplane  # noqa: PLC0415
    xplane.write(collector, run)


_WARNED_NO_PROTOBUF = False


def runs(logdir):
    """Run directories (newest last) under `logdir`: its own `plugins/profile` and those of
    subdirectories such as the Keras callback's `train/`; a run directory itself is its one
    run."""
    if os.path.isfile(os.path.join(os.fspath(logdir), PROFILE_FILE)):
        return [os.fspath(logdir)]
    found = []
    for root, dirs, _files in os.walk(os.fspath(logdir)):
        if os.path.basename(root) == "profile" and \
                os.path.basename(os.path.dirname(root)) == "plugins":
            found += [os.path.join(root, d) for d in dirs
                      if os.path.isfile(os.path.join(root, d, PROFILE_FILE))]
            dirs[:] = []
    return sorted(found, key=lambda d: (os.path.getmtime(os.path.join(d, PROFILE_FILE)), d))


def latest_run(logdir):
    """Path of the newest run directory under `logdir`."""
    found = runs(logdir)
    if not found:
        raise errors.NotFoundError(
            None, None, f"No profile found under {os.fspath(logdir)!r}; profile with "
                        "tf.profiler.experimental.start/stop (or the Keras TensorBoard "
                        "callback's profile_batch) first.")
    return found[-1]


def load(run):
    """(profile dict, trace events) of a run directory."""
    with open(os.path.join(run, PROFILE_FILE)) as f:
        profile = json.load(f)
    with open(os.path.join(run, TRACE_FILE)) as f:
        trace = json.load(f)
    return profile, trace["traceEvents"]


def report(logdir, print_fn=print):
    """Renders the latest profile under `logdir` again (report.html, summary.txt), prints the
    text report and returns the run directory."""
    from tensorlite.profiler import report_text  # noqa: PLC0415
    run = latest_run(logdir)
    profile, events = load(run)
    _write_reports(run, profile, events)
    if print_fn is not None:
        print_fn(report_text.render(profile), end="")
    return run


def summary(logdir, print_fn=print):
    """Prints (and returns) the text report of the latest profile under `logdir`."""
    from tensorlite.profiler import report_text  # noqa: PLC0415
    profile, _ = load(latest_run(logdir))
    text = report_text.render(profile)
    if print_fn is not None:
        print_fn(text)
    return text


class Profile:
    """tf.profiler.experimental.Profile: `with Profile(logdir):` profiles the block."""

    def __init__(self, logdir, options=None):
        self._logdir = logdir
        self._options = options

    def __enter__(self):
        start(self._logdir, self._options)
        return self

    def __exit__(self, *exc):
        stop()
        return False


class Trace:
    """tf.profiler.experimental.Trace: marks a region (a train step when `step_num` is given
    or `_r=1`) as one event in the trace. Costs one attribute check when not profiling."""

    def __init__(self, name, **kwargs):
        self._name = name
        self._args = kwargs
        self._c = None
        self._t0 = 0

    def __enter__(self):
        c = _collector._ACTIVE
        if c is not None:
            self._c = c
            self._t0 = time.perf_counter_ns()
        return self

    def set_metadata(self, **kwargs):
        """Adds arguments to the event (shown in the trace viewer)."""
        self._args.update(kwargs)

    def __exit__(self, *exc):
        c, self._c = self._c, None
        if c is not None and c is _collector._ACTIVE:
            args = {k: v for k, v in self._args.items() if k != "_r"}
            step = "step_num" in self._args or self._args.get("_r") == 1
            c.add_trace(self._name, self._t0, time.perf_counter_ns(), args, step)
        return False


experimental = types.SimpleNamespace(
    start=start, stop=stop, Profile=Profile, Trace=Trace, ProfilerOptions=ProfilerOptions,
    summary=summary)
