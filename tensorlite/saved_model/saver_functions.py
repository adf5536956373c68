"""A SavedModel's saver, as TensorFlow writes it for loaders that restore variables by
running the graph (TensorFlow 1's `tf.compat.v1.saved_model.load`, TensorFlow Serving's
C++ SavedModelBundle): a `saver_filename` placeholder, a save function (SaveV2 of every
variable under its checkpoint key) and a restore function (RestoreV2 then AssignVariableOp),
each called from the outer graph by a StatefulPartitionedCall over the variables'
VarHandleOps, and the MetaGraphDef's SaverDef naming them. Simpler than TensorFlow's own
(one shard, no temporary-then-merge), which readers of the SaverDef cannot tell apart.

Example:
    >>> add_saver(meta, keys_and_variables, handles, new_name)
"""
import numpy as np

from tensorlite.saved_model.function_def import call_node, datatype_resource
from tensorlite.summary.event_writer import tensor_proto
from tensorlite.summary.graph_def import FunctionDef, datatype

_DT_STRING = 7


def _const(fdef, name, values):
    node = fdef.node_def.add(name=name, op="Const")
    node.attr["dtype"].type = _DT_STRING
    node.attr["value"].tensor.CopyFrom(tensor_proto(np.array(values, dtype=object)))
    return f"{name}:output:0"


def _function(name, n_vars):
    fdef = FunctionDef()
    fdef.signature.name = name
    fdef.signature.input_arg.add(name="file_prefix", type=_DT_STRING)
    for i in range(n_vars):
        fdef.signature.input_arg.add(name=f"resource_{i}", type=datatype_resource())
    fdef.signature.output_arg.add(name="identity", type=_DT_STRING)
    fdef.signature.is_stateful = True
    return fdef


def _finish(fdef, after):
    out = fdef.node_def.add(name="Identity", op="Identity",
                            input=["file_prefix"] + [f"^{a}" for a in after])
    out.attr["T"].type = _DT_STRING
    fdef.ret["identity"] = "Identity:output:0"
    for a in after:
        fdef.signature.control_output.append(a)
        fdef.control_ret[a] = a


def save_function(name, keys, variables):
    """SaveV2 of the variables' values under their checkpoint keys; returns the prefix."""
    fdef = _function(name, len(variables))
    names = _const(fdef, "tensor_names", keys)
    slices = _const(fdef, "shape_and_slices", [""] * len(keys))
    reads = []
    for i, v in enumerate(variables):
        read = fdef.node_def.add(name=f"Read_{i}/ReadVariableOp", op="ReadVariableOp",
                                 input=[f"resource_{i}"])
        read.attr["dtype"].type = datatype(v.dtype)
        reads.append(f"{read.name}:value:0")
    save = fdef.node_def.add(name="SaveV2", op="SaveV2",
                             input=["file_prefix", names, slices] + reads)
    save.attr["dtypes"].list.type.extend(datatype(v.dtype) for v in variables)
    _finish(fdef, ["SaveV2"])
    return fdef


def restore_function(name, keys, variables):
    """RestoreV2 of the checkpoint keys, assigned to the variables."""
    fdef = _function(name, len(variables))
    names = _const(fdef, "tensor_names", keys)
    slices = _const(fdef, "shape_and_slices", [""] * len(keys))
    restore = fdef.node_def.add(name="RestoreV2", op="RestoreV2",
                                input=["file_prefix", names, slices])
    restore.attr["dtypes"].list.type.extend(datatype(v.dtype) for v in variables)
    assigns = []
    for i, v in enumerate(variables):
        assign = fdef.node_def.add(name=f"AssignVariableOp_{i}", op="AssignVariableOp",
                                   input=[f"resource_{i}", f"RestoreV2:tensors:{i}"])
        assign.attr["dtype"].type = datatype(v.dtype)
        assigns.append(assign.name)
    _finish(fdef, assigns)
    return fdef


def add_saver(meta, keyed_variables, handles, new_name):
    """Adds the saver to MetaGraphDef `meta`: `keyed_variables` are (checkpoint key,
    variable) pairs, `handles` their outer VarHandleOp names, `new_name(base)` a fresh
    function name."""
    keys = [k for k, _ in keyed_variables]
    variables = [v for _, v in keyed_variables]
    graph = meta.graph_def
    filename = graph.node.add(name="saver_filename", op="Placeholder")
    filename.attr["dtype"].type = _DT_STRING
    filename.attr["shape"].shape.SetInParent()
    tin = [_DT_STRING] + [datatype_resource()] * len(variables)
    taken = {n.name for n in graph.node}
    calls = []
    for make, base in ((save_function, "_traced_save"), (restore_function, "_traced_restore")):
        fdef = make(new_name(base), keys, variables)
        graph.library.function.add().CopyFrom(fdef)
        call, i = "StatefulPartitionedCall", 0
        while call in taken:
            i += 1
            call = f"StatefulPartitionedCall_{i}"
        taken.add(call)
        call_node(graph.node.add(), call, fdef.signature.name, ["saver_filename"] + handles,
                  tin, [_DT_STRING])
        calls.append(call)
    saver = meta.saver_def
    saver.filename_tensor_name = "saver_filename:0"
    saver.save_tensor_name = f"{calls[0]}:0"
    saver.restore_op_name = calls[1]
    saver.version = 2  # V2: the tensor bundle
    saver.keep_checkpoint_every_n_hours = 10000.0


__all__ = ["add_saver", "save_function", "restore_function"]
