"""The object graph of a checkpoint: which objects hold which saved tensors, by the
attribute names that lead to them, as TensorFlow's TrackableObjectGraph records it.

Objects are found breadth-first from the root; a node's children are, in order:
- what its `_trackable_children()` returns, when it defines that method (Checkpoint, Keras
  layers, models and optimizers name their children as TensorFlow's Keras does:
  `layer_with_weights-0`, `kernel`, `optimizer`, ...);
- otherwise, for a `tf.Module` or any object, its attributes in assignment order that hold
  trackable values (variables, modules, objects with `_serialize_to_tensors`, and lists,
  tuples and dicts of them, which become nodes whose children are named "0", "1", ... or
  by key, as TensorFlow's ListWrapper and DictWrapper do).

A tensor's checkpoint key is the escaped path of local names to its object ("." doubled,
"/" as ".S"), then `/.ATTRIBUTES/` and the attribute (`VARIABLE_VALUE` for a variable).
An optimizer's slot variables are extra nodes named `VAR_PATH/.OPTIMIZER_SLOT/OPT_PATH/SLOT`.

Example:
    >>> g = gather(tf.train.Checkpoint(v=tf.Variable(1.0)))
    >>> [key for key, _ in g.tensors()]
    ['v/.ATTRIBUTES/VARIABLE_VALUE']
"""
import numpy as np

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VARIABLE_VALUE = "VARIABLE_VALUE"


def is_variable(obj):
    return getattr(obj, "_is_variable", False)


def _container(obj):
    return isinstance(obj, (list, tuple, dict))


def _trackable(obj):
    if is_variable(obj) or hasattr(obj, "_serialize_to_tensors") \
            or hasattr(obj, "_trackable_children"):
        return True
    from tensorlite.framework.module import Module  # noqa: PLC0415 - keeps import light
    if isinstance(obj, Module):
        return True
    if _container(obj):
        values = obj.values() if isinstance(obj, dict) else obj
        return any(_trackable(v) for v in values)
    return False


def children(obj):
    """(local name, child) pairs of a trackable object, in TensorFlow's order."""
    if has_values(obj):
        return []
    if hasattr(obj, "_trackable_children"):
        return [(n, c) for n, c in obj._trackable_children() if c is not None]
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items() if _trackable(v)]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj) if _trackable(v)]
    ignored = getattr(obj, "_TF_MODULE_IGNORED_PROPERTIES", ())
    return [(k, v) for k, v in vars(obj).items() if k not in ignored and _trackable(v)]


def escape(name):
    return name.replace(".", "..").replace("/", ".S")


def has_values(obj):
    """Whether an object holds saved tensors itself (a leaf of the graph)."""
    return is_variable(obj) or hasattr(obj, "_serialize_to_tensors")


def attributes(obj):
    """name -> value (array or bytes) of a leaf object's saved tensors."""
    if is_variable(obj):
        return {VARIABLE_VALUE: np.asarray(obj.numpy())}
    if hasattr(obj, "_serialize_to_tensors"):
        return dict(obj._serialize_to_tensors())
    return {}


class Graph:
    """The gathered objects: `nodes` (objects by node id), `paths` (escaped local names),
    `refs` (node id -> [(local name, child id)]), `slots` (optimizer node id ->
    [(variable id, slot name, slot id)])."""

    def __init__(self):
        self.nodes, self.paths, self.refs, self.slots = [], [], [], {}
        self.ids = {}

    def add(self, obj, path):
        self.ids[id(obj)] = len(self.nodes)
        self.nodes.append(obj)
        self.paths.append(path)
        self.refs.append([])
        return len(self.nodes) - 1

    def prefix(self, node_id):
        return "/".join(self.paths[node_id])

    def key(self, node_id, attribute):
        return f"{self.prefix(node_id)}/.ATTRIBUTES/{attribute}"

    def tensors(self):
        """(checkpoint key, value) of every saved tensor."""
        for node_id, obj in enumerate(self.nodes):
            for name, value in attributes(obj).items():
                yield self.key(node_id, name), value

    def proto(self):
        """The TrackableObjectGraph message of these objects."""
        from tensorlite.checkpoint.protos import TrackableObjectGraph  # noqa: PLC0415
        graph = TrackableObjectGraph()
        for node_id, obj in enumerate(self.nodes):
            node = graph.nodes.add()
            for name, child in self.refs[node_id]:
                node.children.add(node_id=child, local_name=name)
            for name in attributes(obj):
                node.attributes.add(name=name, checkpoint_key=self.key(node_id, name),
                                    full_name=_full_name(obj))
            for var_id, slot_name, slot_id in self.slots.get(node_id, ()):
                node.slot_variables.add(original_variable_node_id=var_id,
                                        slot_name=slot_name, slot_variable_node_id=slot_id)
        _mark_values(graph)
        return graph


def _full_name(obj):
    name = getattr(obj, "name", "") if is_variable(obj) else ""
    name = name if isinstance(name, str) else ""
    return name[:-2] if name.endswith(":0") else name


def _mark_values(graph):
    """Sets has_checkpoint_values on nodes with values in their subtree, as TF does."""
    memo = {}

    def has(node_id, stack=()):
        if node_id in memo:
            return memo[node_id]
        if node_id in stack:
            return False
        node = graph.nodes[node_id]
        value = bool(node.attributes) or any(
            has(c.node_id, stack + (node_id,)) for c in node.children) or any(
            has(s.slot_variable_node_id, stack + (node_id,)) for s in node.slot_variables)
        memo[node_id] = value
        return value

    for node_id, node in enumerate(graph.nodes):
        node.has_checkpoint_values.value = has(node_id)


def gather(root):
    """The Graph of everything trackable from `root`, breadth-first as TensorFlow orders
    it, optimizer slot variables last."""
    graph = Graph()
    graph.add(root, [])
    queue = [0]
    while queue:
        node_id = queue.pop(0)
        for name, child in children(graph.nodes[node_id]):
            child_id = graph.ids.get(id(child))
            if child_id is None:
                child_id = graph.add(child, graph.paths[node_id] + [escape(name)])
                queue.append(child_id)
            graph.refs[node_id].append((name, child_id))
    for opt_id, opt in list(enumerate(graph.nodes)):
        for variable, slot_name, slot in _slot_variables(opt):
            var_id = graph.ids.get(id(variable))
            if var_id is None or id(slot) in graph.ids:
                continue
            path = [graph.prefix(var_id), ".OPTIMIZER_SLOT", graph.prefix(opt_id),
                    escape(slot_name)]
            slot_id = graph.add(slot, path)
            graph.slots.setdefault(opt_id, []).append((var_id, slot_name, slot_id))
    return graph


def _slot_variables(obj):
    method = getattr(obj, "_checkpoint_slot_variables", None)
    return method() if method is not None else ()
