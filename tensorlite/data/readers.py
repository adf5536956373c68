"""File sources: list_files and TextLineDataset (TFRecordDataset lives in tfrecord.py)."""
import glob
import gzip
import os
import zlib

import itertools

import numpy as np

from tensorlite.data.dataset import DatasetV2
from tensorlite.data.iterator import RawIterator
from tensorlite.data.sources import FromTensorSlicesDataset
from tensorlite.framework import dtypes, errors, random_context
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_spec import TensorSpec


def filenames_list(filenames, what):
    """str, bytes, list of them, a string Tensor, or a dataset of strings -> list of str."""
    if isinstance(filenames, DatasetV2):
        return [f.numpy().decode() for f in filenames]
    if isinstance(filenames, Tensor):
        filenames = filenames.numpy()
        filenames = filenames.tolist() if isinstance(filenames, np.ndarray) else [filenames]
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    out = [f.decode() if isinstance(f, bytes) else os.fspath(f) for f in filenames]
    if not out:
        raise errors.InvalidArgumentError(None, None, f"{what}: no filenames given")
    return out


def list_files(file_pattern, shuffle=None, seed=None, name=None):
    """`Dataset.list_files`: the files matching glob pattern(s), shuffled by default."""
    patterns = filenames_list(file_pattern, "list_files")
    files = sorted({f for p in patterns for f in glob.glob(p)})
    if not files:
        raise errors.InvalidArgumentError(
            None, None, f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
            f"Summarized data: b'No files matched pattern: {', '.join(patterns)}'")
    ds = FromTensorSlicesDataset(np.array([f.encode() for f in files], dtype=object))
    if shuffle is None or shuffle:
        if seed is None:
            seed = random_context.global_seed()
        ds = ds.shuffle(len(files), seed=seed)
    return ds


def open_compressed(path, compression_type):
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory")
    ct = (compression_type or "").upper()
    if ct == "GZIP":
        return gzip.open(path, "rb")
    if ct == "ZLIB":
        with open(path, "rb") as f:
            import io  # noqa: PLC0415
            return io.BytesIO(zlib.decompress(f.read()))
    if ct:
        raise errors.InvalidArgumentError(None, None, f"compression_type must be '', 'GZIP' or "
                                          f"'ZLIB', got {compression_type!r}")
    return open(path, "rb")  # noqa: SIM115


class TextLineDataset(DatasetV2):
    """`tf.data.TextLineDataset`: one string element per line, without the newline."""

    _name = "TextLine"

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        self._files = filenames_list(filenames, "TextLineDataset")
        self._compression = compression_type

    def _compute_spec(self):
        return TensorSpec([], dtypes.string)

    def _describe(self):
        return f"{len(self._files)} files"

    def _files_for_fingerprint(self):
        return self._files

    def _label(self):
        return f"TextLine({len(self._files)} files)"

    def _make_iterator(self, ctx):
        return _LineIterator(self._files, self._compression)


class _LineIterator(RawIterator):
    def __init__(self, files, compression):
        self._files, self._compression = files, compression
        self._k, self._line, self._f = 0, 0, None

    def next(self):
        while self._k < len(self._files):
            if self._f is None:
                self._f = open_compressed(self._files[self._k], self._compression)
            raw = self._f.readline()
            if raw:
                self._line += 1
                return wrap(np.array(raw.rstrip(b"\n").rstrip(b"\r"), dtype=object))
            self._f.close()
            self._f, self._k, self._line = None, self._k + 1, 0
        raise StopIteration

    def next_lines(self, n):
        """Up to `n` lines as a 1-D string array (batch's fast path: no Tensor per line);
        an empty array when the files are exhausted."""
        out = []
        while len(out) < n and self._k < len(self._files):
            if self._f is None:
                self._f = open_compressed(self._files[self._k], self._compression)
            got = list(itertools.islice(self._f, n - len(out)))
            self._line += len(got)
            out += got
            if len(out) < n:
                self._f.close()
                self._f, self._k, self._line = None, self._k + 1, 0
        arr = np.empty(len(out), dtype=object)
        arr[:] = [r.rstrip(b"\r\n") for r in out]  # one line's end: \n, \r\n or none
        return arr

    def save(self):
        return (self._k, self._line)

    def restore(self, state):
        self.close()
        self._k, lines = state
        self._line = 0
        for _ in range(lines):
            self.next()

    def close(self):
        if self._f is not None:
            self._f.close()
            self._f = None


DatasetV2.list_files = staticmethod(list_files)
