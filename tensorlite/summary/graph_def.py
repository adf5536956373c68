"""TensorBoard's op graph: tensorlite's graph IR as a `tensorflow.GraphDef` message.

`GraphDef`, `NodeDef`, `AttrValue`, `NameAttrList`, `VersionDef` and `RunMetadata` (its
graph fields only) are built at import from descriptors written here with the field names
and numbers of TensorFlow's `graph.proto`, `node_def.proto`, `attr_value.proto`,
`versions.proto` and `config.proto`, in the private descriptor pool of
`tensorlite.protos.example` (whose `TensorProto`, `TensorShapeProto` and `DataType` they
reuse), so TensorBoard parses the bytes with its own classes.

`graph_def(graph)` writes one NodeDef per value source, named as TensorFlow names them
(`MatMul`, `MatMul_1`, ..., under the node's name scope when the IR records one):
a `Placeholder` per function argument (`args_0`, ...), a `Const` per captured value, a
`VarHandleOp` per variable (named after it) read by `ReadVariableOp` and written by
`AssignVariableOp` / `AssignAddVariableOp` / `AssignSubVariableOp` (ordered by control
inputs, as TensorFlow's automatic control dependencies order them), and one node per op
with TensorFlow's op name, its inputs (`node` or `node:k` for output k), its dtype (`T`),
its attributes and `_output_shapes`.

Not TensorFlow's exact graph: attributes that TensorFlow passes as input tensors (a
reduction's axis, a reshape's shape) stay attributes here; control-flow bodies (If, While)
are named by `func` attributes but not exported as library functions; constants over
`MAX_CONST_BYTES` keep their dtype and shape but not their values.

Example:
    >>> cf = tf.function(lambda x: tf.nn.relu(x)).get_concrete_function(tf.zeros([2]))
    >>> [n.op for n in graph_def(cf.graph).node]
    ['Placeholder', 'Relu']
"""
import re
import warnings

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.protos.example import (DATA_TYPES, POOL, _F, _field, _map_field, _message,
                                      message_class, add_files)
from tensorlite.protos.tf_graph_format import ASSIGN_OPS
from google.protobuf import descriptor_pb2

MAX_CONST_BYTES = 1 << 20  # larger captured values are written without their contents

_FW = "tensorflow/core/framework/"


def _attr_value_file():
    """tensorflow/core/framework/attr_value.proto"""
    file = descriptor_pb2.FileDescriptorProto(
        name=_FW + "attr_value.proto", package="tensorflow", syntax="proto3",
        dependency=[_FW + "tensor.proto", _FW + "tensor_shape.proto", _FW + "types.proto"])
    value = _message(file, "AttrValue")
    lst = value.nested_type.add(name="ListValue")
    _field(lst, "s", 2, _F.TYPE_BYTES, _F.LABEL_REPEATED)
    _field(lst, "i", 3, _F.TYPE_INT64, _F.LABEL_REPEATED, packed=True)
    _field(lst, "f", 4, _F.TYPE_FLOAT, _F.LABEL_REPEATED, packed=True)
    _field(lst, "b", 5, _F.TYPE_BOOL, _F.LABEL_REPEATED, packed=True)
    _field(lst, "type", 6, _F.TYPE_ENUM, _F.LABEL_REPEATED, type_name="DataType", packed=True)
    _field(lst, "shape", 7, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="TensorShapeProto")
    _field(lst, "tensor", 8, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="TensorProto")
    _field(lst, "func", 9, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="NameAttrList")
    value.oneof_decl.add(name="value")
    _field(value, "s", 2, _F.TYPE_BYTES, oneof=0)
    _field(value, "i", 3, _F.TYPE_INT64, oneof=0)
    _field(value, "f", 4, _F.TYPE_FLOAT, oneof=0)
    _field(value, "b", 5, _F.TYPE_BOOL, oneof=0)
    _field(value, "type", 6, _F.TYPE_ENUM, type_name="DataType", oneof=0)
    _field(value, "shape", 7, _F.TYPE_MESSAGE, type_name="TensorShapeProto", oneof=0)
    _field(value, "tensor", 8, _F.TYPE_MESSAGE, type_name="TensorProto", oneof=0)
    _field(value, "list", 1, _F.TYPE_MESSAGE, type_name="AttrValue.ListValue", oneof=0)
    _field(value, "func", 10, _F.TYPE_MESSAGE, type_name="NameAttrList", oneof=0)
    _field(value, "placeholder", 9, _F.TYPE_STRING, oneof=0)
    names = _message(file, "NameAttrList")
    _field(names, "name", 1, _F.TYPE_STRING)
    _map_field(names, "attr", 2, "AttrValue")
    return file


def _node_def_file():
    """tensorflow/core/framework/node_def.proto (without the experimental fields)."""
    file = descriptor_pb2.FileDescriptorProto(
        name=_FW + "node_def.proto", package="tensorflow", syntax="proto3",
        dependency=[_FW + "attr_value.proto"])
    node = _message(file, "NodeDef")
    _field(node, "name", 1, _F.TYPE_STRING)
    _field(node, "op", 2, _F.TYPE_STRING)
    _field(node, "input", 3, _F.TYPE_STRING, _F.LABEL_REPEATED)
    _field(node, "device", 4, _F.TYPE_STRING)
    _map_field(node, "attr", 5, "AttrValue")
    return file


def _versions_file():
    """tensorflow/core/framework/versions.proto"""
    file = descriptor_pb2.FileDescriptorProto(
        name=_FW + "versions.proto", package="tensorflow", syntax="proto3")
    version = _message(file, "VersionDef")
    _field(version, "producer", 1, _F.TYPE_INT32)
    _field(version, "min_consumer", 2, _F.TYPE_INT32)
    _field(version, "bad_consumers", 3, _F.TYPE_INT32, _F.LABEL_REPEATED, packed=True)
    return file


def _op_def_file():
    """tensorflow/core/framework/op_def.proto (OpDef, its ArgDef and AttrDef, OpList)."""
    file = descriptor_pb2.FileDescriptorProto(
        name=_FW + "op_def.proto", package="tensorflow", syntax="proto3",
        dependency=[_FW + "attr_value.proto", _FW + "types.proto"])
    op = _message(file, "OpDef")
    arg = op.nested_type.add(name="ArgDef")
    _field(arg, "name", 1, _F.TYPE_STRING)
    _field(arg, "description", 2, _F.TYPE_STRING)
    _field(arg, "type", 3, _F.TYPE_ENUM, type_name="DataType")
    _field(arg, "type_attr", 4, _F.TYPE_STRING)
    _field(arg, "number_attr", 5, _F.TYPE_STRING)
    _field(arg, "type_list_attr", 6, _F.TYPE_STRING)
    _field(arg, "is_ref", 16, _F.TYPE_BOOL)
    attr = op.nested_type.add(name="AttrDef")
    _field(attr, "name", 1, _F.TYPE_STRING)
    _field(attr, "type", 2, _F.TYPE_STRING)
    _field(attr, "default_value", 3, _F.TYPE_MESSAGE, type_name="AttrValue")
    _field(attr, "description", 4, _F.TYPE_STRING)
    _field(attr, "has_minimum", 5, _F.TYPE_BOOL)
    _field(attr, "minimum", 6, _F.TYPE_INT64)
    _field(attr, "allowed_values", 7, _F.TYPE_MESSAGE, type_name="AttrValue")
    _field(op, "name", 1, _F.TYPE_STRING)
    _field(op, "input_arg", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="OpDef.ArgDef")
    _field(op, "output_arg", 3, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="OpDef.ArgDef")
    _field(op, "control_output", 20, _F.TYPE_STRING, _F.LABEL_REPEATED)
    _field(op, "attr", 4, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="OpDef.AttrDef")
    _field(op, "summary", 5, _F.TYPE_STRING)
    _field(op, "description", 6, _F.TYPE_STRING)
    _field(op, "is_commutative", 18, _F.TYPE_BOOL)
    _field(op, "is_aggregate", 16, _F.TYPE_BOOL)
    _field(op, "is_stateful", 17, _F.TYPE_BOOL)
    _field(op, "allows_uninitialized_input", 19, _F.TYPE_BOOL)
    _field(op, "is_distributed_communication", 21, _F.TYPE_BOOL)
    _field(_message(file, "OpList"), "op", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="OpDef")
    return file


def _function_file():
    """tensorflow/core/framework/function.proto (FunctionDefLibrary, FunctionDef,
    RegisteredGradient; without GradientDef)."""
    file = descriptor_pb2.FileDescriptorProto(
        name=_FW + "function.proto", package="tensorflow", syntax="proto3",
        dependency=[_FW + "attr_value.proto", _FW + "node_def.proto", _FW + "op_def.proto"])
    function = _message(file, "FunctionDef")
    arg_attrs = function.nested_type.add(name="ArgAttrs")
    _map_field(arg_attrs, "attr", 1, "AttrValue", scope="FunctionDef.ArgAttrs")
    _field(function, "signature", 1, _F.TYPE_MESSAGE, type_name="OpDef")
    _map_field(function, "attr", 5, "AttrValue")
    _map_field(function, "arg_attr", 7, "FunctionDef.ArgAttrs", key_type=_F.TYPE_UINT32)
    _map_field(function, "resource_arg_unique_id", 8, None, key_type=_F.TYPE_UINT32,
               value_kind=_F.TYPE_UINT32)
    _field(function, "node_def", 3, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="NodeDef")
    _map_field(function, "ret", 4, None, value_kind=_F.TYPE_STRING)
    _map_field(function, "control_ret", 6, None, value_kind=_F.TYPE_STRING)
    library = _message(file, "FunctionDefLibrary")
    _field(library, "function", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="FunctionDef")
    _field(library, "registered_gradients", 3, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="RegisteredGradient")
    gradient = _message(file, "RegisteredGradient")  # a custom gradient: op type -> function
    _field(gradient, "gradient_func", 1, _F.TYPE_STRING)
    _field(gradient, "registered_op_type", 2, _F.TYPE_STRING)
    return file


def _graph_file():
    """tensorflow/core/framework/graph.proto (without debug_info)."""
    file = descriptor_pb2.FileDescriptorProto(
        name=_FW + "graph.proto", package="tensorflow", syntax="proto3",
        dependency=[_FW + "node_def.proto", _FW + "versions.proto", _FW + "function.proto"])
    graph = _message(file, "GraphDef")
    _field(graph, "node", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="NodeDef")
    _field(graph, "versions", 4, _F.TYPE_MESSAGE, type_name="VersionDef")
    _field(graph, "version", 3, _F.TYPE_INT32)
    _field(graph, "library", 2, _F.TYPE_MESSAGE, type_name="FunctionDefLibrary")
    return file


def _config_file():
    """tensorflow/core/protobuf/config.proto: RunMetadata's graph fields, what
    tf.summary.trace_export writes."""
    file = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/protobuf/config.proto", package="tensorflow", syntax="proto3",
        dependency=[_FW + "graph.proto"])
    meta = _message(file, "RunMetadata")
    graphs = meta.nested_type.add(name="FunctionGraphs")
    _field(graphs, "partition_graphs", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="GraphDef")
    _field(graphs, "pre_optimization_graph", 2, _F.TYPE_MESSAGE, type_name="GraphDef")
    _field(graphs, "post_optimization_graph", 3, _F.TYPE_MESSAGE, type_name="GraphDef")
    _field(meta, "partition_graphs", 3, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="GraphDef")
    _field(meta, "function_graphs", 4, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="RunMetadata.FunctionGraphs")
    return file


add_files(_attr_value_file, _node_def_file, _versions_file, _op_def_file, _function_file,
          _graph_file, _config_file)




AttrValue = message_class("AttrValue")
NameAttrList = message_class("NameAttrList")
NodeDef = message_class("NodeDef")
VersionDef = message_class("VersionDef")
GraphDef = message_class("GraphDef")
RunMetadata = message_class("RunMetadata")
OpDef = message_class("OpDef")
FunctionDef = message_class("FunctionDef")
FunctionDefLibrary = message_class("FunctionDefLibrary")
TensorShapeProto = message_class("TensorShapeProto")

_DT_NAME = {DATA_TYPES[dt]: name for name, dt in dtypes.DT_NAMES.items()}

_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.\-/>]")


def datatype(dtype):
    """TensorFlow's DataType enum value of a tensorlite dtype (DT_INVALID if none)."""
    return DATA_TYPES[dtypes.DT_NAMES.get(getattr(dtype, "name", None), "DT_INVALID")]


def dtype_from_datatype(value):
    """The tensorlite dtype of a TensorFlow DataType enum value; None for DT_INVALID and
    the types tensorlite has no dtype for."""
    try:
        return dtypes.as_dtype(_DT_NAME[value])
    except (KeyError, TypeError, ValueError):  # resource, variant: no tensorlite dtype
        return None


def shape_proto(dims):
    """A TensorShapeProto of a tuple of ints and None (-1 in the proto), or None for an
    unknown rank."""
    proto = TensorShapeProto()
    if dims is None:
        proto.unknown_rank = True
        return proto
    for d in dims:
        proto.dim.add(size=-1 if d is None else int(d))
    return proto


# -- attributes ----------------------------------------------------------------------------------
def _is_dtype(v):
    return isinstance(v, dtypes.DType)


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _set_list(av, values):
    """A tuple/list attribute: ints, floats, bools, strings, dtypes, sub-graphs or a
    partial shape (ints and None); False when the values are of no one kind."""
    lst = av.list
    if all(_is_int(v) for v in values):
        lst.i.extend(int(v) for v in values)
    elif all(_is_int(v) or v is None for v in values):  # a partial shape
        av.shape.CopyFrom(shape_proto(values))
        return True
    elif all(isinstance(v, (bool, np.bool_)) for v in values):
        lst.b.extend(bool(v) for v in values)
    elif all(isinstance(v, (int, float, np.integer, np.floating)) for v in values):
        lst.f.extend(float(v) for v in values)
    elif all(isinstance(v, str) for v in values):
        lst.s.extend(v.encode("utf-8") for v in values)
    elif all(_is_dtype(v) for v in values):
        lst.type.extend(datatype(v) for v in values)
    elif all(hasattr(v, "graph") and hasattr(v, "name") for v in values):
        for v in values:
            lst.func.add(name=str(v.name))
    else:
        return False
    lst.SetInParent()
    return True


def attr_value(v):
    """The AttrValue of one IR attribute, or None for values with no GraphDef form."""
    av = AttrValue()
    if isinstance(v, (bool, np.bool_)):
        av.b = bool(v)
    elif _is_int(v):
        av.i = int(v)
    elif isinstance(v, (float, np.floating)):
        av.f = float(v)
    elif isinstance(v, str):
        av.s = v.encode("utf-8")
    elif isinstance(v, bytes):
        av.s = v
    elif _is_dtype(v):
        av.type = datatype(v)
    elif isinstance(v, TensorShape):
        av.shape.CopyFrom(shape_proto(v.dims))
    elif isinstance(v, np.ndarray):
        tensor = _tensor(v)
        if tensor is None:
            return None
        av.tensor.CopyFrom(tensor)
    elif isinstance(v, (tuple, list)):
        if not v:
            av.list.SetInParent()
        elif not _set_list(av, v):
            return None
    elif hasattr(v, "graph") and hasattr(v, "name"):  # a control-flow body
        av.func.name = str(v.name)
    elif callable(v):  # a Python callback or a registry op: its name is what a reader
        name = getattr(v, "__qualname__", None) or getattr(v, "name", None)  # can use
        av.s = str(name or type(v).__name__).encode("utf-8")
    else:
        return None
    return av


def _tensor(value):
    from tensorlite.summary.event_writer import tensor_proto  # noqa: PLC0415 - no cycle
    array = np.asarray(value)
    try:
        if array.dtype != object and array.nbytes > MAX_CONST_BYTES:
            proto = tensor_proto(np.zeros((0,), dtype=array.dtype))
            proto.tensor_shape.Clear()
            for size in array.shape:
                proto.tensor_shape.dim.add(size=int(size))
            proto.ClearField("tensor_content")
            return proto
        return tensor_proto(array)
    except TypeError:  # a dtype TensorProto cannot hold (bfloat16 from ml_dtypes)
        return None


# -- the graph -----------------------------------------------------------------------------------
class _Names:
    """TensorFlow's unique node names: `name`, then `name_1`, `name_2`, ..."""

    def __init__(self):
        self.taken = set()

    def __call__(self, base):
        base = _BAD_NAME_CHARS.sub("_", base).lstrip("_/") or "node"
        name, i = base, 0
        while name in self.taken:
            i += 1
            name = f"{base}_{i}"
        self.taken.add(name)
        return name


def _spec_table(graph):
    from tensorlite.graph.passes import Specs  # noqa: PLC0415 - summary sits above graph
    return Specs(graph)


def _set_output_shapes(node, specs):
    shapes = node.attr["_output_shapes"].list
    for spec in specs:
        shapes.shape.add().CopyFrom(shape_proto(None if spec is None else spec.shape))
    shapes.SetInParent()


class _Converter:
    def __init__(self, graph, inputs=None):
        self.graph = graph
        self.inputs = inputs or {}
        self.specs = _spec_table(graph)
        self.out = GraphDef()
        self.out.versions.SetInParent()
        self.unique = _Names()
        self.names = {}  # slot -> "node" or "node:k"
        self.handles = {}  # id(variable) -> VarHandleOp node name
        self.last_write = {}  # id(variable) -> the last assignment's node name

    def node(self, base, op, inputs=()):
        n = self.out.node.add(name=self.unique(base), op=op)
        n.input.extend(inputs)
        return n

    def spec(self, slot):
        # Shape rules by evaluation run ops on zeros: their NumPy warnings (log(0), x/0)
        # are no news to the user.
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return self.specs[slot]
        except Exception:  # noqa: BLE001 - an unknown spec only leaves a shape out
            return None

    def run(self):
        for i, s in enumerate(self.graph.placeholders):
            shape, dtype = self.graph.specs[s]
            name, shape = self.inputs.get(s, (f"args_{i}", tuple(shape)))
            n = self.node(name, "Placeholder")
            n.attr["dtype"].type = datatype(dtype)
            n.attr["shape"].shape.CopyFrom(shape_proto(shape))
            _set_output_shapes(n, [self.spec(s)])
            self.names[s] = n.name
        for s, value in self.graph.constants.items():
            n = self.node("Const", "Const")
            spec = self.spec(s)
            if spec is not None:
                n.attr["dtype"].type = datatype(spec.dtype)
            tensor = _tensor(value)
            if tensor is not None:
                n.attr["value"].tensor.CopyFrom(tensor)
            _set_output_shapes(n, [spec])
            self.names[s] = n.name
        for node in self.graph.nodes:
            if "variable" in node.attrs:
                self.variable_node(node)
            else:
                self.op_node(node)
        return self.out

    # -- variables -------------------------------------------------------------------------
    def handle(self, variable):
        name = self.handles.get(id(variable))
        if name is None:
            var_name = str(getattr(variable, "name", "Variable"))
            var_name = var_name[:-2] if var_name.endswith(":0") else var_name
            n = self.node(var_name, "VarHandleOp")
            n.attr["dtype"].type = datatype(getattr(variable, "dtype", None))
            n.attr["shape"].shape.CopyFrom(shape_proto(_variable_dims(variable)))
            n.attr["shared_name"].s = var_name.encode("utf-8")
            n.attr["container"].s = b""
            n.attr["_output_shapes"].list.shape.add()  # the handle: a scalar resource
            name = self.handles[id(variable)] = n.name
        return name

    def variable_node(self, node):
        variable = node.attrs["variable"]
        handle = self.handle(variable)
        after = self.last_write.get(id(variable))
        control = [f"^{after}"] if after else []
        mode = node.attrs.get("mode")
        if mode is None:  # a read
            n = self.node(f"{handle}/ReadVariableOp", "ReadVariableOp", [handle] + control)
            _set_output_shapes(n, [self.spec(s) for s in node.outputs])
        else:
            op = ASSIGN_OPS.get(mode, "AssignVariableOp")
            n = self.node(f"{handle}/{op}", op,
                          [handle] + [self.names.get(s, "") for s in node.inputs] + control)
            self.last_write[id(variable)] = n.name
        n.attr["dtype"].type = datatype(getattr(variable, "dtype", None))
        for s in node.outputs:
            self.names[s] = n.name

    # -- ops -------------------------------------------------------------------------------
    def op_node(self, node):
        in_specs = [self.spec(s) for s in node.inputs]
        op, attrs = _tf_op(node, in_specs)
        scope = getattr(node, "scope", "") or ""
        n = self.node(scope + op, op, [self.names.get(s, "") for s in node.inputs])
        for key, value in attrs.items():
            av = attr_value(value)
            if av is not None:
                n.attr[key].CopyFrom(av)
        out_specs = [self.spec(s) for s in node.outputs]
        if "T" not in attrs:
            known = in_specs[0] if in_specs else (out_specs[0] if out_specs else None)
            if known is not None:
                n.attr["T" if in_specs else "dtype"].type = datatype(known.dtype)
        _set_output_shapes(n, out_specs)
        for k, s in enumerate(node.outputs):
            self.names[s] = n.name if k == 0 else f"{n.name}:{k}"


def _variable_dims(variable):
    try:
        return tuple(variable.shape.as_list())
    except (AttributeError, ValueError, TypeError):
        return None


def tf_rule(op, attrs, in_specs):
    """TensorFlow's (op name, attributes) of a registry op from its declared `tf` rule
    (None when it declares none).

    The rule, declared beside the op's registration with
    `registry.declare(OP, tf=RULE)`, is either
    - a string: TensorFlow's op name, the node's attributes written as they are
      (`declare(READ_VARIABLE, tf="ReadVariableOp")`); or
    - a callable `RULE(attrs, in_specs) -> (op_name, attrs[, inputs])` for ops whose
      TensorFlow form depends on their attributes or input shapes (MatMul for matrices,
      BatchMatMulV2 for batches); `in_specs` are the inputs' Specs (shape, dtype) or None
      where unknown. The full form (with `inputs`, what SavedModel export writes) is
      documented in tensorlite/saved_model/function_def.py; here the inputs a rule moves
      out of the attributes stay attributes.
    """
    rule = getattr(op, "tf", None)
    if rule is None:
        return None
    if isinstance(rule, str):
        return rule, dict(attrs)
    found = rule(dict(attrs), in_specs)
    if len(found) > 2:  # inputs as TensorFlow passes them: here they stay attributes
        return found[0], {**attrs, **found[1]}
    return found[0], found[1]


def _tf_op(node, in_specs):
    """TensorFlow's op name and attributes for an IR node: its declared rule, else the
    registry name (most are TensorFlow's)."""
    try:
        found = tf_rule(node.op, node.attrs, in_specs)
    except Exception:  # noqa: BLE001 - a rule that needs what TensorBoard's view lacks
        found = None
    if found is not None:
        return found
    if node.op.name.startswith("CustomGradient:"):  # tf.custom_gradient's forward, as TF
        return "IdentityN", dict(node.attrs)
    return node.op.name, dict(node.attrs)


def graph_def(graph, inputs=None):
    """The GraphDef message of a tensorlite graph (a ConcreteFunction's `graph`);
    `inputs` optionally maps placeholder slots to (name, declared shape dims or None)."""
    return _Converter(graph, inputs).run()


__all__ = ["AttrValue", "NameAttrList", "NodeDef", "VersionDef", "GraphDef", "RunMetadata",
           "OpDef", "FunctionDef", "FunctionDefLibrary",
           "graph_def", "attr_value", "shape_proto", "datatype", "dtype_from_datatype",
           "MAX_CONST_BYTES"]
