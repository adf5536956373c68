"""BatchNorm folding for frozen inference graphs (what tfjs-converter's Grappler run does
before it writes a GraphDef): a convolution or matrix product by a constant filter whose
only use is a multiplication by a constant per-output-channel scale becomes one
convolution by the scaled filter.

After freezing and constant folding (graph_trace.py), an inference-mode BatchNormalization
is `x * scale + offset` with constant `scale = gamma / sqrt(variance + epsilon)`; this pass
moves `scale` into the preceding Conv2D / DepthwiseConv2dNative / BatchMatMulV2 filter (and
through a constant bias added in between: `(x W + b) s = x (W s) + b s`), so the graph
loses one node per BatchNormalization (MobileNetV2: 52 of its Muls). The offset stays an
AddV2. The pass follows tensorlite's pass rules (graph/passes/__init__.py): it
returns a new graph and one report line per change, and the folded node writes the Mul's
output slot, so every later use is unchanged.

Example:
    >>> graph, lines = run(graph)
    >>> lines[:1]
    ['folded Mul into Conv2D']
"""
import numpy as np

from tensorlite.graph.ir import Node
from tensorlite.graph.passes import derive

# The products whose filter is their second input, with the axis of their output channels
# in that filter: HWIO (Conv2D), HWCM (DepthwiseConv2dNative: channel c*M + m), [in, out].
_FILTER_OPS = ("Conv2D", "DepthwiseConv2dNative", "BatchMatMulV2")


def _channel_scale(value, channels):
    """The scale as a [channels] vector when it is a per-output-channel constant (a scalar,
    or one value per channel on the last axis, the others of size 1), else None."""
    value = np.asarray(value)
    if value.dtype.kind != "f" or any(d != 1 for d in value.shape[:-1]):
        return None
    flat = value.reshape(-1)
    if flat.size == 1:
        return np.full(channels, flat[0], value.dtype)
    return flat if flat.size == channels else None


def _scaled_filter(op_name, attrs, filter_value, scale):
    """The filter whose product equals the product's output times `scale`, or None."""
    if op_name == "Conv2D":
        return filter_value * scale
    if op_name == "DepthwiseConv2dNative":
        h, w, c, m = filter_value.shape
        return filter_value * scale.reshape(c, m)
    if attrs.get("transpose_b") or attrs.get("adj_y") or filter_value.ndim != 2:
        return None
    return filter_value * scale


class _Folder:
    """One pass over a graph: which nodes are replaced, dropped, and the new constants."""

    def __init__(self, graph):
        self.graph = graph
        self.producer = {o: n for n in graph.nodes for o in n.outputs}
        self.uses = {}
        for n in graph.nodes:
            for s in n.inputs:
                self.uses[s] = self.uses.get(s, 0) + 1
        for s in graph.output_slots():
            self.uses[s] = self.uses.get(s, 0) + 1
        self.constants = dict(graph.constants)
        self.replaced, self.dropped, self.lines = {}, set(), []
        self.n_slots = graph.n_slots

    def only_use(self, slot, ops):
        """The node making `slot` when it is one of `ops` and `slot` has no other use."""
        node = self.producer.get(slot)
        if node is None or node.op.name not in ops or self.uses.get(slot, 0) != 1 or \
                id(node) in self.dropped:
            return None
        return node

    def new_slot(self):
        slot, self.n_slots = self.n_slots, self.n_slots + 1
        return slot

    def new_constant(self, value):
        slot = self.new_slot()
        self.constants[slot] = value
        return slot

    def scaled(self, product, value):
        """The product's filter times a per-channel `value`, or None."""
        if product.inputs[1] not in self.constants:
            return None
        filt = np.asarray(self.constants[product.inputs[1]])
        if filt.ndim < 2:
            return None
        channels = filt.shape[2] * filt.shape[3] if product.op.name == \
            "DepthwiseConv2dNative" else filt.shape[-1]
        scale = _channel_scale(value, channels)
        if scale is None or scale.dtype != filt.dtype:
            return None
        new = _scaled_filter(product.op.name, product.attrs, filt, scale)
        return None if new is None else (new.astype(filt.dtype), scale)

    def fold(self, mul):
        """Folds `product(x, W) [+ b] * s` into `product(x, W*s) [+ b*s]`."""
        for k in (0, 1):
            src, other = mul.inputs[k], mul.inputs[1 - k]
            if other not in self.constants:
                continue
            add = self.only_use(src, ("AddV2", "BiasAdd"))
            product = self.only_use(add.inputs[0] if add else src, _FILTER_OPS)
            if product is None or (add is not None and add.inputs[1] not in self.constants):
                continue
            found = self.scaled(product, self.constants[other])
            if found is None:
                continue
            new_filter, scale = found
            inputs = [product.inputs[0], self.new_constant(new_filter)] + product.inputs[2:]
            if add is None:
                self.replaced[id(mul)] = Node(product.op, inputs, product.attrs, mul.outputs,
                                              product.where, product.scope)
            else:
                bias = np.asarray(self.constants[add.inputs[1]])
                out = self.new_slot()  # the new product's output
                folded = Node(product.op, inputs, product.attrs, [out], product.where,
                              product.scope)
                biased = Node(add.op, [out, self.new_constant((bias * scale.reshape(
                    (1,) * (bias.ndim - 1) + (-1,))).astype(bias.dtype))], add.attrs,
                    mul.outputs, add.where, add.scope)
                self.replaced[id(mul)] = [folded, biased]
                self.dropped.add(id(add))
            self.dropped.add(id(product))
            self.lines.append(f"folded Mul into {product.op.name}")
            return


def run(graph):
    """Folds per-channel constant scales into the preceding filters (and biases); report
    lines `folded Mul into <Op>`."""
    folder = _Folder(graph)
    for node in graph.nodes:
        if node.op.name == "Mul" and id(node) not in folder.dropped:
            folder.fold(node)
    if not folder.lines:
        return graph, []
    nodes = []
    for n in graph.nodes:
        if id(n) in folder.dropped:
            continue
        new = folder.replaced.get(id(n), n)
        nodes.extend(new if isinstance(new, list) else [new])
    out = derive(graph, nodes, constants=folder.constants)
    out.n_slots = folder.n_slots
    return out, folder.lines


__all__ = ["run"]
