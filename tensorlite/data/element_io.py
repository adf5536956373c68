"""A small binary format for dataset elements, used by cache and snapshot files.

Each element is a record: magic, the element's structure (JSON), then every component as
dtype, shape and raw bytes (strings as lengths plus concatenated bytes). A record carries
its own length and a CRC32 so a torn or corrupted tail is detected, never read as data.
`pack`/`unpack` (a JSON header plus raw arrays) also carry iterator checkpoint state: no
format tensorlite reads is a pickle.
"""
import io
import json
import struct
import zlib

import numpy as np

from tensorlite.framework import errors, nest
from tensorlite.framework.tensor import wrap

_MAGIC = b"TLE1"
_HEAD = struct.Struct("<4sQI")  # magic, payload length, crc32 of payload


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
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if meta["dtype"] == "string":
        lengths = np.frombuffer(body[:8 * n], dtype=np.int64)
        if len(lengths) != n or (lengths < 0).any() or 8 * n + int(lengths.sum()) != len(body):
            raise ValueError("string lengths do not match the data")
        out = np.empty(n, dtype=object)
        off = 8 * n
        for i, ln in enumerate(lengths):
            out[i] = bytes(body[off:off + ln])
            off += ln
        return out.reshape(shape)
    dtype = np.dtype(meta["dtype"])
    if dtype.kind not in "biufc":  # object, void, datetime: nothing a tensor holds
        raise ValueError(f"dtype {dtype} is not a tensor dtype")
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
    except (ValueError, TypeError, KeyError, struct.error, RecursionError) as e:
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
    except (StopIteration, RuntimeError, TypeError, KeyError, AttributeError) as e:
        raise errors.DataLossError(None, None, f"{what}: its structure does not match its "
                                   f"data ({e!r})") from None


def read_records(f, path):
    """Yields decoded elements; a truncated or corrupted record is a DataLossError."""
    while True:
        pos = f.tell()
        head = f.read(_HEAD.size)
        if not head:
            return
        if len(head) < _HEAD.size:
            raise errors.DataLossError(None, None, f"{path}: truncated record header at offset "
                                       f"{pos}")
        magic, length, crc = _HEAD.unpack(head)
        if magic != _MAGIC:
            raise errors.DataLossError(None, None, f"{path}: bad record magic at offset {pos}")
        payload = f.read(length)
        if len(payload) < length or zlib.crc32(payload) != crc:
            raise errors.DataLossError(None, None, f"{path}: corrupted or truncated record at "
                                       f"offset {pos}")
        yield decode(payload, f"{path}: record at offset {pos}")
