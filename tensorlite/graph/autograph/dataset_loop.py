"""`for elem in dataset` inside a traced function: a tf.while_loop whose elements come
from two Python-callback nodes, one that opens an iterator over the dataset on each run of
the graph and one that fetches the next element (with a flag saying whether there was one).

Tracing a loop body is no run of it (script_ops.effects_on() is False), so while the body
is traced the fetch returns a stand-in element and consumes nothing.

Example:
    >>> @tf.function
    ... def total(ds):
    ...     s = tf.constant(0)
    ...     for x in ds:
    ...         s += x
    ...     return s
    >>> int(total(tf.data.Dataset.range(5).map(lambda x: tf.cast(x, tf.int32))))
    10
"""
import itertools
import threading

import numpy as np

from tensorlite.framework import dtypes, nest
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.graph import control_flow, tracing
from tensorlite.ops import script_ops

_OPEN = {}  # handle -> live Python iterator over a dataset
_LOCK = threading.Lock()
_HANDLES = itertools.count(1)


def run(ds, extra_test, body, get_state, set_state, names, opts, where, staged_loop):
    """Stages the loop with `staged_loop` (operators._staged_loop)."""
    specs = nest.flatten(ds.element_spec)
    structure = ds.element_spec
    tout = [dtypes.bool] + [s.dtype for s in specs]

    def open_iterator():
        handle = next(_HANDLES)
        if script_ops.effects_on():
            with _LOCK:
                _OPEN[handle] = iter(ds)
        return np.int64(handle)

    def fetch(handle):
        handle = int(handle)
        it = _OPEN.get(handle) if script_ops.effects_on() else None
        try:
            if it is None:
                raise StopIteration
            elem = [np.asarray(t) for t in nest.flatten(next(it))]
            return [np.bool_(True)] + elem
        except StopIteration:
            # A stand-in element while a loop body is traced (a branch trace is the
            # innermost); a dry run of the graph (get_concrete_function, or the retrace of
            # a first call that created variables) iterates nothing: running its While
            # node on a stand-in would apply the body's assignments once more for real
            # (Hands-On ML's train_one_epoch stepped the optimizer 5 times for 4 batches).
            alive = it is None and bool(tracing._ACTIVE) and \
                isinstance(tracing._ACTIVE[-1], control_flow.SubTracer)
            if not alive:
                with _LOCK:
                    _OPEN.pop(handle, None)
            return [np.bool_(alive)] + [stand_in(s) for s in specs]

    handle = script_ops.numpy_function(open_iterator, [], dtypes.int64)
    first = script_ops.numpy_function(fetch, [handle], tout)

    def test(counter):
        ok = counter[0]
        if extra_test is None:
            return ok
        from tensorlite.graph.autograph.operators import and_  # noqa: PLC0415
        return and_(lambda: ok, extra_test)

    def step(counter):
        body(nest.pack_like(structure, list(counter[1:])) if not _single(structure)
             else counter[1])
        return tuple(script_ops.numpy_function(fetch, [handle], tout))

    shapes = tuple([TensorShape([])] + [s.shape for s in specs])
    staged_loop(test, step, get_state, set_state, names, opts, where, tuple(first), shapes)


def stand_in(spec):
    """Zeros of the spec's shape (1 for an unknown size; a scalar for an unknown rank:
    `Dataset.from_generator` given only output_types)."""
    dims = [] if spec.shape.rank is None else [1 if d is None else d
                                               for d in spec.shape.as_list()]
    return np.zeros(dims, spec.dtype.as_numpy_dtype)


def _single(structure):
    return not isinstance(structure, (list, tuple, dict))
