"""`tf.vectorized_map`: runs `fn` once on the whole batch.

`fn` is traced on the first element into a graph of registry ops (graph/tracing.py), then
the graph is run on the batch: a node whose inputs are all unbatched runs as it is; a node
with a batched input runs its op's batching rule (declared beside the op with
`registry.declare(op, batch=rule)`; the rule's form is documented in ops/batching.py) once
on the whole batch; an op without a rule runs once per example and its results are stacked
(the `fallback_ops` of the last call name them, and a warning says which). Everything a
batched node computes carries the batch as axis 0.

What a tape or a trace observes must be made of recorded ops: under a recording
GradientTape fn runs once per element with recorded ops and the results are stacked (so
gradients flow through elems and through what fn reads, the TF Dev Summit 2020 talk
"Research with TensorFlow"'s nested
`vectorized_map(lambda yi: ..., tape.gradient(yij, x))` included); inside a tf.function
trace the whole map is one `VectorizedMap` node, whose forward runs the vectorizer.

Example:
    >>> tf.vectorized_map(lambda x: x * 2.0, tf.constant([1.0, 2.0])).numpy()
    array([2., 4.], dtype=float32)
"""
import warnings

import numpy as np

from tensorlite.autodiff import tape
from tensorlite.framework import dispatch, errors, nest
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.registry import Spec, register
from tensorlite.framework.tensor import wrap
from tensorlite.graph import control_flow, tracing
from tensorlite.graph.ir import ASSIGN_VARIABLE, READ_VARIABLE, is_stateful
from tensorlite.graph.tracing import PythonValue, trace
from tensorlite.ops.array_ops import stack

LAST = {"fallback_ops": []}  # what the last call ran per example (for tests and users)
_WARNED = set()


class StatefulFunction(ValueError):
    """vectorized_map(..., stateless_only=True) met a function with random draws, variable
    writes or Python callbacks (one run for the whole batch would change its meaning)."""


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True, stateless_only=False):
    """`fn` applied to each slice of `elems` along axis 0 (a tensor or a nest of them),
    computed once for the whole batch by the ops' batching rules.

    Example:
        >>> tf.vectorized_map(lambda x: tf.reduce_sum(x * x), tf.ones([3, 2])).numpy()
        array([2., 2., 2.], dtype=float32)
    """
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("vectorized_map: elems must hold at least one tensor")
    sizes = {int(t.shape[0]) if t.shape.rank else None for t in flat}
    if None in sizes or len(sizes) != 1:
        raise errors.InvalidArgumentError(
            None, None, f"vectorized_map: every tensor in elems needs the same leading "
            f"(batch) dimension; got shapes {[t.shape.as_list() for t in flat]}")
    if any(t._recording for t in tape._ACTIVE):
        return _per_element(fn, elems, flat)
    if tracing.is_tracing():
        return _node(fn, elems, flat, stateless_only)
    return pfor(fn, elems, flat, "vectorized_map", fallback_to_while_loop,
                warn, stateless_only, stacklevel=3)


def _per_element(fn, elems, flat):
    """fn on each element, by recorded ops (slices, fn's ops, stack): what a recording
    tape needs to differentiate the map."""
    n = int(flat[0]._value.shape[0])
    results = [fn(_pack(elems, [t[i] for t in flat])) for i in range(n)]
    first = nest.flatten(results[0])
    columns = [[nest.flatten(r)[k] for r in results] for k in range(len(first))]
    stacked = [None if col[0] is None else stack(col) for col in columns]
    return nest.pack_like(results[0], stacked) if nest.is_nested(results[0]) else stacked[0]


def _node(fn, elems, flat, stateless_only):
    """Inside a trace: one VectorizedMap node over fn's sub-graph (traced on the first
    element; the tensors fn captures become the node's extra inputs)."""
    first = [wrap(t._value[0]) for t in flat]
    traced = control_flow.trace_sub(lambda *parts: fn(_pack(elems, list(parts))), first,
                                    "vectorized_map")
    if stateless_only and control_flow.graph_is_stateful(traced.graph):
        raise StatefulFunction("vectorized_map: fn has stateful ops")
    extra, _ = control_flow.operands([traced])
    out_specs = [Spec(tuple(t._value.shape), t._dtype) for t in traced.values]
    outs = dispatch.execute(VECTORIZED_MAP, tuple(flat) + tuple(extra),
                            {"graph": traced.graph, "n_elems": len(flat),
                             "out_specs": out_specs})
    return nest.pack_like(traced.structure, list(outs)) if nest.is_nested(
        traced.structure) else outs[0]


def _vectorized_map_forward(*inputs, graph, n_elems, out_specs):
    values, batched = dict(graph.constants), dict.fromkeys(graph.constants, False)
    for i, (s, v) in enumerate(zip(graph.placeholders, inputs)):
        values[s], batched[s] = v, i < n_elems
    n = int(np.shape(inputs[0])[0])
    _run(graph, values, batched, n, True, "vectorized_map")
    return tuple(_with_batch(values[s], batched[s], n) for s in graph.outputs)


def _vectorized_map_shape(*specs, graph, n_elems, out_specs):
    lead = None if specs[0].shape is None or not len(specs[0].shape) else specs[0].shape[0]
    return [Spec((lead,) + tuple(o.shape), o.dtype) for o in out_specs]


# Runs fn's sub-graph on the batch; stateful (passes never fold, merge or drop it), and
# without a gradient rule: differentiating it is a loud error naming it.
VECTORIZED_MAP = register(
    "VectorizedMap", _vectorized_map_forward, shape=_vectorized_map_shape, multi_output=True,
    effects="state", unsupported="tf onnx tflite batch tf_import")


def pfor(fn, elems, flat, who, allow_loop=True, warn=True, stateless_only=False,
         stacklevel=2):
    """The vectorizer: traces `fn` on the first slice of `elems` (whose flattened tensors
    are `flat`, all with the same leading size) and runs the graph once on the batch. `who`
    names the caller in messages ("vectorized_map", "tape.jacobian")."""
    n = int(flat[0]._value.shape[0])
    graph, _ = trace(lambda x: fn(x), [_pack(elems, [wrap(t._value[0]) for t in flat])], {},
                     who, call=False)
    if stateless_only:
        stateful = sorted({nd.op.name for nd in graph.nodes if is_stateful(nd.op)})
        if stateful:
            raise StatefulFunction(f"{who}: fn has stateful ops {stateful}")
    values, batched = {}, {}
    for s, t in zip(graph.placeholders, flat):
        values[s], batched[s] = t._value, True
    for s, v in graph.constants.items():
        values[s], batched[s] = v, False
    fallback = _run(graph, values, batched, n, allow_loop, who)
    if fallback and warn:
        key = (who,) + tuple(LAST["fallback_ops"])
        if key not in _WARNED:
            _WARNED.add(key)
            warnings.warn(f"{who}: no batching rule for {', '.join(key[1:])}; these ops "
                          f"ran once per example (declare a batch rule beside each op to "
                          f"vectorize it)", stacklevel=stacklevel)

    def out(s):
        return s.value if isinstance(s, PythonValue) else \
            wrap(_with_batch(values[s], batched[s], n))
    return nest.map_structure(out, graph.outputs)


def _pack(elems, parts):
    """One element of `elems` from its flat parts."""
    return nest.pack_like(elems, parts) if isinstance(elems, (list, tuple, dict)) else parts[0]


def _with_batch(v, is_batched, n):
    """An output with the batch as axis 0 (a value shared by every example is repeated)."""
    return v if is_batched else np.broadcast_to(v, (n,) + np.shape(v)).copy()


def _run(graph, values, batched, n, allow_loop, who):
    """Runs the graph's nodes on the batch (values/batched filled in); returns the names
    of the ops that ran once per example."""
    fallback = []
    for node in graph.nodes:
        _run_node(node, values, batched, n, fallback, allow_loop, who)
    LAST["fallback_ops"] = sorted(set(fallback))
    return fallback


def _jacobian_rows(backward, cotangents):
    """The tape's pfor jacobian: `backward(row)` (one VJP) for every row of `cotangents`
    at once, by the batching rules of the ops the backward pass runs."""
    return pfor(backward, cotangents, [cotangents], "tape.jacobian", stacklevel=5)


tape.PFOR[:] = [_jacobian_rows]


def _run_node(node, values, batched, n, fallback, allow_loop, who):
    op = node.op
    if op is ASSIGN_VARIABLE:
        raise NotImplementedError(f"{who}: assigning a variable inside fn is not "
                                  f"supported (each example would race to write it)")
    ins = [values[s] for s in node.inputs]
    flags = [batched[s] for s in node.inputs]
    if op is READ_VARIABLE:
        outs, is_b = (node.attrs["variable"]._t._value,), False
    elif not any(flags):
        out = op.forward(*ins, **node.attrs)
        outs, is_b = (tuple(out) if op.multi_output else (out,)), False
    elif op.batch is not None and (out := op.batch(ins, flags, **node.attrs)) \
            is not NotImplemented:
        outs, is_b = (tuple(out) if op.multi_output else (out,)), True
    else:
        if not allow_loop:
            raise errors.InvalidArgumentError(
                None, None, f"{who}: op {op.name} has no batching rule and "
                f"fallback_to_while_loop=False")
        fallback.append(op.name)
        per = [op.forward(*[a[i] if b else a for a, b in zip(ins, flags)], **node.attrs)
               for i in range(n)]
        per = [tuple(p) if op.multi_output else (p,) for p in per]
        outs, is_b = tuple(np.stack([np.asarray(p[k]) for p in per])
                           for k in range(len(per[0]))), True
    for s, v in zip(node.outputs, outs):
        values[s], batched[s] = np.asarray(v) if not isinstance(v, np.ndarray) else v, is_b
