"""`tf.GradientTape`: records op calls and runs reverse-mode differentiation over them.

The tape is an observer of dispatch: while it records, every op whose inputs it tracks
(watched tensors, trainable variables read inside it, outputs of recorded ops) is appended
as (op, inputs, attrs, outputs). `gradient` walks the relevant entries backwards calling
each op's registered gradient rule; the rules are tensorlite ops, so an outer tape records
the backward pass and higher-order gradients come for free. `jacobian` pushes all basis
cotangents through the backward pass at once (rules accept leading batch dimensions).

Example:
    >>> x = tf.Variable(3.0)
    >>> with tf.GradientTape() as tape:
    ...     y = x ** 2
    >>> tape.gradient(y, x).numpy()
    6.0
"""
import enum
import gc
import warnings

import numpy as np

from tensorlite.framework import nest as structure
from tensorlite.framework import dispatch, variables
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, register, set_needed_inputs
from tensorlite.framework.tensor import _ON_NUMPY, Tensor, wrap
from tensorlite.framework.user_frame import user_location
from tensorlite.ops import math_ops
from tensorlite.ops.array_ops import reshape, stack, transpose
from tensorlite.ops.common import to_tensor

_ACTIVE = []  # recording tapes, innermost last
# The vectorizer (tensorlite/graph/vectorize.py, a layer above) installs here the function
# that runs one backward pass for every cotangent row at once by the ops' batching rules:
# pfor(backward, rows) -> [gradient per source, each with the rows as axis 0, or None].
PFOR = []

READ_VARIABLE = register(
    "ReadVariableOp", lambda v: v, grad=lambda g, ans, v: g,
    unsupported="tf onnx tflite batch tf_import")


# Observers of `gradient()`: each is called as hook(sources, i, grad) once per position i of
# the flattened sources, as soon as that source's gradient is final during the backward pass
# (grad is a Tensor, or None when no gradient reaches it). A data-parallel trainer starts
# reducing the last layers' gradients while the first layers' are still being computed
# (Horovod's overlap); the result of `gradient()` is unchanged. Lower layers never import
# the observers: they append themselves here.
GRADIENT_HOOKS = []


class UnconnectedGradients(enum.Enum):
    NONE = "none"
    ZERO = "zero"


# A recorded op is one flat tuple (cheapest to build on the hot path, and one long-lived
# object per op for the GC instead of an entry holding the op's inputs tuple: a long tape
# records ~7% faster): (op, attrs, outputs, where, *inputs) — `where` is the user's line
# for ops without a rule; `outputs` is the op's result as dispatch returned it: one
# Tensor, or a tuple of them (read it through _outputs; the inputs through _inputs).
OP, ATTRS, OUTPUTS, WHERE = range(4)
_FIRST_INPUT = 4


def _inputs(entry):
    """A recorded op's inputs, as a tuple."""
    return entry[_FIRST_INPUT:]


def _outputs(result):
    """A recorded op's outputs as a tuple (a single output is stored bare)."""
    return result if type(result) is tuple else (result,)


def _is_var(x):
    return getattr(x, "_is_variable", False)


def _on_variable_read(var, tensor):
    for tape in _ACTIVE:
        if tape._recording and ((tape._watch_accessed and var.trainable)
                                or id(var) in tape._tracked):
            tape._tracked[id(var)] = var
            tape._entries.append((READ_VARIABLE, None, tensor, None, var))
            tape._tracked[id(tensor)] = tensor


def _on_numpy(tensor):
    for tape in _ACTIVE:
        if tape._recording and id(tensor) in tape._tracked:
            tape._breaks.append((id(tensor), user_location(2)))


# While a tape records, every op adds long-lived objects (its entry, the tensors it keeps);
# with CPython's default thresholds (700, 10) the cyclic collector then re-scans the
# growing record over and over: a long tape recorded at ~10x a NumPy add, ~6.8x with a
# gen-0 threshold of 10,000 and ~6.3x with gen-1 collections 10x rarer too (CPU time,
# medians of 5 interleaved runs, bench/eager_overhead.py; ~6.0x with the GC off). Raised
# for the tapes' lifetime, then restored.
_GC_THRESHOLD0 = 10_000
_GC_THRESHOLD1 = 100
_GC_SAVED = []  # (thresholds before, thresholds we set) while any tape records


def _raise_gc_threshold():
    before = gc.get_threshold()
    if before[0] and before[0] < _GC_THRESHOLD0:
        gc.set_threshold(_GC_THRESHOLD0, max(before[1], _GC_THRESHOLD1), *before[2:])
        _GC_SAVED.append((before, gc.get_threshold()))


def _restore_gc_threshold():
    if _GC_SAVED:
        before, ours = _GC_SAVED.pop()
        if gc.get_threshold() == ours:  # unless the program changed it meanwhile
            gc.set_threshold(*before)


def _activate(tape):
    if not _ACTIVE:
        variables.READ_HOOKS.append(_on_variable_read)
        _ON_NUMPY.append(_on_numpy)
        _raise_gc_threshold()
    _ACTIVE.append(tape)
    dispatch.OBSERVERS.append(tape)


def _deactivate(tape):
    _ACTIVE.remove(tape)
    dispatch.OBSERVERS.remove(tape)
    if not _ACTIVE:
        variables.READ_HOOKS.remove(_on_variable_read)
        _ON_NUMPY.remove(_on_numpy)
        _restore_gc_threshold()


class GradientTape:
    """Records operations for automatic differentiation."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._entries = []
        self._tracked = {}  # id -> object; holding the object keeps the id valid
        self._breaks = []  # (tensor id, location) where a tracked tensor left for NumPy
        self._cuts = []  # (input id, op name, location) at non-differentiable ops
        self._recording = False
        self._used = False

    # -- context -------------------------------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter "
                             "an already-active tape.")
        self._recording = True
        _activate(self)
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._recording = False
            _deactivate(self)
        return False

    def stop_recording(self):
        """Context manager that pauses recording on this tape."""
        return _StopRecording(self)

    def reset(self):
        """Clears everything recorded (inside or outside the `with`)."""
        self._entries.clear()
        self._tracked.clear()
        self._breaks.clear()
        self._cuts.clear()
        self._used = False

    # -- watching ------------------------------------------------------------------------
    def watch(self, tensor):
        """Ensures `tensor` (or a nested structure of tensors/variables) is traced."""
        for t in structure.flatten(tensor):
            if not (isinstance(t, Tensor) or _is_var(t)):
                raise ValueError(f"Passed in object {t!r} of type {type(t).__name__!r}, not "
                                 f"tf.Tensor or tf.Variable, to GradientTape.watch")
            if not t.dtype.is_differentiable:
                warnings.warn(f"The dtype of the watched tensor must be floating (e.g. "
                              f"tf.float32), got {t.dtype!r}", stacklevel=2)
            self._tracked[id(t)] = t

    def watched_variables(self):
        return tuple(v for v in self._tracked.values() if _is_var(v))

    # -- the observer hook ---------------------------------------------------------------
    def record(self, op, inputs, attrs, outputs):
        if not self._recording:
            return
        tracked = self._tracked
        for t in inputs:
            if id(t) in tracked:
                break
        else:
            return
        grad = op.grad
        if type(outputs) is not tuple and grad is not None and grad is not NOT_DIFFERENTIABLE:
            # the hot path (a long tape records ~1 µs per op): a single output is stored
            # bare, not in a 1-tuple: one long-lived object fewer per op for the GC to scan
            self._entries.append((op, attrs, outputs, None) + inputs
                                 if type(inputs) is tuple else
                                 (op, attrs, outputs, None, *inputs))
            if outputs._dtype.is_differentiable:
                tracked[id(outputs)] = outputs
            return
        if grad is NOT_DIFFERENTIABLE:
            self._cuts.append((tuple(id(t) for t in inputs if id(t) in tracked), op.name,
                               user_location(3)))
            return
        self._entries.append((op, attrs, outputs,
                              user_location(3) if grad is None else None, *inputs))
        for o in _outputs(outputs):
            if o._dtype.is_differentiable:
                tracked[id(o)] = o

    # -- differentiation -----------------------------------------------------------------
    def _begin_use(self, what):
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians); create the tape with "
                               "tf.GradientTape(persistent=True) to call "
                               f"{what}() more than once")
        self._used = True

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(target)/d(sources); `sources` may be any nested structure (the result has the
        same structure). Unconnected sources give None, or zeros with
        ``unconnected_gradients="zero"``."""
        self._begin_use("gradient")
        unconnected = UnconnectedGradients(getattr(unconnected_gradients, "value",
                                                   unconnected_gradients))
        targets = [_as_target(t) for t in structure.flatten(target)]
        flat_sources = structure.flatten(sources)
        _check_sources(flat_sources)
        if output_gradients is None:
            cots = [math_ops.ones_like_t(t) for t in targets]
        else:
            cots = [math_ops.ones_like_t(t) if c is None else to_tensor(c, t._dtype)
                    for t, c in zip(targets, structure.flatten(output_gradients))]
        recorded_reads = self._recording  # a target variable's read above is on the tape
        on_final = _final_gradient_notifier(flat_sources, structure.flatten(target))
        grads = self._backward(targets, cots, flat_sources, on_final)
        source_ids = {id(s) for s in flat_sources}
        for t, c in zip(structure.flatten(target), cots):
            # d v / d v = 1: TF matches the variable's handle, whether the tape watched it
            # or not (checked against TF: unread, unwatched, non-trainable alike)
            if _is_var(t) and not recorded_reads and (id(t) in self._tracked or
                                                      id(t) in source_ids):
                _accumulate(grads, id(t), c)
        if on_final is not None:
            on_final.flush(grads)
        out = [_finish(grads.get(id(s)), s, unconnected) for s in flat_sources]
        if not self._persistent:  # as TF: a used non-persistent tape lets go of its record
            self._entries.clear()
            self._tracked = {k: v for k, v in self._tracked.items() if _is_var(v)}
        return structure.pack_like(sources, out)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The full jacobian: result[i..., j...] = d target[i...] / d source[j...]."""
        self._begin_use("jacobian")
        unconnected = UnconnectedGradients(getattr(unconnected_gradients, "value",
                                                   unconnected_gradients))
        y = _as_target(target)
        flat_sources = structure.flatten(sources)
        _check_sources(flat_sources)
        n = y._value.size
        eye = np.eye(n, dtype=y._value.dtype).reshape((n,) + y._value.shape)
        grads = self._batched_backward(y, eye, flat_sources, experimental_use_pfor)
        out = []
        for s in flat_sources:
            g = grads.get(id(s))
            sshape = tuple(s.shape.as_list())
            if g is None:
                out.append(None if unconnected is UnconnectedGradients.NONE else
                           wrap(np.zeros(y._value.shape + sshape, dtype=s.dtype.as_numpy_dtype)))
            else:
                out.append(reshape(g, y._value.shape + sshape))
        return structure.pack_like(sources, out)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example jacobian: result[b, i..., j...] = d target[b, i...] / d source[b, j...];
        examples must be independent, as in TensorFlow."""
        self._begin_use("batch_jacobian")
        y = _as_target(target)
        if y._value.ndim < 1 or source.shape.rank < 1 or \
                y._value.shape[0] != source.shape[0]:
            raise ValueError(f"batch_jacobian needs target and source with the same first "
                             f"(batch) dimension; got {list(y._value.shape)} and {source.shape}")
        b = y._value.shape[0]
        per = int(np.prod(y._value.shape[1:]))
        eye = np.eye(per, dtype=y._value.dtype).reshape((per, 1) + y._value.shape[1:])
        cot = np.broadcast_to(eye, (per, b) + y._value.shape[1:])
        grads = self._batched_backward(y, cot, [source], experimental_use_pfor)
        g = grads.get(id(source))
        xshape = tuple(source.shape.as_list())
        if g is None:
            if UnconnectedGradients(getattr(unconnected_gradients, "value",
                                            unconnected_gradients)) is UnconnectedGradients.NONE:
                return None
            return wrap(np.zeros((b,) + y._value.shape[1:] + xshape[1:],
                                 dtype=source.dtype.as_numpy_dtype))
        g = reshape(g, (per,) + xshape)  # [per, b, x...]
        nx = len(xshape) - 1
        g = transpose(g, [1, 0] + list(range(2, 2 + nx)))
        return reshape(g, (b,) + y._value.shape[1:] + xshape[1:])

    def _batched_backward(self, y, cot, sources, use_pfor):
        """{id(source): gradient with cot's rows as axis 0}: with `use_pfor`, the backward
        pass of one row vectorized over all rows by the ops' batching rules (one run); where
        a tape or a tf.function trace watches (the jacobian must then be made of recorded
        ops) the rows go through the gradient rules together (they take leading batch
        dimensions); otherwise, or for a rule that cannot, one backward pass per row."""
        if use_pfor and PFOR and not dispatch.OBSERVERS and len(cot):
            def row_backward(c):
                grads = self._backward([y], [c], sources)
                return [grads.get(id(s)) for s in sources]
            rows = PFOR[0](row_backward, wrap(np.ascontiguousarray(cot)))
            return {id(s): g for s, g in zip(sources, rows) if g is not None}
        entries = self._relevant(sources)
        if use_pfor and all(e[OP].batchable for e in entries):
            return self._backward([y], [wrap(np.ascontiguousarray(cot))], sources)
        rows = [self._backward([y], [wrap(np.ascontiguousarray(c))], sources) for c in cot]
        out = {}
        for s in sources:
            parts = [r.get(id(s)) for r in rows]
            if all(p is None for p in parts):
                continue
            zeros = np.zeros(tuple(s.shape.as_list()), dtype=s.dtype.as_numpy_dtype)
            out[id(s)] = stack([wrap(zeros) if p is None else p for p in parts])
        return out

    def _relevant(self, sources, reach=None):
        """Entries on a path from a source (forward reachability), in recording order;
        `reach` (a set, filled in) receives the ids of everything that depends on a source."""
        reach = set() if reach is None else reach
        reach.update(id(s) for s in sources)
        rel = []
        for e in list(self._entries):
            for t in _inputs(e):
                if id(t) in reach:
                    rel.append(e)
                    for o in _outputs(e[OUTPUTS]):
                        reach.add(id(o))
                    break
        return rel

    def _backward(self, targets, cotangents, sources, on_final=None):
        reach = set()
        entries = self._relevant(sources, reach)
        keep = {id(s) for s in sources}
        grads = {}
        for t, c in zip(targets, cotangents):
            _accumulate(grads, id(t), c)
        if on_final is not None:
            on_final.plan(entries)
        for k in range(len(entries) - 1, -1, -1):
            self._apply_rule(entries[k], grads, keep, reach)
            if on_final is not None and k in on_final.final_after:
                on_final.fire(k, grads)
        return grads

    def _apply_rule(self, entry, grads, keep, reach):
        """Pushes the cotangents of one recorded op's outputs to its inputs."""
        op, attrs, outs, where = entry[:_FIRST_INPUT]
        inputs = _inputs(entry)
        outs = _outputs(outs)
        gs = [grads.get(id(o)) if id(o) in keep else grads.pop(id(o), None) for o in outs]
        if all(g is None for g in gs):
            return
        if op.grad is None:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: "
                              f"{op.name}), recorded at {where}; register a gradient "
                              f"rule for it or wrap the computation in tf.custom_gradient")
        set_needed_inputs(tuple(id(i) in reach for i in inputs))
        if op.multi_output or len(outs) > 1:
            lead = next(g for g in gs if g is not None)._value.shape
            lead = lead[:len(lead) - next(o for o, g in zip(outs, gs)
                                          if g is not None)._value.ndim]
            gs = [wrap(np.zeros(lead + o._value.shape, dtype=o._value.dtype))
                  if g is None else g for o, g in zip(outs, gs)]
            in_grads = op.grad(tuple(gs), outs, *inputs, **(attrs or {}))
        else:
            in_grads = op.grad(gs[0], outs[0], *inputs, **(attrs or {}))
        set_needed_inputs(None)
        if type(in_grads) not in (tuple, list):
            in_grads = (in_grads,)
        for inp, ig in zip(inputs, in_grads):
            if ig is not None and id(inp) in self._tracked:
                _accumulate(grads, id(inp), ig)

    # -- explanations (beyond TensorFlow) ------------------------------------------------
    def explain(self, target, sources):
        """Says, for each source, whether a gradient reaches it and if not why: not watched,
        a non-floating dtype, a path broken by `.numpy()`/a Python value, a
        non-differentiable op (which op, at which line of your code), or no dependence."""
        targets = [t for t in structure.flatten(target)]
        lines = []
        for s in structure.flatten(sources):
            lines.append(f"{_label(s)}: {self._why(targets, s)}")
        return "\n".join(lines)

    def _why(self, targets, s):
        if not (isinstance(s, Tensor) or _is_var(s)):
            return f"not a tensor or variable ({type(s).__name__})"
        if not s.dtype.is_differentiable:
            return (f"its dtype is {s.dtype.name}; only floating and complex tensors have "
                    f"gradients (tf.cast it to a float dtype before the computation)")
        if id(s) not in self._tracked:
            if _is_var(s) and not s.trainable:
                return "it is a non-trainable variable; call tape.watch(v) to differentiate it"
            if _is_var(s):
                return ("the variable was not read while this tape was recording (read it "
                        "inside the `with tf.GradientTape()` block)")
            return ("it is not watched: call tape.watch(x) inside the `with` block, or make "
                    "it a tf.Variable")
        reach = {id(s)}
        for e in self._entries:
            if any(id(t) in reach for t in _inputs(e)):
                reach.update(id(o) for o in _outputs(e[OUTPUTS]))
        if any(id(t) in reach for t in targets):
            return "connected: the gradient flows"
        reasons = []
        for tid, where in self._breaks:
            if tid in reach:
                reasons.append(f"the path was broken at {where}, where a tensor that depends on "
                               f"it was turned into a NumPy/Python value (.numpy(), float(), "
                               f"np.asarray); keep the computation in tensorlite ops")
        for ids, opname, where in self._cuts:
            if any(i in reach for i in ids):
                reasons.append(f"the path goes through {opname}, which has no gradient "
                               f"(integer or discrete result), at {where}")
        if not any(id(t) in self._tracked for t in targets):
            reasons.append("the target was not computed while this tape was recording "
                           "(or was computed from untracked values only)")
        if not reasons:
            reasons.append("the target does not depend on it")
        return "; ".join(reasons)


def _final_gradient_notifier(sources, targets):
    """A _FinalGradients for this gradient() call, or None (no cost) when nobody listens."""
    if not GRADIENT_HOOKS:
        return None
    # d v / d v is added after the backward pass for a variable that is also a target.
    late = {id(t) for t in targets if _is_var(t)}
    return _FinalGradients(sources, late)


class _FinalGradients:
    """Tells GRADIENT_HOOKS when each source's gradient is final: after the backward pass
    has processed the earliest recorded op that reads the source, nothing adds to it."""

    def __init__(self, sources, late_ids):
        self._sources = sources
        self._late = late_ids
        self._pending = set(range(len(sources)))
        self.final_after = {}   # entry index -> source positions final once it is processed

    def plan(self, entries):
        positions = {}
        for i, s in enumerate(self._sources):
            if id(s) not in self._late:
                positions.setdefault(id(s), []).append(i)
        for k, entry in enumerate(entries):
            for t in _inputs(entry):
                if id(t) in positions:
                    self.final_after.setdefault(k, []).extend(positions.pop(id(t)))

    def fire(self, k, grads):
        for i in self.final_after[k]:
            self._notify(i, grads)

    def flush(self, grads):
        """The sources not yet notified: unconnected ones, and targets' own variables."""
        for i in sorted(self._pending):
            self._notify(i, grads)

    def _notify(self, i, grads):
        self._pending.discard(i)
        g = grads.get(id(self._sources[i]))
        for hook in list(GRADIENT_HOOKS):
            hook(self._sources, i, g)


class _StopRecording:
    def __init__(self, tape):
        self._tape = tape

    def __enter__(self):
        if not self._tape._recording:
            raise ValueError("Tape.stop_recording() was called on a tape that is not "
                             "currently recording.")
        self._tape._recording = False

    def __exit__(self, *exc):
        self._tape._recording = True
        return False


def _label(s):
    if _is_var(s):
        return f"variable {s.name}"
    if isinstance(s, Tensor):
        return f"tensor {s.dtype.name}{list(s._value.shape)}"
    return repr(s)


def _as_target(t):
    if _is_var(t):
        return t._read()
    if not isinstance(t, Tensor):
        raise TypeError(f"GradientTape target must be a Tensor or Variable, got "
                        f"{type(t).__name__}; compute it with tensorlite ops inside the tape")
    return t


def _check_sources(sources):
    for s in sources:
        if not (isinstance(s, Tensor) or _is_var(s)):
            raise ValueError(f"GradientTape sources must be Tensors or Variables, got "
                             f"{type(s).__name__} ({s!r})")


def _accumulate(grads, key, g):
    prev = grads.get(key)
    grads[key] = g if prev is None else math_ops.add(prev, g)


def _finish(g, s, unconnected):
    if g is not None and s.dtype.is_differentiable:
        return g
    if unconnected is UnconnectedGradients.ZERO:
        return wrap(np.zeros(tuple(s.shape.as_list()), dtype=s.dtype.as_numpy_dtype))
    return None


def stop_gradient(input, name=None):  # noqa: A002 - TF's argument name
    """`tf.stop_gradient`: the same value, with no gradient flowing back."""
    return math_ops.stop_gradient_t(input)
