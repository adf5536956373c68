"""Remapping of layers' ops into fused kernels (Grappler's remapper: `_FusedConv2D`,
`_FusedMatMul`), forward and backward; the kernels are ops/fused_ops.py's.

Forward: `Relu(AddV2(Conv2D(x, w), bias))`, with `bias` a vector along the last axis,
becomes `_FusedConv2D(x, w, bias, activation="Relu")` (Relu6 likewise; a depthwise
convolution `_FusedDepthwiseConv2dNative`), and likewise without the ReLU, and
for a matrix product of two matrices or of a [batch, ..., k] tensor by a matrix
(`_FusedMatMul`). The bias add and the ReLU then run
in place on the convolution's output, run by run while it is in cache: two [N, H, W, C]
temporaries and two passes over memory fewer per layer.

ResNet's blocks after BatchNorm folding add more to a convolution's chain, and a fused op
takes what its registry properties say it can:
  * a second bias vector right after the first (the Conv2D's own bias, then the folded
    BatchNormalization's shift): `(y + b) + c` becomes `y + (b + c)`, one vector add;
  * `fuses_scale`: the contraction's filter is `Mul(W, s)` with `s` per output channel (a
    folded BatchNormalization's scale on variable weights, a filter-sized product on every
    call): the fused op takes W and s and scales its output in the epilogue instead;
  * `fuses_residual`: the block's sum `Add(shortcut, y)` with a value of exactly the
    output's shape, added in the epilogue before the ReLU (a sum already taken by another
    chain, a projection shortcut's, is left to it).

Backward: `Sum(ReluGrad(g, y), axis=all but the last)` (a ReLU layer's input gradient and
its bias's) becomes `_FusedReluGradBiasAddGrad(g, y)` with both as outputs; when g is
`MaxPoolGrad(y, p, d)` of a non-overlapping pool over that same ReLU output y, the three
become `_FusedMaxPoolGradReluGrad(y, p, d)`. (ReLU's gradient reads its output, as TF's:
the mask is the same.)

A max pool of a constant spatial padding (ZeroPadding2D then MaxPooling2D, ResNet's stem)
becomes the op declaring `fuses_pad` for it (`_FusedPadMaxPool`): the pool pads by itself.

BatchNormalization in training (`_FusedBatchNormTrain`, ops/batch_norm_ops.py) followed by
`Relu6` becomes one node with `activation="Relu6"`, and `_FusedBatchNormTrainGrad(
Relu6Grad(g, r), ...)` one gradient node masking g by the ReLU6 output r.

A fused node takes the place of the last op it replaces, and only intermediates used by
nothing else (and no graph outputs) are fused away. No fusion spans an assignment or a
random draw. Fused nodes have no gradients: like FusedElementwise they exist only in the
optimised graph run by the executor.
"""
import numpy as np

from tensorlite.framework import registry
from tensorlite.graph.ir import Node
from tensorlite.graph.passes import Specs, barrier, derive, known
from tensorlite.graph.passes.fold_batch_norm import linear_filter
from tensorlite.ops import batch_norm_ops, fused_ops, math_ops, nn_ops, pooling_ops

# The ops of the patterns (compared by identity).
ADD, RELU, SUM, MUL = math_ops.ADD, nn_ops.RELU, math_ops.SUM, registry.get("Mul")
RELU_GRAD, MAX_POOL_GRAD = registry.get("ReluGrad"), pooling_ops.MAX_POOL_GRAD
RELU6, RELU6_GRAD = nn_ops.RELU6, registry.get("Relu6Grad")
PAD = registry.get("PadV2")
BN, BN_GRAD = batch_norm_ops.BATCH_NORM_TRAIN, batch_norm_ops.BATCH_NORM_TRAIN_GRAD


_DECLARED = {}  # property -> (number of registered ops, {its value: op}) built then


def _declaring(prop, op):
    """The registered op whose property `prop` names `op` (`fuses=Conv2D` in
    ops/fused_ops.py: the fused op that takes Conv2D's bias add and ReLU; `fuses_pad`: the
    one that takes a windowed op's input padding), or None."""
    n = len(registry.REGISTRY)
    if _DECLARED.get(prop, (None,))[0] != n:
        _DECLARED[prop] = n, {getattr(k, prop): k for k in list(registry.REGISTRY.values())
                              if getattr(k, prop) is not None}
    return _DECLARED[prop][1].get(op)


class _Graph:
    """Producers, consumers and barrier counts of a graph's nodes, for pattern matching."""

    def __init__(self, graph):
        self.nodes = graph.nodes
        self.specs = Specs(graph)
        self.index = {id(n): k for k, n in enumerate(graph.nodes)}
        self.producer = {s: n for n in graph.nodes for s in n.outputs}
        self.uses = {}
        for n in graph.nodes:
            for s in n.inputs:
                self.uses.setdefault(s, []).append(n)
        self.outputs = set(graph.output_slots())
        self.barriers_upto = np.cumsum([0] + [bool(barrier(n)) for n in graph.nodes])
        self.n_slots = graph.n_slots
        self.constants = graph.constants

    def new_slot(self):
        """A fresh slot id for a node the fusion adds (a merged bias)."""
        self.n_slots += 1
        return self.n_slots - 1

    def only_use(self, slot, op):
        """The one node using `slot` if it is an `op` node and the slot no graph output."""
        users = self.uses.get(slot, ())
        if len(users) != 1 or slot in self.outputs or users[0].op is not op:
            return None
        return users[0]

    def made_by(self, slot, op):
        node = self.producer.get(slot)
        return node if node is not None and node.op is op else None

    def no_barrier_between(self, first, last):
        return self.barriers_upto[self.index[id(first)]] == \
            self.barriers_upto[self.index[id(last)] + 1]

    def spec(self, slot):
        s = self.specs[slot]
        return s if known(s) else None


def _bias_of(g, add, out_slot):
    """The bias operand of AddV2 node `add` applied to `out_slot`: a vector as long as the
    last axis of `out_slot`'s value, of its dtype; else None."""
    other = [s for s in add.inputs if s != out_slot]
    if len(add.inputs) != 2 or len(other) != 1:
        return None
    so, sb = g.spec(out_slot), g.spec(other[0])
    if so is None or sb is None or len(so.shape) < 2 or sb.dtype is not so.dtype or \
            tuple(sb.shape) != (so.shape[-1],):
        return None
    return other[0]


def _fusable_ranks(fused, node, specs):
    """Convolutions of 4-D tensors; matrix products of a matrix by a matrix or, untransposed,
    of a [batch, ..., k] tensor by one (a Dense layer on sequences: MatMul makes that one
    GEMM over all rows, and the epilogue then runs over its rows)."""
    ranks = [len(s.shape) for s in specs]
    if fused is not fused_ops.FUSED_MATMUL:  # _FusedConv2D, _FusedDepthwiseConv2dNative
        return ranks == [4, 4]
    return ranks == [2, 2] or (ranks[0] > 2 and ranks[1] == 2 and
                               not node.attrs.get("transpose_a"))


def _forward(g, add, taken=()):
    """(fused nodes, replaced nodes, the one they take the place of) for AddV2 node `add`
    after a contraction, or None. The fused node stands where its last member stood; a
    residual sum already fused into another chain (ids in `taken`) is left to it."""
    for slot in add.inputs:
        node = g.producer.get(slot)
        fused = _declaring("fuses", node.op) if node is not None else None
        if fused is None or g.only_use(slot, ADD) is not add:
            continue
        specs = [g.spec(s) for s in node.inputs]
        if any(s is None for s in specs) or not _fusable_ranks(fused, node, specs):
            continue
        bias = _bias_of(g, add, slot)
        if bias is None:
            continue
        members, nodes, extra = [node, add], [], []
        tail, bias = _more_biases(g, add, bias, members, nodes)
        inputs, scale = list(node.inputs), _filter_scale(g, node) if fused.fuses_scale else None
        if scale is not None:
            inputs[linear_filter(node)[0]], mul = scale[0], scale[2]
            extra, members = [scale[1]], [mul] + members
        residual = _residual_of(g, tail, taken) if fused.fuses_residual else None
        if residual is not None:
            extra, tail = extra + [residual[0]], residual[1]
            members.append(tail)
        relu = g.only_use(tail.outputs[0], RELU) or g.only_use(tail.outputs[0], RELU6)
        last = relu or tail
        if not g.no_barrier_between(members[0], last):
            continue
        attrs = dict(node.attrs, activation=relu.op.name if relu else None)
        if scale is not None:
            attrs["scaled"] = True
        members += [relu] if relu else []
        nodes.append(Node(fused, inputs + [bias] + extra, attrs, last.outputs, last.where,
                          last.scope))
        return nodes, members, last
    return None


def _more_biases(g, add, bias, members, nodes):
    """(last bias add, the bias slot) after folding the bias adds that follow `add` into
    one bias (a Conv2D's own bias, then a folded BatchNormalization's shift: `(y + b) + c`
    becomes `y + (b + c)`, a vector sum made by a node appended to `nodes`)."""
    tail = add
    while True:
        nxt = g.only_use(tail.outputs[0], ADD)
        more = _bias_of(g, nxt, tail.outputs[0]) if nxt is not None else None
        if more is None:
            return tail, bias
        nodes.append(Node(ADD, [bias, more], {}, [g.new_slot()], nxt.where, nxt.scope))
        bias, tail = nodes[-1].outputs[0], nxt
        members.append(nxt)


def _filter_scale(g, node):
    """(filter, scale, Mul node) when the contraction's filter (its `linear_filter` input,
    the output channel its last axis) is a Mul of a filter by a per-output-channel vector
    used by nothing else: a folded BatchNormalization's scale on variable weights, which the
    fused op applies to its output instead (a multiply inside the epilogue's pass rather
    than a filter-sized product per call: ResNet50's filters hold 25M values); else None."""
    rule = linear_filter(node)
    if not rule or rule[1] != 1:
        return None
    slot = node.inputs[rule[0]]
    mul, spec = g.made_by(slot, MUL), g.spec(slot)
    if mul is None or spec is None or g.only_use(slot, node.op) is not node or \
            len(mul.inputs) != 2:
        return None
    for f, s in (mul.inputs, mul.inputs[::-1]):
        fs, ss = g.spec(f), g.spec(s)
        if fs == spec and ss is not None and ss.dtype is spec.dtype and \
                tuple(ss.shape) == (spec.shape[-1],):
            return f, s, mul
    return None


def _residual_of(g, tail, taken):
    """(the residual slot, the AddV2 node adding it) when the only use of `tail`'s output is
    an AddV2 with a value of exactly its shape and dtype (ResNet's shortcut sum); else None."""
    out = tail.outputs[0]
    nxt = g.only_use(out, ADD)
    if nxt is None or len(nxt.inputs) != 2 or id(nxt) in taken:
        return None
    other = [s for s in nxt.inputs if s != out]
    so = g.spec(out)
    if len(other) != 1 or so is None or g.spec(other[0]) != so or g.spec(nxt.outputs[0]) != so:
        return None
    return other[0], nxt


def _pad_pool(g, pool, fused):
    """(fused node, replaced nodes, anchor) for an unpadded pool of a constant spatial
    PadV2 of a 4-D tensor used by nothing else (ResNet's ZeroPadding2D + MaxPooling2D):
    the pool pads by itself with the pad's value, so no padded copy is made."""
    pad = g.made_by(pool.inputs[0], PAD)
    if pad is None or g.only_use(pool.inputs[0], pool.op) is not pool or \
            any(pool.attrs["pads"]) or not g.no_barrier_between(pad, pool):
        return None
    fill = g.constants.get(pad.inputs[1])
    spec = g.spec(pad.inputs[0])
    p = np.asarray(pad.attrs["paddings"])
    if fill is None or np.ndim(fill) or spec is None or len(spec.shape) != 4 or \
            p.shape != (4, 2) or p[0].any() or p[3].any():
        return None
    attrs = dict(pool.attrs, pads=tuple(int(v) for v in p[1:3].reshape(-1)),
                 fill=float(fill))
    return Node(fused, [pad.inputs[0]], attrs, pool.outputs, pool.where, pool.scope), \
        [pad, pool], pool


def _all_but_last(node, rank):
    axis = node.attrs.get("axis")
    if node.attrs.get("keepdims") or axis is None:
        return False
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return sorted(int(a) % rank for a in axes) == list(range(rank - 1))


def _backward(g, total):
    """(fused node, replaced nodes, the one it takes the place of) for a Sum node `total`
    of a ReluGrad, or None. The fused node stands where the ReluGrad stood: the Sum only
    moves earlier, past pure nodes."""
    relu_grad = g.made_by(total.inputs[0], RELU_GRAD)
    spec = g.spec(total.inputs[0])
    if relu_grad is None or spec is None or len(spec.shape) < 2 or \
            not _all_but_last(total, len(spec.shape)):
        return None
    grad, y = relu_grad.inputs
    pool = g.made_by(grad, MAX_POOL_GRAD)
    if pool is not None and pool.inputs[0] == y and g.only_use(grad, RELU_GRAD) and \
            len(spec.shape) == 4 and g.no_barrier_between(pool, total) and \
            pooling_ops.non_overlapping(pool.attrs["ksize"], pool.attrs["strides"],
                                     pool.attrs["pads"]):
        return Node(fused_ops.FUSED_MAX_POOL_GRAD_RELU_GRAD, pool.inputs, pool.attrs,
                    relu_grad.outputs + total.outputs, relu_grad.where,
                    relu_grad.scope), [pool, relu_grad, total], relu_grad
    if not g.no_barrier_between(relu_grad, total):
        return None
    return Node(fused_ops.FUSED_RELU_GRAD_BIAS_GRAD, [grad, y], {},
                relu_grad.outputs + total.outputs, relu_grad.where,
                relu_grad.scope), [relu_grad, total], relu_grad


# BatchNormalization + ReLU6 in training. The ReLU6 moves to its BatchNormalization and its
# gradient to the BatchNormalization's gradient without a barrier check: each is pure and
# reads only the value fused with it, which no assignment changes (assignments store new
# arrays), and the moving averages' assignments sit right between them.
def _bn_relu6(g, relu6):
    """(fused node, replaced nodes, anchor) for a Relu6 node of a training
    BatchNormalization's output used by nothing else, or None."""
    bn = g.made_by(relu6.inputs[0], BN)
    if bn is None or bn.attrs.get("activation") or bn.outputs[0] != relu6.inputs[0] or \
            g.only_use(bn.outputs[0], RELU6) is not relu6:
        return None
    return Node(BN, bn.inputs, dict(bn.attrs, activation="Relu6"),
                relu6.outputs + bn.outputs[1:], bn.where, bn.scope), [bn, relu6], bn


def _bn_relu6_grad(g, bn_grad):
    """(fused node, replaced nodes, anchor) for a BatchNormalization gradient of a
    Relu6Grad (of the ReLU6 output r) used by nothing else: the gradient masks by r."""
    rg = g.made_by(bn_grad.inputs[0], RELU6_GRAD)
    if rg is None or bn_grad.attrs.get("activation") or \
            g.only_use(bn_grad.inputs[0], BN_GRAD) is not bn_grad:
        return None
    return Node(BN_GRAD, [rg.inputs[0]] + bn_grad.inputs[1:] + [rg.inputs[1]],
                dict(bn_grad.attrs, activation="Relu6"), bn_grad.outputs, bn_grad.where,
                bn_grad.scope), [rg, bn_grad], bn_grad


def run(graph):
    """Fuses the patterns above; one report line `fused <Op>+<Op>+...` per fused node."""
    g = _Graph(graph)
    place, drop, lines = {}, set(), []
    for node in graph.nodes:
        if id(node) in drop:
            continue
        if node.op is ADD:
            found = _forward(g, node, drop)
        elif node.op is SUM and len(node.inputs) == 1:
            found = _backward(g, node)
        elif node.op is RELU6:
            found = _bn_relu6(g, node)
        elif node.op is BN_GRAD:
            found = _bn_relu6_grad(g, node)
        elif _declaring("fuses_pad", node.op) is not None and node.inputs:
            found = _pad_pool(g, node, _declaring("fuses_pad", node.op))
        else:
            continue
        if found is None or any(id(m) in drop for m in found[1]):
            continue
        fused, members, anchor = found
        place[id(anchor)] = fused if isinstance(fused, list) else [fused]
        drop.update(id(m) for m in members if m is not anchor)
        lines.append("fused " + "+".join(m.op.name for m in members))
    if not lines:
        return graph, []
    nodes = [f for n in graph.nodes if id(n) not in drop for f in place.get(id(n), [n])]
    out = derive(graph, nodes)
    out.n_slots = g.n_slots
    return out, lines
