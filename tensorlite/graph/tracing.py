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
"""
from tensorlite.framework import dispatch, errors, nest, variables
import sys

from tensorlite.framework.tensor import _ON_NUMPY, _ON_SHAPE, Tensor
from tensorlite.framework.user_frame import _PKG_DIR, user_location
from tensorlite.framework.name_scope import current_scope
from tensorlite.graph.ir import (ASSIGN_VARIABLE, CALLBACKS, READ_VARIABLE, Graph, Node,
                                 is_stateful)
from tensorlite.ops import script_ops

_VARYING = CALLBACKS | {"PyFuncStateless"}  # outputs never frozen into the graph
_SHAPE_OPS = {"Shape", "Size", "Rank"}  # outputs follow the inputs' shapes, not their values

_ACTIVE = []  # tracers, innermost last


class Tracer:
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
        self.shape_read = None  # where the user's code read a computed tensor's shape

    # -- slots -----------------------------------------------------------------------------
    def add_placeholder(self, t):
        s = self.graph.new_slot()
        self.graph.placeholders.append(s)
        self.graph.specs[s] = (tuple(t._value.shape), t._dtype)
        self._bind(t, s)
        self.dependent.add(s)
        return s

    def _bind(self, t, s):
        self.slot_of[id(t)] = s
        self.keep.append(t)

    def slot_for(self, t):
        s = self.slot_of.get(id(t))
        if s is None:
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
        in_slots = [self.slot_for(t) for t in inputs]
        outs = outputs if type(outputs) is tuple else (outputs,)
        out_slots = []
        dep = op.name in _VARYING or any(s in self.dependent for s in in_slots)
        static = dep and op.name not in _VARYING and not is_stateful(op) and (
            op.name in _SHAPE_OPS or all(s in self.shape_derived or s not in self.dependent
                                         for s in in_slots))
        for o in outs:
            s = self.graph.new_slot()
            self._bind(o, s)
            out_slots.append(s)
            if dep:
                self.dependent.add(s)
            if static:
                self.shape_derived.add(s)
        self.graph.nodes.append(Node(op, in_slots, attrs, out_slots, user_location(3),
                                     current_scope()))

    def on_read(self, variable, tensor):
        if self.ignores():
            return
        s = self.graph.new_slot()
        self._bind(tensor, s)
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

    def on_shape(self, tensor):
        """The user's code read a computed tensor's static shape: in a shape-polymorphic
        trace, its size may now be baked into the graph (TF would give None there)."""
        if self.shape_read is not None or self.ignores():
            return
        s = self.slot_of.get(id(tensor))
        caller = sys._getframe(3).f_code.co_filename
        if s is not None and s in self.dependent and not caller.startswith(_PKG_DIR):
            self._shape_was_read(user_location(3))

    def _shape_was_read(self, where):
        tracer = self
        while tracer is not None:  # a branch's trace tells the traces around it
            if tracer.shape_read is None:
                tracer.shape_read = where
            tracer = getattr(tracer, "outer", None)

    def on_numpy(self, tensor):
        if self.ignores():
            return
        s = self.slot_of.get(id(tensor))
        if s in self.shape_derived:  # a static shape read: a polymorphic trace specialises
            self._shape_was_read(user_location(3))
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


def _shape_hook(tensor):
    if _ACTIVE:
        _ACTIVE[-1].on_shape(tensor)


def trace(fn, args, kwargs, name, call=True, watch_shapes=False):
    """Runs fn(*args, **kwargs) recording a Graph; returns (graph, result). Tensor leaves
    of args/kwargs (in nest order) are the placeholders. With call=False the trace is not
    a call of the function (get_concrete_function): tf.print and tf.summary stay silent and
    the variables it assigns get their values back. With watch_shapes, graph.shape_read
    says where (if anywhere) the function read the static shape of a computed tensor."""
    graph = Graph()
    graph.name = name
    tracer = Tracer(graph, name)
    if not call:
        tracer.restore = []
    for leaf in nest.flatten([list(args), kwargs], expand_composites=True):
        if isinstance(leaf, Tensor):
            tracer.add_placeholder(leaf)
    _ACTIVE.append(tracer)
    dispatch.OBSERVERS.append(tracer)
    # The hooks fan out to every active tracer, so they are installed once (nested
    # tf.functions would otherwise record each variable read and assignment twice).
    hooks = [(lst, h) for lst, h in ((variables.READ_HOOKS, _read_hook),
                                     (variables.ASSIGN_HOOKS, _assign_hook),
                                     (_ON_NUMPY, _numpy_hook),
                                     (_ON_SHAPE if watch_shapes else [], _shape_hook))
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
    finally:
        for lst, h in hooks:
            lst.remove(h)
        dispatch.OBSERVERS.remove(tracer)
        _ACTIVE.remove(tracer)
        for variable, value in reversed(tracer.restore or ()):  # no call: no assignment
            variable._t = value
    graph.outputs = outputs
    graph.shape_read = tracer.shape_read
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
        return tracer.slot_for(v)
    return PythonValue(v)


def is_tracing():
    """True while a tf.function is being traced, except inside a Python callback that the
    trace runs (tf.py_function's func runs eagerly, as in TensorFlow)."""
    return bool(_ACTIVE) and _ACTIVE[-1].depth >= script_ops._LOCAL.depth
