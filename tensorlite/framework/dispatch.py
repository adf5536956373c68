"""Dispatch: runs a registered op eagerly and tells observers (tape, profiler) about it.

The fast path comes first: with no observer active an op is a NumPy call and a wrap.
Observers register in `OBSERVERS`; each gets ``record(op, inputs, attrs, outputs)``. An
observer with ``defer_error(op, inputs, attrs, error)`` (a tf.function trace) may take an
op's failure on it and return stand-in outputs instead: in a graph an op fails only when it
runs, and an op nothing needs never runs.
"""
from tensorlite.framework import errors, registry
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.user_frame import user_location

OBSERVERS = []
# A trace that wants only shapes (a Keras construction trace, graph/tracing.py's
# EXAMPLE_SIZES) answers f(op, inputs, attrs) with stand-in outputs, or None to run the op.
SHAPE_ONLY = []
# Callables f(op) run just before a forward (the profiler's start times); f(None) after a
# forward fails. Empty means no cost.
BEFORE = []


def execute(op, inputs, attrs):
    """Runs `op` on Tensors `inputs` with Python `attrs`; returns a Tensor or tuple."""
    if SHAPE_ONLY:
        result = SHAPE_ONLY[-1](op, inputs, attrs)
        if result is not None:
            for ob in OBSERVERS:
                ob.record(op, inputs, attrs, result)
            return result
    if BEFORE:
        for f in BEFORE:
            f(op)
    try:
        if attrs:
            out = op.forward(*[t._value for t in inputs], **attrs)
        elif len(inputs) == 2:
            out = op.forward(inputs[0]._value, inputs[1]._value)
        else:
            out = op.forward(*[t._value for t in inputs])
    except Exception as e:  # noqa: BLE001 - translated into a TF-class error below
        if BEFORE:
            for f in BEFORE:
                f(None)
        err = op_error(op, inputs, e)
        result = _deferred(op, inputs, attrs, err) if OBSERVERS else None
        if result is None:
            raise err from e
        for ob in OBSERVERS:
            ob.record(op, inputs, attrs, result)
        return result
    if op.multi_output:
        result = tuple(map(wrap, out))
    else:
        result = wrap(out)
    if OBSERVERS:
        for ob in OBSERVERS:
            ob.record(op, inputs, attrs, result)
    return result


registry._execute = execute


def _deferred(op, inputs, attrs, err):
    """Stand-in outputs from the first observer that defers `err` (see the docstring)."""
    for ob in OBSERVERS:
        defer = getattr(ob, "defer_error", None)
        if defer is not None:
            result = defer(op, inputs, attrs, err)
            if result is not None:
                return result
    return None


class observers_paused:  # noqa: N801 - used as a context manager
    """Runs a block unobserved (variable initialisers: neither taped nor traced)."""

    def __enter__(self):
        self._saved = OBSERVERS[:], BEFORE[:], SHAPE_ONLY[:]
        OBSERVERS.clear()
        BEFORE.clear()
        SHAPE_ONLY.clear()

    def __exit__(self, *exc):
        OBSERVERS[:], BEFORE[:], SHAPE_ONLY[:] = self._saved
        return False


def describe(inputs):
    return ", ".join(f"{t._dtype.name}{list(t._value.shape)}" if isinstance(t, Tensor)
                     else repr(t) for t in inputs)


_HINTS = {
    "broadcast": "make the shapes broadcast-compatible (tf.reshape, tf.expand_dims) or check "
                 "the axis arguments",
    "index": "keep indices within the dimension's size",
}


def op_error(op, inputs, exc, skip=2):
    """Turns an exception raised by a forward computation into a TF-class error naming the
    op, its inputs' dtypes and shapes, and the user's file and line."""
    where = user_location(skip)
    if isinstance(exc, errors.OpError):
        msg = exc.message
        if " at " not in msg.rsplit("[Op:", 1)[-1]:
            msg = f"{msg} [Op:{op.name}] at {where}"
        return type(exc)(None, None, msg)
    text = str(exc)
    hint = ""
    if "broadcast" in text:
        hint = _HINTS["broadcast"]
    elif isinstance(exc, IndexError) or "out of bounds" in text:
        hint = _HINTS["index"]
    cls = errors.InvalidArgumentError
    if isinstance(exc, (MemoryError,)):
        cls = errors.ResourceExhaustedError
    msg = f"{op.name} failed on inputs ({describe(inputs)}): {text}"
    if hint:
        msg += f"; {hint}"
    return cls(None, None, f"{msg} [Op:{op.name}] at {where}")


def invalid(op_name, message):
    """InvalidArgumentError for a check made before running (dtype, shape, attribute)."""
    return errors.InvalidArgumentError(
        None, None, f"{message} [Op:{op_name}] at {user_location(2)}")
