"""The graph IR: a straight-line program of registry ops over numbered value slots.

A Graph has placeholders (the function's tensor inputs), constants (values captured at trace
time), and nodes, each `op(inputs...) -> outputs` with the op's attributes and the user's
file and line. Variable reads and assignments are nodes too (`ReadVariableOp`,
`AssignVariableOp`), kept in program order, so a graph can update state. Passes rewrite a
Graph into a new Graph; the executor and the compiler run it.
"""
import numpy as np

from tensorlite.framework import nest
from tensorlite.framework.registry import (NOT_DIFFERENTIABLE, REGISTRY, STATEFUL_EFFECTS,
                                          declare, register)


class Node:
    __slots__ = ("op", "inputs", "attrs", "outputs", "where", "scope")

    def __init__(self, op, inputs, attrs, outputs, where=None, scope=""):
        self.op = op  # a registry Op
        self.inputs = list(inputs)  # slot ids
        self.attrs = dict(attrs or {})
        self.outputs = list(outputs)  # slot ids
        self.where = where  # "file.py:12 in fn"
        self.scope = scope  # the name scope it was traced in ("dense/"), for TensorBoard

    def __repr__(self):
        return f"Node({self.op.name}, {self.inputs} -> {self.outputs})"


class Graph:
    def __init__(self):
        self.placeholders = []  # slot ids, in argument order
        self.specs = {}  # slot -> (shape, dtype) of placeholders
        self.constants = {}  # slot -> ndarray
        self.variables = {}  # slot-less: id -> Variable (for ReadVariable/Assign attrs)
        self.nodes = []
        self.outputs = None  # a structure of slot ids (or None leaves)
        self.n_slots = 0
        self.name = "graph"
        self.unknown_shape_ops = set()  # ops of a polymorphic trace whose shape rule failed
        self.input_names = {}  # placeholder slot -> the argument's name, where known
        self.symbolic_shapes = None  # slot -> shape with None dims (a polymorphic trace)

    def new_slot(self):
        self.n_slots += 1
        return self.n_slots - 1

    def output_slots(self):
        return [s for s in nest.flatten(self.outputs, expand_composites=True)
                if isinstance(s, int)]

    def copy(self):
        g = Graph()
        g.placeholders = list(self.placeholders)
        g.specs = dict(self.specs)
        g.constants = dict(self.constants)
        g.variables = dict(self.variables)
        g.nodes = [Node(n.op, n.inputs, n.attrs, n.outputs, n.where, n.scope)
                   for n in self.nodes]
        g.outputs = self.outputs
        g.n_slots = self.n_slots
        g.name = self.name
        g.input_names = dict(self.input_names)
        return g

    # -- viewing ---------------------------------------------------------------------------
    def pretty_printed(self):
        """One line per node, as `%3 = Mul(%1, %2)  # file.py:12`."""
        lines = [f"graph {self.name}(" + ", ".join(
            f"%{s}: {self.specs[s][1].name}{list(self.specs[s][0])}"
            for s in self.placeholders) + ")"]
        for s, v in self.constants.items():
            lines.append(f"  %{s} = Const({_short(v)})")
        for n in self.nodes:
            attrs = ", ".join(f"{k}={_attr(v)}" for k, v in n.attrs.items()
                              if k != "variable")
            var = n.attrs.get("variable")
            target = f"{var.name}" if var is not None else ""
            outs = ", ".join(f"%{o}" for o in n.outputs) or "_"
            args = ", ".join([f"%{i}" for i in n.inputs] + ([target] if target else []) +
                             ([attrs] if attrs else []))
            where = f"  # {n.where}" if n.where else ""
            lines.append(f"  {outs} = {n.op.name}({args}){where}")
        lines.append(f"  return {_outs(self.outputs)}")
        return "\n".join(lines)

    def as_graph_def(self):
        """A GraphDef view: `.node` lists NodeDefs (`name`, `op`, `input`) as TensorFlow's
        GraphDef does; its text is node blocks with name, op, inputs and attributes."""
        names, nodes, used = {}, [], {}

        def unique(base):
            n = used.get(base, 0)
            used[base] = n + 1
            return base if n == 0 else f"{base}_{n}"
        for s in self.placeholders:
            names[s] = unique(self.input_names.get(s, f"arg{s}"))
            nodes.append(NodeDef(names[s], "Placeholder", [], {
                "dtype": self.specs[s][1].name, "shape": list(self.specs[s][0])}))
        for s, v in self.constants.items():
            names[s] = unique("Const")
            nodes.append(NodeDef(names[s], "Const", [], {"value": _short(v)}))
        for n in self.nodes:
            name = unique(n.op.name)
            for k, o in enumerate(n.outputs):
                names[o] = name if k == 0 else f"{name}:{k}"
            nodes.append(NodeDef(name, n.op.name, [names.get(i, f"%{i}") for i in n.inputs],
                                 {k: _attr(v) for k, v in n.attrs.items() if k != "variable"}))
        return GraphDefView(nodes)

    def op_counts(self):
        counts = {}
        for n in self.nodes:
            counts[n.op.name] = counts.get(n.op.name, 0) + 1
        return counts


class NodeDef:
    """One node of `Graph.as_graph_def()`: `name`, `op`, `input` (producers' names), `attr`."""

    __slots__ = ("name", "op", "input", "attr")

    def __init__(self, name, op, inputs, attr):
        self.name, self.op, self.input, self.attr = name, op, list(inputs), dict(attr)

    def __str__(self):
        inputs = "".join(f'\n  input: "{i}"' for i in self.input)
        attrs = " ".join(f"{k}: {v}" for k, v in self.attr.items())
        return f'node {{\n  name: "{self.name}"\n  op: "{self.op}"{inputs}\n  attr {{ {attrs} }}\n}}'


class GraphDefView:
    """What `as_graph_def()` returns: `.node` as in TensorFlow's GraphDef; prints as text."""

    def __init__(self, nodes):
        self.node = nodes

    def __str__(self):
        return "\n".join(str(n) for n in self.node)

    def __contains__(self, text):
        return text in str(self)


def _short(v):
    a = np.asarray(v)
    return repr(a.tolist()) if a.size <= 6 else f"<{a.dtype}{list(a.shape)}>"


def _attr(v):
    return getattr(v, "name", None) if hasattr(v, "is_floating") else repr(v)


def _outs(outputs):
    return repr(nest.map_structure(lambda s: f"%{s}" if isinstance(s, int) else s, outputs,
                                   expand_composites=True)) \
        .replace("'", "")


# Variable state as graph nodes: reading keeps program order with assignments.
def _read_fwd(variable):
    return variable._t._value


def _assign_fwd(value, variable, mode):
    getattr(variable, {"set": "assign", "add": "assign_add", "sub": "assign_sub"}[mode])(value)
    return variable._t._value


def adopt_assign(value, variable, mode):
    """`AssignVariableOp` (mode "set") of an array nothing else holds - one the graph made
    for this assignment alone (the executor checks): the variable takes it without the
    defensive copy."""
    variable._assign_owned(value)
    return variable._t._value


READ_VARIABLE = declare(
    register("GraphReadVariableOp", _read_fwd, grad=NOT_DIFFERENTIABLE,
             effects="state", unsupported="onnx tflite batch tf_import"),
    tf="ReadVariableOp", tf_outputs="value")
ASSIGN_VARIABLE = register("AssignVariableOp", _assign_fwd, grad=NOT_DIFFERENTIABLE,
                           effects="state", unsupported="tf onnx tflite batch tf_import")
def is_callback(op):
    """Python callbacks with effects (tensorlite/ops/script_ops.py: py_function,
    numpy_function, the effects of tf.print, tf.summary and Keras's host state): ops that
    declare `varying` (Python runs on every call) and are stateful."""
    return op.varying and op.effects in STATEFUL_EFFECTS


def __getattr__(name):
    # CALLBACKS: the names of the callback ops, generated from the registry on each access
    if name == "CALLBACKS":
        return frozenset(op.name for op in list(REGISTRY.values()) if is_callback(op))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_stateful(op):
    """Nodes a pass must neither remove, merge nor fold: those whose registration declares
    effects on state, files or streams, or Python callbacks (registry.STATEFUL_EFFECTS)."""
    return op.effects in STATEFUL_EFFECTS


