"""ONNX export: `tensorlite.onnx.export(model_or_function, path, input_signature=..., opset=...)`
and `python -m tensorlite.onnx`.

The exporter traces the model (tensorlite/graph/capture.py: twice, so that the batch
dimension is found, and dynamic in the file) and walks the graph IR node by node. Values that
do not depend on the inputs (weights, and expressions of weights only) become initializers;
every other node is written by its op's ONNX rule, declared beside the op's registration in
tensorlite/ops/*.py:

    declare(OP, onnx=rule)

where `rule` is either

- a string, the ONNX op type of a one-to-one mapping (same inputs, same outputs, no
  attributes): `declare(EXP, onnx="Exp")`; or
- a function `rule(ctx, node)` that emits ONNX nodes through `ctx` (an
  `tensorlite.onnx.context.OnnxContext`) and returns the ONNX names of the node's outputs
  (a string for one output, a list for several). `node` is the IR node (`node.op`,
  `node.inputs` slots, `node.attrs`). The context gives the input names
  (`ctx.inputs(node)`), each slot's traced shape and dtype (`ctx.shape(slot)`,
  `ctx.dtype(slot)`), a constant slot's value (`ctx.value(slot)`, None when it depends on the
  inputs), `ctx.emit(op_type, inputs, outputs=1, **attrs)` (one `onnx.helper.make_node`),
  `ctx.const(array)` / `ctx.ints(values)` for initializers, opset-aware helpers
  (`ctx.reduce`, `ctx.squeeze`, `ctx.unsqueeze`, `ctx.split`, `ctx.transpose`), and
  `ctx.varying(node, attr)`: the positions of a tuple attribute that change with the batch
  size (a Reshape's target shape), which the rule must then write dynamically. A rule that
  cannot map a node calls `ctx.unsupported(node, why)`.

Example:
    >>> def rule(ctx, node):
    ...     return ctx.emit("Softmax", ctx.inputs(node), axis=int(node.attrs["axis"]))
    >>> declare(SOFTMAX, onnx=rule)  # doctest: +SKIP

An op without a rule is an UnimplementedError naming the op and the node's source line; a
value whose shape follows the batch size is dynamic ("batch") in the file; the model is
checked with `onnx.checker` (full check, with shape inference) before it is written, and the
file is written atomically.
"""
from tensorlite.onnx.export import DEFAULT_OPSET, export, to_model

__all__ = ["export", "to_model", "DEFAULT_OPSET"]
