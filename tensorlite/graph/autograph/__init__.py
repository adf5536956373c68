"""`tf.autograph`: converts Python control flow on tensors into graph control flow.

Inside `tf.function` (autograph=True, the default) the function's source is transformed
(conversion.py): `if`/`elif`/`else` on a graph tensor becomes tf.cond, `while` on one
becomes tf.while_loop, `for x in tensor`, `for i in tf.range(n)` and `for elem in dataset`
become loops in the graph, `break`/`continue`/`return` inside them work, and Python control
flow on Python values stays Python.

Example:
    >>> @tf.function
    ... def collatz(n):
    ...     steps = 0
    ...     while n != 1:
    ...         n = n // 2 if n % 2 == 0 else 3 * n + 1
    ...         steps += 1
    ...     return steps
    >>> int(collatz(tf.constant(6)))
    8
"""
from tensorlite.graph.autograph import experimental
from tensorlite.graph.autograph.conversion import do_not_convert, to_code, to_graph

__all__ = ["experimental", "to_code", "to_graph", "do_not_convert"]
