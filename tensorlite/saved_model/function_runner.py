"""Runs a TensorFlow FunctionDef (from a SavedModel's function library) eagerly on tensorlite
tensors, so that the tape sees every op and a loaded model can be fine-tuned.

Structure (arguments, `Const`, `ReadVariableOp` and `Assign*VariableOp` of captured
variables, `Identity`,
`NoOp`, calls through `StatefulPartitionedCall`/`PartitionedCall`, `IdentityN` with its
registered custom gradient, loaded_gradients.py) is handled here. Every
other TensorFlow op runs through the rule its tensorlite op declares beside its
registration, `registry.declare(OP, tf_import=RULE)`, where RULE is

- a callable `RULE(inputs, attrs) -> tensor or list of tensors`: `inputs` are the node's
  data inputs as tensors, `attrs` its attributes as Python values (strings, ints, floats,
  bools, lists, dtypes, NumPy arrays, function names); or
- a dict `{tf_op_name: callable}` when one tensorlite op covers several TensorFlow ops
  (BatchMatMulV2 imports MatMul and BatchMatMulV2); or
- `"plain"`: TensorFlow's op of the same name takes the same inputs and no attributes but
  its dtype `T` (elementwise math and activations: AddV2, Mul, Rsqrt, Relu, Tanh, ...).

Only ops that declare a rule run: a graph naming any other registered op (a Python callback,
a file reader) is refused like an unknown one.

An op with no rule is an UnimplementedError naming the op, the node and the function. An op
that names a file (protos/tf_graph_format.FILE_OPS) runs only on a path inside the SavedModel's own
`assets/` or `variables/` (PermissionDeniedError otherwise), and an input naming no node's
output is a DataLossError naming it.

Example:
    >>> outputs = run_function(library, "__inference___call___11", [x, variable])
"""
import threading

import numpy as np

from tensorlite.framework import errors, registry
from tensorlite.protos.tf_graph_format import ASSIGN_OPS, CALL_OPS, STRUCTURAL_OPS, file_inputs
from tensorlite.saved_model.loaded_gradients import identity_n, registered
from tensorlite.saved_model.op_outputs import output_args
from tensorlite.saved_model.validate import MAX_CALL_DEPTH, check_tensor_proto
from tensorlite.summary.graph_def import dtype_from_datatype

# The output arguments of TensorFlow's ops with several of them (each op's `tf_outputs`
# declaration, read by `_arg_offset`): an input `node:values:0` is the first tensor of
# argument `values`; a list argument names the attribute holding its length. Ops whose
# import rules compute outside the registry declare `tf_import_opaque` (a trace would
# freeze them at their traced values): a function using one runs as one node inside a
# tf.function (load.py).

# TensorFlow's assignment op -> the Variable method that does it (ASSIGN_OPS' modes)
_ASSIGN = {op: {"set": "assign", "add": "assign_add", "sub": "assign_sub"}[mode]
           for mode, op in ASSIGN_OPS.items()}


def import_rules():
    """TensorFlow op name -> import callable, from every op's `tf_import` declaration."""
    import tensorlite.lookup  # noqa: F401, PLC0415 - declares the table ops' rules
    import tensorlite.ragged  # noqa: F401, PLC0415 - the text families are lazy in tensorlite:
    import tensorlite.strings  # noqa: F401, PLC0415 - their ops register on first import
    import tensorlite.ops.bincount_ops  # noqa: F401, PLC0415
    rules = {}
    for op in registry.REGISTRY.values():
        rule = getattr(op, "tf_import", None)
        if isinstance(rule, dict):
            rules.update(rule)
        elif rule == "plain":
            rules[op.name] = _plain_op(op)
        elif rule is not None:
            rules[op.tf if isinstance(op.tf, str) else op.name] = rule
    return rules


def opaque_imports():
    """The TensorFlow op names whose import rules compute outside the registry (their ops
    declare `tf_import_opaque`)."""
    names = set()
    for op in list(registry.REGISTRY.values()):
        if op.tf_import_opaque:
            rule = op.tf_import
            names.update(rule if isinstance(rule, dict) else
                         [op.tf if isinstance(op.tf, str) else op.name])
    return names


def attr_value(av):
    """The Python value of an AttrValue."""
    kind = av.WhichOneof("value")
    if kind == "s":
        return av.s.decode("utf-8", "replace")
    if kind in ("i", "f", "b"):
        return getattr(av, kind)
    if kind == "type":
        return dtype_from_datatype(av.type)
    if kind == "shape":
        return None if av.shape.unknown_rank else [d.size for d in av.shape.dim]
    if kind == "tensor":
        return tensor_value(av.tensor)
    if kind == "func":
        return av.func.name
    if kind == "list":
        lst = av.list
        for field in ("s", "i", "f", "b", "type", "shape", "func"):
            values = list(getattr(lst, field))
            if values:
                if field == "s":
                    return [v.decode("utf-8", "replace") for v in values]
                if field == "type":
                    return [dtype_from_datatype(v) for v in values]
                if field == "shape":
                    return [[d.size for d in v.dim] for v in values]
                if field == "func":
                    return [v.name for v in values]
                return values
        return []
    return None


def tensor_value(proto, source="SavedModel"):
    """A TensorProto's value as a NumPy array; its claimed shape is checked against its
    bytes first (validate.check_tensor_proto)."""
    from tensorlite.ops.parsing_ops import _parse_tensor_fwd  # noqa: PLC0415
    dtype = dtype_from_datatype(proto.dtype)
    if dtype is None:
        raise errors.UnimplementedError(None, None, f"constant of DataType {proto.dtype}")
    check_tensor_proto(proto, source)
    if dtype.is_string:
        values = list(proto.string_val)
        shape = [d.size for d in proto.tensor_shape.dim]
        count = int(np.prod(shape, dtype=object))
        array = np.empty(count, dtype=object)
        # fewer values than the shape: the last one repeats (TensorFlow's splat)
        array[:] = values[:count] + [values[-1] if values else b""] * (count - len(values))
        return array.reshape(shape)
    return _parse_tensor_fwd(np.array(proto.SerializeToString(), dtype=object), dtype.name)


class Runner:
    """Runs the functions of one library; `capture(handle)` maps a resource input to its
    variable."""

    def __init__(self, library, roots=None):
        self.functions = {f.signature.name: f for f in library.function}
        self.gradients = registered(library)  # custom gradients: op type -> function
        self.gradient_bound = {}  # gradient function -> its captured variables (load.py)
        self.rules = import_rules()
        self.opaque = opaque_imports()
        self.roots = roots  # file_access.Roots: where file ops may read/write (None: nowhere)
        self._calls = threading.local()  # per thread: a served model runs on many at once

    def value_shaped(self, name, seen=None):
        """Whether function `name` or one it calls uses an op whose import is opaque."""
        seen = set() if seen is None else seen
        if name in seen or name not in self.functions:
            return False
        seen.add(name)
        for node in self.functions[name].node_def:
            if node.op in self.opaque:
                return True
            if "f" in node.attr and self.value_shaped(node.attr["f"].func.name, seen):
                return True
        return False

    def run(self, name, inputs):
        """The outputs (a list) of function `name` called on `inputs`."""
        fdef = self.functions.get(name)
        if fdef is None:
            raise errors.NotFoundError(None, None, f"SavedModel: function {name} is not in "
                                       f"the function library")
        args = fdef.signature.input_arg
        if len(inputs) != len(args):
            raise errors.InvalidArgumentError(None, None, f"function {name} takes "
                                              f"{len(args)} inputs, got {len(inputs)}")
        depth = getattr(self._calls, "depth", 0)
        if depth >= MAX_CALL_DEPTH:  # (load refuses such libraries already)
            raise errors.DataLossError(None, None, f"SavedModel: calls nest deeper than "
                                       f"{MAX_CALL_DEPTH} at function {name}; the function "
                                       f"library is corrupt (recursive)")
        values = {a.name: v for a, v in zip(args, inputs)}
        nodes = {n.name: n for n in fdef.node_def}
        done = {}
        self._calls.depth = depth + 1
        try:
            # the control outputs run too: a function that only assigns (returns None)
            # has its state changes there and no outputs
            wanted = [fdef.ret.get(a.name, "") for a in fdef.signature.output_arg]
            for node_name in _order(nodes, wanted + list(fdef.control_ret.values())):
                node = nodes[node_name]
                ins = [_lookup(ref, values, done, nodes) for ref in node.input
                       if not ref.startswith("^")]
                done[node_name] = self.node(node, ins, name)
            return [_lookup(fdef.ret.get(a.name, ""), values, done, nodes)
                    for a in fdef.signature.output_arg]
        finally:
            self._calls.depth = depth

    def node(self, node, inputs, function):
        """The outputs (a list) of one node run on `inputs`; a node whose inputs or
        attributes do not fit its op (a corrupt graph) is an InvalidArgumentError naming
        it."""
        attrs = {k: attr_value(v) for k, v in node.attr.items() if not k.startswith("_")}
        try:
            return self._run_node(node, inputs, attrs, function)
        except (IndexError, KeyError, AttributeError) as e:  # indexing what is absent
            raise errors.InvalidArgumentError(
                None, None, f"SavedModel: node {node.name!r} ({node.op}) in {function} has "
                f"{len(inputs)} inputs and attributes {sorted(attrs)}, which do not fit the "
                f"op ({type(e).__name__}: {e}); the graph is corrupt") from None

    def _run_node(self, node, inputs, attrs, function):
        op = node.op
        if op == "NoOp":
            return []
        if op == "Const":
            from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
            return [convert_to_tensor(attrs["value"])]
        if op == "Identity":
            from tensorlite.ops.array_ops import identity  # noqa: PLC0415
            if hasattr(inputs[0], "resource_handle"):  # a table or variable handle passes
                return [inputs[0]]
            return [identity(inputs[0])]
        if op == "ReadVariableOp":  # (a tensor: the value a caller read for this run)
            x = inputs[0]
            return [x.read_value() if hasattr(x, "read_value") else x]
        if op in _ASSIGN:  # a function that updates its variables (counters, running sums)
            getattr(inputs[0], _ASSIGN[op])(inputs[1])
            return []
        if op in CALL_OPS:
            return self.run(attrs["f"], inputs)
        if op == "IdentityN":  # (a custom gradient's, when its type is registered)
            return identity_n(self, node, inputs)
        self._check_files(node, inputs, function)
        rule = self.rules.get(op)
        if rule is None:
            raise errors.UnimplementedError(
                None, None, f"SavedModel: op {op} (node {node.name!r} in function "
                f"{function}) has no tensorlite implementation; ops with a tf_import rule: "
                f"{', '.join(sorted(set(self.rules) | STRUCTURAL_OPS))}")
        out = rule(inputs, attrs)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    def _check_files(self, node, inputs, function):
        """Refuses a file op whose actual path lies outside the SavedModel's own files
        (load checked the paths it could resolve; this is the run-time check)."""
        for index, mode in file_inputs(node.op):
            where = f"node {node.name!r} ({node.op}) in {function}"
            if self.roots is None or index >= len(inputs):
                raise errors.PermissionDeniedError(None, None, f"SavedModel: {where} touches "
                                                   f"a file, and this graph has no directory "
                                                   f"of its own to touch")
            self.roots.check_tensor(inputs[index], mode, where)


def _plain_op(op):
    def run(inputs, attrs):
        from tensorlite.framework.dispatch import execute  # noqa: PLC0415
        extra = set(attrs) - {"T"}
        if extra:
            raise errors.UnimplementedError(None, None, f"SavedModel: op {op.name} with "
                                            f"attributes {sorted(extra)} is not supported")
        return execute(op, tuple(inputs), None)
    return run


def _lookup(ref, values, done, nodes):
    """The value of an input reference: an argument name or `node:out_arg:index`; one
    naming no computed output is a DataLossError (a corrupt graph)."""
    if ref in values:
        return values[ref]
    parts = ref.split(":")
    try:
        outputs = done[parts[0]]
        index = int(parts[-1]) if len(parts) > 1 else 0
        if len(parts) == 3:
            index += _arg_offset(nodes[parts[0]], parts[1])
        if index < 0:
            raise IndexError(index)
        return outputs[index]
    except (KeyError, IndexError, ValueError):
        raise errors.DataLossError(None, None, f"SavedModel: input {ref!r} names no output "
                                   f"of a node that ran before it; the graph is corrupt"
                                   ) from None


def _arg_offset(node, arg):
    """Where output argument `arg` of `node` starts in its flat list of outputs."""
    offset = 0
    args = output_args().get(node.op)
    for spec in args if isinstance(args, tuple) else ():
        name, length_attr = spec if isinstance(spec, tuple) else (spec, None)
        if name == arg:
            return offset
        offset += node.attr[length_attr].i if length_attr else 1
    return 0


def _order(nodes, wanted):
    """The nodes the outputs need, each after its inputs (iterative depth-first)."""
    order, seen = [], set()
    stack = [(r.split(":")[0], False) for r in wanted if r.split(":")[0] in nodes]
    while stack:
        name, expanded = stack.pop()
        if expanded:
            order.append(name)
            continue
        if name in seen:
            continue
        seen.add(name)
        stack.append((name, True))
        for ref in nodes[name].input:
            dep = ref.lstrip("^").split(":")[0]
            if dep in nodes and dep not in seen:
                stack.append((dep, False))
    return order
