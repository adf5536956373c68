"""`tf.data.FixedLengthRecordDataset`: fixed-size records from binary files (CIFAR-style:
a header, N records of `record_bytes`, a footer), each a scalar tf.string.

A file whose body (its size less header and footer) is not a whole number of records raises
an error naming the file, with TF's message and class (InvalidArgumentError for a plain
file, whose size shows it before reading; DataLossError for a compressed one, found at its
end); a plain file is then not read at all.

Example:
    >>> ds = tf.data.FixedLengthRecordDataset("data.bin", record_bytes=4, header_bytes=2)
"""
import os

import numpy as np

from tensorlite.data.dataset import DatasetV2
from tensorlite.data.file_records import FileRecordIterator
from tensorlite.data.readers import open_compressed
from tensorlite.data.tfrecord import _filenames_dataset, compression_name
from tensorlite.framework import dtypes, errors
from tensorlite.framework.tensor_spec import TensorSpec


def _nonneg(value, what, positive=False):
    v = 0 if value is None else int(np.asarray(getattr(value, "_value", value)))
    if v < 0 or (positive and v == 0):
        raise errors.InvalidArgumentError(
            None, None, f"FixedLengthRecordDataset: {what} must be "
            f"{'greater than zero' if positive else '>= 0'}, got {v}")
    return v


class FixedLengthRecordDataset(DatasetV2):
    """Records of `record_bytes` bytes after `header_bytes` and before `footer_bytes` in
    each file; `compression_type` "", "ZLIB" or "GZIP"; `num_parallel_reads` files are read
    at once, their records interleaved one at a time in a deterministic order."""

    _name = "FixedLengthRecord"

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None, name=None):
        source, self._files = _filenames_dataset(filenames)
        self._sizes = (_nonneg(header_bytes, "header_bytes"),
                       _nonneg(record_bytes, "record_bytes", positive=True),
                       _nonneg(footer_bytes, "footer_bytes"))
        _nonneg(buffer_size, "buffer_size")  # TF reads in buffer_size chunks; Python buffers
        self._compression = compression_name(compression_type)
        self._parallel = num_parallel_reads
        if num_parallel_reads is None:
            self._inputs = (source,)
        else:
            from tensorlite.data.interleave import InterleaveDataset  # noqa: PLC0415
            h, r, f = self._sizes
            comp = self._compression
            self._inputs = (InterleaveDataset(
                source, lambda name: FixedLengthRecordDataset(name, r, h, f,
                                                              compression_type=comp),
                cycle_length=num_parallel_reads, block_length=1,
                num_parallel_calls=num_parallel_reads),)

    def _compute_spec(self):
        return TensorSpec([], dtypes.string)

    def _describe(self):
        h, r, f = self._sizes
        return f"record_bytes={r}, header_bytes={h}, footer_bytes={f}"

    def _files_for_fingerprint(self):
        return list(self._files or ())

    def _make_iterator(self, ctx):
        inner = self._inputs[0]._make_iterator(ctx)
        if self._parallel is not None:
            return inner
        return _FixedIterator(inner, self._sizes, self._compression)


def _body_error(path, header, footer, body, record, compressed):
    # TF's classes: InvalidArgumentError when the file's size shows it, DataLossError when
    # a compressed stream ends mid-record
    cls = errors.DataLossError if compressed else errors.InvalidArgumentError
    return cls(
        None, None, f"Excluding the header ({header} bytes) and footer ({footer} bytes), input "
        f"file \"{path}\" has body length {body} bytes, which is not an exact multiple of the "
        f"record length ({record} bytes).")


class _FileRecords:
    """One file's records, read with a footer-sized lookahead (so compressed files, whose
    size is unknown until read, are checked as well)."""

    def __init__(self, path, sizes, compression):
        self.path, self._sizes, self.count = path, sizes, 0
        self._compressed = bool(compression)
        header, record, footer = sizes
        if not compression and os.path.exists(path):
            body = os.path.getsize(path) - header - footer
            if body < 0 or body % record:
                raise _body_error(path, header, footer, body, record, False)
        self._f = open_compressed(path, compression)
        self._header_read = len(self._f.read(header))  # short only in a truncated file
        self._buf = b""

    def read(self):
        header, record, footer = self._sizes
        want = record + footer
        while len(self._buf) < want:
            chunk = self._f.read(want - len(self._buf))
            if not chunk:
                break
            self._buf += chunk
        if len(self._buf) >= want:
            out, self._buf = self._buf[:record], self._buf[record:]
            self.count += 1
            return out
        if self._header_read < header or len(self._buf) != footer:
            body = self.count * record + max(len(self._buf) - footer, 0)
            raise _body_error(self.path, header, footer, body, record, self._compressed)
        return None

    def close(self):
        self._f.close()


class _FixedIterator(FileRecordIterator):
    """The position in a file is the number of records read (a restore reads that many)."""

    _BROKEN = (errors.DataLossError, errors.InvalidArgumentError)

    def _open(self, path, position=None):
        reader = _FileRecords(path, *self._opts)
        for _ in range(position or 0):
            reader.read()
        return reader

    def _position(self, reader):
        return reader.count
