"""Arithmetic simplification: rewrites that give the same values with less work.

- `x*1`, `1*x`, `x+0`, `0+x`, `x-0`, `x/1` -> `x`, only when the result has exactly x's
  shape and dtype (the constant would otherwise broadcast or promote), by inferred specs;
- `-(-x)` -> `x`;
- `transpose(transpose(x, p), q)` -> one transpose with the composed permutation, and an
  identity permutation -> `x`;
- `reshape(reshape(x, a), b)` -> `reshape(x, b)`, and a reshape to x's own shape -> `x`;
- `Identity(x)` -> `x`; `cast(x, dtype)` when x already has that dtype -> `x`.

Which rewrite applies is each op's `simplify` rule, declared beside its registration:
("neutral", value, positions, symbol) for a neutral operand (value, and where it may stand:
0 left, 1 right), "involution" (op(op(x)) == x), "transpose", "reshape", "identity", "cast".

Removed nodes forward their uses to the slot holding the same value; rewritten nodes keep
their output slot, so the node they skipped becomes dead (the DCE pass drops it).
"""
import numpy as np

from tensorlite.graph.ir import Node
from tensorlite.graph.passes import Specs, derive, known, resolve, stateful

def _is_all(value, neutral):
    a = np.asarray(value)
    return a.dtype.kind in "biufc" and a.size > 0 and bool(np.all(a == neutral))


def _neutral_operand(node, graph, specs, value, positions, symbol):
    out = specs[node.outputs[0]]
    for pos in positions:
        c = graph.constants.get(node.inputs[pos])
        x = node.inputs[1 - pos]
        if c is not None and _is_all(c, value) and known(out) and specs[x] == out:
            form = f"x{symbol}{value}" if pos == 1 else f"{value}{symbol}x"
            return f"{node.op.name}({form})", x
    return None


def _transpose(node, producer):
    name = node.op.name
    perm, src, what = tuple(node.attrs["perm"]), node.inputs[0], f"{name}(identity perm)"
    inner = producer.get(src)
    if inner is not None and inner.op is node.op:
        perm = tuple(inner.attrs["perm"][j] for j in perm)
        src, what = inner.inputs[0], f"{name}({name})"
    if perm == tuple(range(len(perm))):
        return what, src
    if src != node.inputs[0]:
        return what, Node(node.op, [src], {"perm": perm}, node.outputs, node.where)
    return None


def _reshape(node, producer, specs):
    src, name = node.inputs[0], node.op.name
    out = specs[node.outputs[0]]
    inner = producer.get(src)
    if known(out) and specs[src] == out:
        return f"{name}(to own shape)", src
    if inner is not None and inner.op is node.op:
        src = inner.inputs[0]
        if known(out) and specs[src] == out:
            return f"{name}({name}, to own shape)", src
        return f"{name}({name})", Node(node.op, [src], node.attrs, node.outputs, node.where)
    return None


def _same_dtype(node, specs):
    spec = specs[node.inputs[0]]
    if spec is not None and spec.dtype == node.attrs.get("dtype"):
        return f"{node.op.name}(to same dtype)", node.inputs[0]
    return None


def _involution(node, producer):
    inner = producer.get(node.inputs[0])
    if inner is not None and inner.op is node.op:
        return f"{node.op.name}({node.op.name})", inner.inputs[0]
    return None


def simplify(node, graph, producer, specs):
    """(what, replacement) where the replacement is a slot or a Node; None to keep."""
    rule = node.op.simplify
    if rule is None:
        return None
    if isinstance(rule, tuple) and rule[0] == "neutral":
        return _neutral_operand(node, graph, specs, *rule[1:])
    if rule == "identity":
        return node.op.name, node.inputs[0]
    if rule == "cast":
        return _same_dtype(node, specs)
    if rule == "involution":
        return _involution(node, producer)
    if rule == "transpose":
        return _transpose(node, producer)
    if rule == "reshape":
        return _reshape(node, producer, specs)
    raise ValueError(f"op {node.op.name}: unknown simplify rule {rule!r}")


def run(graph):
    """Applies the rewrites in one pass over the nodes; report lines `simplified <what>`."""
    specs = Specs(graph)
    mapping, producer, nodes, lines = {}, {}, [], []
    for node in graph.nodes:
        inputs = [resolve(mapping, s) for s in node.inputs]
        if inputs != node.inputs:
            node = Node(node.op, inputs, node.attrs, node.outputs, node.where)
        change = None if stateful(node) or len(node.outputs) != 1 else \
            simplify(node, graph, producer, specs)
        if change is not None:
            what, replacement = change
            lines.append(f"simplified {what}")
            if isinstance(replacement, int):
                mapping[node.outputs[0]] = replacement
                continue
            node = replacement
        nodes.append(node)
        for o in node.outputs:
            producer[o] = node
    if not lines:
        return graph, lines
    return derive(graph, nodes, mapping), lines
