"""Overlapped outputs: heavy nodes whose values only leave the graph run on a helper thread
while the rest of the graph goes on (TensorFlow's executor gets this from its inter-op
thread pool).

In a training step these are the weight gradients: each layer's filter gradient
(`Conv2DBackpropFilter`, a Dense layer's `x^T @ g`) is needed by nothing later in the
backward pass, which continues down the chain of input gradients. The pass replaces such a
node by `_AsyncStart` (queues the op on `intra_op_pool`'s helper threads) and returns its
value through an `_AsyncResult` at the end of the graph. The two chains then run side by
side on two cores, each op whole on one thread, instead of every op split in two with a
join after each. A split kernel on the main thread finds the helper busy and does all its
runs itself; `_AsyncResult` runs a start no helper has reached yet on the calling thread,
and while the helper runs one it takes that op's split shares, so neither thread waits
while work is queued.

Only nodes with no node after them that assigns or draws random numbers are moved (their
inputs cannot change before they run), and only when a heavy node follows to overlap with.
At run time the op runs in place, as before, when the intra-op or inter-op thread setting
(`tf.config.threading`) is 1. Beside programs that hold the other cores it still overlaps:
the helper blocks rather than spins and the caller runs any op no helper has started, so a
helper the scheduler holds back costs at most the op it is running, while a second runnable
thread keeps this process's share of the machine (a step of the Transformer block beside a
spinning neighbour and six other jobs on 2 cores: 300-375 ms against 447-531 ms run in
place, in paired runs; MobileNetV2 training 274-307 ms against 382-424; on a quieter
machine beside the spinner alone, level: 39-80 ms against 39-66). Under the `remapping`
option, with the other fusions; not with `parallel_branches`, which then wraps such nodes
in its fork-join branches.
"""
from tensorlite.framework import blas_threads, errors, intra_op_pool, registry
from tensorlite.graph import options
from tensorlite.graph.ir import Node
from tensorlite.graph.passes import Specs, barrier, derive, stateful
from tensorlite.graph.passes.parallel import MIN_COST, cost


def overlapping():
    """Whether a second thread may run an op beside the calling one now: the thread
    settings allow it and this is not a helper thread already. Whether other programs hold
    the other cores does not matter (see module): nothing waits on an op no thread runs."""
    return blas_threads.intra_op_threads() > 1 and blas_threads.get_setting("inter") != 1 \
        and not intra_op_pool.on_helper()


def _start(*inputs, op, attrs, where):
    def outputs():  # a tuple: _AsyncResult has as many outputs as the op it stands for
        try:
            with blas_threads.fork_excluded():  # (a tf.data thread forking workers waits)
                out = op.forward(*inputs, **attrs)
        except errors.OpError:
            raise
        except Exception as e:  # noqa: BLE001 - the runner would name _AsyncResult instead
            raise errors.InvalidArgumentError(
                None, None, f"{op.name} failed on the op created at {where}: {e} (inputs "
                f"{[list(getattr(x, 'shape', ())) for x in inputs]})") from e
        return tuple(out) if op.multi_output else (out,)
    if overlapping():
        return intra_op_pool.submit(outputs)
    task = intra_op_pool.Task(outputs)  # one thread allowed: run here, now
    task.claim()
    task.run()
    return task


def _result(handle):
    return handle.result()


# they hand work to another thread: no pass may merge, drop or move them (effects="state")
ASYNC_START = registry.REGISTRY.get("_AsyncStart") or registry.register(
    "_AsyncStart", _start, grad=None, shape=lambda *specs, **attrs: None, effects="state",
    unsupported="tf onnx tflite batch tf_import")
ASYNC_RESULT = registry.REGISTRY.get("_AsyncResult") or registry.register(
    "_AsyncResult", _result, grad=None, shape=lambda handle: None, multi_output=True,
    effects="state", unsupported="tf onnx tflite batch tf_import")


def run(graph):
    """Moves the heavy nodes that only feed graph outputs off the calling thread; one report
    line `overlapped <Op>` per node."""
    if options.enabled("parallel_branches"):  # asked for fork-join branches instead
        return graph, []
    nodes = graph.nodes
    used = {s for n in nodes for s in n.inputs}
    specs = Specs(graph)
    heavy = [not stateful(n) and cost(n, specs) >= MIN_COST for n in nodes]
    later_barrier = later_heavy = False
    moved = set()
    for k in range(len(nodes) - 1, -1, -1):  # from the end: what follows each node is known
        n = nodes[k]
        if heavy[k] and later_heavy and not later_barrier and n.outputs and \
                not any(s in used for s in n.outputs):
            moved.add(k)
        later_barrier = later_barrier or barrier(n)
        later_heavy = later_heavy or (heavy[k] and k not in moved)
    if not moved:
        return graph, []
    out, ends, lines = [], [], []
    handle = graph.n_slots  # new slots for the handles (the input graph is left as it is)
    for k, n in enumerate(nodes):
        if k not in moved:
            out.append(n)
            continue
        attrs = {"op": n.op, "attrs": dict(n.attrs), "where": n.where}
        out.append(Node(ASYNC_START, n.inputs, attrs, [handle], where=n.where, scope=n.scope))
        ends.append(Node(ASYNC_RESULT, [handle], {}, list(n.outputs), where=n.where,
                         scope=n.scope))
        lines.append(f"overlapped {n.op.name}")
        handle += 1
    new = derive(graph, out + ends)
    new.n_slots = handle
    return new, lines
