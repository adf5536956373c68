"""Remapping: layout-free fusion of elementwise chains.

A tree of elementwise ops whose intermediate results are used only inside it becomes ONE
node of the op `FusedElementwise`. Its attribute `program` lists the steps `(op name,
input refs, in-place ref)`, refs numbering the node's inputs first, then the steps' results,
and carries a generated Python kernel that calls the NumPy ufuncs directly. A step writes
into the buffer of an intermediate that dies there (`out=`) when shape and dtype match:
`exp(x * y + z)` allocates one array instead of three, saving the allocator and page-fault
cost of temporaries (large in NumPy programs, see docs/design.md), plus one executor step per
fused op. Tiny arrays (under FUSE_MIN elements) are left alone: there the extra call costs
more than it saves.

Gradients: FusedElementwise has none (grad=None). Fused nodes exist only in the optimised
graph run by the compiled executor; under a GradientTape, tf.function interprets the
original, unfused graph (`ConcreteFunction.graph`).
"""
import numpy as np

from tensorlite.framework import registry
from tensorlite.graph.grouping import fusion_groups
from tensorlite.graph.ir import Node
from tensorlite.graph.passes import Specs, barrier, derive, known, size, stateful

# Members: ops that declare a `fuse` rule beside their registration, either a NumPy ufunc
# call template such as "add({0}, {1}{out})" (those may write into a dying intermediate with
# `out=`), or "call" (evaluated by the op's own forward: not a plain ufunc, or it validates
# its input), or (template, "floats") when the forward rejects integers (RealDiv).
# Elements: below these sizes the extra call (or the `out=` keyword) costs more than the
# saved executor steps (or allocations) gain; measured on tiny and 64x64 float32 chains.
FUSE_MIN = 4096
INPLACE_MIN = 4096


class Program(tuple):
    """The steps `(op name, input refs, in-place ref or -1)`: a tuple (hashable and equal
    by content, for CSE and printing) that carries its compiled kernel."""

    def __new__(cls, steps, n_inputs):
        self = super().__new__(cls, steps)
        self.n_inputs = n_inputs
        self.kernel = _compile(self, n_inputs)
        return self

    def __reduce__(self):
        return Program, (tuple(self), self.n_inputs)


def _compile(program, n_inputs):
    """The generated kernel: one line per step, e.g. `v4 = np.add(v3, v2, out=v3)`."""
    env = {}
    lines = [f"def fused({', '.join(f'v{i}' for i in range(n_inputs))}):"]
    for j, (name, refs, inplace) in enumerate(program):
        args = [f"v{r}" for r in refs]
        template = _ufunc_template(registry.get(name))
        if template is not None:
            call = template.format(*args, out=f", out=v{inplace}" if inplace >= 0 else "")
            ufunc = template.split("(")[0]
            env[ufunc] = getattr(np, ufunc)  # a global of the kernel: no `np.` lookups per call
        else:
            env[f"f_{name}"] = registry.get(name).forward
            call = f"f_{name}({', '.join(args)})"
        lines.append(f"    v{n_inputs + j} = {call}")
    lines.append(f"    return v{n_inputs + len(program) - 1}")
    source = "\n".join(lines)
    exec(compile(source, "<tensorlite FusedElementwise>", "exec"), env)  # noqa: S102
    env["fused"].source = source
    return env["fused"]


def _fused_forward(*inputs, program):
    return program.kernel(*inputs)


def _fused_shape(*specs, program):
    values = list(specs)
    for name, refs, _ in program:
        values.append(registry.get(name).infer(*[values[r] for r in refs]))
    return values[-1]


FUSED = registry.REGISTRY.get("FusedElementwise") or registry.register(
    "FusedElementwise", _fused_forward, grad=None, shape=_fused_shape, cost="program",
    unsupported="tf onnx tflite batch tf_import")  # exists only in the optimised graph


def _ufunc_template(op):
    """The op's ufunc call template, or None when it fuses by calling its forward."""
    rule = op.fuse
    if isinstance(rule, tuple):
        rule = rule[0]
    return None if rule is None or rule == "call" else rule


def _fusible(node, specs):
    if node.op.fuse is None or node.attrs or len(node.outputs) != 1 or stateful(node):
        return False
    out = specs[node.outputs[0]]
    if not known(out) or size(out) < FUSE_MIN or not all(known(specs[s]) for s in node.inputs):
        return False
    if out.dtype.is_complex:  # Abs of complex is real: output dtypes differ from inputs'
        return False
    # a rule (template, "floats"): the forward rejects integers (RealDiv), fuse floats only
    return out.dtype.is_floating or isinstance(node.op.fuse, str)


def _groups(graph, specs):
    """Lists of node indices (in graph order) to fuse. Walking backwards, a node joins its
    consumers' group when all its uses are in that one group, it is no graph output, and no
    assignment or random draw lies between it and the group's root."""
    groups = fusion_groups(graph, lambda n: _fusible(n, specs), barrier)
    return [g for g in groups if len(g) > 1]


def _program(members, nodes, specs):
    """(input slots, program) for a group of nodes."""
    produced = {nodes[k].outputs[0] for k in members}
    inputs, ref = [], {}
    for k in members:
        for s in nodes[k].inputs:
            if s not in produced and s not in ref:
                ref[s] = len(inputs)
                inputs.append(s)
    n_in = len(inputs)
    last_use = {}
    for j, k in enumerate(members):
        ref[nodes[k].outputs[0]] = n_in + j
    for j, k in enumerate(members):
        for s in nodes[k].inputs:
            last_use[ref[s]] = j
    steps = []
    owned = set()  # refs holding arrays this kernel allocated (safe to overwrite)
    for j, k in enumerate(members):
        node = nodes[k]
        refs = tuple(ref[s] for s in node.inputs)
        out = specs[node.outputs[0]]
        inplace = -1
        is_ufunc = _ufunc_template(node.op) is not None
        if is_ufunc and len(out.shape) > 0 and size(out) >= INPLACE_MIN:
            for r, s in zip(refs, node.inputs):
                if r in owned and last_use[r] == j and specs[s] == out:
                    inplace = r
                    break
        if is_ufunc:
            owned.add(n_in + j)
        steps.append((node.op.name, refs, inplace))
    return inputs, Program(steps, n_in)


def run(graph):
    """Fuses elementwise trees; one report line `fused <Op>+<Op>+...` per fused node."""
    specs = Specs(graph)
    groups = _groups(graph, specs)
    if not groups:
        return graph, []
    nodes = graph.nodes
    replace, drop, lines = {}, set(), []
    for members in groups:
        inputs, program = _program(members, nodes, specs)
        root = nodes[members[-1]]
        replace[members[-1]] = Node(FUSED, inputs, {"program": program}, root.outputs,
                                    root.where)
        drop.update(members[:-1])
        lines.append("fused " + "+".join(nodes[k].op.name for k in members))
    new_nodes = [replace.get(k, n) for k, n in enumerate(nodes) if k not in drop]
    return derive(graph, new_nodes), lines
