"""The iterator of record-file datasets (TFRecordDataset, FixedLengthRecordDataset): the
records of the files an iterator of filenames names, one file after another, each a scalar
string. State: (the filename iterator's state, (current file, its reader's position) or
None), so a checkpoint resumes at the exact next record."""
import os

import numpy as np

from tensorlite.data.iterator import RawIterator
from tensorlite.framework import errors
from tensorlite.framework.tensor import wrap


class FileRecordIterator(RawIterator):
    """Subclasses give `_open(path, position=None)` (a reader with `read()` -> bytes, or
    None at the file's end, `close()` and `path`), `_position(reader)`, and `_BROKEN`: the
    errors after which a file is abandoned (re-raised; `ignore_errors()` goes on to the
    next file) instead of being retried forever."""

    _BROKEN = (errors.DataLossError,)

    def __init__(self, files, *opts):
        self._files, self._opts = files, opts
        self._reader = None

    def _open(self, path, position=None):
        raise NotImplementedError

    def _position(self, reader):
        raise NotImplementedError

    def next(self):
        while True:
            if self._reader is None:
                self._reader = self._open(os.fsdecode(self._files.next().numpy()))
            try:
                record = self._reader.read()
            except self._BROKEN:
                self._drop()
                raise
            if record is not None:
                out = np.empty((), dtype=object)
                out[()] = record
                return wrap(out)
            self._drop()

    def _drop(self):
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def save(self):
        current = None if self._reader is None else (self._reader.path,
                                                     self._position(self._reader))
        return (self._files.save(), current)

    def restore(self, state):
        self._drop()
        files, current = state
        self._files.restore(files)
        if current is not None:
            self._reader = self._open(*current)

    def close(self):
        self._drop()
        self._files.close()
