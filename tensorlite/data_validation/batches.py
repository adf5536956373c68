"""Record batches: the unit the Beam pipelines of data_validation, transform and
model_analysis pass between steps, and the readers that make them.

A batch is `{feature name: Column}`; a Column holds one feature of `num_rows` examples as its
present values flattened (`values`, a NumPy array: int64, float64 or object of `str`), the
number of values of each example where present (`lengths`) and the number of examples
where it is missing. CSV and DataFrame columns have one value per present example;
tf.train.Example features may have any number.

Large CSV files are read as byte ranges (`csv_ranges`), so that a runner with several
workers reads them in parallel: a range owns the lines that start inside it.
"""
import csv
import dataclasses
import io
import os

import numpy as np

from tensorlite.framework import errors

KINDS = ("int", "float", "string")
RANGE_BYTES = 4 << 20


@dataclasses.dataclass
class Column:
    """One feature of a batch (see the module docstring)."""
    kind: str
    values: np.ndarray
    lengths: np.ndarray
    num_missing: int


def column_from_array(array):
    """A Column from a 1-D NumPy/pandas array with None/NaN/NA for missing values."""
    import pandas as pd  # noqa: PLC0415 - pandas is the CSV reader's dependency
    series = pd.Series(array)
    present = series.notna().to_numpy()
    kept = series[present]
    if pd.api.types.is_bool_dtype(series.dtype):
        kind, values = "int", kept.to_numpy(dtype=np.int64)
    elif pd.api.types.is_integer_dtype(series.dtype):
        kind, values = "int", kept.to_numpy(dtype=np.int64)
    elif pd.api.types.is_float_dtype(series.dtype):
        kind, values = "float", kept.to_numpy(dtype=np.float64)
    else:
        kind = "string"
        values = kept.to_numpy(dtype=object)
        if not all(isinstance(v, str) for v in values[:1]) or \
                not pd.api.types.is_string_dtype(series.dtype):
            values = np.array([v.decode() if isinstance(v, bytes) else str(v)
                               for v in values], dtype=object)
    n = int(present.sum())
    return Column(kind, values, np.ones(n, np.int64), int(len(series) - n))


def batch_from_dataframe(df):
    """A batch from a pandas DataFrame (one value per cell)."""
    return {str(name): column_from_array(df[name].to_numpy() if df[name].dtype == object
                                         else df[name].array) for name in df.columns}


def csv_header(path, delimiter=","):
    """The column names of a CSV file's first line."""
    with open(path, newline="") as f:
        return next(csv.reader(f, delimiter=delimiter))


def csv_ranges(paths, range_bytes=None):
    """(path, start, end) byte ranges covering the files, about range_bytes each."""
    range_bytes = range_bytes or RANGE_BYTES
    ranges = []
    for path in paths:
        if not os.path.exists(path):
            raise errors.NotFoundError(None, None, f"CSV file {path!r} does not exist")
        size = os.path.getsize(path)
        starts = list(range(0, size, range_bytes)) or [0]
        ranges += [(path, s, min(s + range_bytes, size)) for s in starts]
    return ranges


def _owned_bytes(f, start, end):
    """The bytes of the lines that start in [start, end), skipping the header line
    (start == -1: the file's first range, which has no header line)."""
    if start < 0:
        f.seek(0)
    elif start == 0:
        f.readline()  # the header
    else:
        f.seek(start - 1)
        f.readline()  # a line that started before `start` belongs to the previous range
    first = f.tell()
    if first >= end:
        return b""
    data = f.read(end - first)
    if not data.endswith(b"\n"):
        data += f.readline()
    return data


def read_csv_frame(rng, column_names, delimiter=",", dtype=None, exact_types=True):
    """The pandas DataFrame of the lines a byte range owns, or None if it owns none.

    pandas' default column types parse fastest; a column they leave ambiguous (numbers with
    a missing value become float, booleans with one become objects) is parsed again with
    nullable types where `exact_types`, so an integer column with gaps stays integer."""
    path, start, end = rng
    with open(path, "rb") as f:
        data = _owned_bytes(f, start, end)
    if not data.strip():
        return None
    df = _parse_csv(data, rng, column_names, delimiter, dtype, None)
    if exact_types:
        ambiguous = [name for name in df.columns if _ambiguous(df[name])]
        if ambiguous:
            exact = _parse_csv(data, rng, column_names, delimiter, dtype, "numpy_nullable",
                               usecols=ambiguous)
            for name in ambiguous:
                df[name] = exact[name]
    return df


def _ambiguous(series):
    """Whether pandas' default parse may have lost a column's type (see read_csv_frame)."""
    import pandas as pd  # noqa: PLC0415
    return pd.api.types.is_object_dtype(series.dtype) or (
        pd.api.types.is_float_dtype(series.dtype) and bool(series.hasnans))


def _parse_csv(data, rng, column_names, delimiter, dtype, backend, usecols=None):
    import pandas as pd  # noqa: PLC0415
    if usecols is not None and isinstance(dtype, dict):
        dtype = {k: v for k, v in dtype.items() if k in usecols} or None
    kwargs = {"dtype_backend": backend} if backend else {}
    try:
        return pd.read_csv(io.BytesIO(data), header=None, names=column_names, sep=delimiter,
                           skip_blank_lines=True, dtype=dtype, usecols=usecols, **kwargs)
    except (ValueError, pd.errors.ParserError) as e:
        path, start, end = rng
        raise errors.InvalidArgumentError(
            None, None, f"CSV file {path!r} (bytes {start}-{end}) does not parse with the "
            f"columns {column_names}: {e}") from e


def read_csv_range(rng, column_names, delimiter=","):
    """The batch of the lines a byte range owns (a list with one batch, or none)."""
    df = read_csv_frame(rng, column_names, delimiter)
    return [] if df is None else [batch_from_dataframe(df)]


def utf8_bytes(series):
    """A string Series (no missing values) as an object array of UTF-8 bytes, as TF
    strings are. Strings pandas keeps in Arrow are cast there, with no Python per string."""
    try:
        import pyarrow as pa  # noqa: PLC0415 - pandas' string storage where installed
        arrow = pa.array(series.array)
        if pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type):
            return arrow.cast(pa.large_binary()).to_numpy(zero_copy_only=False)
    except (ImportError, TypeError, ValueError, NotImplementedError):
        pass
    return np.array([v.encode("utf-8") if isinstance(v, str) else bytes(v)
                     for v in series.tolist()], dtype=object)


def dataframe_chunks(df, rows=50_000):
    """The DataFrame cut into chunks of `rows` rows (the elements of a Beam PCollection)."""
    return [df.iloc[i:i + rows] for i in range(0, max(len(df), 1), rows)]


def batch_from_examples(serialized):
    """A batch from serialized tf.train.Example protos (features of any length)."""
    from tensorlite.train.example import Example  # noqa: PLC0415 - protobuf is optional
    rows = []
    for record in serialized:
        rows.append(Example.FromString(record).features.feature)
    names = sorted({name for feature in rows for name in feature})
    batch = {}
    for name in names:
        kinds, values, lengths, missing = set(), [], [], 0
        for feature in rows:
            if name not in feature:
                missing += 1
                continue
            which = feature[name].WhichOneof("kind")
            vals = list(getattr(feature[name], which).value) if which else []
            kinds.add({"int64_list": "int", "float_list": "float"}.get(which, "string"))
            values += vals
            lengths.append(len(vals))
        kind = "string" if "string" in kinds else ("float" if "float" in kinds else "int")
        if kind == "string":
            arr = np.array([v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                            for v in values], dtype=object)
        else:
            arr = np.asarray(values, dtype=np.int64 if kind == "int" else np.float64)
        batch[name] = Column(kind, arr, np.asarray(lengths, np.int64), missing)
    return batch


def read_tfrecord_file(path, compression_type=None, rows=20_000):
    """Batches of the tf.train.Example records of one TFRecord file."""
    from tensorlite.data.tfrecord import tf_record_iterator  # noqa: PLC0415
    records, out = [], []
    for record in tf_record_iterator(path, compression_type):
        records.append(record)
        if len(records) == rows:
            out.append(batch_from_examples(records))
            records = []
    if records or not out:
        out.append(batch_from_examples(records))
    return out
