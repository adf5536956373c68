"""tf.profiler: trace JSON validity, op statistics, step markers, tf.data stages, errors."""
import json
import os
import threading
import types

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import dispatch, errors
from tensorlite.profiler import collector
from tensorlite import profiler

P = profiler.experimental


@pytest.fixture(autouse=True)
def _no_leftover_profiler():
    yield
    if collector.active() is not None:
        P.stop(save=False)


def _load(run):
    with open(os.path.join(run, "trace.json")) as f:
        trace = json.load(f)
    with open(os.path.join(run, "profile.json")) as f:
        stats = json.load(f)
    return trace, stats


def _validate_trace(trace):
    assert trace["displayTimeUnit"] == "ms"
    events = trace["traceEvents"]
    assert events
    named_threads = set()
    last_ts = {}
    x_tids = set()
    for e in events:
        assert {"name", "ph", "pid", "tid"} <= set(e), e
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name", "thread_sort_index")
            if e["name"] == "thread_name":
                named_threads.add((e["pid"], e["tid"]))
                assert isinstance(e["args"]["name"], str)
            continue
        assert e["ph"] == "X"
        assert {"cat", "ts", "dur", "args"} <= set(e), e
        assert e["dur"] >= 0 and e["ts"] >= 0
        key = (e["pid"], e["tid"])
        assert e["ts"] >= last_ts.get(key, -1.0), "timestamps must be monotonic per thread"
        last_ts[key] = e["ts"]
        x_tids.add(key)
        if e["cat"] == "op":
            assert "input_shapes" in e["args"] and "output_shapes" in e["args"]
    assert x_tids <= named_threads
    # the host process, and tf.data worker processes (named as such) reported by it
    workers = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"
               and e["args"]["name"].startswith("tf.data worker (pid ")}
    assert os.getpid() not in workers
    assert all(e["pid"] == os.getpid() or e["pid"] in workers for e in events)
    return [e for e in events if e["ph"] == "X"]


def _row(stats, name):
    rows = [r for r in stats["ops"] if r["name"] == name]
    assert len(rows) == 1, [r["name"] for r in stats["ops"]]
    return rows[0]


def test_eager_ops_and_steps(tmp_path):
    a = tf.constant(np.ones((3, 4), np.float32))
    b = tf.constant(np.ones((4, 2), np.float32))
    P.start(str(tmp_path))
    for step in range(4):
        with P.Trace("train", step_num=step, _r=1):
            c = tf.matmul(a, b)
            tf.reduce_sum(c + 1.0)
    run = P.stop()
    assert run.startswith(os.path.join(str(tmp_path), "plugins", "profile"))
    trace, stats = _load(run)
    xs = _validate_trace(trace)
    assert _row(stats, "MatMul")["count"] == 4
    assert _row(stats, "AddV2")["count"] == 4
    assert _row(stats, "Sum")["count"] == 4
    mm = [e for e in xs if e["name"] == "MatMul"]
    assert mm[0]["args"]["input_shapes"] == [[3, 4], [4, 2]]
    assert mm[0]["args"]["output_shapes"] == [[3, 2]]
    steps = [e for e in xs if e["cat"] == "step"]
    assert [e["args"]["step_num"] for e in steps] == [0, 1, 2, 3]
    o = stats["overview"]
    assert [s["step_num"] for s in o["steps"]] == [0, 1, 2, 3] and o["avg_step_us"] > 0
    # every op lies inside its step
    for op in (e for e in xs if e["cat"] == "op"):
        assert any(s["ts"] <= op["ts"] <= s["ts"] + s["dur"] for s in steps)
    totals = [r["total_self_us"] for r in stats["ops"]]
    assert totals == sorted(totals, reverse=True)
    pct = sum(r["percent"] for r in stats["ops"])
    assert pct == pytest.approx(100.0) or stats["total_self_us"] == 0


def test_summary_text(tmp_path, capsys):
    with P.Profile(str(tmp_path)):
        x = tf.ones([2, 2])
        tf.matmul(x, x)
        tf.matmul(x, x)
    text = profiler.summary(str(tmp_path))
    out = capsys.readouterr().out
    assert "MatMul" in text and text in out
    line = next(ln for ln in text.splitlines() if ln.startswith("MatMul"))
    assert line.split()[1] == "2"
    run = profiler.latest_run(str(tmp_path))
    with open(os.path.join(run, "summary.txt")) as f:
        assert f.read() == text


def test_zero_overhead_when_off(tmp_path):
    n = len(dispatch.OBSERVERS)
    P.start(str(tmp_path))
    assert len(dispatch.OBSERVERS) == n + 1
    P.stop()
    assert len(dispatch.OBSERVERS) == n
    assert collector.active() is None
    with P.Trace("idle", step_num=0):  # a Trace with no profiler records nothing
        pass


def test_threads_get_their_own_tid(tmp_path):
    P.start(str(tmp_path))
    tf.add(tf.ones([2]), 1.0)

    def work():
        tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]))
    t = threading.Thread(target=work, name="worker-7")
    t.start()
    t.join()
    trace, stats = _load(P.stop())
    xs = _validate_trace(trace)
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["name"] == "thread_name"}
    mm = [e for e in xs if e["name"] == "MatMul"]
    assert len(mm) == 1 and names[mm[0]["tid"]] == "worker-7"
    assert len({e["tid"] for e in xs}) == 2


def test_tf_function_ops_are_seen(tmp_path):
    @tf.function
    def f(a):
        return tf.matmul(a, a) + 1.0
    f(tf.ones([2, 2]))
    P.start(str(tmp_path))
    f(tf.ones([2, 2]))
    _, stats = _load(P.stop())
    assert _row(stats, "MatMul")["count"] == 1


def test_tf_data_stage_stats(tmp_path):
    ds = tf.data.Dataset.range(6).map(lambda x: x * 2)
    for _ in ds:  # a pipeline that ran before profiling is not reported
        pass
    P.start(str(tmp_path))
    assert [int(x) for x in ds] == [0, 2, 4, 6, 8, 10]
    run = P.stop()
    _, stats = _load(run)
    pipelines = stats["input_pipeline"]["pipelines"]
    assert len(pipelines) == 1
    m = [s for s in pipelines[0]["stages"] if s["stage"].startswith("Map")]
    assert m and m[0]["calls"] == 6
    assert "Input Pipeline Analyzer" in profiler.summary(str(tmp_path), print_fn=None)


def _fake_op(name):
    return types.SimpleNamespace(name=name)


def test_before_hook_gives_durations_and_self_time(monkeypatch, tmp_path):
    monkeypatch.setattr(dispatch, "BEFORE", [], raising=False)
    P.start(str(tmp_path))
    c = collector.active()
    assert c.timed and dispatch.BEFORE == [c.before]
    outer, inner, failed = _fake_op("Outer"), _fake_op("Inner"), _fake_op("Failed")
    x = tf.ones([2])
    c.before(outer)
    c.before(failed)  # its forward raised: never recorded, must not confuse the stack
    c.before(inner)
    c.record(inner, (x,), None, x)
    c.record(outer, (x, x), None, (x, x))
    run = P.stop()
    assert dispatch.BEFORE == []
    trace, stats = _load(run)
    xs = _validate_trace(trace)
    o, i = _row(stats, "Outer"), _row(stats, "Inner")
    assert o["total_us"] >= i["total_us"] >= 0
    assert o["total_self_us"] == pytest.approx(o["total_us"] - i["total_us"])
    assert not [r for r in stats["ops"] if r["name"] == "Failed"]
    assert stats["op_timing"] == "measured"
    assert [e["name"] for e in xs] == ["Outer", "Inner"]  # outer first: it starts earlier


def test_before_none_discards_a_failed_op(monkeypatch, tmp_path):
    monkeypatch.setattr(dispatch, "BEFORE", [], raising=False)
    P.start(str(tmp_path))
    c = collector.active()
    x = tf.ones([2])
    for _ in range(3 * collector._MAX_DEPTH):
        c.before(_fake_op("Failed"))
        c.before(None)
    c.before(_fake_op("Good"))
    c.record(_fake_op("Other"), (x,), None, x)  # unmatched record: instant event
    buf = c.buffers[0]
    assert len(buf.stack) <= 1
    for _ in range(3 * collector._MAX_DEPTH):  # failures without before(None) stay bounded
        c.before(_fake_op("Failed"))
    assert len(buf.stack) <= collector._MAX_DEPTH
    _, stats = _load(P.stop())
    assert _row(stats, "Other")["count"] == 1 and _row(stats, "Other")["total_us"] == 0


def test_ops_failing_while_profiling(tmp_path):
    P.start(str(tmp_path))
    with pytest.raises(errors.InvalidArgumentError):
        tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))
    tf.matmul(tf.ones([2, 3]), tf.ones([3, 2]))
    _, stats = _load(P.stop())
    assert _row(stats, "MatMul")["count"] == 1


def test_stop_without_start():
    with pytest.raises(errors.UnavailableError, match="No profiler is running"):
        P.stop()


def test_start_twice(tmp_path):
    P.start(str(tmp_path))
    with pytest.raises(errors.AlreadyExistsError, match="Another profiler"):
        P.start(str(tmp_path))
    P.stop()
    with pytest.raises(errors.UnavailableError):
        P.stop()


def test_unwritable_logdir(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(errors.PermissionDeniedError, match="logdir"):
        P.start(str(blocker / "sub"))
    assert collector.active() is None
    with pytest.raises(ValueError):
        P.start("")


def test_runs_get_separate_directories(tmp_path):
    runs = []
    for _ in range(2):
        P.start(str(tmp_path))
        tf.ones([1]) + 1.0
        runs.append(P.stop())
    assert runs[0] != runs[1] and all(os.path.isdir(r) for r in runs)


def test_summary_without_profile(tmp_path):
    with pytest.raises(errors.NotFoundError):
        profiler.summary(str(tmp_path))
