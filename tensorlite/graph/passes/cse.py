"""Common subexpression elimination: identical nodes (same op, same input slots, equal
attributes) compute the same value, so all but the first are dropped and their uses read the
first one's outputs. Hash-consing: each node gets a dictionary key; a key seen before is a
duplicate. Equal constants are merged first, so `x * 2` written twice matches.

Attribute values are compared by content (NumPy arrays by dtype, shape and bytes; floats by
bit pattern, so -0.0 and 0.0 differ and NaN equals NaN; dtypes by name; slices, tuples and
lists element by element); anything else (a variable, a generator) only by identity.
Stateful nodes are never merged: two random draws are two different values.
"""
import math

import numpy as np

from tensorlite.graph.ir import Node
from tensorlite.graph.passes import derive, resolve, stateful

MAX_HASHED_ELEMENTS = 1 << 16  # bigger constants are compared by identity only


def freeze(v):
    """A hashable key equal for attribute values that make an op compute the same thing."""
    if isinstance(v, np.ndarray):
        if v.dtype == object:
            return ("id", id(v))
        return ("ndarray", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, (float, np.floating)):
        return (type(v).__name__, float(v).hex() if not math.isnan(v) else "nan")
    if isinstance(v, (complex, np.complexfloating)):
        return (type(v).__name__, freeze(float(v.real)), freeze(float(v.imag)))
    if v is None or isinstance(v, (bool, int, str, bytes, np.integer, np.bool_)):
        return (type(v).__name__, v)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(freeze(x) for x in v)
    if isinstance(v, dict):
        return ("dict",) + tuple((repr(k), freeze(x)) for k, x in
                                 sorted(v.items(), key=lambda kv: repr(kv[0])))
    if isinstance(v, slice):
        return ("slice", freeze(v.start), freeze(v.stop), freeze(v.step))
    if isinstance(v, np.dtype):
        return ("np.dtype", v.str)
    if hasattr(v, "is_floating") and hasattr(v, "as_numpy_dtype"):  # a tensorlite DType
        return ("dtype", v.name)
    return ("id", id(v))


def node_key(node, inputs):
    # op.commutative: exactly commutative in IEEE arithmetic, also under broadcasting (AddN
    # is not: its summation order changes the rounding)
    ins = tuple(sorted(inputs)) if node.op.commutative else tuple(inputs)
    return (node.op.name, ins, freeze(node.attrs))


def _const_key(value):
    a = np.asarray(value)
    if a.size > MAX_HASHED_ELEMENTS or a.dtype == object:
        return ("id", id(value))
    return freeze(a)


def run(graph):
    """Merges equal constants and duplicate nodes; report lines `merged <Op>`."""
    mapping, lines = {}, []
    constants, first_const = {}, {}
    for s, v in graph.constants.items():
        key = _const_key(v)
        if key in first_const:
            mapping[s] = first_const[key]
            lines.append("merged Const")
        else:
            first_const[key] = s
            constants[s] = v
    table, nodes = {}, []
    for node in graph.nodes:
        inputs = [resolve(mapping, s) for s in node.inputs]
        if node.outputs and not stateful(node):
            key = node_key(node, inputs)
            first = table.get(key)
            if first is not None:
                mapping.update(zip(node.outputs, first.outputs))
                lines.append(f"merged {node.op.name}")
                continue
            table[key] = node
        nodes.append(node if inputs == node.inputs else
                     Node(node.op, inputs, node.attrs, node.outputs, node.where))
    if not lines:
        return graph, lines
    return derive(graph, nodes, mapping, constants), lines
