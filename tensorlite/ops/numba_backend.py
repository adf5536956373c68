"""The optional numba backend (the `jit` extra): whether it may be used, and kernels
compiled on first use (cached on disk by numba), never at import.

TENSORLITE_NUMBA=0 switches it off; without numba installed nothing changes.

Example:
    >>> kernel = compiled("softmax_rows", build)   # None without numba
"""
import importlib.util
import os

_KERNELS = {}
_PRESENT = []


def available():
    """True when numba is installed and not switched off (TENSORLITE_NUMBA=0)."""
    if os.environ.get("TENSORLITE_NUMBA", "1") == "0":
        return False
    if not _PRESENT:
        _PRESENT.append(importlib.util.find_spec("numba") is not None)
    return _PRESENT[0]


def compiled(name, build):
    """The kernel `build(numba)` returns, built once per process; None without numba."""
    if name not in _KERNELS:
        if not available():
            return None
        import numba  # noqa: PLC0415 - optional, and slow to import
        _KERNELS[name] = build(numba)
    return _KERNELS[name]
