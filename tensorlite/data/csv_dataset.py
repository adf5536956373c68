"""CSV sources: `tf.data.experimental.CsvDataset` (one tuple of typed scalars per line)
and `make_csv_dataset` (batches of (features dict, label), column types inferred).

Lines are parsed by the same rules as `tf.io.decode_csv` (ops/csv_ops.py).

Example:
    >>> ds = tf.data.experimental.CsvDataset("data.csv", [tf.float32, [0]], header=True)
    >>> ds = tf.data.experimental.make_csv_dataset("data.csv", batch_size=32,
    ...                                             label_name="target", num_epochs=1)
"""
import collections
import csv

import numpy as np

from tensorlite.data.dataset import DatasetV2
from tensorlite.data.readers import _LineIterator, filenames_list, list_files, open_compressed
from tensorlite.framework import dtypes, errors
from tensorlite.framework.tensor import wrap
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.ops.csv_ops import column_spec, parse_row

__all__ = ["CsvDataset", "make_csv_dataset"]


class CsvDataset(DatasetV2):
    """`tf.data.experimental.CsvDataset`: each line of each file (after a header line when
    header=True) as a tuple with one scalar per selected column."""

    _name = "Csv"

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None, exclude_cols=None, name=None):
        self._files = filenames_list(filenames, "CsvDataset")
        self._specs = tuple(column_spec(d) for d in record_defaults)
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("Either select_cols or exclude_cols should be empty")
        if exclude_cols is not None:
            n = len(self._specs) + len(exclude_cols)
            select_cols = [i for i in range(n) if i not in set(exclude_cols)]
        self._select = None if select_cols is None else tuple(int(c) for c in select_cols)
        if self._select is not None and len(self._select) != len(self._specs):
            raise ValueError(f"Length of select_cols ({len(self._select)}) and record_defaults "
                             f"({len(self._specs)}) do not match.")
        self._compression = compression_type
        self._header = header
        self._format = (field_delim, use_quote_delim, na_value)

    def _compute_spec(self):
        return tuple(TensorSpec([], d) for d, _ in self._specs)

    def _describe(self):
        return f"{len(self._files)} files, {len(self._specs)} columns"

    def _files_for_fingerprint(self):
        return self._files

    def _label(self):
        return f"Csv({len(self._files)} files)"

    def _make_iterator(self, ctx):
        return _CsvIterator(self)


class _CsvIterator(_LineIterator):
    def __init__(self, ds):
        super().__init__(ds._files, ds._compression)
        self._ds = ds

    def next(self):
        ds = self._ds
        while True:
            line = _LineIterator.next(self)
            if ds._header and self._line == 1:
                continue
            raw = line._value[()]
            where = f"{ds._files[self._k]}:{self._line}"
            try:
                values = parse_row(raw, ds._specs, *ds._format, select_cols=ds._select)
            except errors.InvalidArgumentError as e:
                raise type(e)(None, None, f"{e.message} (at {where})") from None
            return tuple(wrap(np.asarray(v, dtype=object if d.is_string else d.as_numpy_dtype))
                         for v, (d, _) in zip(values, ds._specs))

    def restore(self, state):
        self.close()
        self._k, lines = state
        self._line = 0
        for _ in range(lines):  # raw lines (the header included)
            _LineIterator.next(self)


def _infer_types(files, delim, header, column_names, n_rows, compression):
    """Column names (from the header unless given) and per-column defaults inferred from
    the first rows as TF does: int32 if every value is an integer, float32 if a number,
    else string."""
    with open_compressed(files[0], compression) as f:
        text = f.read().decode("utf-8").splitlines()
    rows = list(csv.reader(text, delimiter=delim))
    names = list(column_names) if column_names is not None else None
    if header:
        head, rows = rows[0], rows[1:]
        names = names or head
    if names is None:
        raise ValueError("make_csv_dataset: the files have no header (header=False), so "
                         "pass `column_names`")
    kinds = []
    for j in range(len(names)):
        values = [r[j] for r in rows[:n_rows] if j < len(r) and r[j] != ""]
        kinds.append([0] if all(_is_int(v) for v in values) else
                     [0.0] if all(_is_float(v) for v in values) else [""])
    return names, kinds


def _is_int(v):
    try:
        int(v)
        return True
    except ValueError:
        return False


def _is_float(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None, ignore_errors=False,
                     encoding="utf-8"):
    """`tf.data.experimental.make_csv_dataset`: batches of (OrderedDict of columns, label)
    (just the dict without `label_name`); repeats forever unless num_epochs is given."""
    files = filenames_list(list_files(file_pattern, shuffle=False), "make_csv_dataset")
    names, inferred = _infer_types(files, field_delim, header, column_names,
                                   num_rows_for_inference, compression_type)
    defaults = list(column_defaults) if column_defaults is not None else inferred
    select = None
    if select_columns is not None:
        select = sorted(names.index(c) if isinstance(c, str) else int(c)
                        for c in select_columns)
        defaults = [defaults[i] for i in select] if column_defaults is None else defaults
        names = [names[i] for i in select]
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` provided must be one of the columns: {names}. "
                         f"Received: {label_name}")
    ds = CsvDataset(files, defaults, compression_type=compression_type, header=header,
                    field_delim=field_delim, use_quote_delim=use_quote_delim,
                    na_value=na_value, select_cols=select)
    if ignore_errors:  # as TF: a malformed record is dropped, the file read on
        ds = ds.ignore_errors()
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)

    def to_features(*columns):
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    ds = ds.batch(batch_size).map(to_features)
    return ds.prefetch(prefetch_buffer_size or 1)
