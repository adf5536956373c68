"""Evaluation results as event files in model_dir/eval*, written by Estimator.evaluate and
read back by the early-stopping hooks, as TensorFlow's Estimator does: one Event per
evaluation, at its global step, with each scalar metric as a `simple_value` summary.

Example:
    >>> write("/tmp/m/eval", 100, {"loss": 0.5, "global_step": 100})
    >>> read("/tmp/m/eval")
    {100: {'loss': 0.5}}
"""
import glob
import os

import numpy as np



def write(eval_dir, step, metrics):
    """Appends one Event at `step` holding the scalar entries of `metrics`."""
    from tensorlite.summary.event_writer import (Event, EventFileWriter,  # noqa: PLC0415
                                                 Summary)
    summary = Summary(value=[Summary.Value(tag=k, simple_value=float(v))
                             for k, v in metrics.items()
                             if k != "global_step" and np.ndim(v) == 0])
    writer = EventFileWriter(eval_dir)
    try:
        writer.add_event(Event(step=int(step), summary=summary))
    finally:
        writer.close()


def read(eval_dir):
    """{global_step: {tag: value}} of every evaluation in eval_dir's event files (a later
    file's value for a step wins, as TF's read_eval_metrics)."""
    from tensorlite.data.tfrecord import tf_record_iterator  # noqa: PLC0415 - tf.data
    from tensorlite.summary.event_writer import Event  # noqa: PLC0415 - protobuf
    out = {}
    for path in sorted(glob.glob(os.path.join(glob.escape(eval_dir), "events.out.tfevents.*")),
                       key=os.path.getmtime):
        for record in tf_record_iterator(path):
            event = Event.FromString(record)
            if event.WhichOneof("what") != "summary":
                continue
            values = {v.tag: v.simple_value for v in event.summary.value
                      if v.WhichOneof("value") == "simple_value"}
            if values:
                out.setdefault(event.step, {}).update(values)
    return dict(sorted(out.items()))
