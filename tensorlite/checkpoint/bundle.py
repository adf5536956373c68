"""TensorFlow's tensor bundle: the `PREFIX.index` table and `PREFIX.data-NNNNN-of-NNNNN`
shards of a checkpoint.

The index is a table (`table.py`) whose empty key holds a BundleHeaderProto and whose other
keys, the tensors' names in byte order, hold BundleEntryProtos: dtype, shape, shard, offset
and size in the data file, and the masked CRC32C of the tensor's bytes. A numeric tensor's
bytes are its little-endian values in C order; a string tensor's are the varint64 length of
each element, the masked CRC32C of those lengths (taken over each length as a fixed32),
then the elements' bytes.

Writes are atomic as a pair. Both files are written under temporary names and fsynced; the
data file is renamed into place first, the index last. A writer killed between the two
renames leaves the new data beside the old index and the new index under its temporary
name: readers detect the mismatch (data size and checksums) and complete the commit from
that temporary index, so the reader sees the new complete checkpoint; with no complete
index to finish it with, DataLossError names both files.

Example:
    >>> write_bundle("/tmp/b/ckpt", [("w", np.ones(3, np.float32))])
    >>> BundleReader("/tmp/b/ckpt").tensor("w")
    array([1., 1., 1.], dtype=float32)
"""
import math
import os
import struct
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tensorlite.framework import atomic_files as atomic
from tensorlite.checkpoint.protos import BundleEntryProto, BundleHeaderProto
from tensorlite.checkpoint.table import read_table, varint, write_table
from tensorlite.framework.checksums import crc32c, mask as _mask, unmask as _unmask
from tensorlite.framework import dtypes, errors
from tensorlite.summary.graph_def import datatype, dtype_from_datatype

VERSION_PRODUCER = 1  # TensorFlow's kTensorBundleVersion
_DT_STRING = 7


def data_path(prefix, shard=0, num_shards=1):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def index_path(prefix):
    return f"{prefix}.index"


def _as_array(value):
    """A C-ordered little-endian array, or an object array of bytes for strings."""
    if isinstance(value, (bytes, str)):
        value = np.array(value.encode("utf-8") if isinstance(value, str) else value,
                         dtype=object)
    array = np.asarray(value)
    if array.dtype.kind in "OSU":
        flat = [v if isinstance(v, bytes) else str(v).encode("utf-8")
                for v in array.reshape(-1).tolist()]
        return np.array(flat + [None], dtype=object)[:-1].reshape(array.shape)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array if array.flags.c_contiguous else array.copy(order="C")  # keeps 0-d


def _string_chunks(array):
    """The byte chunks of a string tensor and the crc of them all."""
    items = array.reshape(-1).tolist()
    lengths, crc = bytearray(), 0
    for item in items:
        lengths += varint(len(item))
        crc = crc32c(struct.pack("<I", len(item)), crc)
    length_crc = struct.pack("<I", _mask(crc))
    crc = crc32c(length_crc, crc)
    for item in items:
        crc = crc32c(item, crc)
    return [bytes(lengths), length_crc, *items], crc


def _write_data(f, name, array, offset):
    """Writes one tensor; returns its BundleEntryProto."""
    entry = BundleEntryProto(offset=offset)
    if array.dtype == object:
        chunks, crc = _string_chunks(array)
        entry.dtype = _DT_STRING
        for chunk in chunks:
            f.write(chunk)
        entry.size = sum(len(c) for c in chunks)
    else:
        dtype = dtypes.as_dtype(array.dtype)
        entry.dtype = datatype(dtype)
        if entry.dtype == 0:
            raise errors.InvalidArgumentError(None, None, f"checkpoint: tensor {name!r} has "
                                              f"dtype {array.dtype}, which TensorFlow's "
                                              f"checkpoint format cannot hold")
        view = memoryview(array.reshape(-1).view(np.uint8)) if array.size else b""
        f.write(view)
        crc = crc32c(view)
        entry.size = array.nbytes
    entry.crc32c = _mask(crc)
    for size in array.shape:
        entry.shape.dim.add(size=int(size))
    return entry


def write_bundle(prefix, tensors):
    """Writes `tensors`, (name, array or bytes) pairs, as the bundle `prefix`; atomic as a
    pair (see the module docstring)."""
    prefix = os.fspath(prefix)
    directory = os.path.dirname(os.path.abspath(prefix))
    os.makedirs(directory, exist_ok=True)
    atomic.remove_dead_temps(directory, keep=_salvage_index)
    data_final, index_final = data_path(prefix), index_path(prefix)
    data_tmp, index_tmp = atomic.temp_name(data_final), atomic.temp_name(index_final)
    items = sorted(((name.encode("utf-8"), value) for name, value in tensors),
                   key=lambda kv: kv[0])
    entries, offset = [], 0
    try:
        with open(data_tmp, "wb") as f:
            for key, value in items:
                entry = _write_data(f, key.decode("utf-8"), _as_array(value), offset)
                offset += entry.size
                entries.append((key, entry.SerializeToString()))
            atomic.fsync_file(f)
        header = BundleHeaderProto(num_shards=1)
        header.version.producer = VERSION_PRODUCER
        with open(index_tmp, "wb") as f:
            f.write(write_table([(b"", header.SerializeToString())] + entries))
            atomic.fsync_file(f)
        os.replace(data_tmp, data_final)
        os.replace(index_tmp, index_final)  # the commit point (see the module docstring)
    except BaseException:
        for tmp in (data_tmp, index_tmp):
            if os.path.exists(tmp):
                os.remove(tmp)
        raise
    atomic.fsync_dir(directory)
    return prefix


def _salvage_index(tmp, final):
    """remove_dead_temps' keep rule: a dead writer's index whose data file is in place
    completes that writer's commit instead of being removed."""
    if not final.endswith(".index"):
        return False
    try:
        _verified(final[:-len(".index")], tmp)
    except errors.OpError:
        return False
    os.replace(tmp, final)
    return True


def _verified(prefix, path):
    """The index at `path` if the data files match it in size and every checksum."""
    index = _Index(prefix, path)
    index.check_consistent()
    reader = BundleReader(prefix, index)
    for name in index.entries:
        reader.tensor(name)
    return index


class _Index:
    """The parsed index of a bundle: the header and the entries by name."""

    def __init__(self, prefix, path):
        self.prefix, self.path = prefix, path
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"Failed to find any matching files for "
                                       f"{prefix}; pass the prefix returned by save() or "
                                       f"tf.train.latest_checkpoint(directory)") from None
        self.header, self.entries = None, {}
        if raw[:1] == b"{" and b"tensorlite-ckpt-1" in raw[:64]:
            raise errors.DataLossError(None, None, f"{path} is an index of tensorlite's "
                                       f"earlier JSON checkpoint format, which this version "
                                       f"no longer reads; re-save with the version that "
                                       f"wrote it into TensorFlow's format")
        for key, value in read_table(raw, path):
            proto = BundleHeaderProto() if key == b"" else BundleEntryProto()
            try:
                proto.ParseFromString(value)
            except Exception:  # noqa: BLE001 - protobuf's DecodeError and its kin
                raise errors.DataLossError(None, None, f"{path}: the entry {key!r} is not a "
                                           f"valid protocol buffer") from None
            if key == b"":
                self.header = proto
            else:
                self.entries[key.decode("utf-8", "replace")] = proto
        if self.header is None:
            raise errors.DataLossError(None, None, f"{path} has no bundle header: not a "
                                       f"TensorFlow checkpoint index")
        if self.header.endianness != 0:
            raise errors.UnimplementedError(None, None, f"{path} was written big-endian; "
                                            f"tensorlite reads little-endian checkpoints")
        if self.header.num_shards < 1:
            raise errors.DataLossError(None, None, f"{path}: bad shard count "
                                       f"{self.header.num_shards}")

    def data_file(self, shard):
        return data_path(self.prefix, shard, self.header.num_shards)

    def check_consistent(self):
        """DataLossError unless every shard's size is what the entries say."""
        ends = {}
        for entry in self.entries.values():
            if not 0 <= entry.shard_id < self.header.num_shards:
                self.mismatch(f"shard {entry.shard_id} is out of range")
            if entry.offset < 0 or entry.size < 0:  # int64 fields: a crafted one seeks back
                self.mismatch(f"an entry claims offset {entry.offset} and size {entry.size}")
            ends[entry.shard_id] = max(ends.get(entry.shard_id, 0), entry.offset + entry.size)
        for shard in range(self.header.num_shards):
            try:
                size = os.path.getsize(self.data_file(shard))
            except OSError:
                self.mismatch(f"{self.data_file(shard)} is missing")
            if size != ends.get(shard, 0):
                self.mismatch(f"the data file holds {size} bytes but the index describes "
                              f"{ends.get(shard, 0)}")

    def mismatch(self, why):
        raise errors.DataLossError(None, None, f"checkpoint {self.prefix} is inconsistent: "
                                   f"{self.path} does not match {self.data_file(0)} ({why}); "
                                   f"the pair was torn by an interrupted write or altered")


# Large tensors are read in chunks while a second thread checksums the chunks already read
# (crc32c releases the GIL): the checksum, which TensorFlow's reader verifies too, then
# mostly hides behind the read (bench/model_io.py, 100 MB: 1.64-1.84x np.load -> 1.47-1.55x).
_PIPELINE_BYTES = 16 << 20
_CHUNK_BYTES = 8 << 20


def _read_and_checksum(f, buf):
    """Reads into `buf` from `f`; returns (bytes read, crc32c of what was read)."""
    if len(buf) < _PIPELINE_BYTES:
        n = f.readinto(buf)
        return n, crc32c(buf[:n])
    crc = [0]

    def step(view):
        crc[0] = crc32c(view, crc[0])

    total = 0
    # a fresh one-thread executor per tensor: its order keeps the crc sequential, and no
    # idle thread outlives the read (a forked data worker must not inherit a dead pool)
    with ThreadPoolExecutor(1, thread_name_prefix="checkpoint-crc32c") as pool:
        for offset in range(0, len(buf), _CHUNK_BYTES):
            view = buf[offset:offset + _CHUNK_BYTES]
            n = f.readinto(view)
            if n:
                pool.submit(step, view[:n])
            total += n
            if n < len(view):
                break
    return total, crc[0]


class BundleReader:
    """Reads a bundle's tensors by name, verifying each against its checksum."""

    def __init__(self, prefix, index=None):
        self.prefix = os.fspath(prefix)
        self._index = index or _open_index(self.prefix)

    @property
    def entries(self):
        """name -> BundleEntryProto, without the header."""
        return self._index.entries

    def dtype(self, name):
        return dtype_from_datatype(self._entry(name).dtype)

    def shape(self, name):
        return [int(d.size) for d in self._entry(name).shape.dim]

    def _entry(self, name):
        try:
            return self._index.entries[name]
        except KeyError:
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint "
                                       f"{self.prefix}") from None

    def tensor(self, name):
        """The tensor `name` as a NumPy array (object array of bytes for strings)."""
        entry = self._entry(name)
        with open(self._index.data_file(entry.shard_id), "rb") as f:
            f.seek(entry.offset)
            if entry.dtype == _DT_STRING:
                return self._strings(f, name, entry)
            dtype = dtype_from_datatype(entry.dtype)
            if dtype is None or dtype.as_numpy_dtype is None or dtype.is_string:
                raise errors.UnimplementedError(None, None, f"checkpoint {self.prefix}: "
                                                f"tensor {name} has DataType {entry.dtype}, "
                                                f"which tensorlite cannot read")
            shape, np_dtype = self.shape(name), np.dtype(dtype.as_numpy_dtype)
            # checked before allocating: a crafted shape must not ask for terabytes
            if any(d < 0 for d in shape) or math.prod(shape) * np_dtype.itemsize != entry.size:
                self._index.mismatch(f"{name} has {entry.size} bytes for shape {shape}")
            array = np.empty(shape, dtype=np_dtype)
            buf = memoryview(array.reshape(-1).view(np.uint8)) if array.size else bytearray()
            read, crc = _read_and_checksum(f, buf)
            if read != array.nbytes:
                self._index.mismatch(f"{name} runs past the end of the data")
            self._verify(name, entry, crc)
        return array

    def _verify(self, name, entry, crc):
        if _mask(crc) != entry.crc32c:
            self._index.mismatch(f"the checksum of {name} does not match")

    def _strings(self, f, name, entry):
        raw = f.read(entry.size)
        n = math.prod(self.shape(name))
        if n > entry.size or any(d < 0 for d in self.shape(name)):  # >= 1 length byte each
            self._index.mismatch(f"{name} cannot hold {n} strings in {entry.size} bytes")
        if len(raw) != entry.size:
            self._index.mismatch(f"{name} runs past the end of the data")
        pos, lengths, crc = 0, [], 0
        for _ in range(n):
            length, shift = 0, 0
            while True:
                if pos >= len(raw) or shift > 63:
                    self._index.mismatch(f"{name} has a malformed string length")
                b = raw[pos]
                pos += 1
                length |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            lengths.append(length)
            crc = crc32c(struct.pack("<I", length), crc)
        if pos + 4 > len(raw) or struct.unpack_from("<I", raw, pos)[0] != _mask(crc):
            self._index.mismatch(f"the length checksum of {name} does not match")
        crc = crc32c(raw[pos:], crc)  # the length checksum, then every string's bytes
        pos += 4
        if pos + sum(lengths) != len(raw):
            self._index.mismatch(f"the strings of {name} do not fill its {entry.size} bytes")
        out = []
        for length in lengths:
            out.append(raw[pos:pos + length])
            pos += length
        self._verify(name, entry, crc)
        array = np.empty(n, dtype=object)
        array[:] = out
        return array.reshape(self.shape(name))


def _open_index(prefix):
    """The index of `prefix`, consistent with its data; a torn pair is completed from a
    dead writer's temporary index when one matches (see the module docstring)."""
    final = os.path.abspath(index_path(prefix))
    temps = [tmp for tmp, name in atomic.dead_temps(os.path.dirname(final)) if name == final]
    try:
        if not temps:
            index = _Index(prefix, index_path(prefix))
            index.check_consistent()
            return index
        # A writer died mid-commit here: which index the data matches takes every checksum.
        return _verified(prefix, index_path(prefix))
    except errors.DataLossError as torn:
        for tmp in temps:
            if _salvage_index(tmp, final):
                return _Index(prefix, index_path(prefix))
        raise torn
