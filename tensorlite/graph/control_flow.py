"""Control flow inside graphs: the ops behind tf.cond, tf.case, tf.switch_case and
tf.while_loop when a tf.function is being traced.

Tracing runs the Python function once on real values, so a data-dependent branch or loop
cannot simply run: its decision would be baked into the graph. Instead each branch (or the
loop's cond and body) is traced into its own sub-Graph and ONE node is recorded, `If`,
`Case` or `While`, whose forward picks the branch (or loops) on the NumPy values each time
the graph runs. Its attributes hold the compiled sub-graphs (`Branch`).

Sub-graph inputs are explicit: the loop variables, then, in the order the branch meets
them, every outer tensor it uses (captured by reference, not frozen as a constant) and the
variables it reads (read by the outer graph just before the node, so that a GradientTape
sees the read). Reads after an assignment inside the branch, and reads of a variable that
a loop assigns, stay inside. Tracing a branch runs it; its assignments are rolled back.

Gradients: the node's rule replays the taken branch (or the whole loop) op by op under a
tape, with variable assignments kept virtual so the replay has no side effects, and returns
the gradients of the operands. Random ops inside a branch draw again in the replay, so their
gradients are those of a fresh draw (a documented limitation).

Nodes whose sub-graphs hold no stateful op are named StatelessIf / StatelessCase /
StatelessWhile (as in TensorFlow); If / Case / While are stateful to the graph passes.
"""
import sys

import numpy as np

from tensorlite.framework import dispatch, nest, variables
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.registry import Spec, declare, register
from tensorlite.framework.tensor import _ON_NUMPY, Tensor, wrap
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.graph import executor, tracing
from tensorlite.graph.ir import ASSIGN_VARIABLE, READ_VARIABLE, Graph, is_stateful
from tensorlite.ops import script_ops
from tensorlite.ops import control_flow_ops
from tensorlite.ops.control_flow_ops import repack_body_output, select_branch

# Control-flow nodes whose branches assign variables or draw random numbers must never be
# folded, merged or removed by the passes. (ir.py owns this set; the lead may move these
# names there.)


# -- tracing a sub-graph -------------------------------------------------------------------------
class SubTracer(tracing.Tracer):
    """Records a branch. Outer tensors it uses become extra placeholders (captures); the
    variables it reads before assigning them become placeholders too (hoisted reads). Its
    ops may use a failed op's stand-ins: the branch fails when it runs, if it runs."""

    USES_DEFERRED = True

    def __init__(self, graph, name, outer, no_hoist=()):
        super().__init__(graph, name)
        self.outer = outer
        self.no_hoist = set(no_hoist)  # ids of variables whose reads stay inside
        self.extra = []  # per captured placeholder: ("tensor", t) or ("read", variable)
        self._read_slot = {}  # id(variable) -> hoisted placeholder slot
        self._assigned = set()
        self.restore = []  # (variable, its value before the branch first assigned it)
        if getattr(outer, "symbolic", None) is not None:  # a polymorphic trace's branch
            self.symbolic = {}

    def slot_for(self, t):
        s = self.slot_of.get(id(t))
        if s is not None:
            return s
        if varies_outside(self.outer, t):
            s = self.add_placeholder(t, shape=static_shape(self.outer, t))
            self.extra.append(("tensor", t))
            return s
        return super().slot_for(t)

    def on_read(self, variable, tensor):
        if id(variable) in self._assigned or id(variable) in self.no_hoist:
            return super().on_read(variable, tensor)
        s = self._read_slot.get(id(variable))
        if s is None:
            s = self._read_slot[id(variable)] = self.graph.new_slot()
            self.graph.placeholders.append(s)
            self.graph.specs[s] = (tuple(tensor._value.shape), tensor._dtype)
            self.extra.append(("read", variable))
        self._bind(tensor, s)
        return None

    def on_assign(self, variable, mode, value):
        if id(variable) not in self._assigned:
            self._assigned.add(id(variable))
            self.restore.append((variable, variable._t))
        return super().on_assign(variable, mode, value)

    def note_assigned(self, assigned_vars):
        """A control-flow node recorded in this branch assigns these variables when it
        runs (now, while this branch is traced): roll them back too, and read them afresh
        in a loop."""
        for variable in assigned_vars:
            if id(variable) not in self._assigned:
                self._assigned.add(id(variable))
                self.restore.append((variable, variable._t))

    def roll_back(self):
        """Tracing a branch runs it for real; its assignments must not stay (the node
        applies the taken branch's when it runs)."""
        for variable, value in reversed(self.restore):
            variable._t = value

    def on_numpy(self, tensor):
        super().on_numpy(tensor)
        self.outer.on_numpy(tensor)


class _Suspended:
    """Only `tracer` observes ops while a branch is traced: the outer graph, tapes and the
    profiler see the one control-flow node instead."""

    def __init__(self, tracer):
        self.tracer = tracer

    HOOKS = ((variables.READ_HOOKS, tracing._read_hook),
             (variables.ASSIGN_HOOKS, tracing._assign_hook),
             (_ON_NUMPY, tracing._numpy_hook))

    def __enter__(self):
        self.saved = dispatch.OBSERVERS[:], tracing._ACTIVE[:]
        self.saved_hooks = [hooks[:] for hooks, _ in self.HOOKS]
        dispatch.OBSERVERS[:] = [self.tracer]
        tracing._ACTIVE[:] = [self.tracer]
        for hooks, hook in self.HOOKS:  # exactly once, however many traces are open
            hooks[:] = [h for h in hooks if h is not hook] + [hook]
        return self

    def __exit__(self, *exc):
        for (hooks, _), saved in zip(self.HOOKS, self.saved_hooks):
            hooks[:] = saved
        dispatch.OBSERVERS[:], tracing._ACTIVE[:] = self.saved
        return False


def outer_tracer():
    return tracing._ACTIVE[-1] if tracing._ACTIVE else None


def static_shape(tracer, t):
    """`t`'s static shape in `tracer` or a trace enclosing it (None dims in a polymorphic
    trace); None when none of them computed it."""
    while tracer is not None:
        info = tracer.info(t)
        if info is not None:
            return tuple(info.static_shape.as_list())
        tracer = getattr(tracer, "outer", None)
    return None


def varies_outside(tracer, t):
    """Whether `tracer` or a trace enclosing it (branches nest) computes `t` in its graph,
    rather than holding it as a constant or never having seen it."""
    while tracer is not None:
        s = tracer.slot_of.get(id(t))
        if s is not None:
            return s not in tracer.graph.constants
        tracer = getattr(tracer, "outer", None)
    return False


def is_static(value):
    """True when `value` does not vary between runs of the graph being traced: a Python
    value, or a tensor the traces hold as a constant (or have never seen)."""
    return not isinstance(value, Tensor) or not varies_outside(outer_tracer(), value)


class Traced:
    """A traced sub-graph: `graph`, its `extra` inputs, the Python `structure` of its
    result, the flat output tensors of the trace run (`values`) and the ids of the
    variables it assigns."""

    def __init__(self, graph, extra, structure, values, assigned_vars):
        self.graph, self.extra, self.structure, self.values = graph, extra, structure, values
        self.assigned_vars = assigned_vars
        self.assigned = {id(v) for v in assigned_vars}

    def hoisted(self):
        return {id(obj) for kind, obj in self.extra if kind == "read"}


def trace_sub(fn, args, name, no_hoist=()):
    """Traces `fn(*args)` (args: a list of Tensors, each becoming a placeholder) into a
    sub-graph of the innermost active trace. Reads of the variables in `no_hoist` stay
    inside the sub-graph."""
    outer = outer_tracer()
    graph = Graph()
    graph.name = name
    tracer = SubTracer(graph, name, outer, no_hoist)
    inner = [wrap(a._value) for a in args]  # fresh objects: the outer ids stay the outer's
    for a, t in zip(args, inner):
        tracer.add_placeholder(t, shape=static_shape(outer, a))
    try:
        # Tracing a branch is no run of it: its tf.print and tf.summary act when the node
        # runs the branch (now, for the trace's own call, and on every later call).
        with _Suspended(tracer), script_ops.effects_off():
            result = fn(*inner)
            flat = [_as_tensor(v, name) for v in nest.flatten(result)]
            graph.outputs = [tracer.slot_for(t) for t in flat]
    finally:
        tracer.roll_back()
    graph.symbolic_shapes = tracer.symbolic
    return Traced(graph, tracer.extra, result, flat, [v for v, _ in tracer.restore])


def _note_assignments(traced_list):
    """Tells an enclosing branch trace which variables the node about to run assigns."""
    outer = outer_tracer()
    if isinstance(outer, SubTracer):
        outer.note_assigned([v for tr in traced_list for v in tr.assigned_vars])


def _as_tensor(v, name):
    if getattr(v, "_is_variable", False):
        return v._read()
    if v is None:
        raise TypeError(f"{name} returned None; each branch/loop function must return "
                        f"tensors (or values convertible to tensors)")
    return v if isinstance(v, Tensor) else convert_to_tensor(v)


def operands(traced_list):
    """The union of the extra inputs of several sub-graphs (outer tensors, and variables
    read now, which records their reads in the outer graph), and for each sub-graph the
    positions of its extra placeholders in that union."""
    union, where, positions = [], {}, []
    for tr in traced_list:
        pos = []
        for kind, obj in tr.extra:
            key = (kind, id(obj))
            if key not in where:
                where[key] = len(union)
                union.append(obj._read() if kind == "read" else obj)
            pos.append(where[key])
        positions.append(pos)
    return union, positions


# -- compiled branches ---------------------------------------------------------------------------
class Branch:
    """A sub-graph ready to run: `index` picks its placeholders' values from the node's
    operand list (after `offset` leading selector inputs)."""

    def __init__(self, traced, index, name):
        self.graph = traced.graph
        self.index = list(index)
        self.name = name
        static = traced.graph.symbolic_shapes or {}  # a polymorphic trace's None dims
        self.out_specs = [Spec(static.get(slot, tuple(t._value.shape)), t._dtype)
                          for slot, t in zip(traced.graph.outputs, traced.values)]
        self._run = None

    @property
    def run(self):
        if self._run is None:
            from tensorlite.graph.passes import optimize  # noqa: PLC0415 - passes import us
            self._run = executor.compile_graph(optimize(self.graph))
        return self._run

    def __call__(self, values):
        return self.run([values[i] for i in self.index])

    def stateful(self):
        return graph_is_stateful(self.graph)

    def __repr__(self):
        return f"<{self.name}: {len(self.graph.nodes)} nodes>"


def graph_is_stateful(graph):
    for node in graph.nodes:
        if is_stateful(node.op):
            return True
        for v in node.attrs.values():
            for b in (v if isinstance(v, tuple) else (v,)):
                if isinstance(b, Branch) and b.stateful():
                    return True
    return False


def merge_specs(spec_lists):
    """Output specs of several branches: a dimension they disagree on is None."""
    out = []
    for specs in zip(*spec_lists):
        shapes = {len(s.shape) for s in specs}
        if len(shapes) > 1:
            out.append(Spec(None, specs[0].dtype))
            continue
        dims = tuple(d if all(s.shape[i] == d for s in specs) else None
                     for i, d in enumerate(specs[0].shape))
        out.append(Spec(dims, specs[0].dtype))
    return out


# -- the ops -------------------------------------------------------------------------------------
def _unobserved(forward):
    """While a trace records the node, the variable reads and assignments its branches
    make when it runs belong to the node, not to the trace."""
    def run(*inputs, **attrs):
        if not tracing._ACTIVE:
            return forward(*inputs, **attrs)
        saved = tracing._ACTIVE[:]
        tracing._ACTIVE.clear()
        try:
            return forward(*inputs, **attrs)
        finally:
            tracing._ACTIVE[:] = saved
    run.__name__ = forward.__name__
    return run


@_unobserved
def _if_forward(pred, *values, branches):
    return tuple(branches[0 if pred else 1](values))


@_unobserved
def _case_forward(*inputs, branches, n_selectors, mode, exclusive=False):
    k = select_branch([np.asarray(v) for v in inputs[:n_selectors]], mode, len(branches),
                      exclusive)
    return tuple(branches[k](inputs[n_selectors:]))


@_unobserved
def _while_forward(*inputs, cond, body, n_vars, has_limit):
    limit = int(inputs[0]) if has_limit else None
    inputs = inputs[1:] if has_limit else inputs
    loop, rest = list(inputs[:n_vars]), list(inputs[n_vars:])
    i = 0
    while (limit is None or i < limit) and bool(cond(loop + rest)[0]):
        loop = body(loop + rest)
        i += 1
    return tuple(loop)


def _if_shape(*specs, branches):
    return merge_specs([b.out_specs for b in branches])


def _case_shape(*specs, branches, **_):
    return merge_specs([b.out_specs for b in branches])


def _while_shape(*specs, cond, body, n_vars, has_limit):
    return list(body.out_specs)


def _if_grad(gs, outs, pred, *values, branches):
    branch = branches[0 if bool(pred._value) else 1]
    return (None,) + replay_gradients(lambda vals: replay_branch(branch, vals, {}), values,
                                      outs, gs)


def _case_grad(gs, outs, *inputs, branches, n_selectors, mode, exclusive=False):
    k = select_branch([t._value for t in inputs[:n_selectors]], mode, len(branches),
                      exclusive)
    values = inputs[n_selectors:]
    return (None,) * n_selectors + replay_gradients(
        lambda vals: replay_branch(branches[k], vals, {}), values, outs, gs)


def _while_grad(gs, outs, *inputs, cond, body, n_vars, has_limit):
    head = 1 if has_limit else 0
    limit = int(inputs[0]._value) if has_limit else None
    values = inputs[head:]
    return (None,) * head + replay_gradients(
        lambda vals: replay_loop(cond, body, vals, n_vars, limit, {}), values, outs, gs)


def _register(name, fwd, grad, shape, effects=None):
    # No exporter writes control flow yet: TF's functional If/Case/While need FunctionDefs
    # of the branches; vectorized_map runs them per example (no batch rule)
    return register(name, fwd, grad=grad, shape=shape, multi_output=True, effects=effects,
                    unsupported="tf onnx tflite batch tf_import")


# the stateful forms: their branches or body hold stateful nodes
IF = _register("If", _if_forward, _if_grad, _if_shape, "state")
STATELESS_IF = _register("StatelessIf", _if_forward, _if_grad, _if_shape)
CASE = _register("Case", _case_forward, _case_grad, _case_shape, "state")
STATELESS_CASE = _register("StatelessCase", _case_forward, _case_grad, _case_shape)
WHILE = _register("While", _while_forward, _while_grad, _while_shape, "state")
# a loop would run at optimisation time for as long as it takes: never constant-folded
STATELESS_WHILE = declare(_register("StatelessWhile", _while_forward, _while_grad,
                                    _while_shape), fold=False)


# -- replay (gradients) --------------------------------------------------------------------------
def replay_gradients(run, values, outs, gs):
    """Gradients of the node's operands: re-run it eagerly under a tape, then push the
    output cotangents `gs` back."""
    from tensorlite.autodiff.tape import GradientTape  # noqa: PLC0415 - autodiff sits below
    # One tensor may fill several operand slots (a loop variable also captured by the
    # body): its gradient, summed over all its uses, goes to its first slot only.
    first = {}
    diff = [first.setdefault(id(v), i) for i, v in enumerate(values)
            if v._dtype.is_differentiable and id(v) not in first]
    with GradientTape(watch_accessed_variables=False) as tape, script_ops.effects_off():
        for i in diff:
            tape.watch(values[i])
        results = run(list(values))  # a replay: tf.print and tf.summary acted already
    pairs = [(r, g) for r, o, g in zip(results, outs, gs)
             if g is not None and o._dtype.is_differentiable]
    if not pairs or not diff:
        return (None,) * len(values)
    grads = tape.gradient([r for r, _ in pairs], [values[i] for i in diff],
                          output_gradients=[g for _, g in pairs])
    out = [None] * len(values)
    for i, g in zip(diff, grads):
        out[i] = g
    return tuple(out)


def replay_branch(branch, values, virtual):
    return replay(branch.graph, [values[i] for i in branch.index], virtual)


def replay_loop(cond, body, values, n_vars, limit, virtual):
    loop, rest = list(values[:n_vars]), list(values[n_vars:])
    i = 0
    while (limit is None or i < limit) and \
            bool(replay_branch(cond, loop + rest, virtual)[0]._value):
        loop = replay_branch(body, loop + rest, virtual)
        i += 1
    return loop


def replay(graph, args, virtual):
    """Runs a sub-graph op by op through eager dispatch (a tape records it), like
    executor.interpret, but assignments only update `virtual` (id(variable) -> value) and
    nested control flow is replayed inline."""
    from tensorlite.ops import math_ops  # noqa: PLC0415
    values = dict(zip(graph.placeholders, args))
    for s, v in graph.constants.items():
        values[s] = wrap(v)
    for node in graph.nodes:
        ins = [values[s] for s in node.inputs]
        if node.op is READ_VARIABLE:
            var = node.attrs["variable"]
            out = virtual[id(var)] if id(var) in virtual else var._read()
        elif node.op is ASSIGN_VARIABLE:
            var = node.attrs["variable"]
            old = virtual[id(var)] if id(var) in virtual else var._read()
            mode = node.attrs["mode"]
            out = ins[0] if mode == "set" else (
                math_ops.add(old, ins[0]) if mode == "add" else math_ops.subtract(old, ins[0]))
            virtual[id(var)] = out
        elif node.op is IF or node.op is STATELESS_IF:
            branch = node.attrs["branches"][0 if bool(ins[0]._value) else 1]
            out = tuple(replay_branch(branch, ins[1:], virtual))
        elif node.op is CASE or node.op is STATELESS_CASE:
            n = node.attrs["n_selectors"]
            k = select_branch([t._value for t in ins[:n]], node.attrs["mode"],
                              len(node.attrs["branches"]), node.attrs.get("exclusive", False))
            out = tuple(replay_branch(node.attrs["branches"][k], ins[n:], virtual))
        elif node.op is WHILE or node.op is STATELESS_WHILE:
            a = node.attrs
            limit = int(ins[0]._value) if a["has_limit"] else None
            rest = ins[1:] if a["has_limit"] else ins
            out = tuple(replay_loop(a["cond"], a["body"], rest, a["n_vars"], limit, virtual))
        else:
            out = dispatch.execute(node.op, tuple(ins), node.attrs)
        outs = out if isinstance(out, tuple) else (out,)
        for s, o in zip(node.outputs, outs):
            values[s] = o
    return [values[s] for s in graph.output_slots()]


# -- building the nodes --------------------------------------------------------------------------
def build_cond(pred, true_fn, false_fn, name):
    """Records an If node for tf.cond; returns the result in true_fn's structure."""
    t = trace_sub(lambda: true_fn(), [], f"{name}_true")
    f = trace_sub(lambda: false_fn(), [], f"{name}_false")
    check_branches([t, f], ["true_fn", "false_fn"], "cond")
    values, (ti, fi) = operands([t, f])
    branches = (Branch(t, ti, f"{name}_true"), Branch(f, fi, f"{name}_false"))
    stateful = any(b.stateful() for b in branches)
    op = IF if stateful else STATELESS_IF
    _note_assignments([t, f])
    outs = dispatch.execute(op, (pred,) + tuple(values), {"branches": branches})
    return nest.pack_like(t.structure, list(outs))


def build_case(selectors, fns, mode, exclusive, name, labels):
    """Records a Case node: branch k runs when select_branch(...) picks k (last: default)."""
    traced = [trace_sub(lambda fn=fn: fn(), [], f"{name}_branch{k}") for k, fn in
              enumerate(fns)]
    check_branches(traced, labels, "case")
    values, positions = operands(traced)
    branches = tuple(Branch(tr, pos, f"{name}_branch{k}")
                     for k, (tr, pos) in enumerate(zip(traced, positions)))
    op = CASE if any(b.stateful() for b in branches) else STATELESS_CASE
    _note_assignments(traced)
    attrs = {"branches": branches, "n_selectors": len(selectors), "mode": mode,
             "exclusive": bool(exclusive)}
    outs = dispatch.execute(op, tuple(selectors) + tuple(values), attrs)
    return nest.pack_like(traced[0].structure, list(outs))


def check_branches(traced, labels, what):
    first = traced[0]
    for tr, label in zip(traced[1:], labels[1:]):
        if not same_structure(first.structure, tr.structure):
            raise ValueError(f"{what}: {labels[0]} and {label} must return the same nested "
                             f"structure; got {_shape_of(first.structure)} and "
                             f"{_shape_of(tr.structure)}")
        for i, (a, b) in enumerate(zip(first.values, tr.values)):
            if a._dtype is not b._dtype:
                raise TypeError(f"{what}: output {i} of {labels[0]} has dtype {a.dtype.name} "
                                f"but output {i} of {label} has dtype {b.dtype.name}; both "
                                f"branches must return the same dtypes (use tf.cast)")


def build_while(cond, body, loop_vars, flat, limit, shape_invariants, name):
    """Records a While node; `flat` are the loop variables as tensors, `loop_vars` their
    structure (cond and body take them unpacked)."""
    def call(fn):
        return lambda *ts: fn(*_unpack(loop_vars, list(ts)))

    def trace_both(no_hoist=()):
        c = trace_sub(call(cond), flat, f"{name}_cond", no_hoist)
        b = trace_sub(lambda *ts: repack_body_output(loop_vars, call(body)(*ts)), flat,
                      f"{name}_body", no_hoist)
        return c, b
    c, b = trace_both()
    assigned = c.assigned | b.assigned
    if assigned & (c.hoisted() | b.hoisted()):
        # a variable the loop assigns must be read afresh in every iteration
        c, b = trace_both(assigned)
    if len(c.values) != 1 or not c.values[0]._dtype.is_bool or c.values[0]._value.ndim:
        raise TypeError(f"while_loop: cond must return a scalar boolean tensor, got "
                        f"{[f'{v.dtype.name}{list(v.shape)}' for v in c.values]}")
    packed = b.structure
    if not same_structure(_wrap_single(loop_vars), _wrap_single(packed)):
        raise ValueError(f"while_loop: body must return the same structure as loop_vars; "
                         f"got {_shape_of(packed)} for loop_vars {_shape_of(loop_vars)}")
    check_loop_vars(flat, b.values, shape_invariants)
    n = len(flat)
    extra, (ci, bi) = operands([c, b])
    cond_b = Branch(c, list(range(n)) + [n + i for i in ci], f"{name}_cond")
    body_b = Branch(b, list(range(n)) + [n + i for i in bi], f"{name}_body")
    outer = outer_tracer()
    body_b.out_specs = merge_specs([
        [Spec(static_shape(outer, t) or tuple(t._value.shape), t._dtype) for t in flat],
        body_b.out_specs])
    stateful = cond_b.stateful() or body_b.stateful()
    op = WHILE if stateful else STATELESS_WHILE
    head = () if limit is None else (limit,)
    _note_assignments([c, b])
    outs = dispatch.execute(op, head + tuple(flat) + tuple(extra),
                            {"cond": cond_b, "body": body_b, "n_vars": n,
                             "has_limit": limit is not None})
    return _unpack(loop_vars, list(outs))


def check_loop_vars(before, after, shape_invariants):
    invariants = [None] * len(before) if shape_invariants is None else \
        nest.flatten(shape_invariants)
    for i, (a, b) in enumerate(zip(before, after)):
        if a._dtype is not b._dtype:
            raise TypeError(f"while_loop: loop variable {i} has dtype {a.dtype.name} before "
                            f"the loop but dtype {b.dtype.name} after one iteration; keep its "
                            f"dtype (use tf.cast in the body)")
        inv = invariants[i] if i < len(invariants) else None
        allowed = TensorShape(a._value.shape) if inv is None else TensorShape(inv)
        for shape in (a._value.shape, b._value.shape):
            if not allowed.is_compatible_with(shape):
                raise ValueError(
                    f"while_loop: loop variable {i} enters the loop with shape "
                    f"{list(a._value.shape)}, but has shape {list(b._value.shape)} after one "
                    f"iteration (allowed: {allowed}). To allow the shape to vary across "
                    f"iterations, use the `shape_invariants` argument of tf.while_loop to "
                    f"specify a less-specific shape.")


# -- structures ----------------------------------------------------------------------------------
def _wrap_single(x):
    return x if isinstance(x, (list, tuple, dict)) else [x]


def _unpack(loop_vars, flat):
    if isinstance(loop_vars, (list, tuple, dict)):
        return nest.pack_like(loop_vars, flat)
    return flat[0]


def same_structure(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b) and \
            all(same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and \
            len(a) == len(b) and all(same_structure(x, y) for x, y in zip(a, b))
    return True


def _shape_of(x):
    return repr(nest.map_structure(lambda _: ".", x)).replace("'", "")


# -- installed in the ops layer ------------------------------------------------------------------
is_tracing = tracing.is_tracing
control_flow_ops.GRAPH[:] = [sys.modules[__name__]]
