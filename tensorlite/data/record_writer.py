"""`tf.data.experimental.TFRecordWriter`: writes a dataset of strings to one TFRecord file
(through tf.io.TFRecordWriter, so the file is the same a loop of `write` calls makes).

Example (the TF API doc's):
    >>> dataset = tf.data.Dataset.range(3).map(tf.io.serialize_tensor)
    >>> writer = tf.data.experimental.TFRecordWriter("/tmp/tensors.tfrecord")
    >>> writer.write(dataset)
"""
import os

from tensorlite.data.dataset import DatasetV2
from tensorlite.data.tfrecord import TFRecordWriter as _FileWriter
from tensorlite.data.tfrecord import compression_name
from tensorlite.framework import dtypes
from tensorlite.framework.tensor_spec import TensorSpec


class TFRecordWriter:
    """Writes every element of a dataset of scalar tf.string tensors, in order, as the
    records of `filename`; `compression_type` None/"" , "ZLIB" or "GZIP"."""

    def __init__(self, filename, compression_type=None):
        numpy = getattr(filename, "numpy", None)
        filename = numpy() if callable(numpy) else filename
        self._filename = os.fsdecode(filename) if isinstance(filename, bytes) else \
            os.fspath(filename)
        self._compression = compression_name(compression_type)

    def write(self, dataset):
        """Writes `dataset`'s records (a TypeError unless they are scalar tf.string)."""
        if not isinstance(dataset, DatasetV2):
            raise TypeError(f"TFRecordWriter.write: `dataset` must be a `tf.data.Dataset`, "
                            f"got {type(dataset).__name__}")
        spec = dataset.element_spec
        if not (isinstance(spec, TensorSpec) and spec.dtype == dtypes.string
                and spec.shape.rank == 0):
            raise TypeError(f"`dataset` must produce scalar `DT_STRING` tensors whereas it "
                            f"produces element_spec {spec}; map it to serialized strings "
                            f"first (e.g. tf.io.serialize_tensor)")
        with _FileWriter(self._filename, self._compression) as writer:
            for record in dataset:
                writer.write(record)
