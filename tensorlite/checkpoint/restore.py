"""Restoring a checkpoint into live objects by matching its object graph, as TensorFlow does:
from the root, a saved child and a live child with the same local name are the same object,
whatever path the checkpoint's keys spell. A checkpoint without an object graph (TF1's
name-based ones) is matched by key instead. A saved child with no live counterpart yet is
restored when it appears (checkpoint/deferred.py).

Example:
    >>> status = restore_into(tf.train.Checkpoint(v=v), BundleReader(path))
    >>> status.assert_consumed()
"""
import weakref

import numpy as np

from tensorlite.checkpoint import deferred
from tensorlite.checkpoint import object_graph as og
from tensorlite.framework import errors


_SAVE_COUNTER_KEY = "save_counter/.ATTRIBUTES/VARIABLE_VALUE"


class Status:
    """What a restore matched: `assert_consumed` and friends, as TensorFlow's status. It
    follows deferred restorations: values still waiting for their objects count as not
    restored until those objects appear."""

    def __init__(self, unused_keys=(), unrestored=(), matcher=None):
        self._unused_keys, self._unrestored = sorted(unused_keys), sorted(unrestored)
        self._matcher = matcher

    @property
    def _unused(self):
        if self._matcher is None:
            return self._unused_keys
        return sorted(set(self._matcher.reader.entries) - self._matcher.used)

    def assert_consumed(self):
        """AssertionError unless every saved value was restored and every object got one."""
        unused = self._unused
        if unused or self._unrestored:
            raise AssertionError(f"Unresolved checkpoint values: saved but not restored "
                                 f"{unused}; objects without a saved value "
                                 f"{self._unrestored}")
        return self

    def assert_existing_objects_matched(self):
        """AssertionError if a live object found no saved value."""
        if self._unrestored:
            raise AssertionError(f"objects without a saved value: {self._unrestored}")
        return self

    def assert_nontrivial_match(self):
        return self

    def expect_partial(self):
        """Silences the warning about saved values never restored (as TensorFlow's)."""
        if self._matcher is not None:
            self._matcher.partial_expected = True
        return self

    def run_restore_ops(self, session=None):
        return None


def _value(reader, key):
    value = reader.tensor(key)
    if value.dtype == object and value.shape == ():
        return value.item()  # a scalar string: the bytes themselves
    return value


def assign(obj, values, where):
    """Restores one leaf object from {attribute: value}."""
    if og.is_variable(obj):
        value = np.asarray(values[og.VARIABLE_VALUE])
        if not obj.shape.is_compatible_with(value.shape):
            raise errors.InvalidArgumentError(
                None, None, f"checkpoint value for {where} has shape {list(value.shape)} but "
                f"the variable has shape {obj.shape}; restore into a model of the same "
                f"architecture")
        value = value.astype(obj.dtype.as_numpy_dtype, copy=False)
        if isinstance(values[og.VARIABLE_VALUE], np.ndarray) and hasattr(obj, "_assign_owned"):
            obj._assign_owned(value)  # read from the file just now: nothing else holds it
        else:
            obj.assign(value)
    else:
        obj._restore_from_tensors(values)


def _saved_graph(reader):
    if og.OBJECT_GRAPH_KEY not in reader.entries:
        return None
    from tensorlite.checkpoint.protos import TrackableObjectGraph  # noqa: PLC0415
    proto = TrackableObjectGraph()
    try:
        proto.ParseFromString(_value(reader, og.OBJECT_GRAPH_KEY))
    except Exception:  # noqa: BLE001 - protobuf's DecodeError and its kin
        raise errors.DataLossError(None, None, f"checkpoint {reader.prefix}: its object graph "
                                   f"is not a valid TrackableObjectGraph") from None
    return proto


def restore_into(root, reader):
    """Restores every object reachable from `root` that has a saved value; returns Status."""
    saved = _saved_graph(reader)
    live = og.gather(root)
    if saved is None:
        return _restore_by_key(live, reader)
    return _Matcher(saved, reader).run(live)


def _restore_by_key(live, reader):
    used, unrestored = set(), []
    for node_id, obj in enumerate(live.nodes):
        names = og.attributes(obj)
        keys = {n: live.key(node_id, n) for n in names}
        if not names:
            continue
        if not all(k in reader.entries for k in keys.values()):
            unrestored.append(live.prefix(node_id))
            continue
        assign(obj, {n: _value(reader, k) for n, k in keys.items()}, live.prefix(node_id))
        used.update(keys.values())
    return Status(set(reader.entries) - used - {og.OBJECT_GRAPH_KEY}, unrestored)


def _redundant_children(obj, saved_names):
    """Saved child names that `obj` reaches by other names (a restore does not wait for
    them): an optimizer's `_variables` where the file also has its per-slot lists."""
    method = getattr(obj, "_checkpoint_redundant_children", None)
    return set(method(saved_names)) if method is not None else set()


class _Matcher:
    """Matches a saved object graph to live objects; kept by the restorations that wait
    (checkpoint/deferred.py), so it holds no live object strongly but variables weakly
    (a model dropped before it was built is freed, and its waiting values with it)."""

    def __init__(self, saved, reader):
        self.saved, self.reader = saved, reader
        self.matched = set()  # saved node ids matched to a live object
        self.variables = weakref.WeakValueDictionary()  # of those, the variables'
        self.used = {og.OBJECT_GRAPH_KEY}
        self.partial_expected = False  # Status.expect_partial()
        self._restored = None  # ids of the objects the first walk restored (run only)

    def run(self, live):
        if not self.saved.nodes:
            return Status(set(self.reader.entries) - self.used, [])
        root = live.nodes[0]
        self._restored = set()
        self._match(0, root)
        self._walk([(0, root, root, ())])
        unrestored = [live.prefix(i) for i, o in enumerate(live.nodes)
                      if og.has_values(o) and id(o) not in self._restored]
        self._check_some_match([live.prefix(i) for i, o in enumerate(live.nodes)
                                if og.is_variable(o) and getattr(o, "trainable", False)
                                and id(o) not in self._restored])
        self._restored = None
        return Status(unrestored=unrestored, matcher=self)

    def __del__(self):
        """TensorFlow's warning when a restore ends (its status and every restoration still
        waiting are gone) with saved values never restored, unless expect_partial()."""
        try:
            unused = sorted(set(self.reader.entries) - self.used)
            if unused and not self.partial_expected:
                import logging  # noqa: PLC0415 - only when there is something to say
                log = logging.getLogger("tensorflow")
                log.warning("Detecting that an object or model or tf.train.Checkpoint is being"
                            " deleted with unrestored values. To silence these warnings, use "
                            "`status.expect_partial()`.")
                for key in unused[:20]:
                    log.warning("Value in checkpoint %s could not be found in the restored "
                                "object: %s", self.reader.prefix, key)
        except Exception:  # noqa: BLE001 - at interpreter exit the modules may be gone
            pass

    def _check_some_match(self, waiting):
        """NotFoundError when trainable variables wait for values (a built model: an unbuilt
        one has none yet and is restored as it builds) and the checkpoint has values to give
        but not one matched: a restore that would silently do nothing (another
        architecture, or an object-graph layout not read here). The save counter a
        tf.train.Checkpoint finds in any of its checkpoints does not count."""
        ignore = {_SAVE_COUNTER_KEY, og.OBJECT_GRAPH_KEY}
        given = set(self.reader.entries) - ignore
        if self.used - ignore or not given or not waiting:
            return
        names = sorted(r.local_name for r in self.saved.nodes[0].children)
        raise errors.NotFoundError(
            None, None, f"checkpoint {self.reader.prefix}: none of its {len(given)} values "
            f"matched the objects restored ({len(waiting)} of them wait for values, e.g. "
            f"{waiting[:3]}); the checkpoint's root has children {names} and keys such as "
            f"{sorted(given)[:3]}. Restore into an object of the same structure (for a Keras "
            f"model: the same layers), or read single values with tf.train.load_checkpoint")

    def _match(self, node_id, obj):
        self.matched.add(node_id)
        if og.is_variable(obj):
            self.variables[node_id] = obj
        if self._restored is not None:
            self._restored.add(id(obj))

    def attach(self, node_id, obj, anchor, path):
        """Restores saved node `node_id` (and what hangs below it) into `obj`, a child that
        appeared after the restore at `path` below `anchor`."""
        if node_id in self.matched:
            return
        self._match(node_id, obj)
        self._walk([(node_id, obj) + deferred.anchor_of(obj, anchor, path)])

    def _walk(self, queue):
        """Breadth first from (saved node id, live object, its anchor, path) entries: each
        node's values, then its saved children matched by local name; those not there yet
        are awaited."""
        while queue:
            node_id, obj, anchor, path = queue.pop(0)
            self.restore_node(node_id, obj)
            if hasattr(obj, "_prepare_restore"):
                obj._prepare_restore()
            live_children = dict(og.children(obj))
            refs = self.saved.nodes[node_id].children
            redundant = _redundant_children(obj, [r.local_name for r in refs])
            for ref in refs:
                if not 0 <= ref.node_id < len(self.saved.nodes) or ref.node_id in self.matched:
                    continue
                child = live_children.get(ref.local_name)
                if child is None and ref.local_name in redundant:
                    continue
                if child is None and hasattr(obj, "_create_saved_child"):
                    child = obj._create_saved_child(ref.local_name)
                if child is None:
                    if self._has_values(ref.node_id):
                        deferred.expect(anchor, path + (ref.local_name,), ref.node_id, self)
                    continue
                self._match(ref.node_id, child)
                queue.append((ref.node_id, child) +
                             deferred.anchor_of(child, anchor, path + (ref.local_name,)))

    def _has_values(self, node_id):
        """Whether a saved subtree may hold values: False only where the writer said so
        (Keras 3's bookkeeping nodes `_tracked`, `_inbound_nodes`, ... and InputLayers, which
        nothing here has and nothing need wait for)."""
        node = self.saved.nodes[node_id]
        return not node.HasField("has_checkpoint_values") or node.has_checkpoint_values.value

    def attribute_values(self, attribute):
        """{name: value} of one saved attribute. A saveable of several tensors (a
        MutableHashTable's `table`) is stored under its key plus each tensor's suffix
        (`table-keys`, `table-values`), as TensorFlow writes it."""
        key = attribute.checkpoint_key
        if key in self.reader.entries:
            self.used.add(key)
            return {attribute.name: _value(self.reader, key)}
        parts = {k: k[len(key):] for k in self.reader.entries if k.startswith(key + "-")}
        if not parts:
            _value(self.reader, key)  # the NotFoundError naming the key
        self.used.update(parts)
        return {attribute.name + suffix: _value(self.reader, k) for k, suffix in parts.items()}

    def restore_node(self, node_id, obj):
        node = self.saved.nodes[node_id]
        if node.attributes:
            values = {}
            for a in node.attributes:
                values.update(self.attribute_values(a))
            where = node.attributes[0].checkpoint_key
            if og.is_variable(obj) and og.VARIABLE_VALUE not in values:
                raise errors.InvalidArgumentError(None, None, f"checkpoint {self.reader.prefix}"
                                                  f": {where} is not a variable's value")
            assign(obj, values, where)
        restore_slot = getattr(obj, "_restore_slot_variable", None)
        for ref in node.slot_variables:
            variable = self.variables.get(ref.original_variable_node_id)
            if restore_slot is None or variable is None \
                    or not 0 <= ref.slot_variable_node_id < len(self.saved.nodes):
                continue
            slot = restore_slot(variable, ref.slot_name)
            if slot is not None:
                self._match(ref.slot_variable_node_id, slot)
                self.restore_node(ref.slot_variable_node_id, slot)
