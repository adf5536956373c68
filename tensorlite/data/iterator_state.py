"""Iterator checkpoint state as plain data: a JSON tree plus raw arrays, never a pickle.

An iterator's `save()` returns a tree of tuples, lists, dicts, Python scalars, strings,
bytes, NumPy arrays and scalars (positions, shuffle buffers, RNG states as integers).
`dumps` turns it into bytes with `element_io.pack`; `loads` rebuilds it and can do nothing
but that: a crafted checkpoint fails with DataLossError, it cannot run code.

Example:
    >>> loads(dumps((3, {"state": 2**100}, np.arange(4))))[1]
    {'state': 1267650600228229401496703205376}
"""
import base64

import numpy as np

from tensorlite.data import element_io
from tensorlite.framework import errors
from tensorlite.framework.tensor import Tensor, wrap

VERSION = 2
_MAX_DEPTH = 200


def dumps(state):
    """Bytes of an iterator state tree; a value of another type is UnimplementedError."""
    arrays = []
    tree = _encode(state, arrays, 0)
    return element_io.pack({"version": VERSION, "state": tree}, arrays)


def _encode(v, arrays, depth):
    if depth > _MAX_DEPTH:
        raise errors.UnimplementedError(None, None, "iterator state is nested too deeply to "
                                        "checkpoint")
    t = type(v)
    if v is None or t in (bool, int, str):
        return v
    if t is float:
        return {"f": repr(v)}  # keeps inf and nan exactly, unlike JSON numbers
    if t is bytes:
        return {"b": base64.b64encode(v).decode("ascii")}
    if t is tuple or t is list:
        return {"t" if t is tuple else "l": [_encode(x, arrays, depth + 1) for x in v]}
    if t is dict:
        return {"d": [[_encode(k, arrays, depth + 1), _encode(x, arrays, depth + 1)]
                      for k, x in v.items()]}
    if isinstance(v, Tensor):
        arrays.append(v._value)
        return {"T": len(arrays) - 1}
    if isinstance(v, (np.ndarray, np.generic)):
        arrays.append(np.asarray(v))
        return {"a" if t is np.ndarray else "s": len(arrays) - 1}
    raise errors.UnimplementedError(
        None, None, f"cannot checkpoint an iterator whose state holds a {t.__name__}; "
        f"checkpoints store only arrays, numbers and strings")


def loads(blob, what="iterator checkpoint state"):
    """The state tree from `dumps`'s bytes; malformed data is a DataLossError."""
    header, arrays = element_io.unpack(bytes(blob), what)
    if not isinstance(header, dict) or header.get("version") != VERSION:
        raise errors.DataLossError(None, None, f"{what}: unknown format (expected version "
                                   f"{VERSION}); was it written by this tensorlite?")
    try:
        return _decode(header["state"], arrays, 0)
    except (KeyError, IndexError, TypeError, ValueError, RecursionError) as e:
        raise errors.DataLossError(None, None, f"{what} is malformed ({e!r})") from None


def _decode(node, arrays, depth):
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deeply")
    if node is None or type(node) in (bool, int, str):
        return node
    if type(node) is not dict or len(node) != 1:
        raise ValueError(f"unexpected node {node!r:.60}")
    (tag, x), = node.items()
    if tag == "f":
        return float(x)
    if tag == "b":
        return base64.b64decode(x, validate=True)
    if tag in ("t", "l"):
        items = [_decode(i, arrays, depth + 1) for i in x]
        return tuple(items) if tag == "t" else items
    if tag == "d":
        return {_decode(k, arrays, depth + 1): _decode(i, arrays, depth + 1) for k, i in x}
    if tag == "T":
        return wrap(arrays[x])
    if tag == "a":
        return arrays[x]
    if tag == "s":
        return arrays[x][()]
    raise ValueError(f"unknown tag {tag!r}")
