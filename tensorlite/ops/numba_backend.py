"""The optional numba backend (the `jit` extra): whether it may be used, and kernels
compiled on first use (cached on disk by numba), never at import.

TENSORLITE_NUMBA=0 (read once, on first use) switches it off; without numba installed
nothing changes.

Example:
    >>> kernel = compiled("softmax_rows", build)   # None without numba
"""
import importlib.util
import os
import warnings

_KERNELS = {}
_STATE = {}  # "on": numba installed and not switched off, decided on first use


def available():
    """True when numba is installed and TENSORLITE_NUMBA was not 0 when first asked."""
    on = _STATE.get("on")
    if on is None:
        on = _STATE["on"] = os.environ.get("TENSORLITE_NUMBA", "1") != "0" and \
            importlib.util.find_spec("numba") is not None
    return on


def compiled(name, build):
    """The kernel `build(numba)` returns, built once per process; None without numba."""
    if name not in _KERNELS:
        if not available():
            return None
        try:
            import numba  # noqa: PLC0415 - optional, and slow to import
            _KERNELS[name] = build(numba)
        except Exception as e:  # noqa: BLE001 - a broken install: NumPy carries on
            warnings.warn(f"tensorlite: numba could not build {name} ({e}); using NumPy "
                          f"(set TENSORLITE_NUMBA=0 to skip it)", RuntimeWarning, stacklevel=2)
            _STATE["on"] = False
            return None
    return _KERNELS[name]


_JITABLE = set()


def jitable(*functions, inline="never", **options):
    """Makes module-level functions callable from kernels (numba's register_jitable, with
    jit `options`), once each. Kernels reach their helpers this way, never as jitted
    functions in a closure: numba keys a cached closure by the values it closes over, and
    a jitted function's key differs in every process (the kernel would compile again in
    each one), where a module-level function's is its name."""
    import numba  # noqa: PLC0415 - optional, and slow to import
    for fn in functions:
        if fn not in _JITABLE:
            numba.extending.register_jitable(inline=inline, **options)(fn)
            _JITABLE.add(fn)
