"""TFRecord files: `tf.data.TFRecordDataset`, `tf.io.TFRecordWriter`, `tf.io.TFRecordOptions`.

A TFRecord file is a sequence of records, each framed as TensorFlow documents it:

    uint64  length                      (little endian)
    uint32  masked CRC32C of the 8 length bytes
    bytes   data[length]
    uint32  masked CRC32C of data

with mask(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2**32). A file may be
compressed as a whole with GZIP or ZLIB. CRC32C is `tensorlite.framework.checksums`'s.

Example:
    >>> with tf.io.TFRecordWriter("/tmp/a.tfrecord") as w:
    ...     w.write(b"hello")
    >>> [r.numpy() for r in tf.data.TFRecordDataset("/tmp/a.tfrecord")]
    [b'hello']
"""
import os
import struct
import zlib

import numpy as np

from tensorlite.data.dataset import DatasetV2
from tensorlite.data.file_records import FileRecordIterator
from tensorlite.data.sources import FromTensorSlicesDataset, FromTensorsDataset
from tensorlite.framework import dtypes, errors, size_limits
from tensorlite.framework.checksums import (  # noqa: F401 - tfrecord.crc32c, as before
    crc32c, crc32c_library, crc32c_python, masked_crc32c)
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_spec import TensorSpec

_DEFAULT_BUFFER = 256 * 1024  # TensorFlow's default read buffer for TFRecordDataset
_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")


def frame(record):
    """The bytes of one framed record (header, data, footer)."""
    length = _LENGTH.pack(len(record))
    return b"".join((length, _CRC.pack(masked_crc32c(length)), record,
                     _CRC.pack(masked_crc32c(record))))


# -- options -------------------------------------------------------------------------------------
def compression_name(compression_type, what="compression_type"):
    """None, '', 'ZLIB', 'GZIP' (or a scalar string tensor of one) -> '', 'ZLIB' or 'GZIP'."""
    if isinstance(compression_type, Tensor):
        compression_type = compression_type.numpy()
    if isinstance(compression_type, bytes):
        compression_type = compression_type.decode()
    if compression_type is None:
        return ""
    if isinstance(compression_type, str) and compression_type.upper() in ("", "ZLIB", "GZIP"):
        return compression_type.upper()
    raise errors.InvalidArgumentError(None, None, f"Unsupported {what}: {compression_type!r}; "
                                      f"use None (or ''), 'ZLIB' or 'GZIP'")


class TFRecordOptions:
    """`tf.io.TFRecordOptions`: compression settings of a TFRecord file."""

    compression_type_map = {"ZLIB": "ZLIB", "GZIP": "GZIP", "": ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.get_compression_type_string(compression_type)  # validates
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """'' , 'ZLIB' or 'GZIP' for None, a string or a TFRecordOptions."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, str) and options.upper() in cls.compression_type_map:
            return cls.compression_type_map[options.upper()]
        raise ValueError(f'Not a valid compression_type: "{options}"; use None, "ZLIB" or '
                         f'"GZIP"')

    def __repr__(self):
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def _as_options(options):
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(compression_type=TFRecordOptions.get_compression_type_string(options))


# -- files ---------------------------------------------------------------------------------------
def _os_error(e, path):
    """An OSError from opening/reading `path` as TensorFlow's error class."""
    if isinstance(e, FileNotFoundError):
        hint = ""
        if any(c in path for c in "*?["):
            hint = ("; TFRecordDataset does not expand glob patterns: pass "
                    "tf.data.Dataset.list_files(pattern) or tf.io.gfile.glob(pattern)")
        return errors.NotFoundError(None, None, f"{path}; No such file or directory{hint}")
    if isinstance(e, IsADirectoryError):
        return errors.FailedPreconditionError(None, None, f"{path}; Is a directory")
    if isinstance(e, PermissionError):
        return errors.PermissionDeniedError(None, None, f"{path}; Permission denied")
    return errors.UnknownError(None, None, f"{path}: {e}")


def _open(path, mode, buffer_size=-1):
    try:
        return open(path, mode, buffering=buffer_size)  # noqa: SIM115
    except OSError as e:
        raise _os_error(e, path) from None


class _InflateReader:
    """Reads the decompressed bytes of a ZLIB or GZIP file (wbits 15 or 31), chunk by chunk;
    concatenated streams are read one after another."""

    def __init__(self, raw, wbits, chunk):
        self._raw, self._wbits, self._chunk = raw, wbits, max(chunk, 4096)
        self._z = zlib.decompressobj(wbits)
        self._buf = bytearray()
        self._pending = b""
        self._seen_input = False

    def _more_input(self):
        data = self._pending or self._raw.read(self._chunk)
        self._pending = b""
        self._seen_input = self._seen_input or bool(data)
        return data

    def _fill(self, n):
        z = self._z
        while len(self._buf) < n:
            if z.eof:
                rest = z.unused_data + self._more_input()
                if not rest:
                    return
                z = self._z = zlib.decompressobj(self._wbits)
                self._pending = rest
                continue
            data = z.unconsumed_tail or self._more_input()
            if not data:
                if self._seen_input:
                    raise EOFError("the compressed stream ended before its end marker")
                return  # an empty file holds no records
            self._buf += z.decompress(data, max(n - len(self._buf), 1 << 16))

    def read(self, n):
        self._fill(n)
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def skip(self, n):
        while n > 0:
            got = len(self.read(min(n, 1 << 20)))
            if not got:
                return
            n -= got

    def close(self):
        self._raw.close()


class _RecordReader:
    """Reads framed records from one file, keeping the (uncompressed) byte offset of the
    next record so an iterator can save and restore its position."""

    def __init__(self, path, compression, buffer_size, offset=0):
        self.path = path
        buffering = _DEFAULT_BUFFER if buffer_size is None else int(buffer_size)
        raw = _open(path, "rb", buffering if not compression else 0)
        if compression:
            self._f = _InflateReader(raw, 31 if compression == "GZIP" else 15,
                                     buffering or _DEFAULT_BUFFER)
            self._f.skip(offset)
        else:
            self._f = raw
            raw.seek(offset)
        self.offset = offset
        self._size = None  # the file's size as last seen (uncompressed files)

    def _read(self, n):
        try:
            out = self._f.read(n)
            while len(out) < n:  # unbuffered reads may come back short before EOF
                more = self._f.read(n - len(out))
                if not more:
                    break
                out += more
            return out
        except (EOFError, zlib.error) as e:
            raise self._loss(f"the compressed data is corrupt ({e})") from None
        except OSError as e:
            raise _os_error(e, self.path) from None

    def _loss(self, what):
        return errors.DataLossError(None, None, f"{what}: corrupted or truncated record at "
                                    f"byte offset {self.offset} in file {self.path}")

    def read(self):
        """The next record's bytes, or None at the end of the file."""
        header = self._read(12)
        if not header:
            return None
        if len(header) < 12:
            raise self._loss(f"truncated record header ({len(header)} of 12 bytes)")
        length, length_crc = _LENGTH.unpack_from(header)[0], _CRC.unpack_from(header, 8)[0]
        if masked_crc32c(header[:8]) != length_crc:
            raise self._loss("length checksum mismatch")
        self._check_length(length)
        data = self._read(length)
        footer = self._read(4)
        if len(data) < length or len(footer) < 4:
            raise self._loss(f"truncated record data ({len(data)} of {length} bytes)")
        if masked_crc32c(data) != _CRC.unpack(footer)[0]:
            raise self._loss("data checksum mismatch")
        self.offset += 16 + length
        return data

    def _check_length(self, length):
        """A length field may claim up to 2**64 bytes: it is checked against the bytes
        left in the file (or, compressed, against the decompression cap) before reading."""
        what = f"record at byte offset {self.offset}"
        if isinstance(self._f, _InflateReader):
            size_limits.check_inflated(length, what, self.path)
            return
        if self._size is None or self.offset + 16 + length > self._size:
            try:  # the file may have grown since: only a claim past the known end re-stats
                self._size = os.fstat(self._f.fileno()).st_size
            except OSError as e:
                raise _os_error(e, self.path) from None
        left = self._size - self.offset - 12
        try:
            size_limits.check_claimed(length, max(left - 4, 0), "record length", self.path)
        except errors.DataLossError as e:  # TF's wording, with the byte offset
            raise self._loss(str(e)) from None

    def close(self):
        self._f.close()


def tf_record_iterator(path, options=None):
    """`tf.compat.v1.io.tf_record_iterator`: yields the records of one file as bytes."""
    reader = _RecordReader(os.fspath(path), TFRecordOptions.get_compression_type_string(
        options), None)
    try:
        while (record := reader.read()) is not None:
            yield record
    finally:
        reader.close()


# -- the writer ----------------------------------------------------------------------------------
class _DeflateSink:
    """ZLIB (wbits 15) or GZIP (wbits 31) stream into a raw file, as TF's zlib writer."""

    def __init__(self, raw, wbits, opts):
        level = -1 if opts.compression_level is None else opts.compression_level
        self._raw = raw
        self._z = zlib.compressobj(level, zlib.DEFLATED, wbits,
                                   8 if opts.mem_level is None else opts.mem_level,
                                   opts.compression_strategy or zlib.Z_DEFAULT_STRATEGY)

    def write(self, data):
        self._raw.write(self._z.compress(data))

    def flush(self):
        self._raw.write(self._z.flush(zlib.Z_SYNC_FLUSH))
        self._raw.flush()

    def close(self):
        try:
            self._raw.write(self._z.flush(zlib.Z_FINISH))
        finally:
            self._raw.close()


class TFRecordWriter:
    """`tf.io.TFRecordWriter(path, options=None)`: writes records to a TFRecord file.

    >>> with tf.io.TFRecordWriter("/tmp/b.tfrecord", options="GZIP") as w:
    ...     w.write(example.SerializeToString())
    """

    def __init__(self, path, options=None):
        self._path = os.fsdecode(path) if isinstance(path, bytes) else os.fspath(path)
        opts = _as_options(options)
        kind = TFRecordOptions.get_compression_type_string(opts)
        buffering = opts.output_buffer_size or -1
        raw = _open(self._path, "wb", buffering)
        if kind:
            bits = 15 if opts.window_bits is None else int(opts.window_bits)
            self._out = _DeflateSink(raw, bits + 16 if kind == "GZIP" else bits, opts)
        else:
            self._out = raw
        self._closed = False

    def _check_open(self):
        if self._closed:
            raise errors.FailedPreconditionError(None, None, f"Writer is closed "
                                                 f"({self._path}); open a new TFRecordWriter")

    def write(self, record):
        """Appends one record (bytes, str, or a scalar string tensor)."""
        self._check_open()
        self._out.write(frame(_record_bytes(record)))

    def flush(self):
        """Pushes written records to the file (compressed streams are sync-flushed)."""
        self._check_open()
        self._out.flush()

    def close(self):
        """Finishes the file; further writes raise FailedPreconditionError."""
        if not self._closed:
            self._closed = True
            self._out.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):  # TF flushes a writer that is dropped without close()
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _record_bytes(record):
    if isinstance(record, Tensor):
        if not record.dtype.is_string or record.shape.rank != 0:
            raise TypeError(f"TFRecordWriter.write: expected bytes or a scalar tf.string tensor, "
                            f"got a {record.dtype.name} tensor of shape {record.shape}")
        record = record.numpy()
    if isinstance(record, str):
        return record.encode("utf-8")
    if isinstance(record, (bytes, bytearray, memoryview)):
        return bytes(record)
    raise TypeError(f"TFRecordWriter.write: expected bytes, got {type(record).__name__}; "
                    f"serialize messages first (example.SerializeToString())")


# -- the dataset ---------------------------------------------------------------------------------
def _filenames_dataset(filenames):
    """A dataset of scalar tf.string filenames from a str, list, string tensor or dataset."""
    if isinstance(filenames, DatasetV2):
        spec = filenames.element_spec
        if not (isinstance(spec, TensorSpec) and spec.dtype == dtypes.string
                and spec.shape.rank == 0):
            raise TypeError(f"`filenames` must be a `tf.data.Dataset` of scalar `tf.string` "
                            f"elements, got element_spec {spec}")
        return filenames, None
    if isinstance(filenames, (Tensor, np.ndarray)):
        arr = filenames._value if isinstance(filenames, Tensor) else np.asarray(
            wrap(filenames)._value)
    else:
        items = filenames if isinstance(filenames, (list, tuple)) else [filenames]
        arr = np.empty(len(items), dtype=object)
        for i, f in enumerate(items):
            arr[i] = os.fsencode(f) if isinstance(f, (str, bytes, os.PathLike)) else f
        if not isinstance(filenames, (list, tuple)):
            arr = arr.reshape(())
    if arr.dtype != object or not all(isinstance(f, bytes) for f in arr.reshape(-1)):
        raise TypeError("`filenames` must be a `tf.Tensor` of dtype `tf.string` (or a string, "
                        "a list of strings, or a dataset of strings)")
    if arr.ndim > 1:
        raise ValueError(f"`filenames` must be a `tf.Tensor` of rank 0 or 1, got shape "
                         f"{list(arr.shape)}")
    files = [os.fsdecode(f) for f in arr.reshape(-1)]
    ds = FromTensorsDataset(wrap(arr)) if arr.ndim == 0 else FromTensorSlicesDataset(wrap(arr))
    return ds, files


class TFRecordDataset(DatasetV2):
    """`tf.data.TFRecordDataset`: the records of one or more TFRecord files, as scalar
    `tf.string` tensors.

    With `num_parallel_reads`, that many files are read at once by threads and their
    records interleaved one at a time, in a deterministic order (TF's parallel interleave
    with block_length=1). A corrupted record raises tf.errors.DataLossError naming the file
    and byte offset; the rest of that file is then skipped (so `ignore_errors()` goes on).

    >>> ds = tf.data.TFRecordDataset(["a.tfrecord", "b.tfrecord"], num_parallel_reads=2)
    """

    _name = "TFRecord"

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        source, self._files = _filenames_dataset(filenames)
        self._compression = compression_name(compression_type)
        self._buffer_size = None if buffer_size is None else int(buffer_size)
        if self._buffer_size is not None and self._buffer_size < 0:
            raise errors.InvalidArgumentError(None, None, f"TFRecordDataset: buffer_size must "
                                              f"be >= 0, got {buffer_size}")
        self._parallel = num_parallel_reads
        if num_parallel_reads is None:
            self._inputs = (source,)
        else:
            from tensorlite.data.interleave import InterleaveDataset  # noqa: PLC0415
            comp, buf = self._compression, self._buffer_size
            self._inputs = (InterleaveDataset(
                source, lambda f: TFRecordDataset(f, comp, buf), cycle_length=num_parallel_reads,
                block_length=1, num_parallel_calls=num_parallel_reads),)

    def _compute_spec(self):
        return TensorSpec([], dtypes.string)

    def _describe(self):
        files = f"{len(self._files)} files" if self._files is not None else "files from a dataset"
        comp = f", compression_type={self._compression!r}" if self._compression else ""
        par = "" if self._parallel is None else f", num_parallel_reads={self._parallel}"
        return files + comp + par

    def _files_for_fingerprint(self):
        return list(self._files or ())

    def _label(self):
        n = "files from a dataset" if self._files is None else f"{len(self._files)} files"
        return f"TFRecord({n})"

    def _make_iterator(self, ctx):
        inner = self._inputs[0]._make_iterator(ctx)
        if self._parallel is not None:
            return inner  # the interleave of single-file datasets yields the records
        return _RecordIterator(inner, self._compression, self._buffer_size)


class _RecordIterator(FileRecordIterator):
    """The position in a file is the (uncompressed) byte offset of the next record."""

    def _open(self, path, position=None):
        return _RecordReader(path, *self._opts, offset=position or 0)

    def _position(self, reader):
        return reader.offset


__all__ = ["TFRecordDataset", "TFRecordWriter", "TFRecordOptions", "tf_record_iterator",
           "crc32c", "crc32c_python", "masked_crc32c"]
