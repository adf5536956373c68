"""Constant folding: a node whose inputs are all constants is evaluated once, here, and its
outputs become constants (the notes "Structure of Deep Learning
Frameworks": "statically infer the value of tensors by folding
constant nodes").

Stateful nodes (random draws, variable reads and writes) and ops declaring `fold=False`
are never folded; results larger
than MAX_ELEMENTS stay computed at run time (a huge constant costs memory for every
concrete function); a node whose evaluation fails is left for run time, where its error
names the user's line.
"""
import numpy as np

from tensorlite.graph.passes import derive, stateful

MAX_ELEMENTS = 1_000_000


def _foldable(node, constants):
    # op.fold: False for ops that must not run here (a loop would run for as long as it takes)
    return bool(node.outputs) and not stateful(node) and node.op.fold and \
        all(s in constants for s in node.inputs)


def _evaluate(node, constants):
    """The node's output arrays, or None when it should stay a node."""
    try:
        with np.errstate(all="ignore"):  # NaN/inf warnings belong to run time, if at all
            out = node.op.forward(*[constants[s] for s in node.inputs], **node.attrs)
    except Exception:  # noqa: BLE001 - left to fail at run time with a proper message
        return None
    outs = [np.asarray(o) for o in (out if node.op.multi_output else (out,))]
    if len(outs) != len(node.outputs) or any(o.size > MAX_ELEMENTS for o in outs):
        return None
    return outs


def run(graph):
    """Folds constant subexpressions; one report line `folded <Op>` per node."""
    constants = dict(graph.constants)
    nodes, lines = [], []
    for node in graph.nodes:
        outs = _evaluate(node, constants) if _foldable(node, constants) else None
        if outs is None:
            nodes.append(node)
            continue
        constants.update(zip(node.outputs, outs))
        lines.append(f"folded {node.op.name}")
    if not lines:
        return graph, lines
    return derive(graph, nodes, constants=constants), lines
