"""`tf.summary`: writes scalars, histograms, images and text for TensorBoard (TF 2 style).

Each summary is one `Summary.Value` holding a `TensorProto`, tagged with the plugin that
reads it (`metadata.plugin_data.plugin_name`), in one `Event` with the step.

Inside a `tf.function` a summary is one `WriteSummary` node (a Python callback, see
ops/script_ops.py) that writes on every call with that call's data and step, and returns a
bool tensor (True when written). As in TensorFlow, what is decided while tracing stays:
the default writer then is the one written to (none: the summary is a constant False), a
Python-bool `record_if` condition holds for every call, while a tensor or variable
condition (or a callable's tensor result) and a tensor or variable step are read on each
call. A writer's flush (leaving `as_default()`, `tf.summary.flush()`) inside the function is
a node too. tf.compat.v1 graph mode (outside tf.function) is not supported.

Example:
    >>> writer = tf.summary.create_file_writer("/tmp/logs")
    >>> with writer.as_default(step=0):
    ...     tf.summary.scalar("loss", 0.5)
    True
"""
import contextlib
import struct
import threading
import zlib

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.name_scope import current_scope
from tensorlite.framework.tensor import Tensor
from tensorlite.ops import script_ops
from tensorlite.summary.event_writer import (DATA_CLASS, Event, EventFileWriter, Summary,
                                             SummaryMetadata, tensor_proto)

_state = threading.local()


def _get(attr, default):
    return getattr(_state, attr, default)


# -- writers -------------------------------------------------------------------------------------
class SummaryWriter:
    """`tf.summary.SummaryWriter`: where summaries go; make it the default with as_default()."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self._events = EventFileWriter(logdir, 10 if max_queue is None else max_queue,
                                       120000 if flush_millis is None else flush_millis,
                                       filename_suffix or "")
        self.logdir = logdir
        self._closed = False

    def _check_open(self):
        if self._closed:
            raise RuntimeError("SummaryWriter is already closed")

    def set_as_default(self, step=None):
        """Makes this the default writer for summaries (and `step` the default step)."""
        self._check_open()
        _state.writer = self
        if step is not None:
            set_step(step)

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Context in which summaries go to this writer (and `step` is the default step);
        the writer is flushed on exit."""
        self._check_open()
        old_writer, old_step = _get("writer", None), _get("step", None)
        _state.writer = self
        if step is not None:
            set_step(step)
        try:
            yield self
        finally:
            _state.writer, _state.step = old_writer, old_step
            if not self._closed:
                self.flush()

    def init(self):
        """Kept for TF compatibility: the file is created with the writer."""

    def flush(self):
        """Writes buffered events to the event file (inside a tf.function: on every call)."""
        if _context() == "trace":
            script_ops.callback("FlushSummaryWriter", self._flush_now, ())
        else:
            self._flush_now()

    def _flush_now(self):
        if not self._closed:
            self._events.flush()

    def close(self):
        """Flushes and closes the writer; it cannot be used afterwards."""
        if not self._closed:
            self._closed = True
            self._events.close()
            if _get("writer", None) is self:
                _state.writer = None

    def write_event(self, event):
        self._check_open()
        self._events.add_event(event)

    @property
    def path(self):
        """The path of the event file (not a TF attribute; handy for tests)."""
        return self._events.path

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class _NoopSummaryWriter(SummaryWriter):
    """`tf.summary.create_noop_writer()`: a writer that drops everything."""

    def __init__(self):  # noqa: D107 - no file
        self._closed = False

    def set_as_default(self, step=None):
        pass

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Changes nothing, as TensorFlow's no-op writer: summaries keep their destination."""
        yield self

    def flush(self):
        pass

    def close(self):
        pass


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None, experimental_trackable=False):
    """`tf.summary.create_file_writer`: a SummaryWriter writing an event file in `logdir`."""
    if logdir is None:
        raise ValueError("logdir cannot be None")
    if isinstance(logdir, Tensor):
        logdir = logdir.numpy()
    if isinstance(logdir, bytes):
        logdir = logdir.decode()
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_noop_writer():
    """`tf.summary.create_noop_writer`: a writer that writes nothing."""
    return _NoopSummaryWriter()


def flush(writer=None, name=None):
    """`tf.summary.flush`: flushes `writer` (default: the default writer)."""
    writer = writer if writer is not None else _get("writer", None)
    if writer is not None:
        writer.flush()


# -- step and recording condition ----------------------------------------------------------------
def get_step():
    """`tf.summary.experimental.get_step`: the default step, or None."""
    return _get("step", None)


def set_step(step):
    """`tf.summary.experimental.set_step`: sets the default step (an int, tensor or Variable,
    read when each summary is written)."""
    _state.step = step


def _condition_value(condition):
    if callable(condition):
        condition = condition()
    if isinstance(condition, Tensor) or hasattr(condition, "numpy"):
        condition = condition.numpy()
    return bool(condition)


@contextlib.contextmanager
def record_if(condition):
    """`tf.summary.record_if`: summaries inside are written only while `condition` (a bool,
    a boolean tensor or a callable returning one, evaluated at each summary) holds."""
    old = _get("condition", True)
    _state.condition = condition
    try:
        yield
    finally:
        _state.condition = old


def should_record_summaries():
    """`tf.summary.should_record_summaries`: whether a summary written now would be recorded
    (inside a tf.function: a bool tensor, evaluated on each call)."""
    writer = _get("writer", None)
    if _context() == "trace":
        from tensorlite.ops.math_ops import cast  # noqa: PLC0415
        cond = _traced_condition() if writer is not None and not writer._closed else False
        return convert_to_tensor(cond) if isinstance(cond, bool) else \
            cast(cond, dtypes.bool)
    return writer is not None and not writer._closed and _condition_value(
        _get("condition", True))


def _context():
    """"trace" inside a tf.function being traced, "v1" in tf.compat.v1 graph mode, else
    "eager"."""
    from tensorlite.graph import context, tracing  # noqa: PLC0415 - upper layer
    if tracing.is_tracing():
        return "trace"
    return "eager" if context.executing_eagerly() else "v1"


def _traced_condition():
    """record_if's condition while tracing: a Python bool (fixed for every call) or a
    tensor read on each call (a variable's read, a callable's result)."""
    cond = _get("condition", True)
    if callable(cond):
        cond = cond()
    if getattr(cond, "_is_variable", False):
        cond = cond.read_value()
    if isinstance(cond, Tensor):
        return cond
    return bool(np.asarray(cond))


def _step_value(step):
    if step is None:
        step = get_step()
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument "
                         "or through tf.summary.experimental.set_step()")
    if hasattr(step, "numpy"):
        step = step.numpy()
    arr = np.asarray(step)
    if arr.shape != () or arr.dtype.kind not in "iub":
        raise ValueError(f"tf.summary: step must be a scalar integer, got {step!r}")
    return int(arr)


# -- writing -------------------------------------------------------------------------------------
def _metadata(plugin_name, description, data_class, content=b""):
    meta = SummaryMetadata(summary_description=description or "",
                           data_class=DATA_CLASS[data_class])
    meta.plugin_data.plugin_name = plugin_name
    meta.plugin_data.content = content
    return meta


def _emit(name, data, payload, step, metadata):
    """Writes one tensor summary if a writer is active and recording; returns whether it did.
    `payload(array)` makes the NumPy payload of `data` only when the summary is written.
    While a tf.function is traced: one WriteSummary node (see the module docstring)."""
    context = _context()
    if context == "trace":
        return _emit_in_graph(name, data, payload, step, metadata)
    if not should_record_summaries():
        return False
    if context == "v1":
        raise NotImplementedError(
            f"tf.summary ({name!r}): writing TF 2 summaries in tf.compat.v1 graph mode is "
            f"not supported by tensorlite; run eagerly, or call tf.summary inside a "
            f"tf.function")
    if not script_ops.effects_on():  # a replay (a py_function's gradient): written already
        return False
    step_value = _step_value(step)
    _write(_state.writer, current_scope() + name, payload(_numpy(data, "data")), step_value,
           metadata)
    return True


def _write(writer, tag, array, step_value, metadata):
    value = Summary.Value(tag=tag, metadata=metadata)
    value.tensor.CopyFrom(tensor_proto(array))
    writer.write_event(Event(step=step_value, summary=Summary(value=[value])))


def _emit_in_graph(name, data, payload, step, metadata):
    """The WriteSummary node: inputs data, step (and the record_if condition when it is a
    tensor); the writer, tag and metadata are fixed at trace time, as TF captures them."""
    writer = _get("writer", None)
    cond = _traced_condition() if writer is not None and not writer._closed else False
    if cond is False:
        return convert_to_tensor(False)
    step = get_step() if step is None else step
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument "
                         "or through tf.summary.experimental.set_step()")
    step_t = _as_tensor(step)
    if step_t.shape.rank != 0 or step_t.dtype.kind not in "iu":
        raise ValueError(f"tf.summary: step must be a scalar integer, got {step_t.dtype.name} "
                         f"with shape {step_t.shape}")
    tag = current_scope() + name

    def write_summary(array, step_array, *cond_array):
        if not script_ops.effects_on() or writer._closed:
            return False
        if cond_array and not bool(cond_array[0]):
            return False
        _write(writer, tag, payload(array), _step_value(step_array), metadata)
        return True
    write_summary.__qualname__ = f"write_summary[{tag}]"
    inputs = [_as_tensor(data), step_t] + ([] if cond is True else [cond])
    return script_ops.callback("WriteSummary", write_summary, inputs, (dtypes.bool,))[0]


def _as_tensor(x):
    if getattr(x, "_is_variable", False):
        return x.read_value()
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _numpy(data, what):
    if isinstance(data, np.ndarray):
        return data
    if hasattr(data, "numpy") and not isinstance(data, Tensor):  # a Variable
        return np.asarray(data.numpy())
    return np.asarray(convert_to_tensor(data).numpy())


def write(tag, tensor, step=None, metadata=None, name=None):
    """`tf.summary.write`: writes a tensor with optional SummaryMetadata (or its bytes)."""
    if isinstance(metadata, (bytes, bytearray)):
        metadata = SummaryMetadata.FromString(bytes(metadata))
    return _emit(tag, tensor, lambda arr: arr, step, metadata or SummaryMetadata())


def scalar(name, data, step=None, description=None):
    """`tf.summary.scalar`: writes a scalar (as float32) for TensorBoard's Scalars dashboard."""
    def payload(arr):
        if arr.shape != ():
            raise ValueError(f"tf.summary.scalar ({name!r}): expected a scalar, saw shape "
                             f"{arr.shape}")
        if arr.dtype == object or arr.dtype.kind not in "biuf":
            raise TypeError(f"tf.summary.scalar ({name!r}): data must be numeric, got dtype "
                            f"{arr.dtype}")
        return arr.astype(np.float32)
    return _emit(name, data, payload, step,
                 _metadata("scalars", description, "DATA_CLASS_SCALAR"))


def histogram_buckets(values, bucket_count=30):
    """Equal-width buckets over [min, max] as a float64 [k, 3] array of (left edge,
    right edge, count), the layout of TensorBoard's histograms plugin."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if bucket_count == 0:
        return np.zeros((0, 3))
    if values.size == 0:
        return np.zeros((bucket_count, 3))
    lo, hi = float(values.min()), float(values.max())
    if lo == hi:  # one value: every count goes to the last bucket, edges all equal
        edges = np.full(bucket_count + 1, lo)
        counts = np.zeros(bucket_count)
        counts[-1] = values.size
    else:
        width = (hi - lo) / bucket_count
        index = np.minimum(((values - lo) / width).astype(np.int64), bucket_count - 1)
        counts = np.bincount(index, minlength=bucket_count).astype(np.float64)
        edges = np.linspace(lo, hi, bucket_count + 1)
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def histogram(name, data, step=None, buckets=None, description=None):
    """`tf.summary.histogram`: writes the distribution of `data` in `buckets` (default 30)
    equal-width buckets for TensorBoard's Histograms dashboard."""
    bucket_count = 30 if buckets is None else int(buckets)
    if bucket_count < 0:
        raise ValueError(f"tf.summary.histogram ({name!r}): buckets must be >= 0, got "
                         f"{buckets}")

    def payload(arr):
        if arr.dtype == object or arr.dtype.kind not in "biuf":
            raise TypeError(f"tf.summary.histogram ({name!r}): data must be numeric, got "
                            f"dtype {arr.dtype}")
        if arr.size and not np.all(np.isfinite(arr)):
            raise errors.InvalidArgumentError(
                None, None, f"tf.summary.histogram ({name!r}): data contains NaN or Inf")
        return histogram_buckets(arr, bucket_count)
    return _emit(name, data, payload, step,
                 _metadata("histograms", description, "DATA_CLASS_TENSOR"))


# -- images --------------------------------------------------------------------------------------
_PNG_COLOR = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type (gray, gray+alpha, RGB, RGBA)


def _png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode_png(image):
    """PNG bytes of a uint8 [height, width, channels] array (1-4 channels, 8-bit)."""
    height, width, channels = image.shape
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # filter byte 0 per row
    rows[:, 1:] = image.reshape(height, width * channels)
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR[channels], 0, 0, 0)
    return b"".join((b"\x89PNG\r\n\x1a\n", _png_chunk(b"IHDR", header),
                     _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)),
                     _png_chunk(b"IEND", b"")))


def _as_uint8(images):
    if images.dtype == np.uint8:
        return images
    if images.dtype.kind == "f":  # TF's convert_image_dtype: [0, 1] floats, saturating
        return np.round(np.clip(images, 0.0, 1.0) * 255.0).astype(np.uint8)
    if images.dtype.kind in "iu":
        return np.clip(images, 0, 255).astype(np.uint8)
    raise TypeError(f"tf.summary.image: unsupported image dtype {images.dtype}")


def image(name, data, step=None, max_outputs=3, description=None):
    """`tf.summary.image`: writes up to `max_outputs` images of a [k, height, width, channels]
    tensor (floats in [0, 1] or uint8) as PNGs for TensorBoard's Images dashboard."""
    def payload(arr):
        if arr.ndim != 4 or arr.shape[-1] not in _PNG_COLOR:
            raise errors.InvalidArgumentError(
                None, None, f"tf.summary.image ({name!r}): data must have shape [k, h, w, c] "
                f"with c in 1..4, got shape {list(arr.shape)}")
        images = _as_uint8(arr[:max(int(max_outputs), 0)])
        _, height, width, _ = arr.shape
        out = np.empty(2 + len(images), dtype=object)
        out[0], out[1] = str(width).encode(), str(height).encode()
        out[2:] = [encode_png(img) for img in images]
        return out
    return _emit(name, data, payload, step,
                 _metadata("images", description, "DATA_CLASS_BLOB_SEQUENCE"))


def text(name, data, step=None, description=None):
    """`tf.summary.text`: writes a string tensor (Markdown) for TensorBoard's Text dashboard."""
    def payload(arr):
        if arr.dtype.kind == "U":
            arr = np.vectorize(lambda s: s.encode("utf-8"), otypes=[object])(arr)
        if arr.dtype != object and arr.dtype.kind != "S":
            raise TypeError(f"tf.summary.text ({name!r}): data must be a string tensor, got "
                            f"dtype {arr.dtype}")
        return arr
    return _emit(name, data, payload, step, _metadata("text", description, "DATA_CLASS_TENSOR"))

