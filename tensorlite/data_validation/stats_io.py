"""Reading and writing statistics, schemas and anomalies in TFDV's file formats: protobuf
text (`write_stats_text`, `write_schema_text`, `write_anomalies_text`), a binary
DatasetFeatureStatisticsList (`write_stats_binary`, TFDV's load_stats_binary) and TFRecord
files of them (`write_stats_tfrecord`: what `generate_statistics_*(output_path=...)` and
TFX's StatisticsGen write, and what TFDV's load_statistics reads).
"""
import os

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from tensorlite.data_validation import metadata_protos as pb
from tensorlite.framework import errors


def _check_type(value, cls, what):
    if not isinstance(value, cls):
        raise TypeError(f"{what} must be a {cls.DESCRIPTOR.full_name}, got "
                        f"{type(value).__name__}")


def _write(path, data):
    path = os.fspath(path)
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def _read(path):
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise errors.NotFoundError(None, None, f"file {path!r} does not exist")
    with open(path, "rb") as f:
        return f.read()


def _parse_text(path, cls):
    try:
        return text_format.Parse(_read(path).decode("utf-8"), cls())
    except text_format.ParseError as e:
        raise errors.InvalidArgumentError(
            None, None, f"{path!r} is not a {cls.DESCRIPTOR.full_name} in protobuf text "
            f"format: {e}") from e


def write_stats_text(stats, output_path):
    """Writes a DatasetFeatureStatisticsList in protobuf text format."""
    _check_type(stats, pb.DatasetFeatureStatisticsList, "stats")
    _write(output_path, text_format.MessageToString(stats).encode())


def load_stats_text(input_path):
    """Reads a DatasetFeatureStatisticsList written by write_stats_text."""
    return _parse_text(input_path, pb.DatasetFeatureStatisticsList)


def write_stats_tfrecord(stats, output_path):
    """Writes a TFRecord file of one serialized DatasetFeatureStatisticsList (TFDV's
    output_path format, which its load_statistics reads)."""
    from tensorlite.data.tfrecord import TFRecordWriter  # noqa: PLC0415
    _check_type(stats, pb.DatasetFeatureStatisticsList, "stats")
    path = os.fspath(output_path)
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with TFRecordWriter(path) as writer:
        writer.write(stats.SerializeToString())


def write_stats_binary(stats, output_path):
    """Writes a serialized DatasetFeatureStatisticsList (TFDV's load_stats_binary reads it)."""
    _check_type(stats, pb.DatasetFeatureStatisticsList, "stats")
    _write(output_path, stats.SerializeToString())


def load_stats_binary(input_path):
    """Reads a serialized DatasetFeatureStatisticsList."""
    try:
        return pb.DatasetFeatureStatisticsList.FromString(_read(input_path))
    except DecodeError as e:
        raise errors.InvalidArgumentError(None, None, f"{input_path!r} is not a serialized "
                                          "DatasetFeatureStatisticsList") from e


def load_statistics(input_path):
    """Reads statistics from a TFRecord file of DatasetFeatureStatisticsList (merging its
    records' datasets), a binary one, or protobuf text."""
    from tensorlite.data.tfrecord import tf_record_iterator  # noqa: PLC0415
    try:
        records = list(tf_record_iterator(os.fspath(input_path)))
    except (errors.OpError, OSError, ValueError):
        records = None
    if records:
        out = pb.DatasetFeatureStatisticsList()
        for record in records:
            out.datasets.extend(pb.DatasetFeatureStatisticsList.FromString(record).datasets)
        return out
    try:
        return load_stats_binary(input_path)
    except errors.InvalidArgumentError:
        return load_stats_text(input_path)


def write_schema_text(schema, output_path):
    """Writes a Schema in protobuf text format (schema.pbtxt)."""
    _check_type(schema, pb.Schema, "schema")
    _write(output_path, text_format.MessageToString(schema).encode())


def load_schema_text(input_path):
    """Reads a Schema written in protobuf text format."""
    return _parse_text(input_path, pb.Schema)


def write_anomalies_text(anomalies, output_path):
    """Writes an Anomalies proto in protobuf text format."""
    _check_type(anomalies, pb.Anomalies, "anomalies")
    _write(output_path, text_format.MessageToString(anomalies).encode())


def load_anomalies_text(input_path):
    """Reads an Anomalies proto written in protobuf text format."""
    return _parse_text(input_path, pb.Anomalies)
