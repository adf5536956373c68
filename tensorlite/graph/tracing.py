"""Tracing: run the Python function once on its real arguments while a dispatch observer
records every op into a Graph.

Tensors the function receives become placeholders; tensors it uses that were made outside
any op (constants, captured tensors) become constants; variable reads and assignments
become ReadVariable/Assign nodes, so the graph keeps reading current values and updating
state. Python code runs only during tracing, as in TensorFlow. A tensor computed from the
inputs must not leave for Python (`.numpy()`, `bool(x)`, `float(x)`): its value would be
frozen into the graph, so that is an error naming the user's line (use tf.cond,
tf.while_loop, or tf.print instead).

Python callbacks (tf.py_function, tf.numpy_function, tf.print, tf.summary) are single nodes:
the ops a callback runs are its own business, so a tracer records only the ops made at the
callback depth it started at (ops/script_ops.py), and the callbacks' outputs count as
computed (their values change from call to call).

A shape-polymorphic trace (`shapes=`: an input_signature with None dimensions, or
reduce_retracing) still runs on the real arguments, but every tensor computed from the
inputs carries a static shape by the registry's shape rules from the declared shapes, so
`x.shape` inside the function shows None where the size may vary, as in TensorFlow
(`graph.unknown_shape_ops` names ops whose rule could not tell; their outputs keep only
their rank). Inside any trace a computed tensor prints as TensorFlow's symbolic tensors do,
`Tensor("x:0", shape=(None, 3), dtype=float32)`.

An op whose failure depends on the values it met (an InvalidArgumentError or OutOfRangeError
from a pure op that runs on zeros of the same shapes: an index out of range) fails in
a graph only when it runs, and TensorFlow runs no op that nothing needs. So a trace defers
such a failure: the op is recorded, its outputs are zeros of its shape rule's shapes, and the
error is raised when anything uses them (another op, Python, the function's outputs). A
top-level trace then drops the op from its graph (the TF 2 guide's unused `tf.gather(x, [1])`
on a one-element x runs). A tf.cond / tf.while_loop branch trace lets later ops use them
(garbage while traced): the branch's error is raised when the branch runs, so an untaken
`tf.cond(tf.size(x) > 1, lambda: tf.gather(x, [1]), ...)` never fails.
"""
import sys
import weakref

import numpy as np

from tensorlite.framework import dispatch, errors, nest, variables
from tensorlite.framework.registry import Spec
from tensorlite.framework.tensor import _ON_NUMPY, GRAPH_TENSOR_INFO, Tensor, wrap
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.user_frame import _PKG_DIR, user_location
from tensorlite.framework.name_scope import current_scope
from tensorlite.graph.ir import ASSIGN_VARIABLE, READ_VARIABLE, Graph, Node, is_stateful
from tensorlite.ops import script_ops
from tensorlite.ops.array_ops import RESHAPE

_ACTIVE = []  # tracers, innermost last
# (op name, input shapes and dtypes, attrs) -> whether the kernel accepted them shrunk
# (Tracer._runs_shrunk)
_SHRUNK_RUNS = {}
# Tensors a finished trace computed from its inputs and did not return ("leaked" through a
# global or an attribute): id -> (weak reference, function name). Another trace capturing
# one gets TensorFlow's TypeError; its value belongs to one call of the other function.
_LEAKED = {}


def _mark_leaked(tracer, result):
    returned = {id(v) for v in nest.flatten(result, expand_composites=True)
                if isinstance(v, Tensor)}
    inputs = set(tracer.graph.placeholders)
    for t in tracer.keep:
        s = tracer.slot_of.get(id(t))
        if s in tracer.dependent and s not in inputs and id(t) not in returned:
            _LEAKED[id(t)] = (weakref.ref(t), tracer.name)
    if len(_LEAKED) > 100_000:  # drop the entries of tensors that are gone
        for key in [k for k, (ref, _) in _LEAKED.items() if ref() is None]:
            del _LEAKED[key]


def _refuse_leaked(t, here):
    ref, where = _LEAKED[id(t)]
    if ref() is not t:  # the id of a freed tensor, reused
        del _LEAKED[id(t)]
        return
    raise TypeError(f"{t!r} is out of scope and cannot be used here: it was computed inside "
                    f"the trace of tf.function {where!r} and kept in a Python variable or "
                    f"attribute instead of being returned, so it has no value in "
                    f"{here!r}. Use return values, explicit Python locals or tf.Variables to "
                    f"pass values between functions")


class Tracer:
    # Whether ops may use a deferred failure's stand-ins (see the module's docstring)
    USES_DEFERRED = False
    # (batch size, other size): the sizes a trace on example values (Keras construction,
    # keras/symbolic_trace.py) gave the placeholders' None dimensions, primes that divide
    # no known size; static shapes then take them, where Python code read them and baked
    # them into the graph, for the varying sizes they stand for (see _unbake)
    EXAMPLE_SIZES = None
    RECORDS_GRAPH = True  # (tf.custom_gradient records a graph-ready node for tracers)

    def __init__(self, graph, function_name):
        from tensorlite.graph import control_flow  # noqa: F401,PLC0415 - its If/While side
        self.graph = graph
        self.name = function_name
        self.slot_of = {}  # id(tensor) -> slot
        self.keep = []  # tensors whose ids are in slot_of (keeps the ids valid)
        self.dependent = set()  # slots computed from placeholders
        # dependent slots computed from the placeholders' shapes only (tf.shape(x)[0]): a
        # trace at fixed shapes may read them as Python values, as it may read x.shape
        self.shape_derived = set()
        self.depth = script_ops.callback_depth()  # ops of callbacks running deeper: not ours
        self.restore = None  # [(variable, value before)] when the trace is not a call
        self.symbolic = None  # slot -> static shape (None dims) in a polymorphic trace
        # slots whose values follow a varying size (tf.range(tf.shape(x)[1])'s limit): an
        # op using one gets its shape by its rule (the values are those of one size only)
        self.size_varying = set()
        self.weighted = set()  # variable reads' slots (with EXAMPLE_SIZES)
        self.names = {}  # placeholder slot -> its tensor name ("x:0")
        self.deferred = {}  # id(stand-in output) -> the error its op raised
        self.failed_nodes = []  # the nodes of those ops

    # -- slots -----------------------------------------------------------------------------
    def add_placeholder(self, t, shape=None, name=None):
        """A function input; `shape` (a tuple with None dims) is its declared static shape
        in a polymorphic trace."""
        s = self.graph.new_slot()
        self.graph.placeholders.append(s)
        self.graph.specs[s] = (tuple(t._value.shape), t._dtype)
        self._bind(t, s)
        self.dependent.add(s)
        if name is not None:
            self.names[s] = name
        if shape is not None and self.symbolic is not None:
            self.symbolic[s] = tuple(shape)
        return s

    def _bind(self, t, s):
        self.slot_of[id(t)] = s
        self.keep.append(t)

    def slot_for(self, t):
        s = self.slot_of.get(id(t))
        if s is None:
            if _LEAKED and id(t) in _LEAKED:
                _refuse_leaked(t, self.name)
            s = self.graph.new_slot()
            self.graph.constants[s] = t._value
            self._bind(t, s)
        return s

    # -- observer hooks --------------------------------------------------------------------
    def ignores(self):
        """True while a callback runs inside this trace (its ops are not the graph's)."""
        return script_ops._LOCAL.depth > self.depth

    def record(self, op, inputs, attrs, outputs):
        if script_ops._LOCAL.depth > self.depth:
            return
        if self.deferred and not self.USES_DEFERRED:
            self.raise_deferred(inputs)
        in_slots = [self.slot_for(t) for t in inputs]
        outs = outputs if type(outputs) is tuple else (outputs,)
        out_slots = []
        # op.varying: Python runs each call (never frozen); op.shape_only: Shape, Size, Rank
        dep = op.varying or any(s in self.dependent for s in in_slots)
        static = dep and not op.varying and not is_stateful(op) and (
            op.shape_only or all(s in self.shape_derived or s not in self.dependent
                                 for s in in_slots))
        for o in outs:
            s = self.graph.new_slot()
            self._bind(o, s)
            out_slots.append(s)
            if dep:
                self.dependent.add(s)
            if static:
                self.shape_derived.add(s)
        # (a construction trace's graph is never shown: no need to find the user's line)
        where = user_location(3) if self.EXAMPLE_SIZES is None else None
        node = Node(op, in_slots, attrs, out_slots, where, current_scope())
        self.graph.nodes.append(node)
        if self.deferred and id(outs[0]) in self.deferred:
            self.failed_nodes.append(node)
        if self.symbolic is not None and dep:
            self._infer_static(node, inputs, outs)

    def defer_error(self, op, inputs, attrs, err):
        """Stand-in outputs for a pure op that failed on this trace's values, or None to
        raise `err` now (see the module's docstring)."""
        if self.ignores() or is_stateful(op) or op.varying or \
                not isinstance(err, (errors.InvalidArgumentError, errors.OutOfRangeError)):
            return None
        if not self.USES_DEFERRED:
            self.raise_deferred(inputs)
        stand_in = self._symbolic_stand_in(op, inputs, attrs)
        if stand_in is not None:
            return stand_in
        if any(t._dtype.is_string for t in inputs):
            return None
        # An op that fails on zeros of the same shapes too, or whose shape rule refuses the
        # shapes, fails whatever the values: a graph-construction error in TF, raised now
        try:
            with np.errstate(all="ignore"):
                op.forward(*[np.zeros(t._value.shape, t._value.dtype) for t in inputs],
                           **(attrs or {}))
            specs = op.infer(*[Spec(tuple(t._value.shape), t._dtype) for t in inputs],
                             **(attrs or {}))
        except Exception:  # noqa: BLE001
            return None
        specs = list(specs) if op.multi_output else [specs]
        if any(None in tuple(sp.shape) or sp.dtype.is_string for sp in specs):
            return None
        outs = tuple(wrap(np.zeros(tuple(sp.shape), sp.dtype.as_numpy_dtype)) for sp in specs)
        for o in outs:
            self.deferred[id(o)] = err
            self.keep.append(o)
        return outs if op.multi_output else outs[0]

    def _symbolic_stand_in(self, op, inputs, attrs):
        """Outputs for an op of a get_concrete_function trace (no call: its None dimensions
        run at made-up sizes) that fails on those sizes while its shape rule accepts the
        declared shapes (a Reshape to [-1, 784] of a [None, None, None, None] input): zeros
        of the rule's shapes, None dimensions at 1, as TensorFlow traces symbolically; None
        where the rule refuses them too (a real error) or the trace is a call."""
        if self.restore is None or not self.symbolic:
            return None
        slots = [self.slot_of.get(id(t)) for t in inputs]
        shapes = [self.symbolic.get(s) for s in slots]
        if all(shape is None for shape in shapes):
            return None
        specs = [Spec(shape if shape is not None else tuple(t._value.shape), t._dtype)
                 for shape, t in zip(shapes, inputs)]
        try:
            got = op.infer(*specs, **(attrs or {}))
        except Exception:  # noqa: BLE001 - the rule refuses the declared shapes too
            return None
        got = list(got) if op.multi_output else [got]
        outs = []
        for spec in got:
            if spec is None or spec.shape is None or spec.dtype is None:
                return None
            shape = tuple(1 if d is None else int(d) for d in spec.shape)
            outs.append(wrap(np.full(shape, b"", dtype=object) if spec.dtype.is_string
                             else np.zeros(shape, spec.dtype.as_numpy_dtype)))
        self.keep.extend(outs)
        return tuple(outs) if op.multi_output else outs[0]

    def stand_in(self, op, inputs, attrs):
        """EXAMPLE_SIZES traces want shapes, not values: a pure op on values computed from
        the placeholders, with floating outputs, is recorded with zeros of the shapes its
        rule gives instead of running (ops on weights or constants, on values Python may
        read as sizes, and integer results, which may index or partition, still run)."""
        if self.ignores() or is_stateful(op) or op.varying or op.shape_only or \
                op.moves_values:
            return None
        slots = [self.slot_of.get(id(t)) for t in inputs]
        if not any(s in self.dependent for s in slots) or \
                any(s in self.shape_derived or s in self.size_varying for s in slots):
            return None
        try:
            specs = _remembered_infer(op, [Spec(tuple(t._value.shape), t._dtype)
                                           for t in inputs], attrs)
        except Exception:  # noqa: BLE001 - no rule: the op runs
            return None
        specs = list(specs) if op.multi_output else [specs]
        # an exact rule (registry's exact_shape) refuses whatever the kernel would: no
        # kernel needs to run to find a shape error
        if any(sp.shape is None or None in tuple(sp.shape) or not sp.dtype.is_floating
               for sp in specs) or not (op.exact_shape or
                                        self._runs_shrunk(op, inputs, slots, attrs)):
            return None
        outs = tuple(wrap(_zeros(tuple(sp.shape), sp.dtype)) for sp in specs)
        return outs if op.multi_output else outs[0]

    def _runs_shrunk(self, op, inputs, slots, attrs):
        """Whether the op's kernel accepts its inputs with their varying dimensions cut to
        size 1 (the kernel checks what a lax shape rule may not, at a fraction of the cost;
        a refusal lets the op run at full size, to fail or not as it would)."""
        shrunk = [tuple(1 if d is None else c for d, c in zip(self.symbolic[s], t._value.shape))
                  if s in self.symbolic and t._value.dtype != object else None
                  for s, t in zip(slots, inputs)]
        # the answer depends on the shapes, dtypes and attributes only (a model repeats the
        # same layer calls: a Transformer's blocks), so it is remembered
        key = (op.name, tuple((sh or t._value.shape, t._value.dtype.str)
                              for sh, t in zip(shrunk, inputs)),
               repr(sorted(attrs.items())) if attrs else "")
        known = _SHRUNK_RUNS.get(key)
        if known is not None:
            return known
        arrays = [np.zeros(sh, t._value.dtype) if sh is not None else t._value
                  for sh, t in zip(shrunk, inputs)]
        try:
            with np.errstate(all="ignore"):
                op.forward(*arrays, **(attrs or {}))
            ok = True
        except Exception:  # noqa: BLE001 - the full-size run decides
            ok = False
        if len(_SHRUNK_RUNS) > 4096:
            _SHRUNK_RUNS.clear()
        _SHRUNK_RUNS[key] = ok
        return ok

    def raise_deferred(self, tensors):
        """Raises the deferred failure of the first of `tensors` that stands in for one."""
        for t in tensors:
            err = self.deferred.get(id(t))
            if err is not None:
                raise err

    def _infer_static(self, node, inputs, outs):
        """Static output shapes by the op's shape rule from its inputs' static shapes; an
        output whose shape the rule cannot tell keeps its rank only. An op may declare
        `polymorphic_attrs(specs, arrays, attrs)`: its attrs written for any size (a
        Reshape to (7, 3, 1) of a (None, 3) input becomes (-1, 3, 1)); the size check
        trace (graph/size_check.py) confirms the rewrite stands for other sizes."""
        op, in_slots, out_slots = node.op, node.inputs, node.outputs
        static, varying = self.symbolic, self.size_varying
        if any(s in varying for s in in_slots) or (
                op.shape_only and any(s in static for s in in_slots)):
            varying.update(out_slots)  # values that follow a varying size (tf.shape(x)[1])
        elif not any(s in static for s in in_slots):
            return  # every input fully known: the real shapes are the static ones
        specs = [Spec(static.get(s, tuple(t._value.shape)), t._dtype)
                 for s, t in zip(in_slots, inputs)]
        if self.EXAMPLE_SIZES is not None:  # zeros((batch, n)) made from a size Python
            # read: an input not computed from the placeholders, other than a variable's
            specs = [Spec(_unbake(sp.shape, self.EXAMPLE_SIZES, constant=True), sp.dtype)
                     if s not in self.dependent and s not in self.weighted else sp
                     for s, sp in zip(in_slots, specs)]
        relax = op.polymorphic_attrs
        if relax is not None:
            node.attrs = relax(specs, [t._value for t in inputs], node.attrs)
        attrs = node.attrs
        try:
            out = op.infer(*specs, **(attrs or {})) if self.EXAMPLE_SIZES is None else \
                _remembered_infer(op, specs, attrs)
            got = list(out) if op.multi_output else [out]
            shapes = [tuple(g.shape) for g in got]
            if len(shapes) != len(outs) or not all(
                    fits_shape(shape, o._value.shape) for shape, o in zip(shapes, outs)):
                raise ValueError("the shape rule disagrees with the computed value")
        except Exception:  # noqa: BLE001 - no rule for unknown dims: keep the rank only
            self.graph.unknown_shape_ops.add(op.name)
            shapes = [(None,) * o._value.ndim for o in outs]
            if self.EXAMPLE_SIZES is not None and not is_stateful(op) and \
                    not op.varying:
                shapes = _shapes_by_kernel(op, specs, inputs, attrs, outs, shapes)
        if self.EXAMPLE_SIZES is not None:
            if op is RESHAPE and len(shapes) == 1:
                shapes = [_reshape_static(specs[0].shape, inputs[0]._value.shape, shapes[0],
                                          self.EXAMPLE_SIZES)]
            if _example_size_in(attrs, inputs, self.EXAMPLE_SIZES[1]):
                shapes = [_unbake(shape, self.EXAMPLE_SIZES) for shape in shapes]
        for s, shape in zip(out_slots, shapes):
            if None in shape:
                static[s] = shape

    def info(self, tensor):
        """What a tensor of this trace knows symbolically (None: not computed here)."""
        s = self.slot_of.get(id(tensor))
        if s is None or s not in self.dependent or self.ignores():
            return None
        shape = None if self.symbolic is None else self.symbolic.get(s)
        concrete = tensor._value.shape
        return TracedTensorInfo(self, s, TensorShape(concrete if shape is None else shape),
                                concrete)

    def _name_of(self, slot):
        name = self.names.get(slot)
        if name is not None:
            return name
        counts = {}
        for node in self.graph.nodes:  # TF's names: Op, Op_1, ... in creation order
            n = counts.get(node.op.name, 0)
            counts[node.op.name] = n + 1
            if slot in node.outputs:
                base = node.op.name if n == 0 else f"{node.op.name}_{n}"
                return f"{base}:{node.outputs.index(slot)}"
        return f"Placeholder_{slot}:0"

    def on_read(self, variable, tensor):
        if self.ignores():
            return
        s = self.graph.new_slot()
        self._bind(tensor, s)
        if self.EXAMPLE_SIZES is not None:
            self.weighted.add(s)
        self.graph.nodes.append(Node(READ_VARIABLE, [], {"variable": variable}, [s],
                                     user_location(3)))

    def on_assign(self, variable, mode, value):
        if self.ignores():
            return
        if self.restore is not None and all(v is not variable for v, _ in self.restore):
            self.restore.append((variable, variable._t))
        vs = self.slot_for(value)
        s = self.graph.new_slot()
        self.graph.nodes.append(Node(ASSIGN_VARIABLE, [vs], {"variable": variable,
                                                             "mode": mode}, [s],
                                     user_location(3)))

    def on_numpy(self, tensor):
        if self.ignores():
            return
        self.raise_deferred((tensor,))
        s = self.slot_of.get(id(tensor))
        if s in self.shape_derived:
            # a static shape read: allowed; in a polymorphic trace the size-check trace
            # (function.py) sees the baked size and specialises the function per shape
            return
        if s is not None and s in self.dependent:
            raise errors.InvalidArgumentError(
                None, None, f"in tf.function {self.name!r}: a tensor computed from the "
                f"function's inputs was used as a Python value (.numpy(), bool(), float(), "
                f"int() or NumPy) at {user_location(3)}. Its value would be frozen into the "
                f"graph. Keep it a tensor: use tf.cond / tf.where instead of `if`, "
                f"tf.while_loop instead of a data-dependent `while`, tf.print to print it, "
                f"or run eagerly with tf.config.run_functions_eagerly(True) (for Keras fit: "
                f"model.compile(..., run_eagerly=True))")


def _read_hook(variable, tensor):
    for tr in _ACTIVE:
        tr.on_read(variable, tensor)


def _assign_hook(variable, mode, value):
    for tr in _ACTIVE:
        tr.on_assign(variable, mode, value)


def _numpy_hook(tensor):
    for tr in _ACTIVE:
        tr.on_numpy(tensor)


def fits_shape(static, shape):
    """Whether a concrete shape fits a static one (None: any size)."""
    return len(static) == len(shape) and all(d is None or d == e for d, e in zip(static, shape))


class TracedTensorInfo:
    """A traced tensor's graph, name and static shape (`static_shape`, None where a size
    varies). `shape` is what `Tensor.shape` answers: the static shape to the user's code,
    as in TensorFlow; the concrete one to tensorlite's own code (Keras layers, gradient
    rules), which may still read sizes: what that fixes in the graph, the size check trace
    (graph/size_check.py) finds."""

    __slots__ = ("_tracer", "_slot", "static_shape", "concrete")

    def __init__(self, tracer, slot, static_shape, concrete):
        self._tracer, self._slot = tracer, slot
        self.static_shape, self.concrete = static_shape, concrete

    @property
    def graph(self):
        return self._tracer.graph

    @property
    def name(self):  # found when asked: shape reads are frequent, name reads rare
        return self._tracer._name_of(self._slot)

    @property
    def shape(self):
        caller = sys._getframe(2).f_code.co_filename  # the frame that read Tensor.shape
        return TensorShape(self.concrete) if caller.startswith(_PKG_DIR) else \
            self.static_shape

    @property
    def op(self):
        raise AttributeError("Tensor.op of a tensor inside tf.function is not available here; "
                             "inspect the graph with get_concrete_function(...).graph")


# (op name, input specs, attrs with their types) -> the op's shape rule's answer, for
# construction traces (EXAMPLE_SIZES): a model's repeated blocks ask the rules the same
# questions, and a rule is a function of the specs and attributes alone
_INFERRED = {}
# (shape, dtype) -> read-only zeros of no memory, a construction trace's stand-in values
# (kernels never write into their inputs)
_ZEROS = {}


def _remembered_infer(op, specs, attrs):
    """op.infer(*specs, **attrs), remembered (see _INFERRED); a rule's refusal is not."""
    try:
        key = (op.name, tuple(specs),
               tuple((k, type(v), v) for k, v in sorted(attrs.items())) if attrs else ())
        got = _INFERRED.get(key)
    except TypeError:  # an unhashable attribute (a list, an array): asked each time
        return op.infer(*specs, **(attrs or {}))
    if got is None:
        got = op.infer(*specs, **(attrs or {}))
        if len(_INFERRED) > 8192:
            _INFERRED.clear()
        _INFERRED[key] = tuple(got) if op.multi_output else got
    return got


def _zeros(shape, dtype):
    got = _ZEROS.get((shape, dtype))
    if got is None:
        if len(_ZEROS) > 4096:
            _ZEROS.clear()
        got = _ZEROS[(shape, dtype)] = np.broadcast_to(
            np.zeros((), dtype.as_numpy_dtype), shape)
    return got


def _unbake(shape, sizes, constant=False):
    """`shape` with the example sizes Python code baked in as None (EXAMPLE_SIZES traces):
    a dimension that the other size divides (a sequence's length, twice an image's side);
    in a constant (zeros((batch, units))), also a leading dimension of the batch size."""
    batch, other = sizes
    return tuple(None if d is not None and ((d % other == 0 and d > 0) or
                                            (constant and i == 0 and d == batch)) else d
                 for i, d in enumerate(shape))


def _example_size_in(attrs, inputs, other):
    """Whether an op's attributes, the number of its inputs (a stack of one tensor per time
    step of a sequence of the example length) or its integer input values (sizes Python
    computed from tf.shape) hold a multiple of the example size. Only then can a shape
    rule's output, computed from specs whose unknown sizes are None and constants already
    unbaked, carry an example size: a convolution's 123 = 3 * 41 rows from 250 known ones
    is a real size."""
    if len(inputs) >= other and len(inputs) % other == 0:
        return True
    values = [t._value for t in inputs if t._value.dtype.kind in "iu" and t._value.size <= 64]
    return _mentions_example_size(attrs, other) or _mentions_example_size(values, other)


def _mentions_example_size(attrs, other):
    """Whether `attrs` (an op's attributes, or values) hold a nonzero multiple of `other`."""
    def mentions(v):
        if isinstance(v, (bool, np.bool_)):
            return False
        if isinstance(v, (int, np.integer)):
            return v != 0 and v % other == 0
        if isinstance(v, np.ndarray):
            return v.dtype.kind in "iu" and bool(np.any((v % other == 0) & (v != 0)))
        if isinstance(v, (list, tuple)):
            return any(mentions(x) for x in v)
        if isinstance(v, dict):
            return any(mentions(x) for x in v.values())
        return False
    return bool(attrs) and mentions(attrs)


def _shapes_by_kernel(op, specs, inputs, attrs, outs, fallback):
    """The static output shapes of a pure op whose shape rule cannot tell (EXAMPLE_SIZES
    traces): its kernel run on zeros with every unknown input dimension twice as long;
    the output dimensions that change are unknown. `fallback` when the kernel refuses."""
    def zeros(spec, t):
        shape = tuple(2 * c if d is None else c for d, c in zip(spec.shape, t._value.shape))
        if t._value.dtype == object:
            return np.full(shape, b"", dtype=object)
        return np.zeros(shape, t._value.dtype)
    try:
        with np.errstate(all="ignore"):
            got = op.forward(*[zeros(sp, t) for sp, t in zip(specs, inputs)], **(attrs or {}))
    except Exception:  # noqa: BLE001 - sizes the op's attributes fixed: rank only
        return fallback
    got = list(got) if op.multi_output else [got]
    if len(got) != len(outs):
        return fallback
    return [tuple(a if a == b else None for a, b in zip(o._value.shape, np.shape(g)))
            if np.ndim(g) == o._value.ndim else f for o, g, f in zip(outs, got, fallback)]


def _reshape_static(static_in, concrete_in, target, sizes):
    """The static shape of a Reshape of a tensor with varying sizes to a `target` that
    Python code computed from the sizes it saw (tensordot, expand_dims). A reshape that only
    adds or drops size-1 axes keeps each dimension's static size; otherwise the example sizes
    are primes that divide no known size, so the varying part of the input (its size over
    its known dimensions' product) holds each as often as a varying dimension of that size
    went into it: that many of the target's dimensions of that size, leftmost first,
    become None."""
    if None not in static_in or None in target:
        return tuple(target)
    kept = [(d, c) for d, c in zip(static_in, concrete_in) if c != 1]
    places = [i for i, c in enumerate(target) if c != 1]
    if [c for _, c in kept] == [target[i] for i in places]:  # size-1 axes in or out only
        out = list(target)
        for (d, _), i in zip(kept, places):
            out[i] = d
        return tuple(out)
    known = int(np.prod([d for d in static_in if d is not None]))
    vary = int(np.prod(concrete_in)) // max(known, 1)
    out = list(target)
    for size in sorted(set(sizes)):
        count = 0
        while size > 1 and vary % size == 0:
            vary //= size
            count += 1
        for i, d in enumerate(out):
            if count and d == size:
                out[i], count = None, count - 1
    return tuple(out)


def _info_hook(tensor):
    """GRAPH_TENSOR_INFO provider: the innermost trace (or the traces its branch is nested
    in) that computed `tensor`."""
    for tracer in reversed(_ACTIVE):
        while tracer is not None:
            info = tracer.info(tensor)
            if info is not None:
                return info
            tracer = getattr(tracer, "outer", None)
    return None


def trace(fn, args, kwargs, name, call=True, shapes=None, names=None, tracer_class=None):
    """Runs fn(*args, **kwargs) recording a Graph; returns (graph, result). Tensor leaves
    of args/kwargs (in nest order) are the placeholders. With call=False the trace is not
    a call of the function (get_concrete_function): tf.print and tf.summary stay silent and
    the variables it assigns get their values back. `shapes` (one tuple per tensor leaf,
    None for a dimension that may vary) makes the trace shape-polymorphic: graph.symbolic_shapes
    then holds every varying slot's static shape. `names` name the tensor leaves.
    `tracer_class` (a Tracer subclass) changes how the trace treats deferred failures."""
    graph = Graph()
    graph.name = name
    tracer = (tracer_class or Tracer)(graph, name)
    if shapes is not None:
        tracer.symbolic = {}
    if not call:
        tracer.restore = []
    tensors = [leaf for leaf in nest.flatten([list(args), kwargs], expand_composites=True)
               if isinstance(leaf, Tensor)]
    for i, leaf in enumerate(tensors):
        tracer.add_placeholder(leaf, None if shapes is None else shapes[i],
                               None if names is None else f"{names[i]}:0")
    _ACTIVE.append(tracer)
    dispatch.OBSERVERS.append(tracer)
    if tracer.EXAMPLE_SIZES is not None:
        dispatch.SHAPE_ONLY.append(tracer.stand_in)
    # The hooks fan out to every active tracer, so they are installed once (nested
    # tf.functions would otherwise record each variable read and assignment twice).
    hooks = [(lst, h) for lst, h in ((variables.READ_HOOKS, _read_hook),
                                     (variables.ASSIGN_HOOKS, _assign_hook),
                                     (_ON_NUMPY, _numpy_hook),
                                     (GRAPH_TENSOR_INFO, _info_hook))
             if h not in lst]
    for lst, h in hooks:
        lst.append(h)
    try:
        if call:
            result = fn(*args, **kwargs)
        else:
            with script_ops.effects_off():
                result = fn(*args, **kwargs)
        outputs = nest.map_structure(lambda v: _output_slot(tracer, v), result,
                                     expand_composites=True)
        if tracer.failed_nodes:  # none is needed (a use raised): never run them
            failed = set(map(id, tracer.failed_nodes))
            graph.nodes = [n for n in graph.nodes if id(n) not in failed]
        _mark_leaked(tracer, result)
    finally:
        for lst, h in hooks:
            lst.remove(h)
        dispatch.OBSERVERS.remove(tracer)
        if tracer.EXAMPLE_SIZES is not None:
            dispatch.SHAPE_ONLY.remove(tracer.stand_in)
        _ACTIVE.remove(tracer)
        for variable, value in reversed(tracer.restore or ()):  # no call: no assignment
            variable._t = value
    graph.outputs = outputs
    graph.symbolic_shapes = tracer.symbolic
    graph.input_names = {s: n[:-2] for s, n in tracer.names.items()}
    return graph, result


class PythonValue:
    """A non-tensor output of a traced function: returned as it was at trace time."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"PythonValue({self.value!r})"


def _output_slot(tracer, v):
    if getattr(v, "_is_variable", False):  # returning `var.assign_sub(...)`: its new value
        v = v.read_value()
    if isinstance(v, Tensor):
        tracer.raise_deferred((v,))
        return tracer.slot_for(v)
    return PythonValue(v)


def is_tracing():
    """True while a tf.function is being traced, except inside a Python callback that the
    trace runs (tf.py_function's func runs eagerly, as in TensorFlow)."""
    return bool(_ACTIVE) and _ACTIVE[-1].depth >= script_ops._LOCAL.depth
