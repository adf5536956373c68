"""An inference graph as the GraphDef TF.js's Graph format holds: TensorFlow's NodeDefs in
protobuf's JSON mapping (what tfjs-converter writes: `{"name", "op", "input", "attr"}` with
`{"type": "DT_FLOAT"}`, `{"shape": {"dim": [{"size": "-1"}]}}`, `{"list": {"i": [...]}}`),
and the values of its `Const` nodes set apart as weights, named after their nodes.

Every node is the TensorFlow node the SavedModel exporter writes for the same IR node
(tensorlite/saved_model/function_def.py, from the `tf` rule each op declares beside its
registration), so there is one mapping of tensorlite ops to TensorFlow's; here the
FunctionDef that exporter writes becomes a GraphDef: arguments become `Placeholder` nodes,
`node:arg:k` references become `node:k`. A node whose op TF.js does not run (tfjs_ops.py)
is an UnimplementedError naming the TensorFlow op and the tensorlite op that made it.

Example:
    >>> topology, weights, inputs, outputs = graph_def_json(traced)
    >>> [n["op"] for n in topology["node"]][:2], inputs, outputs
    (['Placeholder', 'Const'], ['x:0'], ['Identity:0'])
"""
import numpy as np
from google.protobuf import json_format

from tensorlite.framework import errors
from tensorlite.js.tfjs_ops import TFJS_OPS, TFJS_VERSION
from tensorlite.saved_model.function_def import _Writer
from tensorlite.summary.graph_def import GraphDef, datatype, shape_proto
from tensorlite.version import GRAPH_DEF_VERSION

# The GraphDef version (tf.version.GRAPH_DEF_VERSION); TF.js reads any.
PRODUCER = GRAPH_DEF_VERSION


class _OriginWriter(_Writer):
    """The SavedModel exporter's FunctionDef writer (which already writes a captured value
    whose shape follows the batch size, such as an RNN's zero state, as a `Fill` to the
    run's batch size), remembering which IR node made each TensorFlow node (to name it
    when TF.js cannot run that node) and the arrays of the Const nodes (TF.js's weights)."""

    def __init__(self, traced, *args):
        super().__init__(traced, *args)
        self.origin = {}  # TensorFlow node name -> IR node
        self.values = {}  # Const node name -> its array
        # a weight keeps its variable's name (`dense/kernel`): what quantization wildcards
        # match and what TF.js's model.weights shows
        names = getattr(traced, "weight_names", {})
        self.names = {id(v): names[s] for s, v in traced.graph.constants.items()
                      if names.get(s)}

    def const(self, value, base="Const"):
        ref = super().const(value, self.names.get(id(value), base))
        self.values[ref.split(":")[0]] = np.asarray(value)
        return ref

    def op_node(self, node):
        start = len(self.fdef.node_def)
        super().op_node(node)
        for n in self.fdef.node_def[start:]:
            self.origin[n.name] = node


def _graph_ref(ref):
    """A FunctionDef reference (`arg`, `node:out:k`, `^node`) in GraphDef form (`arg`,
    `node` or `node:k`, `^node`). The ops tensorlite writes have one output argument
    (saved_model/op_outputs.py), so `k` is the output's index."""
    if ref.startswith("^"):
        return ref
    parts = ref.split(":")
    if len(parts) == 1:
        return ref
    return parts[0] if parts[-1] == "0" else f"{parts[0]}:{parts[-1]}"


def _unsupported(writer, node):
    origin = writer.origin.get(node.name)
    made = f" (written for tensorlite op {origin.op.name}, created at {origin.where})" \
        if origin is not None else ""
    return errors.UnimplementedError(
        None, None, f"TF.js graph model: TensorFlow op {node.op} of node {node.name}{made} "
        f"is not one TensorFlow.js {TFJS_VERSION} runs (tensorlite/js/tfjs_ops.py); convert "
        f"a model without it, or use the Layers format (save_keras_model)")


def _placeholders(graph_def, traced):
    for slot, name in zip(traced.graph.placeholders, traced.input_names):
        spec = traced.spec(slot)
        node = graph_def.node.add(name=name, op="Placeholder")
        node.attr["dtype"].type = datatype(spec.dtype)
        node.attr["shape"].shape.CopyFrom(shape_proto(spec.shape))


def _strip_value(node):
    """Leaves a Const node's `value` its dtype and shape only: TF.js reads the value from
    the weights, by the node's name."""
    tensor = node.attr["value"].tensor
    kept = type(tensor)()
    kept.dtype = tensor.dtype
    kept.tensor_shape.CopyFrom(tensor.tensor_shape)
    node.attr["value"].tensor.CopyFrom(kept)


def graph_def_json(traced):
    """(modelTopology dict, [(weight name, array)], input tensor names, output tensor
    names) of an InferenceGraph (graph_trace.py): the GraphDef in protobuf's JSON mapping
    with its Const values moved to the weights."""
    writer = _OriginWriter(traced, "tfjs_graph", traced.input_names)
    try:
        writer.run()
    except errors.UnimplementedError as e:  # the shared tf rules speak of SavedModel export
        raise errors.UnimplementedError(None, None, f"TF.js graph model: {e.message}") from e
    if writer.captured:
        raise errors.InternalError(None, None, "TF.js graph model: the frozen graph still "
                                   "reads variables or tables; this is a bug in freezing")
    graph_def = GraphDef()
    graph_def.versions.producer = PRODUCER
    _placeholders(graph_def, traced)
    weights = []
    for fnode in writer.fdef.node_def:
        if fnode.op not in TFJS_OPS:
            raise _unsupported(writer, fnode)
        node = graph_def.node.add()
        node.CopyFrom(fnode)
        del node.input[:]
        node.input.extend(_graph_ref(r) for r in fnode.input)
        if node.op == "Const":
            _strip_value(node)
            weights.append((node.name, writer.values[node.name]))
    outputs = [_graph_ref(writer.fdef.ret[arg.name]) for arg in
               writer.fdef.signature.output_arg]
    outputs = [o if ":" in o else f"{o}:0" for o in outputs]
    topology = json_format.MessageToDict(graph_def)
    topology.setdefault("library", {})
    return topology, weights, [f"{n}:0" for n in traced.input_names], outputs


__all__ = ["graph_def_json", "PRODUCER"]
