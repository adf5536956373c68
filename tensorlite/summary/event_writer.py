"""TensorBoard event files: the `Event` / `Summary` messages and the file that holds them.

An event file is a TFRecord file (see `tensorlite.data.tfrecord` for the framing) whose
records are serialized `tensorflow.Event` messages; the first one carries
`file_version: "brain.Event:2"`. The messages are built at import from descriptors written
here with the field names and numbers of TensorFlow's `event.proto` and `summary.proto`,
in the same private descriptor pool as `tensorlite.protos.example` (whose `TensorProto`
they reuse), so no protoc is needed and TensorBoard parses the bytes with its own classes.

Example:
    >>> w = EventFileWriter("/tmp/logs")
    >>> w.add_event(Event(step=1, summary=Summary(value=[Summary.Value(tag="x")])))
    >>> w.close()
"""
import itertools
import os
import socket
import time

import numpy as np

from tensorlite.data.tfrecord import TFRecordWriter
from tensorlite.framework import errors
from tensorlite.protos.example import (DATA_TYPES, POOL, TensorProto, _F, _field, _message,
                                      message_class)
from google.protobuf import descriptor_pb2

FILE_VERSION = "brain.Event:2"
DATA_CLASS = {"DATA_CLASS_UNKNOWN": 0, "DATA_CLASS_SCALAR": 1, "DATA_CLASS_TENSOR": 2,
              "DATA_CLASS_BLOB_SEQUENCE": 3}


def _summary_file():
    """tensorflow/core/framework/summary.proto"""
    file = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/framework/summary.proto", package="tensorflow", syntax="proto3",
        dependency=["tensorflow/core/framework/tensor.proto"])
    enum = file.enum_type.add(name="DataClass")
    for name, number in DATA_CLASS.items():
        enum.value.add(name=name, number=number)
    histo = _message(file, "HistogramProto")
    for i, name in enumerate(("min", "max", "num", "sum", "sum_squares"), 1):
        _field(histo, name, i, _F.TYPE_DOUBLE)
    _field(histo, "bucket_limit", 6, _F.TYPE_DOUBLE, _F.LABEL_REPEATED, packed=True)
    _field(histo, "bucket", 7, _F.TYPE_DOUBLE, _F.LABEL_REPEATED, packed=True)
    meta = _message(file, "SummaryMetadata")
    plugin = meta.nested_type.add(name="PluginData")
    _field(plugin, "plugin_name", 1, _F.TYPE_STRING)
    _field(plugin, "content", 2, _F.TYPE_BYTES)
    _field(meta, "plugin_data", 1, _F.TYPE_MESSAGE, type_name="SummaryMetadata.PluginData")
    _field(meta, "display_name", 2, _F.TYPE_STRING)
    _field(meta, "summary_description", 3, _F.TYPE_STRING)
    _field(meta, "data_class", 4, _F.TYPE_ENUM, type_name="DataClass")
    summary = _message(file, "Summary")
    image = summary.nested_type.add(name="Image")
    for i, name in enumerate(("height", "width", "colorspace"), 1):
        _field(image, name, i, _F.TYPE_INT32)
    _field(image, "encoded_image_string", 4, _F.TYPE_BYTES)
    value = summary.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    _field(value, "node_name", 7, _F.TYPE_STRING)
    _field(value, "tag", 1, _F.TYPE_STRING)
    _field(value, "metadata", 9, _F.TYPE_MESSAGE, type_name="SummaryMetadata")
    _field(value, "simple_value", 2, _F.TYPE_FLOAT, oneof=0)
    _field(value, "obsolete_old_style_histogram", 3, _F.TYPE_BYTES, oneof=0)
    _field(value, "image", 4, _F.TYPE_MESSAGE, type_name="Summary.Image", oneof=0)
    _field(value, "histo", 5, _F.TYPE_MESSAGE, type_name="HistogramProto", oneof=0)
    _field(value, "tensor", 8, _F.TYPE_MESSAGE, type_name="TensorProto", oneof=0)
    _field(summary, "value", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="Summary.Value")
    return file


def _event_file():
    """tensorflow/core/util/event.proto (the fields a summary writer uses)."""
    file = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/util/event.proto", package="tensorflow", syntax="proto3",
        dependency=["tensorflow/core/framework/summary.proto"])
    event = _message(file, "Event")
    event.oneof_decl.add(name="what")
    _field(event, "wall_time", 1, _F.TYPE_DOUBLE)
    _field(event, "step", 2, _F.TYPE_INT64)
    _field(event, "file_version", 3, _F.TYPE_STRING, oneof=0)
    _field(event, "graph_def", 4, _F.TYPE_BYTES, oneof=0)
    _field(event, "summary", 5, _F.TYPE_MESSAGE, type_name="Summary", oneof=0)
    _field(event, "meta_graph_def", 9, _F.TYPE_BYTES, oneof=0)
    return file




try:  # a second import of this module (reload) finds the files already in the pool
    POOL.FindFileByName("tensorflow/core/util/event.proto")
except KeyError:
    POOL.Add(_summary_file())
    POOL.Add(_event_file())

HistogramProto = message_class("HistogramProto")
SummaryMetadata = message_class("SummaryMetadata")
Summary = message_class("Summary")
Event = message_class("Event")

_NUMERIC_DT = {np.dtype(np.float16): "DT_HALF", np.dtype(np.float32): "DT_FLOAT",
               np.dtype(np.float64): "DT_DOUBLE", np.dtype(np.int8): "DT_INT8",
               np.dtype(np.int16): "DT_INT16", np.dtype(np.int32): "DT_INT32",
               np.dtype(np.int64): "DT_INT64", np.dtype(np.uint8): "DT_UINT8",
               np.dtype(np.uint16): "DT_UINT16", np.dtype(np.uint32): "DT_UINT32",
               np.dtype(np.uint64): "DT_UINT64", np.dtype(np.bool_): "DT_BOOL",
               np.dtype(np.complex64): "DT_COMPLEX64", np.dtype(np.complex128): "DT_COMPLEX128"}


def tensor_proto(array):
    """A TensorProto of a NumPy array (numbers as little-endian tensor_content; an object
    array of bytes as string_val), as TensorFlow's make_tensor_proto writes it."""
    array = np.asarray(array)
    proto = TensorProto()
    for size in array.shape:
        proto.tensor_shape.dim.add(size=int(size))
    if array.dtype == object or array.dtype.kind in "SU":
        proto.dtype = DATA_TYPES["DT_STRING"]
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode("utf-8")
                                for v in array.reshape(-1).tolist())
        return proto
    name = _NUMERIC_DT.get(array.dtype)
    if name is None:
        raise TypeError(f"tf.summary: cannot write a tensor of NumPy dtype {array.dtype}")
    proto.dtype = DATA_TYPES[name]
    proto.tensor_content = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return proto


_uid = itertools.count()


def _make_logdir(logdir):
    """Creates `logdir` (and parents) with TensorFlow's error classes for failures."""
    try:
        os.makedirs(logdir, exist_ok=True)
    except PermissionError:
        raise errors.PermissionDeniedError(
            None, None, f"Could not create summary log directory {logdir}; Permission "
            f"denied: choose a logdir you can write to") from None
    except (FileExistsError, NotADirectoryError):
        raise errors.FailedPreconditionError(
            None, None, f"Could not create summary log directory {logdir}: a part of the "
            f"path is a file, not a directory") from None
    except OSError as e:
        raise errors.UnknownError(None, None, f"Could not create summary log directory "
                                  f"{logdir}: {e}") from None
    if not os.access(logdir, os.W_OK | os.X_OK):
        raise errors.PermissionDeniedError(None, None, f"Summary log directory {logdir} is not "
                                           f"writable; Permission denied")


class EventFileWriter:
    """Appends Event records to a new event file in `logdir`, flushing every `max_queue`
    events or `flush_millis` milliseconds (checked when an event is added)."""

    def __init__(self, logdir, max_queue=10, flush_millis=120000, filename_suffix=""):
        logdir = os.fsdecode(logdir) if isinstance(logdir, bytes) else os.fspath(logdir)
        _make_logdir(logdir)
        # TF 2 names files <prefix>.<time>.<host>.<pid>.<uid>.v2 so writers never collide.
        name = (f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}."
                f"{os.getpid()}.{next(_uid)}.v2{filename_suffix or ''}")
        self.path = os.path.join(logdir, name)
        try:
            self._records = TFRecordWriter(self.path)
        except errors.OpError as e:
            raise type(e)(None, None, f"Could not create event file in {logdir}: "
                          f"{e.message}") from None
        self._max_queue = max(int(max_queue), 1)
        self._flush_seconds = flush_millis / 1000.0
        self._pending = 0
        self._last_flush = time.monotonic()
        self.closed = False
        self.add_event(Event(wall_time=time.time(), file_version=FILE_VERSION))
        self.flush()

    def add_event(self, event):
        """Writes one Event message (wall_time is filled in when unset)."""
        if self.closed:
            raise errors.FailedPreconditionError(None, None, f"The event file {self.path} is "
                                                 f"closed; create a new writer")
        if not event.wall_time:
            event.wall_time = time.time()
        self._records.write(event.SerializeToString())
        self._pending += 1
        if (self._pending >= self._max_queue
                or time.monotonic() - self._last_flush >= self._flush_seconds):
            self.flush()

    def flush(self):
        """Pushes the written events to the file."""
        if not self.closed:
            self._records.flush()
            self._pending = 0
            self._last_flush = time.monotonic()

    def close(self):
        """Flushes and closes the file; later close() calls do nothing."""
        if not self.closed:
            self.closed = True
            self._records.close()


__all__ = ["Event", "Summary", "SummaryMetadata", "HistogramProto", "EventFileWriter",
           "tensor_proto", "FILE_VERSION", "DATA_CLASS"]
