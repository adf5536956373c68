"""Parallel branches: independent sub-parts of a graph run on threads (the notes "Structure
of Deep Learning Frameworks": "separate sub-parts of a computation that are independent and
split them between threads").

NumPy releases the GIL inside BLAS calls (matmul, convolutions by im2col) and inside ufunc
loops, so two independent heavy branches can overlap on two cores. The pass estimates each
node's cost (multiply-adds of matmuls and convolutions, element counts otherwise), grows a
branch around every heavy node (its exclusive ancestors, the nodes only it needs, and then
consumers computed only from the branch), keeps branches that neither depends on the other,
and when at least two remain replaces them with ONE `ParallelBranches` node whose forward runs
each branch (compiled like a graph of its own) on a small thread pool, the first branch on
the calling thread.

Branches never cross an assignment or a random draw: the graph is cut into segments at
those, and each segment is handled alone. Stateful nodes (variable reads included) are never
part of a branch; the branches read their values as inputs. Off by default
(`parallel_branches`): on a loaded machine, or with multi-threaded BLAS already using every
core, the overlap can be worth nothing. ParallelBranches has no gradient (grad=None): like
FusedElementwise it exists only in the optimised graph; a GradientTape interprets the
original graph.
"""
import heapq
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tensorlite.framework import registry
from tensorlite.graph.executor import compile_graph
from tensorlite.graph.ir import Graph, Node
from tensorlite.graph.passes import Specs, barrier, derive, known, size, stateful

MIN_COST = 1 << 21  # ~2M multiply-adds (~0.2 ms): below that a thread hand-off costs more
_POOL = []
_POOL_LOCK = threading.Lock()


def _pool():
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2),
                                            thread_name_prefix="tensorlite-branch"))
    return _POOL[0]


class Branch:
    """One compiled sub-graph: `args` index the ParallelBranches node's inputs."""

    def __init__(self, graph, args, out_specs, cost):
        self.graph = graph
        self.run = compile_graph(graph)
        self.args = tuple(args)
        self.out_specs = out_specs
        self.cost = cost

    def __call__(self, inputs):
        return self.run([inputs[i] for i in self.args])

    def __repr__(self):
        return f"Branch({'+'.join(n.op.name for n in self.graph.nodes)})"


def _parallel_forward(*inputs, branches):
    pool = _pool()
    futures = [pool.submit(b, inputs) for b in branches[1:]]
    results = list(branches[0](inputs))
    for f in futures:
        results.extend(f.result())
    return tuple(results)


def _parallel_shape(*specs, branches):
    return [s for b in branches for s in b.out_specs]


PARALLEL = registry.REGISTRY.get("ParallelBranches") or registry.register(
    "ParallelBranches", _parallel_forward, grad=None, shape=_parallel_shape, multi_output=True,
    unsupported="tf onnx tflite batch tf_import")


def cost(node, specs):
    """Estimated work, by the op's declared `cost` form: multiply-adds for "matmul",
    "conv", "conv_backprop_input", "conv_backprop_filter" and "einsum", output elements per
    step for "program" (fused elementwise chains), output elements otherwise."""
    if not node.outputs:
        return 0
    n = size(specs[node.outputs[0]])
    ins = [specs[s] for s in node.inputs]
    form = getattr(node.op, "cost", None)
    if form == "matmul" and known(ins[0]) and len(ins[0].shape) >= 2:
        return n * ins[0].shape[-2 if node.attrs.get("transpose_a") else -1]
    if form == "conv" and len(ins) > 1 and known(ins[1]):
        return n * int(np.prod(ins[1].shape[:-1]))
    if form == "conv_backprop_input" and known(ins[0]) and known(ins[1]):  # (g, w)
        return size(ins[0]) * int(np.prod(ins[1].shape[:-1]))
    if form == "conv_backprop_filter" and known(ins[0]) and known(ins[1]):  # (x, g)
        return size(ins[1]) * ins[0].shape[-1] * int(np.prod(node.attrs["filter_hw"]))
    if form == "einsum" and len(ins) == 2 and known(ins[0]) and known(ins[1]):
        return int(np.sqrt(float(n) * size(ins[0]) * size(ins[1])))  # exact for matmuls
    if form == "program":
        return n * len(node.attrs["program"])
    return n


class _Segment:
    """Index maps of the graph for growing branches inside one run of non-stateful nodes."""

    def __init__(self, graph):
        self.nodes = graph.nodes
        self.producer = {o: k for k, n in enumerate(self.nodes) for o in n.outputs}
        self.consumers = {}
        for k, n in enumerate(self.nodes):
            for s in n.inputs:
                self.consumers.setdefault(s, []).append(k)
        self.outputs = set(graph.output_slots())
        self.stateful = [stateful(n) for n in self.nodes]
        self.barrier = [barrier(n) for n in self.nodes]
        self.segment = list(np.cumsum(self.barrier))  # equal numbers: same segment

    def same(self, k, h):
        return not self.stateful[k] and self.segment[k] == self.segment[h]

    def used_only_by(self, k, cone):
        outs = self.nodes[k].outputs
        return bool(outs) and all(o not in self.outputs and all(
            c in cone for c in self.consumers.get(o, ())) for o in outs) and \
            any(self.consumers.get(o) for o in outs)

    def grow(self, h, taken, seeds):
        """h's branch: its exclusive ancestors (nodes only it needs), then consumers computed
        only from the branch and from values made before the segment, then exclusive
        ancestors again. Other heavy nodes (seeds) are left to branches of their own."""
        cone = {h}
        self._up(cone, h, taken, seeds)
        for k in range(h + 1, len(self.nodes)):
            if self.barrier[k]:
                break
            if k in taken or k in seeds or not self.same(k, h):
                continue
            inside = [p for p in map(self.producer.get, self.nodes[k].inputs)
                      if p is not None and self.same(p, h)]
            if inside and all(p in cone for p in inside):
                cone.add(k)
        self._up(cone, max(cone), taken, seeds)
        return cone

    def _up(self, cone, top, taken, seeds):
        for k in range(top - 1, -1, -1):  # consumers come later: decided before k
            if self.barrier[k]:
                break
            if k not in cone and k not in taken and k not in seeds and self.same(k, top) \
                    and self.used_only_by(k, cone):
                cone.add(k)

    def ancestors(self):
        """node index -> bit set (int) of its ancestors in its segment."""
        anc = []
        for k, n in enumerate(self.nodes):
            bits = 0
            for p in map(self.producer.get, n.inputs):
                if p is not None and self.same(p, k):
                    bits |= anc[p] | (1 << p)
            anc.append(bits)
        return anc


def _antichain(cones, costs, anc):
    """The heaviest set of mutually independent branches (greedy from each start)."""
    info = []
    for cone in cones:
        up = 0
        for k in cone:
            up |= anc[k]
        info.append((sum(costs[k] for k in cone), sum(1 << k for k in cone), up, cone))
    info.sort(key=lambda t: -t[0])
    best, best_cost = [], 0
    for start in range(len(info)):
        chosen = [info[start]]
        for t in info:
            if all(t is not c and not (t[2] & c[1]) and not (c[2] & t[1]) for c in chosen):
                chosen.append(t)
        total = sum(c[0] for c in chosen)
        if len(chosen) > 1 and total > best_cost:
            best, best_cost = [sorted(c[3]) for c in chosen], total
    return best


def _select(seg, specs):
    """Per segment, the heaviest set of independent branches (node index lists), if two or
    more; and every node's cost."""
    costs = [cost(n, specs) if not seg.stateful[k] else 0 for k, n in enumerate(seg.nodes)]
    seeds = {k for k, c in enumerate(costs) if c >= MIN_COST}
    taken, cones = set(), {}
    for h in sorted(seeds):  # in order: a chain of heavy nodes becomes one branch
        if h not in taken:
            cone = seg.grow(h, taken, seeds - {h})
            taken |= cone
            cones.setdefault(seg.segment[h], []).append(cone)
    anc = seg.ancestors()
    chosen = [_antichain(c, costs, anc) for c in cones.values()]
    return [c for c in chosen if c], costs


def _branch(graph, seg, members, specs, arg_index):
    produced = {o for k in members for o in graph.nodes[k].outputs}
    sub = Graph()
    sub.name = f"{graph.name}/branch"
    sub.n_slots = graph.n_slots
    for k in members:
        for s in graph.nodes[k].inputs:
            if s in produced or s in sub.constants or s in sub.placeholders:
                continue
            if s in graph.constants:
                sub.constants[s] = graph.constants[s]
                continue
            sub.placeholders.append(s)
            arg_index.setdefault(s, len(arg_index))
            if specs[s] is not None:
                sub.specs[s] = tuple(specs[s])
    cone = set(members)
    sub.nodes = [graph.nodes[k] for k in members]
    sub.outputs = [o for k in members for o in graph.nodes[k].outputs
                   if o in seg.outputs or any(c not in cone for c in seg.consumers.get(o, ()))]
    return sub


def _reorder(nodes, replaced):
    """Topological order with the original order as priority; `replaced` maps a node index
    to its ParallelBranches node (at the first member) or None (other members). Assignments
    and random draws keep their places: they wait for every node before them and every
    later node waits for them."""
    items = [(k, replaced.get(k, n)) for k, n in enumerate(nodes)
             if replaced.get(k, n) is not None]
    producer = {o: i for i, (_, n) in enumerate(items) for o in n.outputs}
    deps, last_barrier = [], -1
    for i, (_, n) in enumerate(items):
        d = {producer[s] for s in n.inputs if s in producer}
        if barrier(n):
            d |= set(range(last_barrier + 1, i))
            last_barrier = i
        elif last_barrier >= 0:
            d.add(last_barrier)
        deps.append(d)
    users = [[] for _ in items]
    for i, d in enumerate(deps):
        for j in d:
            users[j].append(i)
    waiting = [len(d) for d in deps]
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(items[i][1])
        for u in users[i]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
    return order if len(order) == len(items) else None  # None: a cycle (not independent)


def _wrap(graph, seg, cones, specs, costs):
    """The ParallelBranches node for these branches."""
    arg_index, branches = {}, []
    for members in cones:
        sub = _branch(graph, seg, members, specs, arg_index)
        branches.append(Branch(sub, [arg_index[s] for s in sub.placeholders],
                               [specs[o] for o in sub.outputs], sum(costs[k] for k in members)))
    outs = [o for b in branches for o in b.graph.outputs]
    return Node(PARALLEL, list(arg_index), {"branches": tuple(branches)}, outs,
                graph.nodes[cones[0][0]].where)


def run(graph):
    """Wraps independent heavy branches into ParallelBranches nodes; one report line
    `wrapped <Op>+<Op>...` per branch."""
    specs = Specs(graph)
    seg = _Segment(graph)
    selections, costs = _select(seg, specs)
    replaced, lines = {}, []
    for cones in selections:
        pb = _wrap(graph, seg, cones, specs, costs)
        replaced.update({k: None for c in cones for k in c})
        replaced[min(k for c in cones for k in c)] = pb
        lines += ["wrapped " + "+".join(n.op.name for n in b.graph.nodes)
                  for b in pb.attrs["branches"]]
    order = _reorder(graph.nodes, replaced) if lines else None
    if order is None:
        return graph, []
    return derive(graph, order), lines
