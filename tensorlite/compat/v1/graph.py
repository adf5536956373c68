"""`tf.compat.v1.Graph`: the program TF 1.x code builds, with its collections and names.

A Graph wraps the IR of tensorlite/graph/ir.py and a tracer of tensorlite/graph/tracing.py.
While graph mode is on, every op also runs on stand-in values (a placeholder holds zeros of
its shape) and the tracer writes it down, so the user's Python runs once, as in TF 1.x, and
`Session.run` later evaluates the part of the program a fetch needs. Collections
(`GraphKeys`), unique op names and the variable-scope stack live here, one set per graph.

Example:
    >>> g = tf.compat.v1.Graph()
    >>> with g.as_default():
    ...     x = tf.compat.v1.placeholder(tf.float32, shape=[2])
    >>> x.name
    'Placeholder:0'
"""
import contextlib
import re
import weakref

from tensorlite.framework import tensor as _tensor
from tensorlite.framework.registry import Spec
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.user_frame import user_location
from tensorlite.graph import ir
from tensorlite.graph.tracing import Tracer

# Every tensor some graph computed (placeholder, op output, variable read), by id. A tensor
# listed here but unknown to a session's graph belongs to another graph: that is an error,
# not a constant (its value is only a stand-in).
_RECORDED = weakref.WeakValueDictionary()
_OWNER = weakref.WeakValueDictionary()  # id(tensor) -> the Graph that computed it


class _TensorInfo:
    """What a TF1 graph tensor knows symbolically: its graph, op, name and static shape
    (None where the registry's shape rules cannot tell: a placeholder's None dimension)."""

    __slots__ = ("graph", "op", "name", "shape")

    def __init__(self, graph, op, name, spec):
        self.graph, self.op, self.name = graph, op, name
        self.shape = TensorShape(None if spec.shape is None else list(spec.shape))


class GraphOperation:
    """`tf.Operation` of a TF1 graph: name, type, inputs, outputs."""

    def __init__(self, name, type_name, graph, inputs, outputs):
        self.name, self.type, self.graph = name, type_name, graph
        self.inputs, self.outputs = inputs, outputs

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"


def _infer(op, specs, attrs, outs):
    """Output Specs by the op's registry shape rule; the real stand-in shapes when all
    inputs are fully known; unknown rank when the rule cannot tell."""
    if all(sp.shape is not None and None not in sp.shape for sp in specs):
        return [Spec(tuple(o._value.shape), o._dtype) for o in outs]
    try:
        out = op.infer(*specs, **(attrs or {}))
        return list(out) if op.multi_output else [out]
    except Exception:  # noqa: BLE001 - no rule for partly known shapes: say unknown
        return [Spec(None, o._dtype) for o in outs]


def _tensor_info(t):
    graph = _OWNER.get(id(t))
    if graph is None or _RECORDED.get(id(t)) is not t:
        return None
    return graph._tracer.info.get(id(t))


if _tensor_info not in _tensor.GRAPH_TENSOR_INFO:
    _tensor.GRAPH_TENSOR_INFO.append(_tensor_info)


class GraphKeys:
    """`tf.compat.v1.GraphKeys`: the standard collection names."""

    GLOBAL_VARIABLES = "variables"
    VARIABLES = GLOBAL_VARIABLES
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    LOSSES = "losses"
    UPDATE_OPS = "update_ops"
    SUMMARIES = "summaries"
    GLOBAL_STEP = "global_step"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"


class _GraphTracer(Tracer):
    """The tf.function tracer, told that its inputs are placeholders of a v1 graph."""

    def __init__(self, graph_ir, owner):
        super().__init__(graph_ir, "graph")
        self.last_assign = None  # the newest AssignVariableOp node (for tf.compat.v1.assign)
        self.owner = weakref.ref(owner)
        self.static = {}  # slot -> Spec inferred by the registry's shape rules
        self.info = {}  # id(tensor) -> _TensorInfo
        self.operations = []  # GraphOperation, in creation order

    def _check_open(self):
        if self.owner()._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def _add_op(self, type_name, inputs, outputs, name=None):
        graph = self.owner()
        op = GraphOperation(name or graph.unique_name(type_name), type_name, graph, inputs,
                            outputs)
        self.operations.append(op)
        for i, o in enumerate(outputs):
            _RECORDED[id(o)] = o
            _OWNER[id(o)] = graph
            s = self.slot_of[id(o)]
            self.info[id(o)] = _TensorInfo(graph, op, f"{op.name}:{i}", self._spec(s, o))
        return op

    def _spec(self, slot, tensor):
        spec = self.static.get(slot)
        if spec is None:
            declared = getattr(tensor, "_declared", None)
            shape = tuple(declared.as_list()) if declared is not None and \
                declared.rank is not None else tuple(tensor._value.shape)
            spec = self.static[slot] = Spec(shape, tensor._dtype)
        return spec

    def add_placeholder(self, t):
        self._check_open()
        s = super().add_placeholder(t)
        self._add_op("Placeholder", [], [t], name=getattr(t, "_op_name", None))
        return s

    def record(self, op, inputs, attrs, outputs):
        if self.ignores():
            return
        self._check_open()
        super().record(op, inputs, attrs, outputs)
        outs = outputs if type(outputs) is tuple else (outputs,)
        specs = [self._spec(self.slot_for(t), t) for t in inputs]
        inferred = _infer(op, specs, attrs, outs)
        for o, spec in zip(outs, inferred):
            self.static[self.slot_of[id(o)]] = spec
        self._add_op(op.name, list(inputs), list(outs))

    def on_constant(self, tensor, name):
        """tf.constant in graph mode: a Const op of the graph, named as the user asked."""
        if self.ignores():
            return
        self._check_open()
        self.slot_for(tensor)
        self._add_op("Const", [], [tensor], name=name)

    def on_read(self, variable, tensor):
        if self.ignores():
            return
        super().on_read(variable, tensor)
        self._add_op("ReadVariableOp", [], [tensor])

    def on_assign(self, variable, mode, value):
        self._check_open()
        super().on_assign(variable, mode, value)
        self.last_assign = self.graph.nodes[-1]

    def on_numpy(self, tensor):
        s = self.slot_of.get(id(tensor))
        if s is not None and s in self.dependent:
            raise TypeError(
                f"A tensor computed from a placeholder has no value while the graph is being "
                f"built (graph mode: tf.compat.v1.disable_eager_execution), but it was used "
                f"as a Python value (.numpy(), bool(), float(), int() or NumPy) at "
                f"{user_location(3)}. Fetch it with Session.run instead, and use tf.cond / "
                f"tf.where in place of a Python `if` on it")


class Graph:
    """`tf.compat.v1.Graph`: recorded ops, placeholders, collections and names."""

    def __init__(self):
        self._ir = ir.Graph()
        self._ir.name = "v1_graph"
        self._finalized = False
        self._tracer = _GraphTracer(self._ir, self)
        self._collections = {}
        self._used_names = {}
        self._by_name = {}  # op name -> placeholder, variable or Operation
        self._names_of = {}  # id(tensor) -> (tensor, op name): names of unnamed tensors
        self._placeholders = {}  # slot -> PlaceholderTensor
        self._var_store = {}  # get_variable's full name -> (variable, where it was made)
        self._var_scopes = []  # the variable_scope stack (variable_scope.py fills it)
        self._var_scope_counts = {}
        self._producer = {}  # slot -> index of the node computing it
        self._producer_upto = 0

    # -- default graph -------------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        """Makes this the graph ops record into (graph mode inside the block)."""
        from tensorlite.compat.v1 import graph_mode  # noqa: PLC0415 - graph_mode imports us
        _STACK.append(self)
        graph_mode.sync()
        try:
            yield self
        finally:
            _STACK.remove(self)
            graph_mode.sync()

    # -- names ---------------------------------------------------------------------------
    def unique_name(self, name, mark_as_used=True):
        """`name`, or `name_1`, `name_2`, ... when taken (compared case-insensitively)."""
        key = name.lower()
        i = self._used_names.get(key, 0)
        if i == 0:
            if mark_as_used:
                self._used_names[key] = 1
            return name
        while f"{key}_{i}" in self._used_names:
            i += 1
        if mark_as_used:
            self._used_names[key] = i + 1
            self._used_names[f"{key}_{i}"] = 1
        return f"{name}_{i}"

    def _register_name(self, name, obj):
        self._by_name[name] = obj

    def _set_tensor_name(self, tensor, name):
        self._names_of[id(tensor)] = (tensor, name)

    def _item_name(self, item):
        entry = self._names_of.get(id(item))
        if entry is not None and entry[0] is item:
            return entry[1]
        try:
            return item.name
        except AttributeError:  # eager tensors have no name
            return None

    def get_tensor_by_name(self, name):
        """The placeholder or variable called `name` ("x:0" or "x")."""
        obj = self._by_name.get(name[:-2] if name.endswith(":0") else name)
        if obj is None:
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist in "
                           f"this graph. Known names: {sorted(self._by_name)[:20]}")
        return obj

    def get_operations(self):
        """`Graph.get_operations`: the graph's operations in creation order."""
        return list(self._tracer.operations)

    def get_operation_by_name(self, name):
        """`Graph.get_operation_by_name`: the operation called `name`."""
        for op in self._tracer.operations:
            if op.name == name:
                return op
        obj = self._by_name.get(name)
        if isinstance(obj, Operation):
            return obj
        raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")

    def finalize(self):
        """`Graph.finalize`: no op may be added any more (RuntimeError if one is)."""
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    # -- collections ---------------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in [names] if isinstance(names, str) else set(names):
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        """A copy of collection `name`; with `scope`, only items whose name matches it
        from the start (items without a name are left out)."""
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        regex = re.compile(scope)
        return [x for x in items if (n := self._item_name(x)) is not None and regex.match(n)]

    def get_all_collection_keys(self):
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # -- the recorded program ------------------------------------------------------------
    def _slot(self, tensor):
        """The slot computing `tensor` in this graph; None for a tensor made outside any
        op (a constant); ValueError for a tensor of another graph."""
        s = self._tracer.slot_of.get(id(tensor))
        if s is None and _RECORDED.get(id(tensor)) is tensor:
            raise ValueError(f"Tensor {_describe(tensor)} is not an element of this graph "
                             f"(it was built in another graph, e.g. before "
                             f"tf.compat.v1.reset_default_graph()); build it again in this "
                             f"graph")
        return s

    def _producers(self):
        nodes = self._ir.nodes
        for k in range(self._producer_upto, len(nodes)):
            for s in nodes[k].outputs:
                self._producer[s] = k
        self._producer_upto = len(nodes)
        return self._producer

    def as_graph_def(self, add_shapes=False):
        """A GraphDef-like text of the recorded program."""
        return self._ir.as_graph_def()

    def pretty_printed(self):
        return self._ir.pretty_printed()

    def __repr__(self):
        return f"<tensorlite.compat.v1.Graph with {len(self._ir.nodes)} ops>"


def _describe(t):
    return f"{t._dtype.name}{list(t._value.shape)}"


_DEFAULT = [None]
_STACK = []  # graphs made default by Graph.as_default(), innermost last


def get_default_graph():
    """`tf.compat.v1.get_default_graph`: the graph ops record into now."""
    if _STACK:
        return _STACK[-1]
    if _DEFAULT[0] is None:
        _DEFAULT[0] = Graph()
    return _DEFAULT[0]


def reset_default_graph():
    """`tf.compat.v1.reset_default_graph`: a fresh, empty global default graph."""
    if _STACK:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If "
                             "you need a cleared graph, exit the nesting and create a new "
                             "graph.")
    _DEFAULT[0] = Graph()


def get_collection(key, scope=None):
    """`tf.compat.v1.get_collection`."""
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    """`tf.compat.v1.get_collection_ref`."""
    return get_default_graph().get_collection_ref(key)


def add_to_collection(name, value):
    """`tf.compat.v1.add_to_collection`."""
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    """`tf.compat.v1.add_to_collections`."""
    get_default_graph().add_to_collections(names, value)


class Operation:
    """A graph operation run for its effect (an initializer); `Session.run` gives None."""

    def __init__(self, name, fn, graph, type_name="NoOp"):
        self.name = name
        self.type = type_name
        self.graph = graph
        self._fn = fn  # fn(session, feeds)

    def run(self, feed_dict=None, session=None):
        """Runs this operation in `session` (default: the session of the `with` block)."""
        from tensorlite.compat.v1.session import default_session_for  # noqa: PLC0415
        default_session_for(session, self.name).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"
