"""The ONNX exporter: a walk over the graph IR that asks each op's declared rule for its
ONNX nodes (see tensorlite/onnx/__init__.py for the rule's form)."""
import os

import onnx
from onnx import helper

from tensorlite.framework.atomic_files import write_bytes
from tensorlite.framework import errors
from tensorlite.graph.capture import capture
from tensorlite.onnx.context import OnnxContext, ir_version, value_info

DEFAULT_OPSET = 17
MIN_OPSET = 13  # Squeeze, Unsqueeze and Split take their axes/sizes as inputs from 13


def _emit_node(ctx, node):
    rule = ctx.rule(node, "onnx")
    if isinstance(rule, str):
        outs = ctx.emit(rule, ctx.inputs(node), outputs=len(node.outputs))
    else:
        outs = rule(ctx, node)
    outs = [outs] if isinstance(outs, str) else list(outs)
    if len(outs) != len(node.outputs):
        raise errors.InternalError(None, None, f"the ONNX rule of {node.op.name} gave "
                                   f"{len(outs)} outputs for {len(node.outputs)}")
    ctx.check_attrs(node)
    ctx.names.update(zip(node.outputs, outs))


def to_model(cap, opset=DEFAULT_OPSET, name="tensorlite"):
    """The onnx.ModelProto of a Capture (checked by onnx.checker)."""
    if opset < MIN_OPSET:
        raise ValueError(f"opset {opset} is not supported: use opset >= {MIN_OPSET}")
    ctx = OnnxContext(cap, opset)
    graph = cap.graph
    inputs = []
    ctx.input_names = []
    for i, (slot, spec) in enumerate(zip(graph.placeholders, cap.signature)):
        in_name = ctx.fresh(getattr(spec, "name", None) or f"input_{i}")
        ctx.input_names.append(in_name)
        ctx.names[slot] = in_name
        inputs.append(value_info(in_name, ctx.dtype(slot), ctx.shape(slot),
                                 cap.dynamic_dims(slot)))
    for node in cap.exported_nodes():  # the rest are folded into initializers, or dead
        _emit_node(ctx, node)
    outputs = []
    for slot, out_name in zip(cap.output_slots(), cap.output_names):
        source = ctx.name(slot)
        final = ctx.fresh(out_name)
        ctx.nodes.append(helper.make_node("Identity", [source], [final],
                                          name=ctx.fresh("output_node")))
        outputs.append(value_info(final, ctx.dtype(slot), ctx.shape(slot),
                                  cap.dynamic_dims(slot)))
    onnx_graph = helper.make_graph(ctx.nodes, name, inputs, outputs, ctx.initializers)
    model = helper.make_model(onnx_graph, producer_name="tensorlite",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version(opset)
    onnx.checker.check_model(model, full_check=True)
    return model


def export(model_or_function, path=None, input_signature=None, opset=DEFAULT_OPSET):
    """Exports a Keras model (Sequential, functional or subclassed), a tf.function or a
    Python function over tensors to an ONNX file with a dynamic batch dimension; returns
    the onnx.ModelProto.

    Example:
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,))])
        >>> proto = tf.onnx.export(model, "model.onnx")  # doctest: +SKIP
        >>> onnxruntime.InferenceSession("model.onnx").run(None, {"input_0": x})  # +SKIP
    """
    model = to_model(capture(model_or_function, input_signature), opset,
                     getattr(model_or_function, "name", None) or "tensorlite")
    if path is not None:
        write_bytes(os.fspath(path), model.SerializeToString())
    return model
