"""Per-shape choice among the convolution forward algorithms, by measurement.

Each algorithm is a function ``f(x4, w, strides, dilations, pads) -> [N, OH, OW, O]`` with
an eligibility rule. The first call for a shape (input, filter, geometry, dtype) with more
than one eligible algorithm times each on the real input once and remembers the fastest,
as cuDNN's benchmark mode does; later calls are a dict lookup. Small convolutions are
timed a few times each (the best run counts), so a compiled kernel's first-call cost and
the timer's noise do not decide.

`forced(name)` (tests, benchmarks) or TENSORLITE_CONV_ALGO=name makes every eligible
shape use one algorithm; shapes it cannot handle keep the choice.

An `epilogue` (fused_ops: a scale, bias add, residual sum and activation, in place on a
view of the output) is applied by the algorithms that fuse it to each run of images right
after computing it, while it is in cache and on the thread that made it; for the others, to
the whole output. It is called `epilogue(view, start)`, `start` being the index of the
view's first element in the whole row-major output (where its residual elements are).

Example:
    >>> with forced("winograd"):
    ...     y = tf.nn.conv2d(x, w, 1, "SAME")   # 3x3 stride 1: Winograd F(2x2, 3x3)
"""
import contextlib
import os
import time

from tensorlite.framework import blas_threads, determinism

# name -> (eligible(x_shape, w_shape, strides, dilations, pads, dtype_char), run)
ALGORITHMS = {}
# names of the algorithms that split their runs of images over threads themselves
SPLIT = set()
# names of the algorithms that take an `epilogue` and apply it to each run they finish
FUSES = set()
_CHOICE = {}
_FILTER_CHOICE = {}  # the same for filter gradients
_CACHE_LIMIT = 1024
_FORCED = [os.environ.get("TENSORLITE_CONV_ALGO") or None]
# Below this many multiply-adds a convolution is timed SMALL_REPEATS times per algorithm.
MEASURE_MIN_MACS = 2_000_000
SMALL_REPEATS = 3
SAMPLE_IMAGES = 4
STATS = {"measured": 0, "hits": 0}


def algorithm(name, eligible, split=False, fuses=False):
    """Decorator registering a forward algorithm under `name`; `split`: it spreads its runs
    of images over threads itself (intra_op_pool.map_runs) instead of using BLAS threads;
    `fuses`: it takes an optional sixth argument, the epilogue, and applies it per run
    (with the run's offset in the output, see the module's docstring)."""
    def register(run):
        ALGORITHMS[name] = (eligible, run)
        if split:
            SPLIT.add(name)
        if fuses:
            FUSES.add(name)
        return run
    return register


@contextlib.contextmanager
def forced(name):
    """Runs a block with every eligible convolution using algorithm `name`."""
    if name is not None and name not in ALGORITHMS:
        raise ValueError(f"unknown convolution algorithm {name!r}; choose one of "
                         f"{sorted(ALGORITHMS)}")
    saved = _FORCED[0]
    _FORCED[0] = name
    try:
        yield
    finally:
        _FORCED[0] = saved


def eligible(x_shape, w_shape, strides, dilations, pads, dtype_char):
    """Names of the algorithms that can run this convolution, in preference order."""
    return [n for n, (ok, _) in ALGORITHMS.items()
            if ok(x_shape, w_shape, strides, dilations, pads, dtype_char)]


def _time(run, args):
    start = time.perf_counter()
    out = run(*args)
    return time.perf_counter() - start, out


def _measure(names, args, macs):
    """(fastest name, the convolution's output). Small convolutions are cheap to time: the
    best of a few runs, past any first-call costs (a compiled kernel's compilation,
    first-touch page faults). Large batches are timed on their first SAMPLE_IMAGES images, twice each,
    so that choosing costs a fraction of one full convolution; the winner then runs."""
    x4 = args[0]
    reps, sample = SMALL_REPEATS, args
    if macs >= MEASURE_MIN_MACS:
        reps = 1
        if x4.shape[0] > 2 * SAMPLE_IMAGES:
            reps, sample = 2, (x4[:SAMPLE_IMAGES],) + args[1:]
    timed = [(min((_time(ALGORITHMS[nm][1], sample) for _ in range(reps)),
                  key=lambda t: t[0]), nm) for nm in names]
    (_, out), best = min(timed, key=lambda t: t[0][0])
    if sample is not args:
        out = ALGORITHMS[best][1](*args)
    return best, out


def conv(x4, w, strides, dilations, pads, epilogue=None):
    """The convolution by the algorithm chosen for its shape; `epilogue(view)`, if given,
    is applied in place to the output (see the module's docstring)."""
    key = (x4.shape, w.shape, strides, dilations, pads, x4.dtype.char)
    forced_name = _FORCED[0]
    n, h, wd, _ = x4.shape
    macs = n * h * wd * w.size // (strides[0] * strides[1])
    args = (x4, w, strides, dilations, pads)
    if forced_name is not None:
        entry = ALGORITHMS.get(forced_name)
        if entry is None:  # only the environment variable can name an unknown one
            raise ValueError(f"TENSORLITE_CONV_ALGO={forced_name!r} names no convolution "
                             f"algorithm; choose one of {sorted(ALGORITHMS)} or unset it")
        if entry[0](*key):
            return _run(forced_name, macs, args, epilogue)
    name = _CHOICE.get(key)
    if name is not None:
        STATS["hits"] += 1
        return _run(name, macs, args, epilogue)
    names = eligible(*key)
    if len(names) == 1 or determinism.enabled():  # (determinism: the preference order)
        best, out = names[0], ALGORITHMS[names[0]][1](*args)
    else:
        STATS["measured"] += 1
        best, out = _measure(names, args, macs)
    if len(_CHOICE) >= _CACHE_LIMIT:
        _CHOICE.clear()
    _CHOICE[key] = best
    if epilogue is not None:
        epilogue(out, 0)
    return out


def _run(name, macs, args, epilogue):
    run = ALGORITHMS[name][1]
    if epilogue is None:
        return blas_threads.run(macs, run, *args, split=name in SPLIT)
    if name in FUSES:
        return blas_threads.run(macs, run, *args, epilogue, split=name in SPLIT)
    out = blas_threads.run(macs, run, *args, split=name in SPLIT)
    epilogue(out, 0)
    return out


def choice(x_shape, w_shape, strides, dilations, pads, dtype_char):
    """The algorithm remembered for a shape, or None before its first call."""
    return _CHOICE.get((tuple(x_shape), tuple(w_shape), strides, dilations, pads, dtype_char))


def filter_grad(candidates, x, g, *geo):
    """A convolution's filter gradient by the fastest of `candidates` ({name: fn(x, g,
    *geo)}, all splitting their runs of images over threads) for its shape, measured on
    the first call (on SAMPLE_IMAGES images of a large batch, the best of two runs each);
    `forced(name)` applies here too where `name` is a candidate."""
    key = (x.shape, g.shape, geo, x.dtype.char)
    name = _FORCED[0] if _FORCED[0] in candidates else _FILTER_CHOICE.get(key)
    if name is None:
        if len(candidates) == 1 or determinism.enabled():
            name = next(iter(candidates))
        else:
            STATS["measured"] += 1
            sample = (x, g) if x.shape[0] <= 2 * SAMPLE_IMAGES else \
                (x[:SAMPLE_IMAGES], g[:SAMPLE_IMAGES])
            name = min(candidates, key=lambda nm: min(
                _time(candidates[nm], sample + geo)[0] for _ in range(2)))
        if len(_FILTER_CHOICE) >= _CACHE_LIMIT:
            _FILTER_CHOICE.clear()
        _FILTER_CHOICE[key] = name
    macs = g.size * x.shape[-1] * geo[0][0] * geo[0][1]
    return blas_threads.run(macs, candidates[name], x, g, *geo, split=True)


def filter_choice(x_shape, g_shape, geo, dtype_char):
    """The filter-gradient algorithm remembered for a shape, or None before its first call."""
    return _FILTER_CHOICE.get((tuple(x_shape), tuple(g_shape), tuple(geo), dtype_char))
