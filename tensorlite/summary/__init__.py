"""`tf.summary`: TensorBoard summaries (scalars, histograms, images, text, graphs) in event
files.

Needs the optional `protobuf` package (as `tf.train.Example` does).

Example:
    >>> writer = tf.summary.create_file_writer("/tmp/logs")
    >>> with writer.as_default():
    ...     for step in range(3):
    ...         tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
"""
import types as _types

from tensorlite.summary.ops import (SummaryWriter, create_file_writer, create_noop_writer,
                                    flush, histogram, image, record_if, scalar,
                                    should_record_summaries, text, write)
from tensorlite.summary import ops as _ops
from tensorlite.summary.graph_summaries import graph, trace_export, trace_off, trace_on

experimental = _types.SimpleNamespace(get_step=_ops.get_step, set_step=_ops.set_step)

__all__ = ["SummaryWriter", "create_file_writer", "create_noop_writer", "flush", "graph",
           "histogram", "image", "record_if", "scalar", "should_record_summaries", "text",
           "trace_export", "trace_off", "trace_on", "write", "experimental"]
