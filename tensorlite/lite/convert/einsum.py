"""A two-operand einsum in TFLite builtins: TFLite has no EINSUM, so the contraction becomes
one BATCH_MATMUL (or one FULLY_CONNECTED when an operand is a constant weight and no label is
batched) with the TRANSPOSE and RESHAPE ops around it that bring the labels into
[batch, rows, depth] x [batch, depth, cols] order and back.

Labels fall in four groups: batch (both operands and the output), contracted (both operands
only), free in the first and free in the second operand (one operand and the output). A
label summed inside one operand only is a SUM first. One label at most may follow the
model's batch size; its group's size is written -1 in the RESHAPE targets.

Example (MultiHeadAttention's scores, `aecd,abcd->acbe`):
    TRANSPOSE(key)->[a,c,e,d]  TRANSPOSE(query)->[a,c,b,d]
    BATCH_MATMUL(query, key, adj_y)->[a,c,b,e]
"""
import numpy as np


class _Operand:
    """An operand's tensor (or constant array) and the labels of its axes, in order."""

    def __init__(self, ctx, slot, labels):
        self.value = ctx.value(slot)
        self.tensor = None if self.value is not None else ctx.tensor(slot)
        self.labels = labels


def _sizes_and_dynamic(ctx, node, ins):
    sizes, dynamic = {}, set()
    for labels, slot in zip(ins, node.inputs):
        sizes.update(zip(labels, ctx.shape(slot)))
        dynamic.update(labels[a] for a in ctx.capture.dynamic_dims(slot))
    return sizes, dynamic


class _Builder:
    """Emits the ops of one einsum; the last one writes the node's output tensor."""

    def __init__(self, ctx, node, sizes, dynamic):
        self.ctx, self.node, self.sizes, self.dynamic = ctx, node, sizes, dynamic
        self.dtype = ctx.dtype(node.outputs[0])

    def dims(self, groups):
        """(size, follows the batch size) of each group of labels."""
        return [(int(np.prod([self.sizes[c] for c in g], dtype=np.int64)),
                 any(c in self.dynamic for c in g)) for g in groups]

    def new(self, dims):
        return self.ctx.new_tensor([d for d, _ in dims], self.dtype, "einsum",
                                   signature=[-1 if dyn else d for d, dyn in dims])

    def product(self, dims):
        """The tensor of the contraction's result before its final RESHAPE/TRANSPOSE: the
        output's values, so quantization calibrates it with the output's range."""
        index = self.new(dims)
        self.ctx.range_slots[index] = self.node.outputs[0]
        return index

    def transpose(self, operand, labels):
        """The operand with its axes in `labels` order."""
        if operand.labels == labels:
            return operand
        perm = [operand.labels.index(c) for c in labels]
        if operand.value is not None:
            operand.value = np.transpose(operand.value, perm)
        else:
            out = self.new(self.dims(labels))
            self.ctx.op("TRANSPOSE", [operand.tensor, self.ctx.const(np.asarray(perm, np.int32),
                                                                     "perm")], [out])
            operand.tensor = out
        operand.labels = labels
        return operand

    def reshape(self, tensor, dims, out=None):
        """RESHAPE to `dims` ((size, dynamic) pairs); the dynamic one is written -1."""
        target = np.asarray([-1 if dyn else d for d, dyn in dims], np.int32)
        out = self.new(dims) if out is None else out
        self.ctx.op("RESHAPE", [tensor, self.ctx.const(target, "shape")], [out],
                    options=("ReshapeOptions", {"new_shape": target}))
        return out

    def sum_out(self, operand, keep):
        """Sums the operand's labels that are not in `keep` (summed inside it only)."""
        drop = [i for i, c in enumerate(operand.labels) if c not in keep]
        if not drop:
            return operand
        labels = "".join(c for c in operand.labels if c in keep)
        if operand.value is not None:
            operand.value = operand.value.sum(axis=tuple(drop), dtype=operand.value.dtype)
        else:
            out = self.new(self.dims(labels))
            self.ctx.op("SUM", [operand.tensor, self.ctx.const(np.asarray(drop, np.int32),
                                                               "axes")],
                        [out], options=("ReducerOptions", {"keep_dims": False}))
            operand.tensor = out
        operand.labels = labels
        return operand

    def finish(self, tensor, groups, out_labels):
        """Brings the product (axes: `groups` of labels) to the output's labels and order."""
        final = self.ctx.output(self.node)
        ordered = "".join(groups)
        if ordered == out_labels:
            self.reshape(tensor, self.dims(ordered), out=final)
            return
        if self.dims(groups) != self.dims(ordered):
            tensor = self.reshape(tensor, self.dims(ordered))
        perm = np.asarray([ordered.index(c) for c in out_labels], np.int32)
        self.ctx.op("TRANSPOSE", [tensor, self.ctx.const(perm, "perm")], [final])


def lower_einsum(ctx, node, ins, out):
    """Writes a two-operand einsum (`ins`: the operands' labels, `out`: the output's) as
    TFLite builtins; see the module docstring."""
    eq = node.attrs.get("equation")
    if len(ins) != 2 or any(len(set(s)) != len(s) for s in (*ins, out)):
        ctx.unsupported(node, f"with equation {eq!r} has no TFLite mapping: only einsums of "
                              f"two operands without repeated labels become BATCH_MATMUL")
    sizes, dynamic = _sizes_and_dynamic(ctx, node, ins)
    if len(dynamic) > 1:
        ctx.unsupported(node, f"with equation {eq!r}: labels {sorted(dynamic)} all follow the "
                              f"batch size; TFLite's RESHAPE can infer one; convert with a "
                              f"fixed batch size")
    a, b = (_Operand(ctx, s, labels) for s, labels in zip(node.inputs, ins))
    if a.value is not None and b.value is None:
        a, b = b, a  # the constant on the right: a FULLY_CONNECTED weight
    build = _Builder(ctx, node, sizes, dynamic)
    build.sum_out(a, b.labels + out)
    build.sum_out(b, a.labels + out)
    batch = "".join(c for c in out if c in a.labels and c in b.labels)
    contract = "".join(c for c in a.labels if c in b.labels and c not in out)
    free_a = "".join(c for c in out if c in a.labels and c not in b.labels)
    free_b = "".join(c for c in out if c in b.labels and c not in a.labels)
    if b.value is not None and not batch and a.value is None:
        _fully_connected(build, a, b, contract, free_a, free_b, out)
    else:
        _batch_matmul(build, a, b, batch, contract, free_a, free_b, out)


def _fully_connected(build, a, b, contract, free_a, free_b, out):
    """x @ W with W constant: FULLY_CONNECTED, whose bias and activation may then fuse."""
    ctx = build.ctx
    build.transpose(a, free_a + contract)
    build.transpose(b, free_b + contract)
    (units, _), (depth, _) = build.dims([free_b, contract])
    weights = ctx.const(np.ascontiguousarray(b.value.reshape(units, depth)), "weights")
    x = a.tensor
    if len(contract) != 1:  # the kernel reads rows of the input's last dimension
        x = build.reshape(x, build.dims([*free_a, contract]))
    direct = len(free_b) == 1 and out == free_a + free_b
    keep = direct and len(free_a) != 1  # [..., units]: FULLY_CONNECTED keeps leading dims
    result = ctx.output(build.node) if direct else build.product(build.dims([free_a, free_b]))
    ctx.op("FULLY_CONNECTED", [x, weights, -1], [result],
           options=("FullyConnectedOptions", {"keep_num_dims": keep}),
           fuse=(2, "fused_activation_function") if direct else None)
    if not direct:
        build.finish(result, [free_a, free_b], out)


MAX_BATCH_AXES = 3  # BATCH_MATMUL takes rank 5 at most: more batch labels are merged


def _batch_groups(batch):
    """Batch labels as BATCH_MATMUL's leading axes: one each (no RESHAPE needed), or merged
    into one when there are too many."""
    return list(batch) if len(batch) <= MAX_BATCH_AXES else [batch]


def _side(build, operand, batch, inner, second):
    """Orders an operand as [batch, inner, second] or, when that saves a TRANSPOSE,
    [batch, second, inner] with BATCH_MATMUL's adjoint flag; returns (tensor, adjoint)."""
    adjoint = operand.value is None and operand.labels == batch + second + inner and \
        operand.labels != batch + inner + second
    order = [second, inner] if adjoint else [inner, second]
    build.transpose(operand, batch + "".join(order))
    groups = _batch_groups(batch) + order
    dims = build.dims(groups)
    if operand.value is not None:  # a constant is laid out here, not by a RESHAPE op
        return build.ctx.const(np.ascontiguousarray(operand.value.reshape(
            [d for d, _ in dims])), "einsum_const"), adjoint
    if any(len(g) != 1 for g in groups):
        return build.reshape(operand.tensor, dims), adjoint
    return operand.tensor, adjoint


def _batch_matmul(build, a, b, batch, contract, free_a, free_b, out):
    ta, adj_x = _side(build, a, batch, free_a, contract)
    tb, adj_y = _side(build, b, batch, contract, free_b)
    groups = _batch_groups(batch) + [free_a, free_b]
    direct = all(len(g) == 1 for g in groups) and "".join(groups) == out
    result = build.ctx.output(build.node) if direct else build.product(build.dims(groups))
    build.ctx.op("BATCH_MATMUL", [ta, tb], [result],
                 options=("BatchMatMulOptions", {"adj_x": adj_x, "adj_y": adj_y}))
    if not direct:
        build.finish(result, groups, out)
