"""`tf.compat.v1.gradients` / `tf.gradients`: symbolic gradients in a TF1 graph.

The result is one graph node, SymbolicGradient, whose inputs are the leaves of `ys`
(placeholders, variable reads): each time a Session runs it, it replays the forward nodes
on that run's values under a GradientTape watching `xs`, so gradients are exact for any
fed shape (a placeholder's None dimensions have no size while the graph is built).
(Eagerly and inside tf.function, TF 2 has no tf.gradients: use
tf.GradientTape.)

Example:
    >>> with tf.Graph().as_default():
    ...     x = tf.compat.v1.placeholder(tf.float32, [])
    ...     dy, = tf.compat.v1.gradients(x * x, [x])
    ...     with tf.compat.v1.Session() as s:
    ...         s.run(dy, {x: 3.0})
    6.0
"""
from tensorlite.autodiff.tape import GradientTape
from tensorlite.compat.v1 import graph_mode
from tensorlite.compat.v1.graph import get_default_graph
from tensorlite.framework import dispatch
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.graph.ir import READ_VARIABLE


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False,
              aggregation_method=None, stop_gradients=None,
              unconnected_gradients="none"):
    """d(sum of ys)/d(each x), as graph tensors (None where x does not affect ys)."""
    if not graph_mode.recording():
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. "
                           "Use tf.GradientTape instead.")
    graph = get_default_graph()
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    grad_ys = [None] * len(ys) if grad_ys is None else (
        list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys])
    plan = _Plan(graph, ys, xs, grad_ys)
    connected = plan.connected()
    seeds = [g for g in grad_ys if g is not None]
    outs = dispatch.execute(SYMBOLIC_GRADIENT, tuple(plan.leaf_tensors) + tuple(seeds),
                            {"plan": plan})
    outs = iter(outs)
    return [next(outs) if c else (_zeros_like(x) if unconnected_gradients == "zero" else None)
            for x, c in zip(xs, connected)]


def _zeros_like(x):
    from tensorlite.ops.array_ops import zeros_like  # noqa: PLC0415
    return zeros_like(x._read() if getattr(x, "_is_variable", False) else x)


class _Plan:
    """What the gradient node replays: the nodes computing `ys` from their leaves
    (placeholders, variable reads, constants), and where each x is among them."""

    def __init__(self, graph, ys, xs, grad_ys):
        g = graph._ir
        tracer = graph._tracer
        by_slot = {tracer.slot_of[id(t)]: t for t in tracer.keep if id(t) in tracer.slot_of}
        self.y_slots = [_slot_of(graph, y) for y in ys]
        self.seeded = [g_ is not None for g_ in grad_ys]
        producers = graph._producers()
        needed, leaves, stack = set(), [], list(self.y_slots)
        seen = set()
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            k = producers.get(s)
            if k is None or g.nodes[k].op is READ_VARIABLE:
                if s not in g.constants:
                    leaves.append(s)
                continue
            needed.add(k)
            stack.extend(g.nodes[k].inputs)
        self.nodes = [g.nodes[k] for k in sorted(needed)]
        self.leaves = sorted(leaves)
        self.constants = {s: g.constants[s] for n in self.nodes for s in n.inputs
                          if s in g.constants}
        self.leaf_tensors = [by_slot[s] for s in self.leaves]
        self.x_slots = []  # per x: the slots whose gradients sum to its gradient
        for x in xs:
            if getattr(x, "_is_variable", False):
                self.x_slots.append([s for s in self.leaves if producers.get(s) is not None
                                     and g.nodes[producers[s]].attrs.get("variable") is x])
            else:
                self.x_slots.append([_slot_of(graph, x)])

    def connected(self):
        produced = {s for n in self.nodes for s in n.outputs}
        return [any(s in produced or s in self.leaves for s in slots) for slots in self.x_slots]

    def run(self, leaf_arrays, seeds):
        """The gradients, computed now by replaying the forward nodes under a tape."""
        values = {s: wrap(v) for s, v in self.constants.items()}
        values.update((s, wrap(a)) for s, a in zip(self.leaves, leaf_arrays))
        watched = {s for slots in self.x_slots for s in slots}
        with GradientTape(watch_accessed_variables=False) as tape:
            for s in watched & set(values):
                tape.watch(values[s])
            for node in self.nodes:
                out = dispatch.execute(node.op, tuple(values[s] for s in node.inputs),
                                       node.attrs)
                for s, o in zip(node.outputs, out if isinstance(out, tuple) else (out,)):
                    values[s] = o
                    if s in watched:
                        tape.watch(o)
        sources = sorted(watched)
        it = iter(seeds)
        out_grads = [wrap(next(it)) if seeded else None for seeded in self.seeded]
        grads = tape.gradient([values[s] for s in self.y_slots], [values[s] for s in sources],
                              output_gradients=out_grads, unconnected_gradients="zero")
        by_source = dict(zip(sources, grads))
        results = []
        for slots in self.x_slots:
            if any(s in by_source for s in slots):
                total = None
                for s in slots:
                    g = by_source[s]._value
                    total = g if total is None else total + g
                results.append(total)
        return tuple(results)


def _gradient_forward(*arrays, plan):
    n = len(plan.leaves)
    return plan.run(arrays[:n], arrays[n:])


SYMBOLIC_GRADIENT = register("SymbolicGradient", _gradient_forward, grad=NOT_DIFFERENTIABLE,
                             multi_output=True, unsupported="tf onnx tflite batch tf_import")


def _slot_of(graph, t):
    if getattr(t, "_is_variable", False):
        t = t._read()
    s = graph._slot(t) if isinstance(t, Tensor) else None
    if s is None:
        raise ValueError(f"tf.gradients: {t!r:.80} is not a tensor computed in the default "
                         f"graph; pass tensors and variables of this graph")
    return s
