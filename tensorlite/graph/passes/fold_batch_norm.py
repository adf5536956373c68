"""BatchNorm folding (Grappler's constant folding "MulConvPushDown"): a product that is
linear in a weight filter, whose only use is a multiplication by a per-output-channel weight
scale, becomes one product by the scaled filter.

An inference-mode BatchNormalization is `x * scale + shift` with `scale = gamma /
sqrt(variance + epsilon)` computed from weights only. This pass moves `scale` into the
filter of the product before it (and through a weight bias added in between: `(x W + b) s =
x (W s) + b s`), so the activation-sized multiplication is gone (MobileNetV2: 52 of them)
and the shift is left as a bias add that kernel fusion can take into the product.

Which ops qualify is a per-op fact, the registry property `linear_filter` (declared in each
op's register(...)): `(k, n)` says the op is linear in its input `k` and its output's last
axis is the output channel, the flattening of the filter's trailing `n` axes (Conv2D
`(1, 1)`: HWIO; DepthwiseConv2dNative `(1, 2)`: HWCM, channel c*M + m); a callable
`attrs -> (k, n) or None` when the attributes decide (a matrix product with transpose_b).

"Weight" means computed from constants and variable reads only, never from an input:
- in a frozen graph (TF.js exports) the weights are constants: the folded filter is
  computed here, once, as a new constant;
- in a tf.function's graph (run without a tape: the tape runs the unoptimised graph) and
  in an export capture (Lite, ONNX: its values computed once on the capture's sample run)
  the weights are variable reads, and `W * s` stays a node: a filter-sized multiplication per
  call instead of an activation-sized one, and always the variables' current values, so an
  assignment needs no invalidation. (Kernel fusion then hands a Conv2D's `W` and `s` to
  `_FusedConv2D`, which scales the output in its epilogue: no filter-sized product at all.) Graphs with an assignment or random draw fold constants
  only (pass rules: nothing moves across a barrier).

The pass follows graph/passes/__init__.py's rules: it returns a new graph and one report
line per change, and the folded result writes the Mul's output slot.

Example:
    >>> graph, lines = run(graph)
    >>> lines[:1]
    ['folded Mul into Conv2D']
"""
import math

import numpy as np

from tensorlite.framework import registry
from tensorlite.graph.ir import READ_VARIABLE, Node
from tensorlite.graph.passes import Specs, barrier, derive, known, stateful

MUL, RESHAPE = registry.get("Mul"), registry.get("Reshape")


def linear_filter(node):
    """(filter input index, trailing filter axes forming the output channel) of a node
    whose op declares `linear_filter`, or None."""
    rule = node.op.linear_filter
    if callable(rule):
        rule = rule(node.attrs)
    return rule


def weight_slots(graph):
    """Slots computed from constants (and, in a graph without barriers, variable reads)
    only: their values never depend on the graph's inputs."""
    weights = set(graph.constants)
    reads = not any(barrier(n) for n in graph.nodes)
    for node in graph.nodes:
        if (reads and node.op is READ_VARIABLE) or \
                (not stateful(node) and all(s in weights for s in node.inputs)):
            weights.update(node.outputs)
    return weights


class _Folder:
    """One pass over a graph: which nodes are replaced or dropped, and the new nodes."""

    def __init__(self, graph):
        self.graph = graph
        self.specs = Specs(graph)
        self.weights = weight_slots(graph)
        self.producer = {o: n for n in graph.nodes for o in n.outputs}
        self.uses = {}
        for n in graph.nodes:
            for s in n.inputs:
                self.uses[s] = self.uses.get(s, 0) + 1
        for s in graph.output_slots():
            self.uses[s] = self.uses.get(s, 0) + 1
        self.replaced, self.dropped, self.lines = {}, set(), []
        self.n_slots = graph.n_slots
        self.constants = dict(graph.constants)
        # the product moves to the Mul's place: never across an assignment or random draw
        self.index = {id(n): k for k, n in enumerate(graph.nodes)}
        self.barriers = [0]
        for n in graph.nodes:
            self.barriers.append(self.barriers[-1] + bool(barrier(n)))

    def no_barrier_between(self, first, last):
        return self.barriers[self.index[id(first)]] == self.barriers[self.index[id(last)] + 1]

    def only_use(self, slot):
        """The node making `slot` when `slot` has no other use and is not folded away."""
        node = self.producer.get(slot)
        if node is None or self.uses.get(slot, 0) != 1 or id(node) in self.dropped:
            return None
        return node

    def new_slot(self):
        slot, self.n_slots = self.n_slots, self.n_slots + 1
        return slot

    def shape(self, slot):
        spec = self.specs[slot]
        return tuple(int(d) for d in spec.shape) if known(spec) else None

    def channel_scale(self, slot, channels, out_shape):
        """True when the weight `slot` is a per-output-channel scale (a single value, or
        one per channel on the last axis) that does not broadcast the product's output."""
        shape = self.shape(slot)
        if slot not in self.weights or shape is None or len(shape) > len(out_shape) or \
                any(d != 1 for d in shape[:-1]):
            return False
        return not shape or shape[-1] in (1, channels)

    def product_of(self, slot):
        """(product node, optional bias add node) making `slot`: `product(x, W)` or
        `product(x, W) + b` with W and b weights, each used only on this path."""
        node = self.only_use(slot)
        if node is None:
            return None, None
        add = None
        if node.op.name in ("AddV2", "BiasAdd"):
            sides = [(0, 1)] if node.op.name == "BiasAdd" else [(0, 1), (1, 0)]
            for a, b in sides:
                inner = self.only_use(node.inputs[a])
                if inner is not None and linear_filter(inner) and node.inputs[b] in self.weights:
                    add, node = (node, b), inner
                    break
            else:
                return None, None
        rule = linear_filter(node)
        if not rule or node.inputs[rule[0]] not in self.weights:
            return None, None
        return node, add

    def fold(self, mul):
        """Folds `product(x, W) [+ b] * s` into `product(x, W*s) [+ b*s]`."""
        for k in (0, 1):
            product, add = self.product_of(mul.inputs[k])
            if product is None:
                continue
            index, n = linear_filter(product)
            filt_shape = self.shape(product.inputs[index])
            out_shape = self.shape(product.outputs[0])
            if filt_shape is None or out_shape is None or len(filt_shape) < n or \
                    self.shape(mul.outputs[0]) != out_shape:
                continue
            channels = math.prod(filt_shape[len(filt_shape) - n:])
            scale = mul.inputs[1 - k]
            if channels != out_shape[-1] or not self.channel_scale(scale, channels, out_shape) \
                    or self.specs[scale].dtype != self.specs[product.inputs[index]].dtype:
                continue
            if add is not None and (self.shape(add[0].outputs[0]) != out_shape or
                                    self.specs[add[0].inputs[add[1]]].dtype !=
                                    self.specs[scale].dtype) or \
                    not self.no_barrier_between(product, mul):
                continue
            self.replaced[id(mul)] = self.rewrite(mul, product, add, scale,
                                                  filt_shape[len(filt_shape) - n:])
            self.dropped.update({id(product)} | ({id(add[0])} if add else set()))
            self.lines.append(f"folded Mul into {product.op.name}")
            return

    def node(self, op, inputs, attrs, like, outputs=None):
        outputs = outputs if outputs is not None else [self.new_slot()]
        return Node(op, inputs, attrs, outputs, like.where, like.scope)

    def weight(self, op, inputs, attrs, like, nodes):
        """The slot of `op(inputs)` on weights: a constant computed here when the inputs
        are constants (a frozen graph's folded filter, whatever its size), else a node
        appended to `nodes` (variables' values, read on each call)."""
        if all(i in self.constants for i in inputs):
            value = np.asarray(op.forward(*[self.constants[i] for i in inputs], **attrs))
            slot = self.new_slot()
            self.constants[slot] = value
            return slot
        nodes.append(self.node(op, inputs, attrs, like))
        return nodes[-1].outputs[0]

    def reshaped(self, slot, shape, like, nodes):
        """`slot` reshaped to `shape` unless it has it."""
        if self.shape(slot) == tuple(shape):
            return slot
        return self.weight(RESHAPE, [slot], {"shape": tuple(shape)}, like, nodes)

    def rewrite(self, mul, product, add, scale, tail):
        """The nodes that replace the Mul: scaled filter (and bias), product, bias add."""
        index = linear_filter(product)[0]
        single = all(d == 1 for d in self.shape(scale))
        nodes = []
        filt_scale = self.reshaped(scale, () if single else tail, mul, nodes)
        inputs = list(product.inputs)
        inputs[index] = self.weight(MUL, [product.inputs[index], filt_scale], {}, mul, nodes)
        if add is None:
            return nodes + [self.node(product.op, inputs, product.attrs, product,
                                      mul.outputs)]
        nodes.append(self.node(product.op, inputs, product.attrs, product))
        out = nodes[-1].outputs[0]
        add_node, b = add
        flat = self.reshaped(scale, () if single else (math.prod(tail),), mul, nodes)
        add_inputs = list(add_node.inputs)
        add_inputs[b] = self.weight(MUL, [add_node.inputs[b], flat], {}, mul, nodes)
        add_inputs[1 - b] = out
        nodes.append(self.node(add_node.op, add_inputs, add_node.attrs, add_node,
                               mul.outputs))
        return nodes


def run(graph):
    """Folds per-channel weight scales into the preceding filters (and biases); report
    lines `folded Mul into <Op>`."""
    folder = _Folder(graph)
    for node in graph.nodes:
        if node.op is MUL and id(node) not in folder.dropped:
            folder.fold(node)
    if not folder.lines:
        return graph, []
    nodes = []
    for n in graph.nodes:
        if id(n) in folder.dropped:
            continue
        nodes.extend(folder.replaced.get(id(n), [n]))
    out = derive(graph, nodes, constants=folder.constants)
    out.n_slots = folder.n_slots
    return out, folder.lines


__all__ = ["linear_filter", "run", "weight_slots"]
