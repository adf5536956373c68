"""Keras state kept on the host inside `tf.function` graphs.

The built-in metrics update NumPy arrays in place (fast eagerly, invisible to a tape).
Traced as they are, a graph would freeze the values they read at trace time and never
repeat their updates. Inside a trace, `host_call` records such a call as ONE stateful
callback node whose inputs are the call's tensor arguments: every run of the graph repeats
the call on that run's values, exactly as the eager code computes it. The graph passes never
move anything across it. (The optimizers no longer need it: they trace into graph ops,
keras/optimizers/optimizer.py.)

Example:
    >>> m = tf.keras.metrics.Mean()
    >>> @tf.function
    ... def step(x):
    ...     return m(x)          # one KerasMetric node per call inside the graph
    >>> _ = step(tf.constant(1.0)); float(step(tf.constant(3.0)))
    2.0
"""
import functools

from tensorlite.framework import nest
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.graph.tracing import is_tracing
from tensorlite.ops import script_ops

__all__ = ["host_call", "graph_aware", "is_tracing"]


def host_call(op_name, fn, args=(), kwargs=None, tout=(), effect=True):
    """Runs fn(*args, **kwargs) as one callback node of `op_name`; returns the outputs
    (a list of Tensors of the dtypes `tout`). With effect=True the call is skipped when the
    graph runs without effects (a trace that is not a call, a replay)."""
    kwargs = kwargs or {}
    structure = [list(args), kwargs]
    leaves = nest.flatten(structure)
    where = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)
             or getattr(x, "_is_variable", False)]
    tensors = [leaves[i] if isinstance(leaves[i], Tensor) else leaves[i].read_value()
               for i in where]

    def call(*arrays):
        if effect and not script_ops.effects_on():
            return None
        values = list(leaves)
        for i, a in zip(where, arrays):
            values[i] = wrap(a)
        call_args, call_kwargs = nest.pack_like(structure, values)
        out = fn(*call_args, **call_kwargs)
        return out if tout else None

    return list(script_ops.callback(op_name, call, tensors, tout))


def graph_aware(method, op_name, result_dtype=None):
    """Wraps a method that works on host (NumPy) state so that inside a trace it runs as a
    `host_call` node: with `result_dtype(self)` its one output is returned as a Tensor."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if not is_tracing():
            return method(self, *args, **kwargs)
        tout = () if result_dtype is None else (result_dtype(self),)
        outs = host_call(op_name, functools.partial(method, self), args, kwargs, tout,
                         effect=result_dtype is None)
        return outs[0] if tout else None
    wrapper._graph_aware = True
    return wrapper
