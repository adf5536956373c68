"""Sizes claimed by files and requests, checked before anything is allocated.

A file's header may claim any size; a loader that trusts it allocates what an attacker
asks for. Every loader checks a claimed size against the bytes actually present
(`check_claimed`: DataLossError naming the file) and an element count against what the
claim's bytes can hold (`check_shape`), and anything that decompresses is capped
(`decompression_cap`, `check_inflated`: ResourceExhaustedError naming the file and the
setting that raises the cap).

The cap is `TENSORLITE_MAX_DECOMPRESSED_BYTES` in the environment (default 4 GiB), or
`set_decompression_cap(n)` at run time. JSON configs, which parse into many times their
bytes of Python objects, have a smaller cap (`check_config`:
`TENSORLITE_MAX_CONFIG_BYTES`, default 64 MiB).

Example:
    >>> check_claimed(16, 8, "record length", "data.tfrecord")  # doctest: +SKIP
    Traceback (most recent call last):
    DataLossError: data.tfrecord: the record length claims 16 bytes but only 8 are present
"""
import os

import numpy as np

from tensorlite.framework import errors

_DEFAULT_CAP = 4 << 30
_cap = [None]


def decompression_cap():
    """The most bytes one archive member, decompressed stream or config may expand to."""
    if _cap[0] is not None:
        return _cap[0]
    value = os.environ.get("TENSORLITE_MAX_DECOMPRESSED_BYTES")
    try:
        return int(value) if value else _DEFAULT_CAP
    except ValueError:
        raise ValueError(f"TENSORLITE_MAX_DECOMPRESSED_BYTES must be a whole number of "
                         f"bytes, not {value!r}") from None


def set_decompression_cap(nbytes):
    """Sets the cap for this process (None: back to the environment's or the default)."""
    _cap[0] = None if nbytes is None else int(nbytes)


def check_claimed(claimed, present, what, source):
    """DataLossError unless `claimed` bytes (a length field) fit in `present` bytes."""
    if claimed < 0 or claimed > present:
        raise errors.DataLossError(
            None, None, f"{source}: the {what} claims {claimed} bytes but only {present} "
                        f"are present; the file is truncated or corrupt")


def check_inflated(claimed, what, source):
    """ResourceExhaustedError if a decompressed size exceeds the cap."""
    cap = decompression_cap()
    if claimed > cap:
        raise errors.ResourceExhaustedError(
            None, None, f"{source}: the {what} expands to {claimed} bytes, more than the "
                        f"cap of {cap}; raise TENSORLITE_MAX_DECOMPRESSED_BYTES if the file "
                        f"is trusted")


def shape_bytes(shape, dtype):
    """Bytes a dense array of `shape` and NumPy `dtype` takes; DataLossError for negative
    dimensions. Python ints, so a huge claim cannot overflow."""
    n = 1
    for d in shape:
        d = int(d)
        if d < 0:
            raise errors.DataLossError(None, None, f"negative dimension {d} in shape "
                                                   f"{list(shape)}")
        n *= d
    return n * np.dtype(dtype).itemsize


def check_shape(shape, dtype, present, what, source):
    """DataLossError unless an array of `shape`/`dtype` fits in the `present` bytes that
    are to fill it (a constant, a tensor proto, a record)."""
    need = shape_bytes(shape, dtype)
    if need > present:
        raise errors.DataLossError(
            None, None, f"{source}: the {what} claims shape {list(shape)} of "
                        f"{np.dtype(dtype).name} ({need} bytes) but only {present} bytes "
                        f"are present")


_DEFAULT_CONFIG_CAP = 64 << 20


def check_config(claimed, what, source):
    """ResourceExhaustedError if a JSON config (or other text parsed into Python objects,
    which take tens of times its bytes) is larger than `TENSORLITE_MAX_CONFIG_BYTES`
    (default 64 MiB, never above the decompression cap)."""
    value = os.environ.get("TENSORLITE_MAX_CONFIG_BYTES")
    try:
        cap = int(value) if value else _DEFAULT_CONFIG_CAP
    except ValueError:
        raise ValueError(f"TENSORLITE_MAX_CONFIG_BYTES must be a whole number of bytes, "
                         f"not {value!r}") from None
    cap = min(cap, decompression_cap())
    if claimed > cap:
        raise errors.ResourceExhaustedError(
            None, None, f"{source}: the {what} is {claimed} bytes, more than the cap of "
                        f"{cap} for configs; raise TENSORLITE_MAX_CONFIG_BYTES if the file "
                        f"is trusted")
