"""`tf.lite.TFLiteConverter`: a Keras model or concrete functions to a `.tflite` FlatBuffer.

The converter traces the model (tensorlite/graph/capture.py), folds every value that does not
depend on the inputs into a constant buffer, and walks the graph IR asking each op's TFLite
rule (declared beside the op with `declare(OP, tflite=rule)`) for its operators. The rule's
form: `rule(ctx, node)`, writing through `ctx` (a `LiteContext`): `ctx.tensor(slot)` for an
input's tensor, `ctx.output(node, i)` for an output's, `ctx.op(BUILTIN, inputs, outputs,
options=(OptionsTable, {...}), fuse=(bias index, activation key))` to append an operator
(`fuse` lets a following bias add and activation merge into it: Dense+bias+ReLU is one
FULLY_CONNECTED), `ctx.fuse_bias(node)` / `ctx.fuse_activation(node, "RELU")` for the ops
that can merge backwards, `ctx.const(array)`, `ctx.value(slot)`, `ctx.shape(slot)` (at batch
1) and `ctx.varying(node, attr)`. An op without a rule is an UnimplementedError naming it.

Example:
    >>> converter = tf.lite.TFLiteConverter.from_keras_model(model)
    >>> tflite_model = converter.convert()
    >>> open("model.tflite", "wb").write(tflite_model)  # doctest: +SKIP
"""
import numpy as np

from tensorlite.framework import errors
from tensorlite.lite import flatbuf
from tensorlite.lite.convert.context import LiteContext

SCHEMA_VERSION = 3
_NEEDS_BIAS = {"CONV_2D", "DEPTHWISE_CONV_2D"}


def _count_consumers(cap):
    counts = {}
    for node in cap.exported_nodes():
        for s in node.inputs:
            counts[s] = counts.get(s, 0) + 1
    for s in cap.output_slots():
        counts[s] = counts.get(s, 0) + 2  # an output is never fused away
    return counts


def _emit(ctx, node):
    ctx.rule(node, "tflite")(ctx, node)
    missing = [s for s in node.outputs if s not in ctx.slots]
    if missing:
        raise errors.InternalError(None, None, f"the TFLite rule of {node.op.name} wrote no "
                                   f"tensor for outputs {missing}")
    ctx.check_attrs(node)


def _finish_biases(ctx):
    """CONV_2D and DEPTHWISE_CONV_2D take a bias: zeros where none was fused."""
    codes = [c[0] for c in ctx.opcodes]
    for operator in ctx.operators:
        if codes[operator["opcode_index"]] in _NEEDS_BIAS and operator["inputs"][2] < 0:
            channels = ctx.tensors[operator["inputs"][1]]["shape"][-1] if \
                codes[operator["opcode_index"]] == "DEPTHWISE_CONV_2D" else \
                ctx.tensors[operator["inputs"][1]]["shape"][0]
            operator["inputs"][2] = ctx.const(np.zeros(channels, np.float32), "bias")


def lower(cap, passes=()):
    """A LiteContext holding the converted subgraph of a Capture; `passes` are functions
    (ctx) run after the walk (quantization)."""
    ctx = LiteContext(cap)
    ctx.consumers = _count_consumers(cap)
    ctx.input_tensors = []
    for i, (slot, spec) in enumerate(zip(cap.graph.placeholders, cap.signature)):
        shape = ctx.shape(slot)
        dynamic = cap.dynamic_dims(slot)
        index = ctx.new_tensor(shape, ctx.dtype(slot), getattr(spec, "name", None) or
                               f"serving_default_input_{i}",
                               signature=[-1 if a in dynamic else d
                                          for a, d in enumerate(shape)])
        ctx.slots[slot] = index
        ctx.input_tensors.append(index)
    for node in cap.exported_nodes():
        _emit(ctx, node)
    ctx.output_tensors = [ctx.tensor(s) for s in cap.output_slots()]
    _finish_biases(ctx)
    for p in passes:
        p(ctx)
    return ctx


def model_dict(ctx, names_in, names_out):
    """The Model table of a converted context, with the serving_default signature."""
    subgraph = {"tensors": ctx.tensors, "inputs": ctx.input_tensors,
                "outputs": ctx.output_tensors, "operators": ctx.operators, "name": "main"}
    codes = []
    for builtin, custom, version in ctx.opcodes:
        value = flatbuf.enum_value("BuiltinOperator", builtin)
        codes.append({"deprecated_builtin_code": min(value, 127), "builtin_code": value,
                      "custom_code": custom, "version": version})
    signature = {"signature_key": "serving_default", "subgraph_index": 0,
                 "inputs": [{"name": n, "tensor_index": t}
                            for n, t in zip(names_in, ctx.input_tensors)],
                 "outputs": [{"name": n, "tensor_index": t}
                             for n, t in zip(names_out, ctx.output_tensors)]}
    return {"version": SCHEMA_VERSION, "operator_codes": codes, "subgraphs": [subgraph],
            "description": "tensorlite converted", "buffers": ctx.buffers,
            "signature_defs": [signature]}
