"""`tf.data.experimental.SqlDataset`: the rows of an SQL query, one element per row.

As in TF, "sqlite" is the only driver. The database is opened read-only (an SQLite URI with
mode=ro), so a query can never change it, and a missing file is an error rather than a new
empty database. Each row becomes a tuple of scalars of `output_types` (a single dtype gives
scalar elements); the query runs when an iterator is made.

Example (the TF API doc's):
    >>> dataset = tf.data.experimental.SqlDataset("sqlite", "/foo/bar.sqlite3",
    ...                                           "SELECT name, age FROM people",
    ...                                           (tf.string, tf.int32))
"""
import os
import sqlite3
import urllib.parse

import numpy as np

from tensorlite.data.dataset import DatasetV2
from tensorlite.data.iterator import RawIterator
from tensorlite.framework import dtypes, errors, nest
from tensorlite.framework.tensor import wrap
from tensorlite.framework.tensor_spec import TensorSpec

_SUPPORTED = ("string", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "bool", "float64")


def _text(value, what):
    numpy = getattr(value, "numpy", None)
    value = numpy() if callable(numpy) else value
    if isinstance(value, bytes):
        value = value.decode()
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"SqlDataset: {what} must be a string, got {type(value).__name__}")
    return os.fspath(value)


class SqlDataset(DatasetV2):
    """Rows of `query` run on the SQLite database `data_source_name`."""

    _name = "Sql"

    def __init__(self, driver_name, data_source_name, query, output_types):
        driver = _text(driver_name, "driver_name")
        if driver != "sqlite":
            raise errors.InvalidArgumentError(
                None, None, f"The database type, {driver}, is not supported by SqlDataset. "
                f"The set of supported databases is: {{'sqlite'}}.")
        self._source = _text(data_source_name, "data_source_name")
        self._query = _text(query, "query")
        self._types = nest.map_structure(dtypes.as_dtype, output_types)
        for t in nest.flatten(self._types):
            if t.name not in _SUPPORTED:
                raise errors.InvalidArgumentError(
                    None, None, f"SqlDataset: output type {t.name} is not supported; use one "
                    f"of {', '.join(_SUPPORTED)}")

    def _compute_spec(self):
        return nest.map_structure(lambda t: TensorSpec([], t), self._types)

    def _describe(self):
        return f"{self._source}: {self._query}"

    def _files_for_fingerprint(self):
        return [self._source] if os.path.exists(self._source) else []

    def _make_iterator(self, ctx):
        return _SqlIterator(self)


def _connect(path):
    if not os.path.isfile(path):
        raise errors.NotFoundError(None, None, f"SqlDataset: the SQLite database {path!r} does "
                                   f"not exist")
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


def _column(value, dtype, index, query):
    if value is None:
        raise errors.InvalidArgumentError(
            None, None, f"SqlDataset: column {index} of a row of {query!r} is NULL; a tensor "
            f"has no NULL (filter it out or COALESCE it in the query)")
    if dtype == dtypes.string:
        out = np.empty((), dtype=object)
        out[()] = value.encode() if isinstance(value, str) else bytes(value) \
            if isinstance(value, (bytes, memoryview)) else str(value).encode()
        return wrap(out)
    try:
        return wrap(np.array(value, dtype=dtype.as_numpy_dtype))
    except (TypeError, ValueError, OverflowError):
        raise errors.InvalidArgumentError(
            None, None, f"SqlDataset: column {index} value {value!r} of {query!r} cannot be "
            f"read as {dtype.name}") from None


class _SqlIterator(RawIterator):
    """State: the number of rows returned (restore re-runs the query and skips them)."""

    def __init__(self, ds):
        self._ds, self._n = ds, 0
        self._start()

    def _start(self):
        flat = nest.flatten(self._ds._types)
        self._conn = _connect(self._ds._source)
        try:
            self._cur = self._conn.execute(self._ds._query)
        except sqlite3.Error as e:
            self.close()
            raise errors.InvalidArgumentError(
                None, None, f"SqlDataset: query {self._ds._query!r} failed: {e}") from None
        columns = len(self._cur.description or ())
        if columns != len(flat):
            self.close()
            raise errors.InvalidArgumentError(
                None, None, f"SqlDataset: the query returns {columns} columns but "
                f"output_types has {len(flat)}; they must be equal")

    def next(self):
        if self._conn is None:
            raise StopIteration
        row = self._cur.fetchone()
        if row is None:
            self.close()
            raise StopIteration
        self._n += 1
        types = nest.flatten(self._ds._types)
        flat = [_column(v, t, i, self._ds._query) for i, (v, t) in enumerate(zip(row, types))]
        return nest.pack_like(self._ds._types, flat)

    def save(self):
        return self._n

    def restore(self, state):
        self.close()
        self._n = 0
        self._start()
        for _ in range(state):
            self.next()

    def close(self):
        conn, self._conn = getattr(self, "_conn", None), None
        if conn is not None:
            conn.close()
