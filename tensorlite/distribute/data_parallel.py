"""One synchronous data-parallel gradient step, shared by Keras fit and the Estimator.

The global batch is split among all replicas (this worker keeps its replicas' parts); each
replica computes (scalars, gradients); both are weighted by part size / global batch size,
summed over the local replicas and then over the workers in one fused all-reduce. For mean
losses the weighted sum is exactly the global batch's gradient, whatever the split.

Example:
    >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    >>> step = replicated_step(strategy, np.arange(4.0),
    ...                        lambda x: ([np.mean(x)], [np.mean(x) * 2], None), [()], 1)
    >>> float(step.scalars[0]), float(step.grads[0])
    (1.5, 3.0)
"""
import numpy as np

from tensorlite.distribute import input_lib, values as values_lib
from tensorlite.framework import nest


class ReplicatedStep:
    """What one step produced: summed scalars and grads, and per replica its part, its
    size and its extra output (None for a replica with no rows)."""

    def __init__(self, scalars, grads, parts, sizes, extras, global_size):
        self.scalars, self.grads = scalars, grads
        self.parts, self.sizes, self.extras = parts, sizes, extras
        self.global_size = global_size


def part_size(part):
    leaves = [v for v in nest.flatten(part) if v is not None]
    return leaves[0].shape[0] if leaves else 0


def replicated_step(strategy, batch, compute, grad_shapes, n_scalars, grad_dtypes=None):
    """Runs compute(part) -> (scalars, grads, extra) on every local replica and returns the
    ReplicatedStep with weighted sums over all replicas of every worker."""
    value, sizes = input_lib.local_parts_and_sizes(strategy, batch)
    parts = list(value.values) if isinstance(value, values_lib.PerReplica) else [value]
    first = strategy._replica_offset()
    local_sizes = sizes[first:first + len(parts)]
    global_size = sum(sizes)
    weights = [n / global_size for n in local_sizes]

    def replica_fn(part):
        return compute(part) if part_size(part) else None
    dtypes_ = grad_dtypes or [np.float32] * len(grad_shapes)
    reduction = strategy._overlapped_reduction(grad_shapes, dtypes_, weights[0]) \
        if len(parts) == 1 else None
    if reduction is not None:
        return _overlapped_step(strategy, reduction, replica_fn, parts, local_sizes,
                                global_size, n_scalars)
    results = strategy._run_replicas(replica_fn, (values_lib.PerReplica(parts),), {}, weights)
    grads = [np.zeros(s, d) for s, d in zip(grad_shapes, dtypes_)]
    scalars = [np.zeros((), np.float64) for _ in range(n_scalars)]
    for result, w in zip(results, weights):
        if result is None:
            continue
        r_scalars, r_grads, _ = result
        for i, g in enumerate(r_grads):
            if g is not None:
                grads[i] = grads[i] + w * values_lib.to_numpy(g)
        for i, s in enumerate(r_scalars):
            if s is not None:
                scalars[i] = scalars[i] + w * values_lib.to_numpy(s)
    reduced = strategy._cross_worker_sum(grads + scalars, donate=True)   # sums made here
    extras = [None if r is None else r[2] for r in results]
    return ReplicatedStep(reduced[len(grads):], reduced[:len(grads)], parts, local_sizes,
                          extras, global_size)


def _overlapped_step(strategy, reduction, replica_fn, parts, sizes, global_size, n_scalars):
    """The one-replica-per-worker step whose gradients are all-reduced bucket by bucket while
    its backward pass runs (the tape feeds `reduction`; see distribute/overlap.py)."""
    with reduction.listening():
        result = strategy._run_replicas(replica_fn, (values_lib.PerReplica(parts),), {},
                                        [sizes[0] / global_size])[0]
    w = sizes[0] / global_size
    scalars, grads = [0.0] * n_scalars, None
    if result is not None:
        scalars = [0.0 if s is None else w * values_lib.to_numpy(s) for s in result[0]]
        grads = [None if g is None else values_lib.to_numpy(g) for g in result[1]]
    grads, scalars = reduction.finish(grads, scalars)
    return ReplicatedStep([np.asarray(s) for s in scalars], grads, parts, sizes,
                          [None if result is None else result[2]], global_size)
