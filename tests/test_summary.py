"""tf.summary: event files read back with TensorBoard's own reader and with the raw framing."""
import glob
import io
import os
import struct
import zlib

import numpy as np
import pytest

pytest.importorskip("google.protobuf")

import tensorlite as tf  # noqa: E402
from tensorlite import summary  # noqa: E402
from tensorlite.data.tfrecord import masked_crc32c  # noqa: E402
from tensorlite.summary.event_writer import Event  # noqa: E402
from tensorlite.summary.ops import encode_png, histogram_buckets  # noqa: E402


def _raw_records(path):
    """Records of a TFRecord file, checking both masked CRCs of every frame."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos < len(data):
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[pos + 8:pos + 12])[0] == masked_crc32c(header)
        record = data[pos + 12:pos + 12 + length]
        assert struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])[0] == \
            masked_crc32c(record)
        out.append(record)
        pos += 16 + length
    assert pos == len(data)
    return out


def _accumulator(logdir):
    ea_mod = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    acc = ea_mod.EventAccumulator(str(logdir), size_guidance={ea_mod.TENSORS: 0})
    acc.Reload()
    return acc


def _values(acc, tag):
    from tensorboard.util import tensor_util  # noqa: PLC0415
    return [(e.step, tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)]


@pytest.fixture(autouse=True)
def _no_default_step():
    yield
    summary.experimental.set_step(None)


def test_file_name_and_raw_framing(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default():
        summary.scalar("loss", 2.5, step=7)
    w.close()
    files = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    assert len(files) == 1 and os.uname().nodename in os.path.basename(files[0])
    records = _raw_records(files[0])
    first = Event.FromString(records[0])
    assert first.file_version == "brain.Event:2" and first.wall_time > 0
    ev = Event.FromString(records[1])
    assert ev.step == 7 and ev.summary.value[0].tag == "loss"
    assert ev.summary.value[0].metadata.plugin_data.plugin_name == "scalars"
    t = ev.summary.value[0].tensor
    assert t.dtype == 1 and np.frombuffer(t.tensor_content, "<f4")[0] == 2.5


def test_corrupted_file_fails_crc(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    w.close()
    path = w.path
    data = bytearray(open(path, "rb").read())
    data[14] ^= 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(AssertionError):
        _raw_records(path)


def test_scalars_with_tensorboard(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default():
        for step in range(5):
            assert summary.scalar("loss", 1.0 / (step + 1), step=step) is True
        summary.scalar("acc", tf.constant(3), step=tf.constant(9, tf.int64),
                       description="accuracy")
    w.close()
    acc = _accumulator(tmp_path)
    assert set(acc.Tags()["tensors"]) == {"loss", "acc"}
    loss = _values(acc, "loss")
    assert [s for s, _ in loss] == list(range(5))
    np.testing.assert_allclose([v for _, v in loss], [1.0 / (s + 1) for s in range(5)],
                               rtol=1e-6)
    assert loss[0][1].dtype == np.float32 and loss[0][1].shape == ()
    assert _values(acc, "acc") == [(9, np.float32(3.0))]
    meta = acc.SummaryMetadata("acc")
    assert meta.plugin_data.plugin_name == "scalars" and meta.summary_description == "accuracy"


def test_default_step_and_variable_step(tmp_path):
    step = tf.Variable(0, dtype=tf.int64)
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default(step=step):
        summary.scalar("x", 1.0)
        step.assign_add(4)
        summary.scalar("x", 2.0)
    assert summary.experimental.get_step() is None  # as_default restores it
    summary.experimental.set_step(11)
    assert summary.experimental.get_step() == 11
    with w.as_default():
        summary.scalar("x", 3.0)
    w.close()
    assert [s for s, _ in _values(_accumulator(tmp_path), "x")] == [0, 4, 11]


def test_missing_step_raises(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default(), pytest.raises(ValueError, match="No step set"):
        summary.scalar("x", 1.0)
    w.close()


def test_no_writer_and_record_if(tmp_path):
    assert summary.scalar("x", 1.0, step=0) is False  # no default writer: nothing written
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default():
        with summary.record_if(False):
            assert summary.scalar("x", 1.0, step=0) is False
            assert not summary.should_record_summaries()
        with summary.record_if(lambda: tf.constant(True)):
            assert summary.scalar("x", 2.0, step=1) is True
        counter = iter(range(10))
        with summary.record_if(lambda: next(counter) % 2 == 0):  # evaluated per summary
            for s in range(2, 6):
                summary.scalar("x", float(s), step=s)
    w.close()
    assert [s for s, _ in _values(_accumulator(tmp_path), "x")] == [1, 2, 4]


def test_histograms_with_tensorboard(tmp_path):
    data = np.random.default_rng(0).normal(size=1000)
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default():
        summary.histogram("weights", tf.constant(data, tf.float32), step=3, buckets=20)
        summary.histogram("const", [2.0, 2.0, 2.0], step=3)
        summary.histogram("empty", np.zeros(0), step=3, buckets=5)
    w.close()
    acc = _accumulator(tmp_path)
    assert acc.SummaryMetadata("weights").plugin_data.plugin_name == "histograms"
    [(step, h)] = _values(acc, "weights")
    assert step == 3 and h.shape == (20, 3) and h.dtype == np.float64
    assert h[:, 2].sum() == 1000
    np.testing.assert_allclose(h[0, 0], data.astype(np.float32).min(), rtol=1e-6)
    np.testing.assert_allclose(h[-1, 1], data.astype(np.float32).max(), rtol=1e-6)
    np.testing.assert_allclose(h[1:, 0], h[:-1, 1])
    counts, _ = np.histogram(data.astype(np.float32).astype(np.float64), bins=20)
    np.testing.assert_array_equal(h[:, 2], counts)
    [(_, c)] = _values(acc, "const")
    assert c.shape == (30, 3) and c[:, 2].sum() == 3 and np.all(c[:, :2] == 2.0)
    [(_, e)] = _values(acc, "empty")
    assert e.shape == (5, 3) and not e.any()


def test_histogram_buckets_edges():
    h = histogram_buckets([0.0, 1.0, 1.0, 4.0], 4)
    np.testing.assert_array_equal(h, [[0, 1, 1], [1, 2, 2], [2, 3, 0], [3, 4, 1]])


def _decode_png(png):
    """Width, height and pixels of an 8-bit unfiltered PNG (as encode_png writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        (n,) = struct.unpack(">I", png[pos:pos + 4])
        kind, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
        assert struct.unpack(">I", png[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body)
        chunks[kind] = body
        pos += 12 + n
    width, height, _, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, -1)
    return width, height, rows[:, 1:].reshape(height, width, channels)


def test_images_with_tensorboard(tmp_path):
    rng = np.random.default_rng(1)
    floats = rng.random((4, 5, 7, 3)).astype(np.float32)
    gray = rng.integers(0, 256, (1, 3, 2, 1), dtype=np.uint8)
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default():
        summary.image("rgb", floats, step=2, max_outputs=2)
        summary.image("gray", tf.constant(gray), step=5)
    w.close()
    acc = _accumulator(tmp_path)
    assert acc.SummaryMetadata("rgb").plugin_data.plugin_name == "images"
    [(step, rgb)] = _values(acc, "rgb")
    assert step == 2 and rgb.shape == (4,) and rgb[0] == b"7" and rgb[1] == b"5"
    for i in range(2):
        width, height, pixels = _decode_png(rgb[2 + i])
        assert (width, height) == (7, 5)
        np.testing.assert_array_equal(pixels, np.round(floats[i] * 255).astype(np.uint8))
    [(_, g)] = _values(acc, "gray")
    assert list(g[:2]) == [b"2", b"3"]
    pil = pytest.importorskip("PIL.Image")
    decoded = pil.open(io.BytesIO(g[2]))
    assert decoded.size == (2, 3) and decoded.mode == "L"
    np.testing.assert_array_equal(np.asarray(decoded), gray[0, :, :, 0])


def test_encode_png_rgba_with_pil():
    pil = pytest.importorskip("PIL.Image")
    img = np.random.default_rng(2).integers(0, 256, (4, 6, 4), dtype=np.uint8)
    decoded = pil.open(io.BytesIO(encode_png(img)))
    assert decoded.size == (6, 4) and decoded.mode == "RGBA"
    np.testing.assert_array_equal(np.asarray(decoded), img)


def test_text_with_tensorboard(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default(step=1):
        summary.text("notes", "hello **world**")
        summary.text("table", tf.constant([["a", "b"], ["c", "é"]]))
        with tf.name_scope("scope"):
            summary.text("inner", "x")
    w.close()
    acc = _accumulator(tmp_path)
    assert acc.SummaryMetadata("notes").plugin_data.plugin_name == "text"
    assert _values(acc, "notes")[0][1] == b"hello **world**"
    table = _values(acc, "table")[0][1]
    assert table.shape == (2, 2) and table[1, 1].decode() == "é"
    assert "scope/inner" in acc.Tags()["tensors"]


def test_bad_inputs(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default(step=0):
        with pytest.raises(ValueError, match="scalar"):
            summary.scalar("s", [1.0, 2.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="image"):
            summary.image("i", np.zeros((2, 2, 3)))
        with pytest.raises(TypeError, match="text"):
            summary.text("t", 3.0)
    w.close()


def test_unwritable_logdir(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    bad = str(blocker / "logs")
    with pytest.raises(tf.errors.FailedPreconditionError, match=str(blocker)):
        summary.create_file_writer(bad)
    if os.geteuid() != 0:  # root can write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(tf.errors.PermissionDeniedError, match="locked"):
            summary.create_file_writer(str(locked))


def test_flush_close_and_closed_writer(tmp_path):
    w = summary.create_file_writer(str(tmp_path), max_queue=100, flush_millis=10 ** 7)
    with w.as_default():
        summary.scalar("x", 1.0, step=0)
        summary.flush()
    assert len(_raw_records(w.path)) == 2  # flushed before close
    w.close()
    w.close()
    with pytest.raises(RuntimeError, match="closed"), w.as_default():
        pass
    assert summary.scalar("x", 1.0, step=0) is False


def test_noop_writer():
    w = summary.create_noop_writer()
    with w.as_default(step=0):
        assert summary.scalar("x", 1.0) is False


# -- inside tf.function: one WriteSummary node that writes on every call ------------------------
def test_scalars_from_tf_function_every_call(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    iterations = tf.Variable(0, dtype=tf.int64)  # as optimizer.iterations

    @tf.function
    def train_step(x):
        iterations.assign_add(1)
        loss = tf.reduce_mean(x * x)
        with w.as_default():
            written = summary.scalar("loss", loss, step=iterations)
            summary.histogram("x", x, step=iterations)
        return written

    results = [train_step(tf.constant([v, 2 * v])) for v in (1.0, 2.0, 3.0)]
    assert all(isinstance(r, tf.Tensor) and r.dtype == tf.bool and bool(r) for r in results)
    assert train_step.experimental_get_tracing_count() == 1
    graph = train_step.get_concrete_function(tf.constant([0.0, 0.0])).optimized_graph
    assert graph.op_counts()["WriteSummary"] == 2 and graph.op_counts()["FlushSummaryWriter"] == 1
    assert len(_raw_records(w.path)) == 7  # flushed on leaving as_default, in every call
    w.close()
    acc = _accumulator(tmp_path)
    loss = _values(acc, "loss")
    assert [s for s, _ in loss] == [1, 2, 3]
    np.testing.assert_allclose([v for _, v in loss], [2.5, 10.0, 22.5])
    assert [s for s, _ in _values(acc, "x")] == [1, 2, 3]
    assert _values(acc, "x")[2][1][:, 2].sum() == 2


def test_writer_and_default_step_set_outside_tf_function(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    step = tf.Variable(10, dtype=tf.int64)
    summary.experimental.set_step(step)

    @tf.function
    def f(x):
        step.assign_add(1)
        with tf.name_scope("model"):
            summary.scalar("value", x)
            summary.text("note", "a **note**")
        return x

    with w.as_default():  # the default writer when tracing is the one written to
        f.get_concrete_function(tf.constant(0.0))  # tracing is no call: nothing written
        assert int(step.numpy()) == 10
        for v in (0.5, 1.5, 2.5):
            f(tf.constant(v))
    w.close()
    acc = _accumulator(tmp_path)
    assert [(s, float(v)) for s, v in _values(acc, "model/value")] == \
        [(11, 0.5), (12, 1.5), (13, 2.5)]
    assert [s for s, _ in _values(acc, "model/note")] == [11, 12, 13]


def test_no_writer_at_trace_time_writes_nothing(tmp_path):
    f = tf.function(lambda x: summary.scalar("x", x, step=0))
    assert not bool(f(tf.constant(1.0)))
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default():  # the writer is captured when tracing, as TF captures the resource
        assert not bool(f(tf.constant(2.0)))
    w.close()
    assert "x" not in _accumulator(tmp_path).Tags()["tensors"]


def test_record_if_conditions_in_tf_function(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    on = tf.Variable(True)

    @tf.function
    def f(x, step, flag):
        with w.as_default():
            with summary.record_if(on):  # a variable: read on every call
                a = summary.scalar("by_variable", x, step=step)
            with summary.record_if(lambda: tf.equal(step % 2, 0)):  # a callable's tensor
                summary.scalar("even_steps", x, step=step)
            with summary.record_if(flag):  # an argument tensor
                summary.scalar("by_argument", x, step=step)
            with summary.record_if(False):  # a Python bool: fixed when tracing
                summary.scalar("never", x, step=step)
        return a

    results = []
    for s in range(1, 5):
        on.assign(s != 2)
        results.append(bool(f(tf.constant(float(s)), tf.constant(s, tf.int64),
                              tf.constant(s >= 3))))
    assert results == [True, False, True, True]
    w.close()
    acc = _accumulator(tmp_path)
    assert [s for s, _ in _values(acc, "by_variable")] == [1, 3, 4]
    assert [s for s, _ in _values(acc, "even_steps")] == [2, 4]
    assert [s for s, _ in _values(acc, "by_argument")] == [3, 4]
    assert "never" not in acc.Tags()["tensors"]


def test_summary_errors_in_tf_function_and_v1_graph_mode(tmp_path):
    w = summary.create_file_writer(str(tmp_path))
    with w.as_default():
        with pytest.raises(ValueError, match="No step set"):
            tf.function(lambda x: summary.scalar("x", x))(tf.constant(1.0))
        with pytest.raises(tf.errors.InvalidArgumentError, match="scalar"):
            tf.function(lambda x: summary.scalar("x", x, step=1))(tf.constant([1.0, 2.0]))
        v1 = tf.compat.v1
        with v1.Graph().as_default():
            p = v1.placeholder(tf.float32, shape=[])
            with pytest.raises(NotImplementedError, match="graph mode"):
                summary.scalar("x", p, step=1)
    w.close()


def test_image_and_write_from_tf_function(tmp_path):
    w = summary.create_file_writer(str(tmp_path))

    @tf.function
    def f(images, step):
        with w.as_default(step=step):
            summary.image("img", images, max_outputs=1)
            summary.write("raw", images[0, 0, 0], metadata=None)

    with w.as_default():
        for s in (1, 2):
            f(tf.fill([2, 3, 4, 1], s / 4), tf.constant(s, tf.int64))
    w.close()
    acc = _accumulator(tmp_path)
    imgs = _values(acc, "img")
    assert [s for s, _ in imgs] == [1, 2]
    for s, img in imgs:
        width, height, pixels = _decode_png(img[2])
        assert (width, height) == (4, 3) and np.all(pixels == round(s / 4 * 255))
    assert [(s, v.tolist()) for s, v in _values(acc, "raw")] == [(1, [0.25]), (2, [0.5])]


# -- graphs: tf.summary.graph and the trace API ---------------------------------------------------
def _graph_pb2():
    return pytest.importorskip("tensorboard.compat.proto.graph_pb2")


def _run_metadata(acc, tag):
    config_pb2 = pytest.importorskip("tensorboard.compat.proto.config_pb2")
    (event,) = acc.Tensors(tag)
    return event.step, config_pb2.RunMetadata.FromString(_values(acc, tag)[0][1].item())


def _check_wiring(graph):
    """Every input names an existing node (and an existing output of it)."""
    names = {n.name: n for n in graph.node}
    for n in graph.node:
        for inp in n.input:
            base, _, k = inp.lstrip("^").partition(":")
            assert base in names, f"{n.name} reads {inp!r}, which is no node"
            if k:
                assert int(k) < len(names[base].attr["_output_shapes"].list.shape)


@tf.function
def _dense_relu(x, w):
    return tf.nn.relu(tf.matmul(x, w))


def test_graph_writes_the_graph_def_event(tmp_path):
    x, w = tf.ones([2, 3]), tf.ones([3, 4])
    writer = summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        assert summary.graph(_dense_relu.get_concrete_function(x, w).graph) is True
    writer.close()
    records = _raw_records(writer.path)
    events = [Event.FromString(r) for r in records]
    (graph_event,) = [e for e in events if e.HasField("graph_def")]
    assert graph_event.step == 0
    parsed = _graph_pb2().GraphDef.FromString(graph_event.graph_def)  # TensorBoard's class
    graph = _accumulator(tmp_path).Graph()
    assert graph == parsed
    ops = {n.name: n.op for n in graph.node}
    assert ops == {"args_0": "Placeholder", "args_1": "Placeholder", "MatMul": "MatMul",
                   "Relu": "Relu"}
    matmul = next(n for n in graph.node if n.op == "MatMul")
    assert list(matmul.input) == ["args_0", "args_1"]
    assert matmul.attr["T"].type == 1  # DT_FLOAT
    assert matmul.attr["transpose_a"].b is False
    assert [d.size for d in matmul.attr["_output_shapes"].list.shape[0].dim] == [2, 4]
    placeholder = next(n for n in graph.node if n.name == "args_0")
    assert [d.size for d in placeholder.attr["shape"].shape.dim] == [2, 3]
    _check_wiring(graph)


def test_graph_of_variables_constants_and_multi_output_ops():
    from tensorlite.summary.graph_def import graph_def
    v = tf.Variable([1.0, 2.0], name="scale")

    @tf.function
    def f(x):
        y = x * v + tf.constant([3.0, 4.0])
        v.assign_add([1.0, 1.0])
        a, b = tf.split(tf.reshape(y, [2, 1]), 2)
        return a + b * v

    graph = _graph_pb2().GraphDef.FromString(
        graph_def(f.get_concrete_function(tf.ones([2])).graph).SerializeToString())
    nodes = {n.name: n for n in graph.node}
    handle = nodes["scale"]
    assert handle.op == "VarHandleOp" and handle.attr["shared_name"].s == b"scale"
    assert [d.size for d in handle.attr["shape"].shape.dim] == [2]
    reads = [n for n in graph.node if n.op == "ReadVariableOp"]
    assert len(reads) == 2 and all(n.input[0] == "scale" for n in reads)
    (assign,) = [n for n in graph.node if n.op == "AssignAddVariableOp"]
    assert assign.input[0] == "scale"
    assert f"^{assign.name}" in reads[1].input and len(reads[0].input) == 1  # read after write
    consts = [n for n in graph.node if n.op == "Const"]
    assert any(np.frombuffer(n.attr["value"].tensor.tensor_content, np.float32).tolist()
               == [3.0, 4.0] for n in consts)
    split = next(n for n in graph.node if n.op == "SplitV")
    add = [n for n in graph.node if n.op == "AddV2"][-1]
    assert add.input[0] == split.name and any(i == f"{split.name}:1" for i in
                                              nodes[add.input[1]].input)
    assert len({n.name for n in graph.node}) == len(graph.node)
    _check_wiring(graph)


def test_graph_needs_a_writer_recording_and_a_graph(tmp_path):
    g = _dense_relu.get_concrete_function(tf.ones([1, 1]), tf.ones([1, 1])).graph
    assert summary.graph(g) is False  # no default writer
    writer = summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with summary.record_if(False):
            assert summary.graph(g) is False
        with pytest.raises(ValueError, match="not tf.Graph or tf.compat.v1.GraphDef"):
            summary.graph("graph")
        with pytest.raises(ValueError, match="get_concrete_function"):
            summary.graph(_dense_relu)
        with pytest.raises(ValueError, match="graph context"):
            tf.function(lambda: summary.graph(g))()
        graph_pb2 = _graph_pb2()
        assert summary.graph(graph_pb2.GraphDef(node=[{"name": "a", "op": "NoOp"}]))
    writer.close()
    assert [n.name for n in _accumulator(tmp_path).Graph().node] == ["a"]


def test_trace_export_writes_the_traced_function_graphs(tmp_path):
    from tensorlite.framework import dispatch

    @tf.function
    def fresh(x):
        return tf.exp(x) + 1.0

    observers = list(dispatch.OBSERVERS)
    writer = summary.create_file_writer(str(tmp_path))
    summary.trace_on(graph=True, profiler=False)
    fresh(tf.ones([3]))  # traced while the trace is on
    fresh(tf.ones([3]))  # and run from the cache
    with writer.as_default():
        summary.trace_export("fresh_trace", step=3)
    writer.close()
    assert dispatch.OBSERVERS == observers
    acc = _accumulator(tmp_path)
    assert acc.SummaryMetadata("fresh_trace").plugin_data.plugin_name == \
        "graph_run_metadata_graph"
    step, meta = _run_metadata(acc, "fresh_trace")
    assert step == 3 and len(meta.function_graphs) == 1
    graph = meta.function_graphs[0].pre_optimization_graph
    assert [n.op for n in graph.node] == ["Placeholder", "Const", "Exp", "AddV2"]
    graph_util = pytest.importorskip("tensorboard.plugins.graph.graph_util")
    merged = graph_util.merge_graph_defs([g.pre_optimization_graph
                                          for g in meta.function_graphs])
    assert len(merged.node) == 4  # what the Graphs dashboard draws for the tag


def test_trace_collects_calls_of_functions_traced_before(tmp_path):
    x, w = tf.ones([2, 2]), tf.ones([2, 2])
    _dense_relu(x, w)  # traced before the trace starts
    _dense_relu(x, w)  # and compiled: the first call ran as the trace
    unused = tf.function(lambda t: t * 2.0)
    summary.trace_on()
    unused.get_concrete_function(tf.ones([1]))  # a trace that is no call: not collected
    _dense_relu(x, w)
    writer = summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=5):
        summary.trace_export("calls")
    writer.close()
    step, meta = _run_metadata(_accumulator(tmp_path), "calls")
    assert step == 5 and len(meta.function_graphs) == 1
    graphs = meta.function_graphs[0]
    assert [n.op for n in graphs.pre_optimization_graph.node] == \
        ["Placeholder", "Placeholder", "MatMul", "Relu"]
    assert len(graphs.post_optimization_graph.node) >= 3  # the graph the runner compiled


def test_trace_state_errors_and_trace_off(tmp_path):
    from tensorlite.framework import dispatch
    observers = list(dispatch.OBSERVERS)
    with pytest.raises(ValueError, match="Must enable trace before export"):
        summary.trace_export("x", step=0)
    summary.trace_on()
    with pytest.warns(UserWarning, match="Trace already enabled"):
        summary.trace_on()
    summary.trace_off()
    assert dispatch.OBSERVERS == observers
    summary.trace_off()  # already off: nothing to do
    with pytest.raises(ValueError, match="Must enable trace before export"):
        summary.trace_export("x", step=0)
    summary.trace_on()
    writer = summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            summary.trace_export("no_step")
    assert dispatch.OBSERVERS == observers  # the failed export still ended the trace
    summary.trace_on()
    with pytest.warns(UserWarning, match="inside a tf.function"):
        tf.function(lambda: summary.trace_export("inner", step=0))()
    summary.trace_export("no_writer", step=0)  # no default writer: nothing written, no error
    with pytest.warns(UserWarning, match="Cannot enable trace inside a tf.function"):
        tf.function(lambda: summary.trace_on())()
    summary.trace_on(graph=False)  # nothing to collect: no observer slows the ops
    assert dispatch.OBSERVERS == observers
    _dense_relu(tf.ones([1, 1]), tf.ones([1, 1]))
    with writer.as_default():
        summary.trace_export("nothing", step=0)
    writer.close()
    acc = _accumulator(tmp_path)
    assert "no_step" not in acc.Tags()["tensors"]
    assert acc.SummaryMetadata("nothing").plugin_data.plugin_name == "graph_run_metadata"
    assert len(_run_metadata(acc, "nothing")[1].function_graphs) == 0


def test_trace_with_profiler_saves_the_profile(tmp_path):
    from tensorlite import profiler
    logdir = tmp_path / "logs"
    writer = summary.create_file_writer(str(logdir))
    summary.trace_on(graph=True, profiler=True)
    _dense_relu(tf.ones([2, 2]), tf.ones([2, 2]))
    with writer.as_default():
        summary.trace_export("profiled", step=1)  # profiler_outdir: the writer's logdir
    writer.close()
    runs = os.listdir(logdir / "plugins" / "profile")
    assert len(runs) == 1
    assert "trace.json" in os.listdir(logdir / "plugins" / "profile" / runs[0])
    acc = _accumulator(logdir)
    assert acc.SummaryMetadata("profiled").plugin_data.plugin_name == "graph_run_metadata"
    assert len(_run_metadata(acc, "profiled")[1].function_graphs) == 1
    profiler.experimental.start(str(tmp_path / "again"))  # the trace's profiler is stopped
    profiler.experimental.stop(save=False)
    summary.trace_on(profiler=True)
    summary.trace_off()  # drops the profile
    profiler.experimental.start(str(tmp_path / "again"))
    profiler.experimental.stop(save=False)
    summary.trace_on(profiler=True)
    with pytest.raises(ValueError, match="profiler_outdir"):
        summary.trace_export("nowhere", step=0)  # no writer and no profiler_outdir
    summary.trace_off()
    profiler.experimental.start(str(tmp_path / "again"))
    profiler.experimental.stop(save=False)


def test_graph_of_a_v1_graph_keeps_placeholder_names_and_shapes(tmp_path):
    v1 = tf.compat.v1
    g = v1.Graph()
    with g.as_default():
        p = v1.placeholder(tf.float32, [None, 2], name="features")
        tf.nn.relu(p * 2.0)
    writer = summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        assert summary.graph(g)
    writer.close()
    graph = _accumulator(tmp_path).Graph()
    assert [(n.name, n.op) for n in graph.node][0] == ("features", "Placeholder")
    assert [d.size for d in graph.node[0].attr["shape"].shape.dim] == [-1, 2]
    assert [n.op for n in graph.node][-2:] == ["Mul", "Relu"]


def test_graph_def_attributes_control_flow_and_large_constants(monkeypatch):
    from tensorlite.summary import graph_def as gd
    monkeypatch.setattr(gd, "MAX_CONST_BYTES", 64)
    big = tf.constant(np.arange(100, dtype=np.float32))

    @tf.function
    def f(x, n):
        x = tf.ensure_shape(x, [None, 100]) + big
        x = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)
        _, x = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 0.5), [0, x])
        return tf.cast(x, tf.float64)

    graph = _graph_pb2().GraphDef.FromString(
        gd.graph_def(f.get_concrete_function(tf.ones([1, 100]), tf.constant(2)).graph)
        .SerializeToString())
    nodes = {n.op: n for n in graph.node}
    ensure = nodes["EnsureShape"].attr["shape"].shape
    assert [d.size for d in ensure.dim] == [-1, 100]
    assert [f.name for f in nodes["StatelessIf"].attr["branches"].list.func] == \
        ["cond_true", "cond_false"]
    assert nodes["StatelessWhile"].attr["body"].func.name == "while_body"
    assert nodes["Cast"].attr["DstT"].type == 2  # DT_DOUBLE, as TensorFlow's Cast names it
    (large,) = [n for n in graph.node if n.op == "Const" and
                [d.size for d in n.attr["value"].tensor.tensor_shape.dim] == [100]]
    assert large.attr["value"].tensor.tensor_content == b""  # over MAX_CONST_BYTES
    assert large.attr["value"].tensor.dtype == 1
    _check_wiring(graph)


def test_an_op_held_in_an_attribute_is_written_by_its_name():
    """The overlap pass's `_AsyncStart` holds the op it runs in its `op` attribute:
    TensorBoard shows that op's name (it showed the class name, "Op")."""
    from tensorlite.graph.passes.overlap_outputs import ASYNC_START
    from tensorlite.ops.math_ops import MATMUL
    from tensorlite.summary import graph_def as gd
    assert gd.attr_value(MATMUL).s == b"BatchMatMulV2"
    assert gd.attr_value(ASYNC_START).s == b"_AsyncStart"
    assert gd.attr_value(_graph_pb2).s == b"_graph_pb2"  # a plain function: its qualname


def test_keras_model_summary_writes_to_json(tmp_path):
    from tensorlite.summary.graph_summaries import keras_model

    class Model:
        def __init__(self, fail):
            self.fail = fail

        def to_json(self):
            if self.fail:
                raise NotImplementedError("subclassed")
            return '{"class_name": "Sequential", "config": {"name": "m", "layers": []}}'

    writer = summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.warns(UserWarning, match="failed to serialize as JSON"):
            assert keras_model("bad", Model(True), step=0) is False
        assert keras_model("keras", Model(False), step=0) is True
    writer.close()
    acc = _accumulator(tmp_path)
    assert acc.SummaryMetadata("keras").plugin_data.plugin_name == "graph_keras_model"
    assert _values(acc, "keras")[0][1].item().startswith(b'{"class_name": "Sequential"')
    assert "bad" not in acc.Tags()["tensors"]


def test_graph_nodes_are_grouped_by_layer_name_scope():
    from tensorlite.summary.graph_def import graph_def
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", name="hidden"),
                                 tf.keras.layers.Dense(1, name="out")])
    f = tf.function(lambda x: model(x))
    names = [n.name for n in graph_def(f.get_concrete_function(tf.ones([2, 3])).graph).node]
    assert {"hidden/MatMul", "hidden/Relu", "out/MatMul", "out/bias/ReadVariableOp"} <= \
        set(names)
