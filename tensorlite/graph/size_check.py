"""The size check of a shape-polymorphic tf.function: the function is traced a second time
with its None dimensions one longer, and the two graphs are compared. Code that turns a
size into a constant (`len(x)`, a shape read by a gradient rule) gives a different graph,
and `first_difference` names the op and the user's line; such a function then gets one
graph per shape (graph/function.py).

Example:
    >>> first_difference(graph, graph) is None  # doctest: +SKIP
    True
"""
import numpy as np

from tensorlite.framework import nest
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.graph.ir import Graph


def resized(args, kwargs, shapes, leading_only=False):
    """args/kwargs with every tensor's None dimensions (or only its first one) one longer
    (its slices repeated), for the check trace: the same size maps to the same new size,
    so inputs that must agree still do."""
    shapes = iter(shapes)

    def grow(x):
        if not isinstance(x, Tensor):
            return x
        v = x._value
        axes = [a for a, d in enumerate(next(shapes)) if d is None]
        for axis in axes[:1] if leading_only else axes:
            n = v.shape[axis]
            v = np.take(v, np.arange(n + 1) % n, axis=axis) if n else \
                np.zeros(v.shape[:axis] + (1,) + v.shape[axis + 1:], v.dtype)
        return wrap(v)
    flat = [grow(x) for x in nest.flatten([list(args), kwargs], expand_composites=True)]
    new_args, new_kwargs = nest.pack_like([list(args), kwargs], flat, expand_composites=True)
    return tuple(new_args), new_kwargs


def first_difference(a, b):
    """Where graphs `a` and `b` (traces of one function at two sizes) differ: "Op created
    at file:line", or None when they are the same program."""
    if len(a.nodes) != len(b.nodes):
        node = a.nodes[min(len(a.nodes), len(b.nodes)) - 1] if a.nodes else None
        return "the number of ops" + (f" (after {node.op.name} created at {node.where})"
                                      if node else "")
    for x, y in zip(a.nodes, b.nodes):
        if x.op is not y.op or x.inputs != y.inputs or not same_attrs(x.attrs, y.attrs):
            return f"{x.op.name} created at {x.where}"
    for (s, u), (t, v) in zip(sorted(a.constants.items()), sorted(b.constants.items())):
        if s != t or not (u is v or same_attrs(np.asarray(u), np.asarray(v))):
            user = next((n for n in a.nodes if s in n.inputs), None)
            return f"a constant of shape {list(np.shape(u))}" + (
                f" used by {user.op.name} created at {user.where}" if user else "")
    return None


def same_attrs(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and np.array_equal(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_attrs(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_attrs(x, y) for x, y in zip(a, b))
    sub_a, sub_b = getattr(a, "graph", None), getattr(b, "graph", None)
    if isinstance(sub_a, Graph) and isinstance(sub_b, Graph):  # control-flow branches
        return first_difference(sub_a, sub_b) is None and \
            getattr(a, "index", None) == getattr(b, "index", None)
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - objects without a value comparison
        return False
