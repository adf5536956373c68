"""tensorlite's profiles in TensorBoard's real Profile plugin (xprof): xprof's own C++
converters turn our `<host>.xplane.pb` into the Overview, Input Pipeline Analyzer,
TensorFlow Stats and Trace Viewer; TensorBoard serves them over HTTP; Chromium renders the
Profile tab. The runs are seed 000's: a Keras fit with `TensorBoard(profile_batch=...)`,
once input-bound (a slow per-element map) and once compute-bound (wide layers, cheap data).
Assertions compare fractions and tensorlite's own numbers, never absolute times."""
import gzip
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest

import tensorlite as tf
from tensorlite import profiler
from tensorlite.profiler import xplane
from tests.chromium import chromium_path



def _xprof():
    """xprof's converter module (the test extra installs xprof)."""
    return pytest.importorskip(
        "xprof.convert.raw_to_tool_data",
        reason="TensorBoard's Profile plugin is not installed: pip install xprof")

TOOLS = ("overview_page", "input_pipeline_analyzer", "framework_op_stats", "trace_viewer")
MAP_SLEEP = 0.005  # input dominates a step by a wide margin, also on a loaded machine


def _slow_decode(x, y):
    time.sleep(MAP_SLEEP)  # per-element preprocessing slower than the tiny model's step
    return x, y


def _fit(logdir, input_bound):
    """Seed 000's profiling of model.fit; returns the run directory."""
    rng = np.random.default_rng(0)
    x = rng.random((16 * 8, 32), dtype=np.float32)
    y = rng.random((16 * 8, 1), dtype=np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    if input_bound:
        ds = ds.map(_slow_decode)
    ds = ds.batch(8).prefetch(1)
    width = 16 if input_bound else 1024  # compute-bound: BLAS time dwarfs a batch's making
    model = tf.keras.Sequential([tf.keras.layers.Dense(width, activation="relu"),
                                 tf.keras.layers.Dense(width, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    tb_callback = tf.keras.callbacks.TensorBoard(log_dir=logdir, profile_batch="3, 12")
    model.fit(ds, epochs=1, verbose=0, callbacks=[tb_callback])
    (run,) = profiler.runs(logdir)
    return run


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    _xprof()
    root = tmp_path_factory.mktemp("logs")
    return str(root), {kind: _fit(str(root / kind), kind == "input")
                       for kind in ("input", "compute")}


def _xplane_file(run):
    path = os.path.join(run, xplane.file_name())
    assert os.path.isfile(path)
    return path


def _tool(run, tool):
    """xprof's converter on our file: the tool's data (parsed JSON)."""
    data, content_type = _xprof().xspace_to_tool_data(
        [_xplane_file(run)], tool, {"use_saved_result": False})
    assert data, f"xprof produced no {tool} data"
    assert content_type == "application/json"
    return json.loads(data)


def _input_percent(overview):
    """(input percent the Overview states, from its step-time graph rows, rows). When the
    Overview blames 'All Others' time instead ("POTENTIALLY input-bound because 3.1% ...
    is spent on 'All Others'"), it states no input percent and the graph's is returned."""
    analysis = overview[1]
    conclusion = analysis["p"]["input_conclusion"]
    cols = [c["id"] for c in analysis["cols"]]
    rows = [dict(zip(cols, (c.get("v") for c in r["c"]))) for r in analysis["rows"]]
    assert rows, "no steps in the Overview's step-time graph"
    graph = 100.0 * sum(r["infeedTimeMs"] for r in rows) / sum(r["stepTimeMs"] for r in rows)
    stated = re.search(r"([\d.]+)% of the total step time sampled is waiting for input",
                       conclusion)
    if stated is None:
        assert "'All Others'" in conclusion, f"unexpected Overview conclusion: {conclusion!r}"
        return graph, graph, rows
    return float(stated.group(1)), graph, rows


def _table(tables, first_col):
    for t in tables:
        cols = [c["id"] for c in t.get("cols", [])]
        if cols and cols[0] == first_col:
            return [dict(zip(cols, (c.get("v") for c in r["c"]))) for r in t["rows"]]
    raise AssertionError(f"no table starting with {first_col!r}")


def test_xprof_offers_the_four_tools(logs):
    for run in logs[1].values():
        names = _xprof().xspace_to_tool_names([_xplane_file(run)])
        for tool in TOOLS:
            assert tool in names or tool + "@" in names, (tool, names)


@pytest.mark.parametrize("kind", ["input", "compute"])
def test_overview_input_bound_percent(logs, kind):
    run = logs[1][kind]
    stated, graph, rows = _input_percent(_tool(run, "overview_page"))
    assert abs(stated - graph) < 0.5  # the statement is the graph's sum
    own_steps = [f"train {s['step_num']}" for s in profiler.load(run)[0]["overview"]["steps"]]
    assert {r["stepnum"] for r in rows} <= set(own_steps)  # xprof drops the first and last
    assert len(rows) >= len(own_steps) - 2
    if kind == "input":
        assert stated > 50, stated
    else:
        assert stated < 20, stated


def test_input_pipeline_analyzer_attributes_input_time_per_stage(logs):
    ops = _table(_tool(logs[1]["input"], "input_pipeline_analyzer"), "opName")
    by_name = {r["opName"]: r for r in ops}
    # TensorFlow's iterator names, the path from the pipeline's root stage
    assert set(by_name) == {"Iterator::Prefetch", "Iterator::Prefetch::BatchV2",
                            "Iterator::Prefetch::BatchV2::Map",
                            "Iterator::Prefetch::BatchV2::Map::TensorSlice"}
    assert {r["category"] for r in ops} == {"Preprocessing"}
    slow_map = by_name["Iterator::Prefetch::BatchV2::Map"]
    assert slow_map["count"] >= 8 * 5  # one event per element fetched while profiling
    # the sleeping map's self time outweighs the stages around it
    for other in ("Iterator::Prefetch::BatchV2", "Iterator::Prefetch::BatchV2::Map::TensorSlice"):
        assert slow_map["selfTimeInMs"] > 2 * by_name[other]["selfTimeInMs"]


@pytest.mark.parametrize("kind", ["input", "compute"])
def test_tensorflow_stats_match_own_op_stats(logs, kind):
    run = logs[1][kind]
    rows = _table(_tool(run, "framework_op_stats"), "rank")
    xprof_ops = {r["operation"]: r for r in rows if r["host_or_device"] == "Host"}
    own = profiler.load(run)[0]["ops"]
    assert {"MatMul", "AddV2", "Relu", "ReluGrad"} <= {r["name"] for r in own}
    for r in own:
        x = xprof_ops.get(r["name"])
        assert x is not None, f"xprof's TensorFlow Stats lack {r['name']}"
        assert x["type"] == r["name"] and x["occurrences"] == r["count"]
        assert abs(x["total_self_time"] - r["total_self_us"]) <= 0.1 * r["total_self_us"] + 1
    assert xprof_ops["IteratorGetNext"]["occurrences"] >= 9  # the loop's waits, as TF's


def test_trace_viewer_shows_step_markers_and_threads(logs):
    run = logs[1]["input"]
    events = _tool(run, "trace_viewer")["traceEvents"]
    own_steps = {f"train {s['step_num']}" for s in profiler.load(run)[0]["overview"]["steps"]}
    steps = {e["name"] for e in events if e.get("ph") == "X" and e["name"].startswith("train")}
    assert steps == own_steps and len(steps) == 10
    threads = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert "MainThread" in threads and any(t.startswith("tf.data") for t in threads)
    names = {e.get("name") for e in events}
    assert {"MatMul:MatMul", "IteratorGetNext:IteratorGetNext",
            "Iterator::Prefetch::BatchV2::Map"} <= names


def test_worker_processes_and_threads_get_their_own_lines(tmp_path):
    from tests.test_profiler_input_pipeline import _data, _profile, slow_fn  # noqa: PLC0415
    opts = tf.data.Options()
    opts.threading.worker_mechanism = "process"
    ds = tf.data.Dataset.from_tensor_slices(_data(24)).map(
        slow_fn, num_parallel_calls=2).batch(4).prefetch(1).with_options(opts)
    _profile(ds, str(tmp_path), step_s=0.0005)
    run = profiler.latest_run(str(tmp_path))
    events = _tool(run, "trace_viewer")["traceEvents"]
    lines = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("name") == "thread_name"}
    workers = {k for k, name in lines.items() if name.startswith("tf.data worker (pid ")}
    assert len(workers) == 2 and "MainThread" in lines.values()
    assert any(n.startswith("tf.data Prefetch") for n in lines.values())
    runs = [e for e in events if e.get("name") == "InstantiatedCapturedFunction::Run"]
    assert {(e["pid"], e["tid"]) for e in runs} == workers  # the map function, per element
    ops = _table(_tool(run, "input_pipeline_analyzer"), "opName")
    assert "Iterator::Prefetch::BatchV2::ParallelMapV2" in {r["opName"] for r in ops}


def test_without_protobuf_the_rest_of_the_run_is_written(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "google.protobuf", None)  # import fails
    monkeypatch.setattr(profiler, "_WARNED_NO_PROTOBUF", False)
    with pytest.warns(UserWarning, match="protobuf is not installed"):
        with profiler.experimental.Profile(str(tmp_path)):
            tf.matmul(tf.ones((2, 2)), tf.ones((2, 2)))
    run = profiler.latest_run(str(tmp_path))
    assert sorted(os.listdir(run)) == ["profile.json", "report.html", "summary.txt",
                                       "trace.json"]


def test_tensorboard_command_without_tensorboard(tmp_path, monkeypatch, capsys):
    from tensorlite.profiler import __main__ as cli  # noqa: PLC0415
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    assert cli.main(["--tensorboard", str(tmp_path)]) == 1
    assert "pip install 'tensorlite[profile]'" in capsys.readouterr().err
    assert cli.main(["--tensorboard", str(tmp_path / "missing")]) == 2


# -- TensorBoard over HTTP, and the Profile tab in Chromium ------------------------------------
SERVER_WAIT_S = 60


@pytest.fixture(scope="module")
def tensorboard(logs):
    """`python -m tensorlite.profiler --tensorboard LOGDIR`: yields its URL; stopped with
    Ctrl-C (SIGINT) and checked to exit within a bounded time."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorlite.profiler", "--tensorboard", logs[0]],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        # Ctrl-C as from a terminal: run as a background job without job control (a CI
        # script's `cmd &`), the suite and its children start with SIGINT ignored, and
        # Python keeps an ignored SIGINT ignored, so the server would never see it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        url = _read_url(proc)
        _wait_until_served(url)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("TensorBoard did not stop within 20 s of Ctrl-C")
    assert proc.returncode == 0


def _read_url(proc):
    deadline = time.monotonic() + SERVER_WAIT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            line = proc.stdout.readline()
            m = re.search(r"TensorBoard at (http://127\.0\.0\.1:\d+/)#profile", line)
            if m:
                return m.group(1)
            if not line and proc.poll() is not None:
                break
    raise AssertionError("the command printed no TensorBoard URL")


def _get(url, timeout=60):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        body = r.read()
        if r.headers.get("Content-Encoding") == "gzip":  # the plugin gzips unasked
            body = gzip.decompress(body)
        return json.loads(body)


def _wait_until_served(url):
    """Until the plugin lists runs (TensorBoard reads the log directory after it starts)."""
    deadline = time.monotonic() + SERVER_WAIT_S
    while True:
        try:
            if _get(url + "data/plugin/profile/runs", timeout=5):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"TensorBoard at {url} listed no profile runs")
        time.sleep(0.2)


def _plugin(url, route, **query):
    return _get(f"{url}data/plugin/profile/{route}?{urllib.parse.urlencode(query)}")


def _run_name(url, kind, run):
    """The plugin's name for run directory `logdir/<kind>/plugins/profile/<run>`."""
    name = f"{kind}/{os.path.basename(run)}"
    assert name in _plugin(url, "runs")
    return name


def test_tensorboard_serves_the_profile_plugin(logs, tensorboard):
    assert "profile" in _get(tensorboard + "data/plugins_listing")
    assert len(_plugin(tensorboard, "runs")) == 2
    for kind, run in logs[1].items():
        name = _run_name(tensorboard, kind, run)
        assert "overview_page" in _plugin(tensorboard, "run_tools", run=name)
        hosts = _plugin(tensorboard, "hosts", run=name, tag="overview_page")
        assert [h["hostname"] for h in hosts] == [socket.gethostname()]
        overview = _plugin(tensorboard, "data", run=name, tag="overview_page",
                           host=socket.gethostname())
        stated, _, _ = _input_percent(overview)
        assert (stated > 50) if kind == "input" else (stated < 20)


def test_profile_tab_overview_in_headless_chromium(logs, tensorboard, tmp_path):
    """The Profile tab opens the input-bound run's Overview and shows its numbers.

    The step-time graph: xprof's Overview draws it with Google Charts (fetched from the
    Internet, which tests never reach) and, since xprof 2.20, only for sessions it
    classifies as training, which it decides from XLA HLO modules alone. A TensorFlow
    profile without XLA (and so tensorlite's) is classified as inference and the element is
    not rendered; the test checks exactly that rule against the run environment the page
    was served, so a plugin that renders the graph for our run makes it fail loudly."""
    browser_path = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api")
    run = _run_name(tensorboard, "input", logs[1]["input"])
    host = socket.gethostname()
    overview = _plugin(tensorboard, "data", run=run, tag="overview_page", host=host)
    input_ms = overview[1]["p"]["infeed_time_ms_avg"]
    training = overview[2]["p"]["is_training"] == "true"
    query = urllib.parse.urlencode({"run": run, "tag": "overview_page", "host": host})
    shot = tmp_path / "profile_overview.png"
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            # Nothing leaves the machine: the Google Charts loader and web fonts are
            # refused at once.
            page.route("**/*", lambda route: route.continue_()
                       if route.request.url.startswith(tensorboard) else route.abort())
            page.goto(f"{tensorboard}?{query}#profile")
            frame = _frame_with(page, "performance-summary")
            summary = frame.locator("performance-summary")
            summary.get_by_text(f"{input_ms} ms").first.wait_for(timeout=60_000)
            assert "Input Time" in summary.inner_text()
            assert frame.locator("mat-select").first.inner_text().strip() == run
            assert frame.locator("step-time-graph").count() == (1 if training else 0)
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def _frame_with(page, selector):
    """The frame of the Profile tab that shows `selector` (the plugin runs in an iframe)."""
    deadline = time.monotonic() + SERVER_WAIT_S
    while time.monotonic() < deadline:
        for frame in page.frames:
            if frame.locator(selector).count():
                return frame
        page.wait_for_timeout(250)
    raise AssertionError(f"no {selector} in the Profile tab's frames "
                         f"{[f.url for f in page.frames]}")
