"""Runs a Graph with far less Python than eager dispatch.

The graph is compiled once into a straight-line Python function: one local variable per
slot, one direct call of each op's NumPy forward (attributes bound in advance), no tape, no
dtype checks, no wrapping until the end. A static memory plan deletes each intermediate
right after its last use, so dead buffers are freed while the graph runs (the "static memory
plan" of the Google I/O 2018 talk "TensorFlow Lite for mobile developers"). When a
GradientTape is recording, the graph is instead interpreted op by op through eager dispatch,
so the tape records it and gradients flow through.
"""
import functools

import numpy as np

from tensorlite.framework import dispatch, nest
from tensorlite.framework.dispatch import execute
from tensorlite.framework.tensor import wrap
from tensorlite.graph.ir import ASSIGN_VARIABLE, READ_VARIABLE, adopt_assign
from tensorlite.graph.tracing import PythonValue


def last_uses(graph):
    """slot -> index of the last node reading it (outputs and constants live on)."""
    last = {}
    for k, node in enumerate(graph.nodes):
        for s in node.inputs:
            last[s] = k
    keep = set(graph.output_slots()) | set(graph.constants)
    return {s: k for s, k in last.items() if s not in keep}


def adoptable_assigns(graph, replaced=()):
    """Indices of the `AssignVariableOp` nodes (mode "set") that may take their value
    without a copy: the value is a fresh output of an op that declares `fresh_outputs`
    (no input or other output shares its memory) and the assignment is its only reader,
    so nothing in the graph or its outputs can see it change when the variable is later
    updated in place. Nodes in `replaced` (fused by the compiler) are left alone."""
    producer, readers = {}, {}
    for k, node in enumerate(graph.nodes):
        for s in node.outputs:
            producer[s] = k
        for s in node.inputs:
            readers[s] = readers.get(s, 0) + 1
    keep = set(graph.output_slots()) | set(graph.constants) | set(graph.placeholders)
    out = set()
    for k, node in enumerate(graph.nodes):
        if node.op is not ASSIGN_VARIABLE or node.attrs.get("mode") != "set" or k in replaced:
            continue
        s = node.inputs[0]
        p = producer.get(s)
        if s in keep or readers[s] != 1 or p is None or p in replaced:
            continue
        if getattr(graph.nodes[p].op, "fresh_outputs", False):
            out.add(k)
    return out


def compile_graph(graph, functions=None):
    """A Python function args -> list of output arrays (in graph.output_slots() order).
    `functions` may supply replacements for nodes (the jit compiler's fused kernels):
    {node_index: (callable, input_slots, output_slots)} with the nodes they cover None."""
    env = {"np": np}
    lines = ["def run(args):"]
    for i, s in enumerate(graph.placeholders):
        lines.append(f"    v{s} = args[{i}]")
    for s, value in graph.constants.items():
        env[f"c{s}"] = value
        lines.append(f"    v{s} = c{s}")
    deaths = {}
    for s, k in last_uses(graph).items():
        deaths.setdefault(k, []).append(s)
    steps = functions or {}
    adopt = adoptable_assigns(graph, steps)
    for k, node in enumerate(graph.nodes):
        if k in steps:
            step = steps[k]
            if step is None:  # folded into an earlier fused kernel
                continue
            fn, ins, outs = step
        else:
            forward = adopt_assign if k in adopt else node.op.forward
            fn = functools.partial(forward, **node.attrs) if node.attrs else forward
            ins, outs = node.inputs, node.outputs
        env[f"f{k}"] = fn
        call = f"f{k}({', '.join(f'v{s}' for s in ins)})"
        if len(outs) == 1 and not (k not in steps and node.op.multi_output):
            lines.append(f"    v{outs[0]} = {call}")
        elif outs:
            lines.append(f"    {', '.join(f'v{s}' for s in outs)}, = {call}")
        else:
            lines.append(f"    {call}")
        dead = [s for s in deaths.get(k, []) if s not in graph.placeholders]
        if dead:
            lines.append(f"    del {', '.join(f'v{s}' for s in dead)}")
    outs = graph.output_slots()
    lines.append(f"    return [{', '.join(f'v{s}' for s in outs)}]")
    source = "\n".join(lines)
    exec(compile(source, f"<tensorlite graph {graph.name}>", "exec"), env)  # noqa: S102
    run = env["run"]
    run.source = source
    return run


def pack_outputs(graph, arrays):
    if type(graph.outputs) is int:  # a single tensor: the common case, kept cheap
        return wrap(arrays[0])
    it = iter(arrays)
    return nest.map_structure(
        lambda s: s.value if isinstance(s, PythonValue) else wrap(next(it)), graph.outputs,
        expand_composites=True)


def interpret(graph, args):
    """Runs the graph op by op through eager dispatch (observers such as a GradientTape see
    every op). `args` are Tensors; returns the structured outputs."""
    values = dict(zip(graph.placeholders, args))
    for s, v in graph.constants.items():
        values[s] = wrap(v)
    for node in graph.nodes:
        if node.op is READ_VARIABLE:
            out = node.attrs["variable"]._read()
        elif node.op is ASSIGN_VARIABLE:
            var = node.attrs["variable"]
            getattr(var, {"set": "assign", "add": "assign_add",
                          "sub": "assign_sub"}[node.attrs["mode"]])(values[node.inputs[0]])
            out = var._read()
        else:
            out = execute(node.op, tuple(values[s] for s in node.inputs), node.attrs)
        outs = out if isinstance(out, tuple) else (out,)
        for s, o in zip(node.outputs, outs):
            values[s] = o
    return nest.map_structure(lambda s: s.value if isinstance(s, PythonValue) else values[s],
                              graph.outputs, expand_composites=True)


def observed():
    """True when some observer (a tape, the profiler, an outer trace) must see each op."""
    return bool(dispatch.OBSERVERS)
