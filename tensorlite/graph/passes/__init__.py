"""Graph optimisation passes (Grappler-style) and the pipeline that runs them.

Each pass is a module with one function `run(graph) -> (new_graph, report_lines)`: it never
changes its input graph, and `report_lines` holds one line per change, `"<verb> <what>"`
(e.g. `"folded Mul"`), so an empty list means "nothing to do". `optimize(graph)` runs the
enabled passes (switches in tensorlite/graph/options.py) in rounds until none changes
anything, then fuses layers' ops into kernels (a convolution with its bias add and ReLU),
fuses elementwise chains, moves heavy nodes that only feed the outputs onto a helper
thread and, when asked, wraps independent branches for threads. With the `report` option
it prints one line per pass:

    >>> tf.config.optimizer.set_experimental_options({"report": True})
    >>> f(x)  # the second call builds the optimised runner
    graph f: 14 -> 4 nodes in 2 rounds
      constant_folding: folded 3 nodes (Mul, AddV2, Exp)
      ...

Rules every pass keeps: stateful nodes (`ir.is_stateful`: variable reads and writes, random
draws) are never folded, merged or removed, and no node moves across an assignment or a
random draw (`barrier`); a slot id names the same value before and after every pass (passes
only forward uses of a slot to another slot holding the same value), which is why inferred
specs can be shared along the pipeline.
"""
import numpy as np

from tensorlite.framework import dtypes, nest
from tensorlite.framework.registry import Spec
from tensorlite.graph import options
from tensorlite.graph.ir import ASSIGN_VARIABLE, READ_VARIABLE, Graph, is_stateful

MAX_ROUNDS = 8
# Passes run in rounds until none changes anything: simplifying exposes constants, folding
# exposes duplicates, merging leaves dead code.
SIMPLIFY = [("arithmetic", "arithmetic_optimization"),
            ("constant_folding", "constant_folding"),
            ("fold_batch_norm", "constant_folding"),
            ("cse", "common_subexpression_elimination"),
            ("dce", "dependency_optimization")]
# Run once at the end: they build coarse nodes that the simplifying passes do not look into.
FINAL = [("kernel_fusion", "remapping"), ("fusion", "remapping"),
         ("overlap_outputs", "remapping"), ("parallel", "parallel_branches")]
NOUNS = {"fused": ("chain", "chains"), "wrapped": ("branch", "branches"),
         "overlapped": ("node", "nodes")}
COUNTERS = {}  # pass name -> changes made since the process started (all graphs)


# -- helpers shared by the passes ----------------------------------------------------------
def stateful(node):
    """A node no pass may fold, merge, remove or move: state, random draws (also any op
    that carries a random generator as an attribute, whatever its name)."""
    if is_stateful(node.op):
        return True
    return any(isinstance(v, (np.random.Generator, np.random.RandomState))
               for v in node.attrs.values())


def barrier(node):
    """A stateful node that acts (an assignment, a random draw): nothing moves across it.
    Variable reads are stateful too but only observe, so pure nodes may move past them
    (values are never changed in place: an assignment stores a new array)."""
    return stateful(node) and node.op is not READ_VARIABLE


def resolve(mapping, slot):
    """Follows slot forwarding (x*1 -> x, a duplicate -> its first copy) to the end."""
    while slot in mapping:
        slot = mapping[slot]
    return slot


def derive(graph, nodes, mapping=None, constants=None):
    """A new Graph like `graph` with these nodes (and constants), its outputs forwarded
    through `mapping`."""
    g = Graph()
    g.placeholders = list(graph.placeholders)
    g.specs = dict(graph.specs)
    g.constants = dict(graph.constants) if constants is None else constants
    g.variables = dict(graph.variables)
    g.nodes = list(nodes)
    g.outputs = graph.outputs
    if mapping:
        g.outputs = nest.map_structure(
            lambda s: resolve(mapping, s) if isinstance(s, int) else s, graph.outputs,
            expand_composites=True)
    g.n_slots = graph.n_slots
    g.name = graph.name
    g.input_names = dict(getattr(graph, "input_names", {}))
    cache = getattr(graph, "slot_specs", None)
    g.slot_specs = {} if cache is None else cache
    return g


def known(spec):
    """True when a Spec's shape is fully known (no None dimensions)."""
    return spec is not None and spec.shape is not None and \
        all(isinstance(d, (int, np.integer)) for d in spec.shape)


def size(spec):
    return int(np.prod(spec.shape)) if known(spec) else 0


def const_spec(value):
    a = np.asarray(value)
    try:
        return Spec(tuple(a.shape), dtypes.as_dtype(a.dtype))
    except (TypeError, ValueError, KeyError):
        return None


class Specs:
    """The Spec (shape, dtype) of every slot, inferred lazily with the ops' shape rules from
    the placeholder specs and the constants; None where unknown. Stateful nodes are never
    evaluated (a shape rule by evaluation would draw random numbers or assign)."""

    def __init__(self, graph):
        cache = getattr(graph, "slot_specs", None)
        self.known = cache if cache is not None else {}
        for s, (shape, dtype) in graph.specs.items():
            self.known.setdefault(s, Spec(tuple(shape), dtype))
        for s, v in graph.constants.items():
            self.known.setdefault(s, const_spec(v))
        self.producer = {o: n for n in graph.nodes for o in n.outputs}

    def __getitem__(self, slot):
        stack = [slot]
        while stack:  # iterative: long graphs would overflow Python's recursion limit
            s = stack[-1]
            if s in self.known:
                stack.pop()
                continue
            node = self.producer.get(s)
            missing = [] if node is None else [i for i in node.inputs if i not in self.known]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            if node is None:
                self.known[s] = None
            else:
                for o, spec in zip(node.outputs, self._infer(node)):
                    self.known[o] = spec
        return self.known[slot]

    def _infer(self, node):
        n = len(node.outputs)
        if node.op is READ_VARIABLE or node.op is ASSIGN_VARIABLE:
            return [_variable_spec(node.attrs["variable"])] * n
        if stateful(node) and node.op.shape_fn is None:
            return [None] * n
        specs = [self.known[i] for i in node.inputs]
        if any(s is None for s in specs):
            return [None] * n
        try:
            out = node.op.infer(*specs, **node.attrs)
        except Exception:  # noqa: BLE001 - an unknown spec only makes passes more careful
            return [None] * n
        outs = list(out) if node.op.multi_output else [out]
        # shape None: unknown rank (a Python callback's output, branches of other ranks)
        return [Spec(None if o.shape is None else tuple(o.shape), o.dtype)
                if o is not None else None for o in outs] + \
            [None] * (n - len(outs))


def _variable_spec(var):
    try:
        shape = var.shape.as_list()
        if None in shape:
            return None
        return Spec(tuple(shape), var.dtype)
    except (AttributeError, ValueError, TypeError):
        return None


# -- the pipeline ----------------------------------------------------------------------------
def _modules():
    from tensorlite.graph.passes import (  # noqa: PLC0415 - the passes import this module
        arithmetic, constant_folding, cse, dce, fold_batch_norm, fusion, kernel_fusion,
        overlap_outputs, parallel)
    return {"arithmetic": arithmetic, "constant_folding": constant_folding,
            "fold_batch_norm": fold_batch_norm, "cse": cse,
            "dce": dce, "kernel_fusion": kernel_fusion, "fusion": fusion,
            "overlap_outputs": overlap_outputs, "parallel": parallel}


def run_pipeline(graph):
    """(optimised graph, {pass name: all its report lines}, rounds). Passes switched off
    have no entry."""
    mods = _modules()
    lines = {}
    graph = derive(graph, graph.nodes)  # a private spec cache for this pipeline
    rounds = 0
    for rounds in range(1, MAX_ROUNDS + 1):
        changed = False
        for name, key in SIMPLIFY:
            if options.enabled(key):
                graph, new = _run(mods[name], name, graph, lines)
                changed = changed or bool(new)
        if not changed:
            break
    for name, key in FINAL:
        if options.enabled(key):
            graph, _ = _run(mods[name], name, graph, lines)
    return graph, lines, rounds


def _run(module, name, graph, lines):
    graph, new = module.run(graph)
    lines.setdefault(name, []).extend(new)
    COUNTERS[name] = COUNTERS.get(name, 0) + len(new)
    return graph, new


def summarize(name, lines):
    """One line: `constant_folding: folded 3 nodes (Mul, AddV2 x2)`."""
    verbs = {}
    for line in lines:
        verb, _, what = line.partition(" ")
        group = verbs.setdefault(verb, {})
        group[what] = group.get(what, 0) + 1
    parts = []
    for verb, whats in verbs.items():
        n = sum(whats.values())
        noun = NOUNS.get(verb, ("node", "nodes"))[n != 1]
        items = ", ".join(w if k == 1 else f"{w} x{k}" for w, k in whats.items())
        parts.append(f"{verb} {n} {noun} ({items})")
    return f"{name}: " + ("; ".join(parts) if parts else "no change")


def report(graph, new_graph, lines, rounds):
    out = [f"graph {graph.name}: {len(graph.nodes)} -> {len(new_graph.nodes)} nodes in "
           f"{rounds} round{'s' if rounds != 1 else ''}"]
    for name, key in SIMPLIFY + FINAL:
        if name in lines:
            out.append("  " + summarize(name, lines[name]))
        else:
            out.append(f"  {name}: off ({key}=False)")
    return out


def optimize(graph):
    """The optimised copy of `graph` (the input is left as it is: the interpreter used under
    a GradientTape runs the original, so fused and parallel nodes need no gradients)."""
    if options.get_experimental_options().get("disable_meta_optimizer"):
        return graph
    new, lines, rounds = run_pipeline(graph)
    new.pass_report = report(graph, new, lines, rounds)
    if options.get_experimental_options().get("report"):
        print("\n".join(new.pass_report))
    return new
