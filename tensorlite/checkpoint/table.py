"""The sorted string table (SSTable) of a checkpoint's `.index` file, as LevelDB's public
table format describes it and TensorFlow's `tensorflow/core/lib/io/table` writes it.

A table is a sequence of blocks followed by a 48-byte footer:

- a *data block* holds sorted key/value entries. Each entry is `varint32 shared` (bytes
  shared with the previous key), `varint32 non_shared`, `varint32 value_length`, the
  key's unshared tail and the value. Every `RESTART_INTERVAL` entries the key is written
  whole (a *restart point*); the block ends with the restart offsets (fixed32 each) and
  their count (fixed32).
- every block is followed by a 5-byte trailer: the compression type (0: none; tensorlite
  neither writes nor reads compressed blocks) and the masked CRC32C of the block's bytes
  and that type byte.
- the *meta-index block* (empty here, as TensorFlow leaves it) and the *index block*, whose
  entries map a key >= the last key of each data block to that block's handle
  (`varint64 offset`, `varint64 size`).
- the footer: the meta-index and index handles, zero-padded to 40 bytes, then the magic
  number 0xdb4775248b80fb57 as a little-endian fixed64.

Example:
    >>> data = write_table([(b"", b"header"), (b"a", b"1")])
    >>> list(read_table(data, "x.index"))
    [(b'', b'header'), (b'a', b'1')]
"""
import struct

from tensorlite.framework.checksums import masked_crc32c
from tensorlite.framework import errors

MAGIC = 0xdb4775248b80fb57
FOOTER_SIZE = 48  # two handles of at most 20 bytes each, padded, then the 8-byte magic
RESTART_INTERVAL = 16
BLOCK_SIZE = 256 * 1024  # TensorFlow's default: a block is closed once it passes this
_NO_COMPRESSION = 0
_U32 = struct.Struct("<I")


def varint(n):
    """The base-128 varint encoding of a non-negative int."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class _Reader:
    """Bounds-checked reads of one table's bytes; every malformed read is DataLossError."""

    def __init__(self, data, name):
        self.data, self.name = data, name

    def fail(self, what):
        raise errors.DataLossError(None, None, f"{self.name} is not a valid checkpoint index "
                                   f"(corrupted or truncated): {what}")

    def varint(self, pos, end, bits=64):
        result, shift = 0, 0
        while True:
            if pos >= end or shift >= bits:
                self.fail(f"bad varint at byte {pos}")
            b = self.data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result, pos
            shift += 7

    def u32(self, pos):
        if pos < 0 or pos + 4 > len(self.data):
            self.fail(f"fixed32 at byte {pos} is past the end")
        return _U32.unpack_from(self.data, pos)[0]


# -- writing -------------------------------------------------------------------------------------
class _BlockBuilder:
    def __init__(self, restart_interval):
        self.interval = restart_interval
        self.buf, self.restarts = bytearray(), [0]
        self.count, self.last = 0, b""

    def add(self, key, value):
        shared = 0
        if self.count < self.interval:
            limit = min(len(key), len(self.last))
            while shared < limit and key[shared] == self.last[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buf))
            self.count = 0
        self.buf += varint(shared) + varint(len(key) - shared) + varint(len(value))
        self.buf += key[shared:]
        self.buf += value
        self.last, self.count = key, self.count + 1

    def finish(self):
        return bytes(self.buf) + b"".join(_U32.pack(r) for r in self.restarts) \
            + _U32.pack(len(self.restarts))

    def size(self):
        return len(self.buf) + 4 * len(self.restarts) + 4


def _emit(out, block):
    """Appends a block and its trailer; returns its handle bytes."""
    handle = varint(len(out)) + varint(len(block))
    typed = block + bytes([_NO_COMPRESSION])
    out += typed + _U32.pack(masked_crc32c(typed))
    return handle


def write_table(items, block_size=BLOCK_SIZE):
    """The bytes of a table holding `items`, (key bytes, value bytes) pairs in strictly
    increasing key order."""
    out = bytearray()
    index = _BlockBuilder(1)
    block, last = _BlockBuilder(RESTART_INTERVAL), None
    for key, value in items:
        if last is not None and key <= last:
            raise ValueError(f"table keys must be strictly increasing: {key!r} after {last!r}")
        block.add(key, value)
        last = key
        if block.size() >= block_size:
            index.add(key, _emit(out, block.finish()))
            block = _BlockBuilder(RESTART_INTERVAL)
    if block.count or not index.count:
        # The index key may be any key >= the block's last; the last key itself is one.
        index.add(last if last is not None else b"", _emit(out, block.finish()))
    meta = _emit(out, _BlockBuilder(RESTART_INTERVAL).finish())
    handles = meta + _emit(out, index.finish())
    out += handles + bytes(40 - len(handles)) + struct.pack("<Q", MAGIC)
    return bytes(out)


# -- reading -------------------------------------------------------------------------------------
def _block(r, handle_pos, handle_end):
    """(start, end) of the block whose handle starts at handle_pos, its checksum verified;
    returns also the position after the handle."""
    offset, pos = r.varint(handle_pos, handle_end)
    size, pos = r.varint(pos, handle_end)
    if offset + size + 5 > len(r.data) - FOOTER_SIZE:
        r.fail(f"block at {offset} of {size} bytes runs past the end of the file")
    trailer = offset + size
    if r.data[trailer] != _NO_COMPRESSION:
        r.fail(f"block at {offset} is compressed (type {r.data[trailer]}); tensorlite reads "
               f"uncompressed tables only, as TensorFlow writes checkpoints")
    if r.u32(trailer + 1) != masked_crc32c(bytes(r.data[offset:trailer + 1])):
        r.fail(f"checksum mismatch in the block at byte {offset}")
    return offset, trailer, pos


def _entries(r, start, end):
    """(key, value start, value end) of each entry of the block data[start:end]."""
    if end - start < 4:
        r.fail(f"block at {start} is too short")
    num_restarts = r.u32(end - 4)
    limit = end - 4 - 4 * num_restarts
    if num_restarts == 0 or limit < start:
        r.fail(f"block at {start} has a bad restart array")
    pos, key = start, b""
    while pos < limit:
        shared, pos = r.varint(pos, limit, 32)
        non_shared, pos = r.varint(pos, limit, 32)
        size, pos = r.varint(pos, limit, 32)
        if shared > len(key) or pos + non_shared + size > limit:
            r.fail(f"entry at byte {pos} of the block at {start} is malformed")
        key = key[:shared] + bytes(r.data[pos:pos + non_shared])
        pos += non_shared
        yield key, pos, pos + size
        pos += size


def read_table(data, name="index"):
    """Yields (key, value) of every entry of a table's bytes, in key order. Malformed bytes
    (bad magic, checksums, handles or entries) raise DataLossError naming `name`."""
    r = _Reader(data, name)
    if len(data) < FOOTER_SIZE:
        r.fail(f"{len(data)} bytes is shorter than the {FOOTER_SIZE}-byte footer")
    footer = len(data) - FOOTER_SIZE
    if struct.unpack_from("<Q", data, len(data) - 8)[0] != MAGIC:
        r.fail("bad magic number in the footer")
    _, _, pos = _block(r, footer, footer + 40)  # the meta-index block: nothing tensorlite uses
    start, end, _ = _block(r, pos, footer + 40)
    last = None
    for _, vstart, vend in _entries(r, start, end):
        bstart, bend, _ = _block(r, vstart, vend)
        for key, kstart, kend in _entries(r, bstart, bend):
            if last is not None and key <= last:
                r.fail(f"keys out of order: {key!r} after {last!r}")
            last = key
            yield key, bytes(data[kstart:kend])
