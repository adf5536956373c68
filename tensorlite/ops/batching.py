"""Batching rules for `tf.vectorized_map`, declared beside each op with
`registry.declare(op, batch=rule)`; tensorlite/graph/vectorize.py documents the form and
applies them. The shared forms live here so that op families declare one line each.

A rule is ``rule(arrays, batched, **attrs) -> output`` (a tuple for multi-output ops):
`arrays` are the op's NumPy inputs, `batched[i]` says whether input i carries the batch as
its axis 0 (unbatched inputs are shared by every example), and every output carries the
batch as axis 0. A rule may return NotImplemented for a pattern it does not cover: that
node then runs once per example.

Example:
    >>> declare(EXP, batch=elementwise(EXP.forward))  # doctest: +SKIP
"""
import numpy as np


def _align(arrays, batched):
    """Batched inputs padded with 1-dims after the batch axis to a common example rank, so
    that broadcasting (from the right) pairs example dimensions and the batch axis lines
    up; unbatched inputs broadcast as they do for one example."""
    rank = max(a.ndim - 1 if b else a.ndim for a, b in zip(arrays, batched))
    return [a.reshape(a.shape[:1] + (1,) * (rank - a.ndim + 1) + a.shape[1:]) if b else a
            for a, b in zip(arrays, batched)]


def elementwise(forward):
    """Rule for ops that broadcast their inputs (elementwise ops, matmul over leading
    dimensions): pad, then one call on the whole batch."""
    def rule(arrays, batched, **attrs):
        return forward(*_align(arrays, batched), **attrs)
    rule.kind = "elementwise"  # for the shared check (tests/vectorize_check.py)
    return rule


def reduction(forward):
    """Rule for reductions with attrs `axis` (None: all) and `keepdims`: the example axes
    move one up."""
    def rule(arrays, batched, axis=None, **attrs):
        x = arrays[0]
        ndim = x.ndim - 1
        axes = tuple(range(1, x.ndim)) if axis is None else tuple(
            (a % ndim) + 1 for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        return forward(x, axis=axes, **attrs)
    rule.kind = "reduction"
    return rule


def leading(forward):
    """Rule for ops whose forward already takes extra leading (batch) dimensions on any
    input and broadcasts them (convolutions, pooling and their gradients, which the tape's
    batched jacobian drives that way): pad, then one call."""
    def rule(arrays, batched, **attrs):
        return forward(*_align(arrays, batched), **attrs)
    rule.kind = "leading"
    return rule


def with_batch_axis(arrays, batched):
    """Every input with the batch as axis 0 (shared inputs as broadcast views)."""
    n = next(a.shape[0] for a, b in zip(arrays, batched) if b)
    return [a if b else np.broadcast_to(a, (n,) + np.shape(a)) for a, b in zip(arrays, batched)]


def per_batch(forward):
    """Rule for ops whose forward treats leading dimensions as batch dimensions when every
    input has them (softmax cross-entropy: the class axis is the last)."""
    def rule(arrays, batched, **attrs):
        return forward(*with_batch_axis(arrays, batched), **attrs)
    rule.kind = "leading"
    return rule


def cotangent_leading(forward):
    """Rule for gradient ops whose forward takes extra leading dimensions on its last
    input (the cotangent) only (max pooling's gradients): shared other inputs keep one
    call; otherwise every input gets the batch axis."""
    def rule(arrays, batched, **attrs):
        if not any(batched[:-1]):
            return forward(*arrays, **attrs)
        return forward(*with_batch_axis(arrays, batched), **attrs)
    rule.kind = "leading"
    return rule


def along_axis(forward):
    """Rule for ops joining or splitting along an `axis` attr (concat, stack, unstack):
    every input gets the batch axis, a non-negative axis moves one up."""
    def rule(arrays, batched, axis, **attrs):
        return forward(*with_batch_axis(arrays, batched), axis=axis + 1 if axis >= 0
                       else axis, **attrs)
    rule.kind = "leading"
    return rule


def axis_attr(forward):
    """Rule for one-input ops with an `axis` attr (softmax): a non-negative axis moves one
    up, a negative one already counts from the end."""
    def rule(arrays, batched, axis, **attrs):
        return forward(arrays[0], axis=axis + 1 if axis >= 0 else axis, **attrs)
    rule.kind = "leading"
    return rule


def broadcast_to_rule(arrays, batched, shape):
    x = arrays[0]
    x = x.reshape(x.shape[:1] + (1,) * (len(shape) - x.ndim + 1) + x.shape[1:])
    return np.broadcast_to(x, x.shape[:1] + tuple(shape))


broadcast_to_rule.kind = "leading"


def reshape_rule(arrays, batched, shape):
    x = arrays[0]
    return x.reshape((x.shape[0],) + tuple(shape))


def transpose_rule(arrays, batched, perm):
    return np.transpose(arrays[0], (0,) + tuple(p + 1 for p in perm))


reshape_rule.kind = "reshape"
transpose_rule.kind = "transpose"
