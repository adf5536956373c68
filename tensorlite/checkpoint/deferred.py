"""Deferred restoration, as TensorFlow does it: a checkpoint restored before an object has
all its state (a Keras layer makes its weights at its first call, an optimizer its slots at
its first step, a `tf.train.Checkpoint` gets an attribute later) remembers each saved child
that had no live counterpart yet, and restores it as soon as it appears.

Each awaited child is kept as (anchor, path): the nearest object that can be watched (held
by a weak reference) and the local names that lead from it to the child, through lists and
dicts (which cannot be watched themselves: an optimizer's `_variables`). `settle()` looks
for them all; state-making code calls it through `framework.module.child_added()`, which
costs nothing while nothing waits.

Example:
    >>> status = tf.train.Checkpoint(model=unbuilt_model).restore(path)
    >>> unbuilt_model(x)          # its weights are made, then restored from `path`
    >>> status.assert_consumed()  # nothing is left waiting
"""
import weakref

from tensorlite.checkpoint import object_graph as og
from tensorlite.framework import module
from tensorlite.graph.context import init_scope

_WAITING = {}  # id(anchor) -> (weak reference to it, [(path, saved node id, matcher)])
_SETTLING = [False]


def anchor_of(obj, anchor, path):
    """(anchor, path) to keep for `obj`, found at `path` below `anchor`: the object itself
    where it can be watched, else those."""
    try:
        weakref.ref(obj)
    except TypeError:
        return anchor, path
    return obj, ()


def expect(anchor, path, node_id, matcher):
    """Awaits the child at `path` below `anchor` for saved node `node_id` of `matcher`."""
    key = id(anchor)
    entry = _WAITING.get(key)
    if entry is None or entry[0]() is not anchor:
        try:  # (the callback may run at shutdown: it touches only its own dict)
            ref = weakref.ref(anchor, lambda _, k=key, waiting=_WAITING: waiting.pop(k, None))
        except TypeError:
            return  # nothing to watch: it stays unrestored, as assert_consumed says
        entry = _WAITING[key] = (ref, [])
    entry[1].append((path, node_id, matcher))
    if settle not in module.CHILD_ADDED:
        module.CHILD_ADDED.append(settle)


def _child_at(anchor, path):
    obj = anchor
    for name in path:
        obj = dict(og.children(obj)).get(name)
        if obj is None:
            return None
    return obj


def settle():
    """Restores every awaited child that exists now; repeats while that makes more. The
    values are assigned outside any tf.function being traced (a Keras train step builds
    the model inside its trace): a restore is no step of the graph."""
    if _SETTLING[0]:
        return
    _SETTLING[0] = True
    try:
        with init_scope():
            _settle()
    finally:
        _SETTLING[0] = False
        if not _WAITING and settle in module.CHILD_ADDED:
            module.CHILD_ADDED.remove(settle)


def _settle():
    progress = True
    while progress and _WAITING:
        progress = False
        for key, (ref, items) in list(_WAITING.items()):
            anchor = ref()
            if anchor is None:
                _WAITING.pop(key, None)
                continue
            found, left = [], []
            for item in items:
                child = _child_at(anchor, item[0])
                (left if child is None else found).append((item, child))
            if not found:
                continue
            items[:] = [item for item, _ in left]
            if not items:
                _WAITING.pop(key, None)
            for (path, node_id, matcher), child in found:
                matcher.attach(node_id, child, anchor, path)
            progress = True
