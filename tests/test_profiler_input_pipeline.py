"""The Input Pipeline Analyzer on real training loops: tf.data stages on the profiler's
timeline (consumer, background threads, worker processes), self times, the bottleneck and
the advice rules. Assertions compare fractions with wide margins, never absolute times."""
import os
import time

import numpy as np
import pytest

import tensorlite as tf
from tensorlite import profiler
from tensorlite.framework import trace_hook
from tensorlite.profiler import collector, input_pipeline
from tests.test_profiler import _load, _validate_trace

P = profiler.experimental
MAP_SLEEP = 0.003
INPUT_BOUND = ("input-bound", "moderately input-bound")  # the Overview's two bound verdicts


@pytest.fixture(autouse=True)
def _no_leftover_profiler():
    yield
    if collector.active() is not None:
        P.stop(save=False)


def slow_fn(x, y):
    time.sleep(MAP_SLEEP)  # a slow per-element preprocessing step that releases the GIL
    return x * 2.0, y


def _data(n=48):
    rng = np.random.default_rng(0)
    return rng.random((n, 4)).astype(np.float32), rng.random((n, 1)).astype(np.float32)


def _model():
    w = tf.Variable(np.zeros((4, 1), np.float32))
    opt = tf.keras.optimizers.SGD(0.1)

    def train_step(x, y, extra):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        time.sleep(extra)  # the rest of a real step (the model is tiny)
    return train_step


def _profile(ds, logdir, step_s, warmup=0):
    """Trains on `ds` under the profiler: returns (profile dict, trace dict)."""
    train_step = _model()
    it = iter(ds)
    for _ in range(warmup):  # as Keras' profile_batch: profile once the pipeline runs
        next(it)
    time.sleep(0.05 if warmup else 0)
    with P.Profile(logdir):
        for step, (x, y) in enumerate(it):
            with P.Trace("train", step_num=step, _r=1):
                train_step(x, y, step_s)
    trace, profile = _load(profiler.latest_run(logdir))
    return profile, trace


def _analyze(fn):
    """Runs fn() under a bare collector (no step markers) and analyzes it."""
    c = collector.install()
    try:
        fn()
    finally:
        collector.uninstall()
    return input_pipeline.analyze(c)


def _kinds(ip):
    return [a["kind"] for a in ip["advice"]]


def _stage(ip, name):
    rows = [s for p in ip["pipelines"] for s in p["stages"] if s["stage"] == name]
    assert len(rows) == 1, [s["stage"] for p in ip["pipelines"] for s in p["stages"]]
    return rows[0]


def _thread_names(trace):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}


# -- the two runs -----------------------------------------------------------------
def test_slow_sequential_map_is_the_named_bottleneck(tmp_path):
    ds = tf.data.Dataset.from_tensor_slices(_data()).map(slow_fn).batch(4)
    profile, trace = _profile(ds, str(tmp_path), step_s=0.0005)
    ip = profile["input_pipeline"]
    # how much of the step waits depends on the machine's load; bound it must be
    assert profile["overview"]["verdict"] in INPUT_BOUND
    assert ip["bottleneck"]["stage"] == "Map(slow_fn)"
    kinds = _kinds(ip)
    assert kinds[0] == "parallelize_map" and "add_prefetch" in kinds
    assert "num_parallel_calls=tf.data.AUTOTUNE" in ip["advice"][0]["text"]
    assert "prefetch(tf.data.AUTOTUNE)" in ip["advice"][kinds.index("add_prefetch")]["text"]
    (p,) = ip["pipelines"]
    assert p["structure"] == "TensorSlice -> Map(slow_fn) -> Batch(4)"
    m = _stage(ip, "Map(slow_fn)")
    assert m["where"] == "consumer thread" and m["parallelism"] == "1"
    assert m["calls"] == 48 and m["percent_of_input"] > 60
    assert p["stages"][0]["stage"] == "Map(slow_fn)"  # sorted by self time
    assert sum(s["percent_of_input"] for s in p["stages"]) == pytest.approx(100.0)
    # the consumer's waits account for most of the stages' self time on its thread
    assert 0.5 < sum(s["total_self_us"] for s in p["stages"]) / ip["input_us"] <= 1.01
    assert ip["input_us"] > 0.5 * 48 * MAP_SLEEP * 1e6
    xs = _validate_trace(trace)
    names = _thread_names(trace)
    inputs = [e for e in xs if e["cat"] == "input"]
    assert len(inputs) == 13 and all(e["name"] == "IteratorGetNext" for e in inputs)
    assert {names[(e["pid"], e["tid"])] for e in inputs} == {"MainThread"}


def test_parallel_map_with_prefetch_is_not_input_bound(tmp_path):
    fast = tf.data.Dataset.from_tensor_slices(_data(96)).map(
        slow_fn, num_parallel_calls=tf.data.AUTOTUNE).batch(4).prefetch(tf.data.AUTOTUNE)
    # each batch needs 4 x 3 ms of sleeps on up to 8 threads; a step takes 15 ms
    profile, trace = _profile(fast, str(tmp_path), step_s=0.015, warmup=2)
    ip = profile["input_pipeline"]
    assert profile["overview"]["verdict"] == "not input-bound"
    assert ip["bottleneck"] is None
    assert _kinds(ip) == ["ok"]
    m = _stage(ip, "ParallelMap(slow_fn)")
    assert m["where"] == "background thread(s)"
    assert m["parallelism"].startswith("AUTOTUNE->") and m["parallelism"].endswith("threads")
    pf = _stage(ip, "Prefetch(AUTOTUNE)")
    assert pf["buffer"].startswith("avg ") and pf["parallelism"] == "1 thread"
    # the trace: data spans on named background threads, input spans on the consumer's
    xs = _validate_trace(trace)
    names = _thread_names(trace)
    where = {}
    for e in xs:
        where.setdefault(e["cat"], set()).add(names[(e["pid"], e["tid"])])
    assert where["input"] == {"MainThread"}
    assert any(n.startswith("tf.data Prefetch(AUTOTUNE)") for n in where["data"])
    workers = {n for n in where["data"] if n.startswith("tf.data ParallelMap(slow_fn) worker")}
    assert len(workers) >= 2
    work = [e for e in xs if e["cat"] == "data" and e["args"].get("role") == "worker"]
    # (elements made before the profiler started are not in the window)
    assert len(work) >= 40 and all(e["args"]["stage"] == m["key"] for e in work)


def busy_fn(x, y):
    end = time.perf_counter() + MAP_SLEEP  # holds the GIL: every core is soon busy
    while time.perf_counter() < end:
        pass
    return x * 2.0, y


def test_map_at_autotune_still_the_bottleneck_gets_less_work_advice(tmp_path):
    ds = tf.data.Dataset.from_tensor_slices(_data()).map(
        busy_fn, num_parallel_calls=tf.data.AUTOTUNE).batch(4).prefetch(tf.data.AUTOTUNE)
    profile, _ = _profile(ds, str(tmp_path), step_s=0.0005)
    ip = profile["input_pipeline"]
    # how much of the step waits depends on the machine's load; bound it must be
    assert profile["overview"]["verdict"] in INPUT_BOUND
    assert ip["bottleneck"]["stage"] == "ParallelMap(busy_fn)"
    assert _kinds(ip)[0] == "vectorize" and "parallelize_map" not in _kinds(ip)
    assert "already runs at AUTOTUNE" in ip["advice"][0]["text"]


def test_worker_processes_get_their_own_rows(tmp_path):
    opts = tf.data.Options()
    opts.threading.worker_mechanism = "process"
    ds = tf.data.Dataset.from_tensor_slices(_data(24)).map(
        slow_fn, num_parallel_calls=2).batch(4).with_options(opts)
    profile, trace = _profile(ds, str(tmp_path), step_s=0.0005)
    xs = _validate_trace(trace)
    remote = [e for e in xs if e["pid"] != os.getpid()]
    assert len({e["pid"] for e in remote}) == 2
    assert all(e["cat"] == "data" and e["args"]["role"] == "worker" for e in remote)
    assert len(remote) >= 20  # the first elements are probed on the consumer thread
    names = _thread_names(trace)
    assert all(names[(e["pid"], e["tid"])].startswith("tf.data ParallelMap(slow_fn) worker "
                                                      "process") for e in remote)
    # workers' clocks are the host's: their spans lie inside the profiled window
    end = max(e["ts"] + e["dur"] for e in xs if e["pid"] == os.getpid())
    assert all(0 <= e["ts"] <= end for e in remote)
    m = _stage(profile["input_pipeline"], "ParallelMap(slow_fn)")
    assert m["where"] == "worker processes" and m["parallelism"] == "2 processes"
    assert m["avg_us"] >= 0.8 * MAP_SLEEP * 1e6


# -- spans and self time --------------------------------------------------------------------
def test_nested_spans_give_self_times():
    def cheap(x):
        return x + 1

    def run():
        for _ in tf.data.Dataset.range(64).map(slow_one).map(cheap).batch(8):
            pass

    def slow_one(x):
        time.sleep(0.001)
        return x
    ip = _analyze(run)
    slow, fast = _stage(ip, "Map(slow_one)"), _stage(ip, "Map(cheap)")
    batch = _stage(ip, "Batch(8)")
    assert slow["calls"] == fast["calls"] == 64 and batch["calls"] == 8
    # each stage's span holds its upstream's: self times still put the sleep in slow_one
    assert slow["percent_of_input"] > 50
    assert slow["total_self_us"] > 3 * fast["total_self_us"]
    assert slow["total_self_us"] > 3 * batch["total_self_us"]
    assert ip["bottleneck"]["stage"] == "Map(slow_one)"


def test_parallel_interleave_inputs_share_one_stage_row():
    def gen(n):
        for i in range(int(n)):
            time.sleep(0.001)
            yield i

    def make(n):
        return tf.data.Dataset.from_generator(gen, output_types=tf.int64, output_shapes=(),
                                              args=(n,))

    def run():
        ds = tf.data.Dataset.range(1, 7).interleave(make, cycle_length=2,
                                                     num_parallel_calls=2)
        assert sorted(int(x) for x in ds) == sorted(i for n in range(1, 7) for i in range(n))
    ip = _analyze(run)
    inner = _stage(ip, "ParallelInterleave(make) > Generator(gen)")
    assert inner["calls"] == 21 and inner["where"] == "background thread(s)"
    outer = _stage(ip, "ParallelInterleave(make)")
    assert outer["calls"] == 21 and outer["parallelism"] == "2 threads"
    # the consumer's wait on the interleave is handed on to the generators it waits for
    assert inner["percent_of_input"] > outer["percent_of_input"]


def test_nothing_is_recorded_when_not_profiling():
    assert trace_hook.ACTIVE is None
    c = collector.install()
    collector.uninstall()
    for _ in tf.data.Dataset.range(10).map(lambda x: x).prefetch(2):
        pass
    assert not c.buffers and not c.data_pipelines
    assert input_pipeline.analyze(c) == {"input_us": 0.0, "pipelines": [], "bottleneck": None,
                                         "advice": []}


def test_profiling_started_mid_iteration_reports_only_the_window():
    ds = tf.data.Dataset.range(100).map(lambda x: x * 2)
    it = iter(ds)
    for _ in range(40):
        next(it)
    ip = _analyze(lambda: [next(it) for _ in range(25)])
    assert _stage(ip, "Map(<lambda>)")["calls"] == 25
    assert len([p for p in ip["pipelines"]]) == 1


# -- advice rules ---------------------------------------------------------------------------
def _iterate(ds):
    return lambda: [None for _ in ds]


def test_advice_shuffle_before_repeat():
    ip = _analyze(_iterate(tf.data.Dataset.range(40).repeat(2).shuffle(10, seed=1)))
    (a,) = [a for a in ip["advice"] if a["kind"] == "shuffle_before_repeat"]
    assert a["stage"] == "Shuffle(10)" and ".shuffle(10).repeat(" in a["text"]
    ip = _analyze(_iterate(tf.data.Dataset.range(40).shuffle(10, seed=1).repeat(2)))
    assert "shuffle_before_repeat" not in _kinds(ip)


def _text_files(tmp_path, n=3, lines=300):
    files = []
    for k in range(n):
        f = tmp_path / f"part{k}.txt"
        f.write_text("".join(f"line {k} {i}\n" for i in range(lines)))
        files.append(str(f))
    return files


def test_advice_interleave_for_files_read_one_after_another(tmp_path):
    files = _text_files(tmp_path)
    ip = _analyze(_iterate(tf.data.TextLineDataset(files)))
    (a,) = [a for a in ip["advice"] if a["kind"] == "interleave"]
    assert a["stage"] == "TextLine(3 files)"
    assert ".interleave(tf.data.TextLineDataset" in a["text"]
    assert "num_parallel_calls=tf.data.AUTOTUNE" in a["text"]
    flat = tf.data.Dataset.from_tensor_slices(files).flat_map(tf.data.TextLineDataset)
    ip = _analyze(_iterate(flat))
    (a,) = [a for a in ip["advice"] if a["kind"] == "interleave"]
    assert a["stage"].startswith("FlatMap(") and "instead of .flat_map(" in a["text"]
    par = tf.data.Dataset.from_tensor_slices(files).interleave(
        tf.data.TextLineDataset, cycle_length=3, num_parallel_calls=tf.data.AUTOTUNE)
    ip = _analyze(_iterate(par))
    assert "interleave" not in _kinds(ip)
    one = tf.data.TextLineDataset(files[:1])
    assert "interleave" not in _kinds(_analyze(_iterate(one)))


def expensive(x):
    time.sleep(0.002)
    return x * 3


def test_advice_cache_an_expensive_map_rerun_every_epoch():
    base = tf.data.Dataset.range(10)
    ip = _analyze(_iterate(base.map(expensive).repeat(3)))
    (a,) = [a for a in ip["advice"] if a["kind"] == "cache"]
    assert a["stage"] == "Map(expensive)" and ".map(expensive).cache()" in a["text"]
    assert "same 10 elements" in a["text"]
    ip = _analyze(_iterate(base.map(expensive).cache().repeat(3)))
    assert "cache" not in _kinds(ip)
    ds = base.map(expensive)  # epochs as separate iterations of one dataset

    def epochs():
        for _ in range(2):
            for _ in ds:
                pass
    ip = _analyze(epochs)
    assert "cache" in _kinds(ip)
    assert len(ip["pipelines"]) == 1 and _stage(ip, "Map(expensive)")["calls"] == 20


def double(x):
    return x * 2


def test_advice_vectorize_a_cheap_per_element_map_before_batch():
    ip = _analyze(_iterate(tf.data.Dataset.range(512).map(double).batch(32)))
    kinds = _kinds(ip)
    assert "vectorize" in kinds and "parallelize_map" not in kinds
    (a,) = [a for a in ip["advice"] if a["kind"] == "vectorize"]
    assert a["stage"] == "Map(double)" and ".batch(32).map(double)" in a["text"]
    ip = _analyze(_iterate(tf.data.Dataset.range(512).batch(32).map(double)))
    assert "vectorize" not in _kinds(ip)
