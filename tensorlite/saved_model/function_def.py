"""One traced graph (tensorlite's IR) as a TensorFlow FunctionDef, the unit of a
SavedModel's function library.

Arguments become the FunctionDef's input args (lower-case names, as TensorFlow requires),
captured values `Const` nodes, every variable the graph touches a `DT_RESOURCE` input arg
read by `ReadVariableOp` and written by `AssignVariableOp` / `AssignAddVariableOp` /
`AssignSubVariableOp` (chained by control inputs per variable, as TensorFlow's automatic
control dependencies order them, and listed as control outputs so they always run), and every
other node the TensorFlow op its registry op declares beside its registration:

    declare(OP, tf=RULE)

where RULE is
- a string: TensorFlow's op name; the node's attributes are written as they are (ops whose
  only attribute is the dtype `T`: `declare(RELU, tf="Relu")`); or
- a callable `RULE(attrs, in_specs)` returning `(op_name, attrs)` or `(op_name, attrs,
  inputs)`, or a function `write(add, inputs)` where one IR node is several TensorFlow nodes
  (_Writer.expand). `in_specs` are the inputs' `registry.Spec`s, None in the dimensions that
  follow the batch size; entries of tuple attributes that follow the batch size arrive as None
  too (a Flatten's `Reshape` to `(None, 2304)`), and a rule that cannot write them must raise.
  `inputs` lists the TensorFlow node's inputs: an int is the IR node's input at that position,
  a NumPy array becomes a `Const` input (a reduction's axes, a reshape's shape), a string
  names the node's attribute holding a resource it uses (a lookup table: `"table"`), which
  becomes a `DT_RESOURCE` argument. An attribute whose value is None is left out; `T` is the
  first input's dtype unless the rule gives it (None: the op has no `T`).

TensorFlow checks attributes against its OpDefs when it loads the file, so a rule gives
exactly the attributes of TensorFlow's op. An op without a rule is an UnimplementedError
naming the op and where the node was made. A node's outputs are named
`node:ARG:index` with ARG from op_outputs.py.

Example:
    >>> fdef, captured, outputs = function_def(capture_of(fn, specs), "__inference_f_1", ["x"])
"""
import re

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.graph.ir import ASSIGN_VARIABLE, READ_VARIABLE, is_stateful
from tensorlite.graph.tracing import PythonValue
from tensorlite.protos.tf_graph_format import ASSIGN_OPS
from tensorlite.saved_model.op_outputs import output_arg
from tensorlite.summary.event_writer import tensor_proto
from tensorlite.summary.graph_def import (FunctionDef, _Names, attr_value, datatype,
                                          shape_proto)



def arg_name(name, taken=()):
    """A FunctionDef argument name: TensorFlow's `[a-z][a-z0-9_]*`, unique among `taken`."""
    base = re.sub(r"[^a-z0-9_]", "_", str(name).lower()).strip("_") or "arg"
    base = base if base[0].isalpha() else f"arg_{base}"
    out, i = base, 0
    while out in taken:
        i += 1
        out = f"{base}_{i}"
    return out


def strict_attr(op_name, key, value):
    """The AttrValue of one attribute a rule gave; an entry that follows the batch size
    (None) or a value with no AttrValue form is an error naming op and attribute."""
    if isinstance(value, (tuple, list)) and any(v is None for v in value):
        raise errors.UnimplementedError(
            None, None, f"SavedModel export: attribute {key}={list(value)} of {op_name} "
                        f"changes with the batch size (None entries) and its tf rule cannot "
                        f"write it; export with a fixed batch size in the input signature")
    av = attr_value(list(value) if isinstance(value, tuple) else value)
    if av is None:
        raise errors.UnimplementedError(None, None, f"SavedModel export: attribute {key} of "
                                        f"{op_name} ({type(value).__name__}) has no "
                                        f"TensorFlow form")
    return av


class _Writer:
    def __init__(self, cap, name, arg_names, assets=None, gradients=None):
        self.cap = cap
        self.gradients = gradients  # custom_gradients.GradientWriter, or None
        self.assets = assets or {}  # path bytes -> tf.saved_model.Asset
        self.fdef = FunctionDef()
        self.fdef.signature.name = name
        self.arg_names = list(arg_names)
        self.unique = _Names()
        self.unique.taken.update(self.arg_names)
        self.refs = {}  # slot -> "node:arg:k" or an argument name
        self.resources = {}  # id(variable) -> resource argument name
        self.captured = []  # the variables, in resource argument order
        self.last_state = {}  # id(variable) -> the last node that read or wrote it
        self.stateful = []  # node names: the control outputs
        self._batch = None  # the ref of the run's batch size, once a constant needs it

    # -- nodes ----------------------------------------------------------------------------
    def node(self, base, op, inputs=(), **attrs):
        n = self.fdef.node_def.add(name=self.unique(base), op=op)
        n.input.extend(inputs)
        for key, value in attrs.items():
            if value is not None:
                n.attr[key].CopyFrom(strict_attr(op, key, value))
        return n

    def const(self, value, base="Const"):
        array = np.asarray(value)
        n = self.node(base, "Const")
        n.attr["dtype"].type = datatype(dtypes.as_dtype(array.dtype))
        n.attr["value"].tensor.CopyFrom(tensor_proto(array))
        return f"{n.name}:output:0"

    def constant(self, slot, value):
        """A captured constant's ref: a Const, or, where the value follows the batch size
        (an RNN's zero state, tf.zeros((batch, units)) made from a size Python read), a
        Fill to each run's batch size, so the function serves any batch as traced."""
        cap = getattr(self.cap, "_capture", None)
        if cap is not None and slot in cap.values and cap.dynamic_dims(slot):
            return self.batch_fill(slot, np.asarray(value))
        return self.const(value)

    def batch_size(self):
        """A [1] int32 ref: the first dimension of the first input with a batch dimension."""
        if self._batch is None:
            cap = self.cap._capture
            found = [(s, name) for s, name in zip(self.cap.graph.placeholders, self.arg_names)
                     if 0 in cap.dynamic_dims(s)]
            if not found:
                raise errors.UnimplementedError(None, None, "export: a constant follows the "
                                                "batch size but no input has one")
            slot, name = found[0]
            shape = self.node("Shape", "Shape", [name], T=self.cap.spec(slot).dtype,
                              out_type=dtypes.int32)
            one = np.array([1], np.int32)
            batch = self.node("strided_slice", "StridedSlice", [
                f"{shape.name}:output:0", self.const(np.array([0], np.int32)),
                self.const(one), self.const(one)], T=dtypes.int32,
                Index=dtypes.int32, begin_mask=0, end_mask=0, ellipsis_mask=0,
                new_axis_mask=0, shrink_axis_mask=0)
            self._batch = f"{batch.name}:output:0"
        return self._batch

    def batch_fill(self, slot, value):
        """A uniform constant whose batch-sized axes follow the run's batch size; any other
        value that changes with the batch size is UnimplementedError (never a constant that
        would give wrong answers at other batch sizes)."""
        cap = self.cap._capture
        dynamic = cap.dynamic_dims(slot)
        if not (value.size and np.all(value == value.flat[0]) and
                all(cap.is_batch_sized(slot, a) for a in dynamic)):
            raise errors.UnimplementedError(
                None, None, f"export: a constant of shape {value.shape} changes with the "
                f"batch size and is not a uniform batch-sized fill; compute it from the "
                f"input (tf.zeros_like, tf.fill(tf.shape(x)...)) or give a fixed batch size "
                f"in the input signature")
        pieces = [self.batch_size() if a in dynamic else self.const(np.array([d], np.int32))
                  for a, d in enumerate(value.shape)]
        dims = self.node("fill_shape", "ConcatV2", pieces + [self.const(np.int32(0))],
                         N=len(pieces), T=dtypes.int32, Tidx=dtypes.int32)
        fill = self.node("Fill", "Fill", [f"{dims.name}:output:0",
                                          self.const(value.reshape(-1)[:1].reshape(()))],
                         T=dtypes.as_dtype(value.dtype), index_type=dtypes.int32)
        return f"{fill.name}:output:0"

    def resource(self, variable):
        """The DT_RESOURCE argument of a captured variable or lookup table."""
        name = self.resources.get(id(variable))
        if name is None:
            base = str(getattr(variable, "name", "table")).split(":")[0]
            name = arg_name(f"{base}_resource", self.unique.taken)
            self.unique.taken.add(name)
            self.resources[id(variable)] = name
            self.captured.append(variable)
        return name

    def asset(self, value):
        """The Asset whose path a constant is (it becomes a string argument bound to the
        asset, so a loaded model reads its own copy), or None."""
        value = np.asarray(value)
        if not self.assets or value.shape or value.dtype != object:
            return None
        return self.assets.get(value.item())

    def after(self, variable):
        last = self.last_state.get(id(variable))
        return [f"^{last}"] if last else []

    def variable_node(self, node):
        variable = node.attrs["variable"]
        handle = self.resource(variable)
        base = f"{node.scope or ''}{getattr(variable, 'name', 'v').split(':')[0]}"
        dtype = variable.dtype
        if node.op is READ_VARIABLE:
            n = self.node(f"{base}/ReadVariableOp", "ReadVariableOp",
                          [handle] + self.after(variable), dtype=dtype)
        else:
            op = ASSIGN_OPS[node.attrs.get("mode", "set")]
            write = self.node(f"{base}/{op}", op, [handle, self.refs[node.inputs[0]]] +
                              self.after(variable), dtype=dtype)
            self.stateful.append(write.name)
            n = self.node(f"{base}/ReadVariableOp", "ReadVariableOp",
                          [handle, f"^{write.name}"], dtype=dtype)
        self.last_state[id(variable)] = n.name
        self.stateful.append(n.name)
        self.refs[node.outputs[0]] = f"{n.name}:value:0"

    def op_node(self, node):
        rule = node.op.tf
        if rule is None:
            raise errors.UnimplementedError(
                None, None, f"SavedModel export: op {node.op.name} (node created at "
                f"{node.where}) has no TensorFlow mapping; declare one beside its "
                f"registration with registry.declare({node.op.name}, tf=rule)")
        in_specs = [self.cap.spec(s) for s in node.inputs]
        attrs = self.cap.attrs(node)
        inputs = list(range(len(node.inputs)))
        if isinstance(rule, str):
            op_name = rule
        else:
            found = rule(attrs, in_specs)
            if callable(found):  # several TensorFlow nodes
                self.expand(node, found)
                return
            op_name, attrs = found[0], found[1]
            inputs = list(found[2]) if len(found) > 2 else inputs
        if "T" not in attrs and in_specs:
            attrs["T"] = in_specs[0].dtype
        refs = [self.refs[node.inputs[i]] if isinstance(i, int) else
                self.resource(node.attrs[i]) if isinstance(i, str) else self.const(i)
                for i in inputs]
        n = self.node(f"{node.scope or ''}{op_name}", op_name, refs, **attrs)
        out = output_arg(op_name)
        for k, slot in enumerate(node.outputs):
            self.refs[slot] = f"{n.name}:{out}:{k}"

    def expand(self, node, write):
        """Writes an IR node that is several TensorFlow nodes: `write(add, inputs)` gets the
        node's input refs and `add(op, inputs, **attrs)`, which writes one node (NumPy
        arrays among `inputs` become Consts) and returns its name; `write` returns the refs
        of the IR node's outputs."""
        scope = node.scope or ""
        if self.gradients is not None and hasattr(write, "gradient_body"):  # custom gradient
            for slot, ref in zip(node.outputs, self.gradients.write(self, node, write)):
                self.refs[slot] = ref
            return

        def add(op, inputs, **attrs):
            refs = [self.const(i) if isinstance(i, np.ndarray) else i for i in inputs]
            return self.node(f"{scope}{op}", op, refs, **attrs).name
        outs = write(add, [self.refs[s] for s in node.inputs])
        for slot, ref in zip(node.outputs, outs):
            self.refs[slot] = ref

    # -- the function ---------------------------------------------------------------------
    def run(self):
        graph = self.cap.graph
        sig = self.fdef.signature
        input_specs = []
        for slot, name in zip(graph.placeholders, self.arg_names):
            self.refs[slot] = name
            spec = self.cap.spec(slot)
            input_specs.append(spec)
            sig.input_arg.add(name=name, type=datatype(spec.dtype))
        for slot, value in graph.constants.items():
            asset = self.asset(value)
            self.refs[slot] = self.resource(asset) if asset is not None else \
                self.constant(slot, value)
        dead = _dead_unmapped(graph)
        for node in graph.nodes:
            if node.op is READ_VARIABLE or node.op is ASSIGN_VARIABLE:
                self.variable_node(node)
            elif id(node) not in dead:
                self.op_node(node)
        for obj, name in zip(self.captured, self.resources.values()):
            sig.input_arg.add(name=name, type=datatype(dtypes.string) if obj in
                              self.assets.values() else datatype_resource())
        outputs = self.outputs(graph)
        self.finish(input_specs)
        return outputs

    def outputs(self, graph):
        """Identity nodes for the flat outputs (after every state change, through a NoOp
        that depends on them, as TensorFlow writes it)."""
        noop = None
        if self.stateful:
            noop = self.node("NoOp", "NoOp", [f"^{s}" for s in self.stateful]).name
        specs = []
        from tensorlite.saved_model.composites import flatten  # noqa: PLC0415
        slots = [s for s in flatten(graph.outputs) if not is_python_output(s)]
        for k, slot in enumerate(slots):  # a composite: its components
            if not isinstance(slot, int):  # a Python value (a SparseTensor the trace froze)
                raise NotImplementedError(
                    f"tf.saved_model.save: the function {self.fdef.signature.name!r} returns "
                    f"a {type(slot).__name__} that its trace does not compute (a "
                    f"SparseTensor output of a traced function is not implemented: return "
                    f"its indices, values and dense_shape, or tf.sparse.to_dense of it)")
            spec = self.cap.spec(slot)
            n = self.node("Identity", "Identity",
                          [self.refs[slot]] + ([f"^{noop}"] if noop else []), T=spec.dtype)
            ret = "identity" if k == 0 else f"identity_{k}"
            self.fdef.signature.output_arg.add(name=ret, type=datatype(spec.dtype))
            self.fdef.ret[ret] = f"{n.name}:output:0"
            specs.append(spec)
        return specs

    def finish(self, input_specs):
        sig = self.fdef.signature
        if self.stateful:
            sig.is_stateful = True
        for name in self.stateful:
            sig.control_output.append(name)
            self.fdef.control_ret[name] = name
        shapes = self.fdef.attr["_input_shapes"].list
        for i, arg in enumerate(sig.input_arg):
            user = self.fdef.arg_attr[i].attr
            if i < len(input_specs):
                shapes.shape.add().CopyFrom(shape_proto(input_specs[i].shape))
                user["_user_specified_name"].s = arg.name.encode()
                out = user["_output_shapes"].list
                out.shape.add().CopyFrom(shape_proto(input_specs[i].shape))
            else:
                shapes.shape.add()  # a resource handle: a scalar
                user["_user_specified_name"].s = b"resource"
        self.fdef.attr["_construction_context"].s = b"kEagerRuntime"


def is_python_output(slot):
    """Whether a traced output is a Python value the function returns as it was at trace
    time (`return None`, a mutating method's implicit None; a constant int beside tensors):
    TensorFlow writes those in the output structure, not as function outputs."""
    return isinstance(slot, PythonValue) and (
        slot.value is None or isinstance(slot.value, (bool, int, float, str)))


def datatype_resource():
    from tensorlite.protos.example import DATA_TYPES  # noqa: PLC0415
    return DATA_TYPES["DT_RESOURCE"]


def call_node(node, name, function, inputs, tin, tout):
    """Fills `node` as a StatefulPartitionedCall of library function `function`."""
    node.name, node.op = name, "StatefulPartitionedCall"
    node.input.extend(inputs)
    node.attr["f"].func.name = function
    node.attr["Tin"].list.type.extend(tin)
    node.attr["Tin"].list.SetInParent()
    node.attr["Tout"].list.type.extend(tout)
    node.attr["Tout"].list.SetInParent()
    for key in ("config", "config_proto", "executor_type"):
        node.attr[key].s = b""
    return node


def _dead_unmapped(graph):
    """ids of the nodes left out: those nothing live needs (no output, no stateful op with
    a mapping) that have no TensorFlow mapping or read such a node's outputs. That is the
    initial value of a variable created on a tf.function's first call (the Core API
    tutorials' `tf.Variable(tf.random.uniform(...))` under `if not self.built`), which the
    variable holds already. A needed node without a mapping stays an error."""
    needed, live = set(graph.output_slots()), set()
    for node in reversed(graph.nodes):
        if any(o in needed for o in node.outputs) or node.op is READ_VARIABLE or \
                node.op is ASSIGN_VARIABLE or (is_stateful(node.op) and node.op.tf is not None):
            live.add(id(node))
            needed.update(node.inputs)
    skipped, gone = set(), set()
    for node in graph.nodes:
        if id(node) not in live and (node.op.tf is None or any(i in gone for i in node.inputs)):
            skipped.add(id(node))
            gone.update(node.outputs)
    return skipped


def function_def(cap, name, arg_names, assets=None, gradients=None):
    """(FunctionDef, captured variables, tables and assets in argument order, output Specs)
    of a captured graph (`cap`: a TracedGraph); `assets` maps path bytes to the
    tf.saved_model.Asset objects whose paths are captured inputs, not constants;
    `gradients` (a custom_gradients.GradientWriter) writes tf.custom_gradient nodes with
    their gradients (without it they are written forward only, with a warning)."""
    writer = _Writer(cap, name, arg_names, assets, gradients)
    outputs = writer.run()
    return writer.fdef, writer.captured, outputs


__all__ = ["function_def", "arg_name", "strict_attr", "call_node", "datatype_resource"]
