"""A small binary format for dataset elements, used by cache and snapshot files.

Each element is a record: magic, the element's structure (JSON), then every component as
dtype, shape and raw bytes (strings as lengths plus concatenated bytes). A record carries
its own length and a CRC32 so a torn or corrupted tail is detected, never read as data.
`pack`/`unpack` (a JSON header plus raw arrays) also carry iterator checkpoint state: no
format tensorlite reads is a pickle.
"""
import io
import json
import os
import struct
import zlib

import numpy as np

from tensorlite.framework import errors, nest, size_limits
from tensorlite.framework.tensor import wrap

_MAGIC = b"TLE1"
_HEAD = struct.Struct("<4sQI")  # magic, payload length, crc32 of payload
_CHUNK = 1 << 20  # a stream's payload is read this much at a time, so memory follows data


def _template(element):
    if isinstance(element, dict):
        return {"d": {k: _template(v) for k, v in element.items()}}
    if isinstance(element, tuple):
        return {"t": [_template(v) for v in element]}
    return 0


def _rebuild(template, it):
    if isinstance(template, dict) and "d" in template:
        return {k: _rebuild(v, it) for k, v in template["d"].items()}
    if isinstance(template, dict) and "t" in template:
        return tuple(_rebuild(v, it) for v in template["t"])
    return next(it)


def pack(header, arrays):
    """Bytes of a JSON-able `header` followed by NumPy arrays (numeric, bool or bytes
    strings), each as dtype, shape and raw data: no pickle, so reading runs no code."""
    buf = io.BytesIO()
    head = json.dumps(header).encode()
    buf.write(struct.pack("<I", len(head)))
    buf.write(head)
    for a in arrays:
        if a.dtype == object:
            items = [x if isinstance(x, bytes) else str(x).encode() for x in a.reshape(-1)]
            lengths = np.array([len(x) for x in items], dtype=np.int64)
            meta = json.dumps({"dtype": "string", "shape": list(a.shape)}).encode()
            body = lengths.tobytes() + b"".join(items)
        else:
            meta = json.dumps({"dtype": a.dtype.str, "shape": list(a.shape)}).encode()
            body = np.ascontiguousarray(a).tobytes()
        buf.write(struct.pack("<IQ", len(meta), len(body)))
        buf.write(meta)
        buf.write(body)
    return buf.getvalue()


def _array(meta, body):
    shape = tuple(int(d) for d in meta["shape"])
    if any(d < 0 for d in shape):
        raise ValueError(f"negative dimension in shape {list(shape)}")
    n = 1
    for d in shape:  # Python ints: a crafted shape cannot overflow into a small count
        n *= d
    if meta["dtype"] == "string":
        if 8 * n > len(body):
            raise ValueError(f"{n} string lengths do not fit in {len(body)} bytes")
        lengths = np.frombuffer(body[:8 * n], dtype=np.int64)
        if (lengths < 0).any() or 8 * n + sum(map(int, lengths)) != len(body):
            raise ValueError("string lengths do not match the data")
        out = np.empty(n, dtype=object)
        off = 8 * n
        for i, ln in enumerate(lengths):
            out[i] = bytes(body[off:off + ln])
            off += ln
        return out.reshape(shape)
    if not isinstance(meta["dtype"], str):
        raise ValueError(f"dtype {meta['dtype']!r} is not a dtype name")
    dtype = np.dtype(meta["dtype"])
    if dtype.kind not in "biufc":  # object, void, datetime: nothing a tensor holds
        raise ValueError(f"dtype {dtype} is not a tensor dtype")
    if n * dtype.itemsize != len(body):
        raise ValueError(f"shape {list(shape)} of {dtype} needs {n * dtype.itemsize} bytes, "
                         f"the record holds {len(body)}")
    return np.frombuffer(body, dtype=dtype).reshape(shape).copy()


def unpack(payload, what):
    """(header, arrays) from `pack`'s bytes; anything malformed is a DataLossError naming
    `what` (a crafted file cannot do more than fail to load)."""
    view = memoryview(payload)
    try:
        (hlen,) = struct.unpack_from("<I", view, 0)
        header = json.loads(bytes(view[4:4 + hlen]))
        pos = 4 + hlen
        arrays = []
        while pos < len(view):
            mlen, blen = struct.unpack_from("<IQ", view, pos)
            pos += 12
            meta = json.loads(bytes(view[pos:pos + mlen]))
            pos += mlen
            if pos + blen > len(view):
                raise ValueError("array data runs past the end")
            arrays.append(_array(meta, view[pos:pos + blen]))
            pos += blen
    except (ValueError, TypeError, KeyError, OverflowError, struct.error,
            RecursionError) as e:
        raise errors.DataLossError(None, None, f"{what} is malformed ({e}); it was not "
                                   f"written by tensorlite or is corrupted") from None
    return header, arrays


def encode(element):
    return _record(pack(_template(element), [t._value for t in nest.flatten(element)]))


def _record(payload):
    return _HEAD.pack(_MAGIC, len(payload), zlib.crc32(payload)) + payload


def decode(payload, what="a dataset element record"):
    template, arrays = unpack(payload, what)
    try:
        return _rebuild(template, iter([wrap(a) for a in arrays]))
    except (StopIteration, RuntimeError, TypeError, KeyError, AttributeError,
            RecursionError) as e:
        raise errors.DataLossError(None, None, f"{what}: its structure does not match its "
                                   f"data ({e!r})") from None


def _read(f, n, path):
    """Up to `n` bytes of `f`; a corrupt compressed stream is a DataLossError."""
    try:
        return f.read(n)
    except (OSError, EOFError, zlib.error) as e:
        raise errors.DataLossError(None, None, f"{path}: the compressed data is corrupt "
                                   f"({e})") from None


def _read_payload(f, length, path, pos):
    """A record's payload. The length field may claim anything: a plain file's claim is
    checked against the bytes left in it, a decompressed stream's against the cap and
    then read in chunks, so nothing is allocated that the data does not fill."""
    if isinstance(f, (io.BufferedReader, io.FileIO)):
        left = os.fstat(f.fileno()).st_size - f.tell()
        size_limits.check_claimed(length, max(left, 0), f"record at offset {pos}", path)
        return _read(f, length, path)
    size_limits.check_inflated(length, f"record at offset {pos}", path)
    parts, got = [], 0
    while got < length:
        part = _read(f, min(_CHUNK, length - got), path)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def read_records(f, path):
    """Yields decoded elements; a truncated or corrupted record is a DataLossError."""
    while True:
        pos = f.tell()
        head = _read(f, _HEAD.size, path)
        if not head:
            return
        if len(head) < _HEAD.size:
            raise errors.DataLossError(None, None, f"{path}: truncated record header at offset "
                                       f"{pos}")
        magic, length, crc = _HEAD.unpack(head)
        if magic != _MAGIC:
            raise errors.DataLossError(None, None, f"{path}: bad record magic at offset {pos}")
        payload = _read_payload(f, length, path, pos)
        if len(payload) < length or zlib.crc32(payload) != crc:
            raise errors.DataLossError(None, None, f"{path}: corrupted or truncated record at "
                                       f"offset {pos}")
        yield decode(payload, f"{path}: record at offset {pos}")
