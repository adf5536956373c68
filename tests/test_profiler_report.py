"""The profiler's Overview analysis, text and HTML reports, command line, and the HTML page
in a real headless Chromium."""
import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf
from tensorlite import profiler
from tensorlite.profiler import collector, overview, report_html, report_text
from tests.chromium import chromium_path

P = profiler.experimental
MS = 1_000_000  # ns


@pytest.fixture(autouse=True)
def _no_leftover_profiler():
    yield
    if collector.active() is not None:
        P.stop(save=False)


def _synthetic(events):
    """A stopped collector whose one thread recorded `events` (times in ms from start)."""
    c = collector.Collector()
    buf = collector._ThreadBuffer()
    c.start_ns = 0
    c.stop_ns = 100 * MS
    for kind, name, start, dur in events:
        payload = {"step_num": int(name)} if kind == "step" else ()
        buf.events.append((kind, "train" if kind == "step" else name, start * MS, dur * MS,
                           dur * MS, payload, ()))
    c.buffers.append(buf)
    return c


def test_step_breakdown_counts_the_fetch_before_each_step():
    # fetch (input) 0-4, step 0 4-10 with an op 5-8; fetch 10-13, step 1 13-20 with op 14-15
    c = _synthetic([("input", "IteratorGetNext", 0, 4), ("step", "0", 4, 6),
                    ("op", "MatMul", 5, 3), ("input", "IteratorGetNext", 10, 3),
                    ("step", "1", 13, 7), ("op", "MatMul", 14, 1)])
    rows = overview.step_breakdown(c)
    assert [r["step_num"] for r in rows] == [0, 1]
    assert [r["step_us"] for r in rows] == pytest.approx([10_000, 10_000])
    assert [r["input_us"] for r in rows] == pytest.approx([4_000, 3_000])
    assert [r["compute_us"] for r in rows] == pytest.approx([3_000, 1_000])
    assert [r["other_us"] for r in rows] == pytest.approx([3_000, 6_000])


def test_ops_inside_input_wait_are_input_not_compute():
    # a map function's ops run on the consumer thread inside IteratorGetNext
    c = _synthetic([("step", "0", 0, 10), ("input", "IteratorGetNext", 1, 6),
                    ("op", "Mul", 2, 4), ("op", "MatMul", 8, 1), ("op", "Add", 8.2, 0.5)])
    (row,) = overview.step_breakdown(c)
    assert row["input_us"] == pytest.approx(6_000)
    assert row["compute_us"] == pytest.approx(1_000)  # nested Add is inside MatMul's time
    assert row["other_us"] == pytest.approx(3_000)


@pytest.mark.parametrize("input_ms, verdict, tool", [
    (8, "input-bound", "input_pipeline"), (1, "moderately input-bound", "input_pipeline"),
    (0.2, "not input-bound", "op_stats")])
def test_verdict_thresholds(input_ms, verdict, tool):
    c = _synthetic([("input", "IteratorGetNext", 0, input_ms), ("step", "0", input_ms, 10),
                    ("op", "MatMul", input_ms, 9)])
    ops = [{"name": "MatMul", "percent": 100.0, "total_self_us": 9000.0}]
    ip = {"input_us": input_ms * 1e3, "pipelines": [], "advice": [
        {"kind": "parallelize_map", "stage": "Map(f)", "text": "Use AUTOTUNE."}],
        "bottleneck": {"pipeline": 0, "stage": "Map(f)", "why": "slow"}}
    o = overview.analyze(c, ops, ip)
    assert o["verdict"] == verdict
    assert o["recommendation"]["tool"] == tool
    if tool == "input_pipeline":
        text = o["recommendation"]["text"]
        assert f"{o['input_percent']:.1f}% of step time waits for data" in text
        assert "Map(f)" in text and "Use AUTOTUNE." in text
    else:
        assert "MatMul" in o["recommendation"]["text"]


def test_python_overhead_points_at_the_trace_viewer():
    c = _synthetic([("step", "0", 0, 10), ("op", "MatMul", 1, 1)])
    o = overview.analyze(c, [{"name": "MatMul", "percent": 100.0, "total_self_us": 1e3}], None)
    assert o["verdict"] == "not input-bound"
    assert o["recommendation"]["tool"] == "trace_viewer"


def test_no_step_markers_uses_whole_profile():
    c = _synthetic([("op", "MatMul", 1, 10)])
    o = overview.analyze(c, [{"name": "MatMul", "percent": 100.0, "total_self_us": 10e3}],
                         {"input_us": 50e3, "pipelines": [], "advice": [],
                          "bottleneck": None})
    assert o["num_steps"] == 0 and "Trace('train'" in o["note"]
    assert o["input_percent"] == pytest.approx(50.0)
    assert o["verdict"] == "input-bound"


def _profile_training(logdir, steps=6):
    rng = np.random.default_rng(0)
    ds = tf.data.Dataset.from_tensor_slices(rng.random((steps * 4, 8), dtype=np.float32))
    ds = ds.map(lambda x: x * 2.0).batch(4)
    w = tf.Variable(rng.random((8, 3), dtype=np.float32))
    with P.Profile(logdir):
        for step, x in enumerate(ds):
            with P.Trace("train", step_num=step, _r=1):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(tf.nn.relu(x @ w))
                w.assign_sub(0.01 * tape.gradient(loss, w))
    return profiler.latest_run(logdir)


def test_run_directory_holds_four_tools(tmp_path):
    run = _profile_training(str(tmp_path))
    assert sorted(os.listdir(run)) == sorted([
        "profile.json", "report.html", "summary.txt", "trace.json",
        socket.gethostname() + ".xplane.pb"])  # TensorBoard's Profile plugin reads the last
    assert not [d for d in os.listdir(os.path.dirname(run)) if d.endswith(".tmp")]
    profile, events = profiler.load(run)
    assert [s["step_num"] for s in profile["overview"]["steps"]] == list(range(6))
    text = open(os.path.join(run, "summary.txt")).read()
    for title in ("Overview", "Input Pipeline Analyzer", "TensorFlow Stats", "Trace Viewer"):
        assert title + "\n" + "=" * len(title) in text
    assert "MatMul" in text and "Recommendation:" in text
    assert any(t["name"] == "MainThread" for t in profile["threads"])
    page = open(os.path.join(run, "report.html"), encoding="utf-8").read()
    for anchor in ("overview", "input-pipeline", "op-stats", "trace-viewer"):
        assert f'id="{anchor}"' in page
    assert "http://" not in page and "https://" not in page.replace(
        "https://ui.perfetto.dev", "")  # nothing to fetch: the page is self-contained
    assert page.count("<g><title>step ") == 6


def test_html_escapes_user_names():
    profile = {"host": "h", "pid": 1, "start_wall": 0.0, "duration_us": 1.0,
               "op_timing": "measured", "total_self_us": 1.0, "trace_file": "trace.json",
               "ops": [{"name": "<b>op</b>", "count": 1, "total_self_us": 1.0,
                        "avg_self_us": 1.0, "min_us": 1.0, "max_us": 1.0, "percent": 100.0}],
               "overview": overview.analyze(_synthetic([]), [], None),
               "input_pipeline": {"input_us": 0.0, "pipelines": [], "advice": [],
                                  "bottleneck": None},
               "threads": []}
    events = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "t"}},
              {"name": "</script><script>alert(1)</script>", "cat": "trace", "ph": "X",
               "ts": 0.0, "dur": 1.0, "pid": 1, "tid": 1, "args": {}}]
    page = report_html.render(profile, events)
    assert "<b>op</b>" not in page and "&lt;b&gt;op&lt;/b&gt;" in page
    assert "</script><script>alert(1)" not in page
    assert "Overview" in report_text.render(profile)


def test_trace_data_keeps_longest_events_when_too_many(monkeypatch):
    monkeypatch.setattr(report_html, "MAX_TRACE_EVENTS", 3)
    events = [{"name": f"e{i}", "cat": "op", "ph": "X", "ts": float(i), "dur": float(i),
               "pid": 1, "tid": 1, "args": {}} for i in range(10)]
    data = report_html.trace_data(events)
    assert data["truncated"] and data["total"] == 10
    assert sorted(data["names"]) == ["e7", "e8", "e9"]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "tensorlite.profiler", *args],
                          capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_command_line_renders_latest_run(tmp_path):
    run = _profile_training(str(tmp_path))
    os.remove(os.path.join(run, "report.html"))
    r = _cli(str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "Input Pipeline Analyzer" in r.stdout and "TensorFlow Stats" in r.stdout
    assert os.path.join(run, "report.html") in r.stdout
    assert os.path.isfile(os.path.join(run, "report.html"))
    listed = _cli(str(tmp_path), "--list")
    assert listed.returncode == 0 and listed.stdout.split() == [run]
    assert _cli(run).returncode == 0  # a run directory itself


def test_command_line_bad_input(tmp_path):
    missing = _cli(str(tmp_path / "nope"))
    assert missing.returncode == 2 and "is not a directory" in missing.stderr
    empty = _cli(str(tmp_path))
    assert empty.returncode == 1 and "No profile found" in empty.stderr



def test_html_report_in_headless_chromium(tmp_path):
    browser_path = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api")
    run = _profile_training(str(tmp_path / "logs"))
    problems = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("request", lambda r: None if r.url.startswith("file:") else
                    problems.append(f"network request {r.url}"))
            page.goto("file://" + os.path.join(run, "report.html"))
            page.wait_for_selector("#trace-viewer[data-drawn]")
            headings = page.locator("h2").all_inner_texts()
            assert headings == ["Overview", "Input Pipeline Analyzer", "TensorFlow Stats",
                                "Trace Viewer"]
            assert "of step time waits" in page.inner_text("#recommendation")
            assert page.locator("svg.chart rect.compute").count() == 6
            assert "MatMul" in page.inner_text("#op-stats table")
            drawn = int(page.get_attribute("#trace-viewer", "data-drawn"))
            assert drawn == len([e for e in profiler.load(run)[1] if e["ph"] == "X"])
            canvas = page.locator("#trace-canvas").bounding_box()
            assert canvas["width"] > 500 and canvas["height"] > 20
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert problems == []
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width == 1200 and height > 1500  # the whole page: four tools stacked


def test_profile_json_is_plain_json(tmp_path):
    run = _profile_training(str(tmp_path))
    with open(os.path.join(run, "profile.json")) as f:
        profile = json.load(f)
    assert profile["version"] == 1 and profile["trace_file"] == "trace.json"


def test_seed_000_profile_batch_150_160(tmp_path):
    """Seed 000/001: TensorBoard(log_dir, profile_batch='150, 160') then model.fit."""
    rng = np.random.default_rng(0)
    x = rng.random((170 * 4, 8), dtype=np.float32)
    y = rng.integers(0, 3, 170 * 4)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4).prefetch(tf.data.AUTOTUNE)
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    tb_callback = tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path),
                                                 profile_batch='150, 160')
    model.fit(ds, epochs=1, verbose=0, callbacks=[tb_callback])
    (run,) = profiler.runs(str(tmp_path))
    profile, _ = profiler.load(run)
    o = profile["overview"]
    assert [s["step_num"] for s in o["steps"]] == list(range(149, 160))  # batches 150..160
    assert o["avg_compute_us"] > 0 and o["avg_step_us"] >= o["avg_compute_us"]
    assert [p["structure"] for p in profile["input_pipeline"]["pipelines"]] == [
        "TensorSlice -> Batch(4) -> Prefetch(AUTOTUNE)"]
    assert any(r["name"] == "MatMul" for r in profile["ops"])
    assert os.path.isfile(os.path.join(run, "report.html"))
