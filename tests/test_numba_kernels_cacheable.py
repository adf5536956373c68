"""Every compiled kernel can be loaded from numba's on-disk cache by the next process.

numba keys a cached closure by the values it closes over; a kernel that calls another
jitted function held in a closure cell (a helper made by the same builder) gets a new key in
every process, so it is compiled again each time (seconds per kernel in a model's first
step) and its cache folder grows without bound. Builders (module functions taking
`numba`) must return kernels whose closures hold no jitted or local function: helpers are
module-level functions made callable from kernels by `numba_backend.jitable`.
"""
import importlib
import inspect
import pkgutil

import pytest

numba = pytest.importorskip("numba")
from numba.core.registry import CPUDispatcher  # noqa: E402

import tensorlite.lite.kernels  # noqa: E402
import tensorlite.ops  # noqa: E402


def _kernel_modules():
    for package, prefix in ((tensorlite.ops, "numba_"), (tensorlite.lite.kernels, "")):
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith(prefix):
                yield importlib.import_module(f"{package.__name__}.{info.name}")


def _builders():
    for module in _kernel_modules():
        for name, fn in vars(module).items():
            if inspect.isfunction(fn) and fn.__module__ == module.__name__ and \
                    _takes_numba(fn):
                yield f"{module.__name__}.{name}", fn


def _takes_numba(fn):
    """A builder: `numba` first, any other parameter optional (a build-time constant)."""
    params = list(inspect.signature(fn).parameters.values())
    return bool(params) and params[0].name == "numba" and \
        all(p.default is not p.empty for p in params[1:])


def _dispatchers(value):
    if isinstance(value, CPUDispatcher):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _dispatchers(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _dispatchers(v)


BUILDERS = dict(_builders())


def test_the_builders_are_found():
    # the walk itself can fail: it must see the kernels this suite knows exist
    assert {"tensorlite.ops.numba_winograd._build", "tensorlite.ops.numba_batch_norm._build",
            "tensorlite.ops.numba_softmax._build"} <= set(BUILDERS)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_kernels_hold_no_jitted_function_in_a_closure(name):
    kernels = list(_dispatchers(BUILDERS[name](numba)))
    assert kernels, f"{name} returned no compiled kernel"
    for k in kernels:
        assert type(k._cache).__name__ != "NullCache", f"{name}: {k.__name__} has no disk cache"
        cells = [c.cell_contents for c in (k.py_func.__closure__ or ())]
        held = [c.__name__ for c in cells if isinstance(c, CPUDispatcher) or
                (callable(c) and "<locals>" in getattr(c, "__qualname__", ""))]
        assert not held, (f"{name}: {k.__name__} closes over the functions {held}, so "
                          f"numba compiles it again in every process; make them "
                          f"module-level helpers (numba_backend.jitable)")
