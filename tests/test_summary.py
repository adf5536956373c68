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
