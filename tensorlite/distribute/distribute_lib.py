"""The strategy base class, the default strategy and the replica/cross-replica contexts.

A strategy says how many replicas run a step (`num_replicas_in_sync`), how a step runs on
them (`run`) and how their values combine (`reduce`, and `ReplicaContext.all_reduce` inside a
step). Outside any `strategy.scope()` the default strategy is in force: one replica, no
communication, so code written for a strategy runs unchanged without one (as in the TF Dev
Summit 2020 talk "TF 2.x on Kaggle").

Example:
    >>> strategy = tf.distribute.get_strategy()
    >>> strategy.num_replicas_in_sync
    1
    >>> with strategy.scope():
    ...     strategy.run(lambda x: x + 1, args=(1,))
    2
"""
import contextlib
import threading

import numpy as np

from tensorlite.framework import write_policy as _write_policy
from tensorlite.distribute import values as values_lib
from tensorlite.distribute.reduce_op import ReduceOp, as_reduce_op
from tensorlite.framework import nest
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import wrap
from tensorlite.graph.context import executing_eagerly

_state = threading.local()
_scopes = []  # strategies entered by scope(), shared by every thread of the process


def _replica_ctx():
    return getattr(_state, "replica", None)


def get_replica_context():
    """The ReplicaContext of the running replica; the default strategy's outside any
    `strategy.run`/scope; None inside a scope in cross-replica context (as TF)."""
    ctx = _replica_ctx()
    if ctx is not None:
        return ctx
    if _scopes:
        return None
    return ReplicaContext(_default(), 0)


def in_cross_replica_context():
    return _replica_ctx() is None and bool(_scopes)


def has_strategy():
    return bool(_scopes) or _replica_ctx() is not None


def get_strategy():
    """The strategy in force: the one whose scope() is entered, or the default strategy."""
    ctx = _replica_ctx()
    if ctx is not None:
        return ctx.strategy
    return _scopes[-1] if _scopes else _default()


def get_cross_replica_context():
    return get_strategy() if _replica_ctx() is None else None


class InputContext:
    """What `distribute_datasets_from_function`'s dataset_fn learns about its pipeline."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size):
        """global_batch_size / num_replicas_in_sync; must divide evenly (as TF)."""
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError(f"The `global_batch_size` {global_batch_size} is not divisible "
                             f"by `num_replicas_in_sync` {self.num_replicas_in_sync}")
        return global_batch_size // self.num_replicas_in_sync


class ReplicaContext:
    """Inside `strategy.run`: which replica this is, and collectives among the replicas."""

    def __init__(self, strategy, replica_id, grad_weight=1.0):
        self.strategy = strategy
        self._replica_id = replica_id
        # Keras' data-parallel step sets this to local_batch / global_batch so that summed
        # gradients equal the gradient of the global-batch mean loss.
        self.grad_weight = grad_weight

    @property
    def replica_id_in_sync_group(self):
        return wrap(np.int32(self._global_replica_id()))

    def _global_replica_id(self):
        return self.strategy._replica_offset() + self._replica_id

    @property
    def num_replicas_in_sync(self):
        return self.strategy.num_replicas_in_sync

    def all_reduce(self, reduce_op, value):
        """Combines `value` (a nest of tensors) over every replica in sync; each replica
        gets the result."""
        op = as_reduce_op(reduce_op)
        flat = [values_lib.to_numpy(v) for v in nest.flatten(value)]
        out = self.strategy._all_reduce_among_replicas(self, op, flat)
        return nest.pack_like(value, [wrap(a) for a in out])

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Runs merge_fn(strategy, *args) once in cross-replica context, args regrouped
        into PerReplica values; every replica gets its result."""
        return self.strategy._merge_call(self, merge_fn, args, kwargs or {})


@contextlib.contextmanager
def replica_scope(ctx):
    """Marks this thread as running replica `ctx` (used by strategies' run)."""
    saved = _replica_ctx()
    _state.replica = ctx
    try:
        yield ctx
    finally:
        _state.replica = saved


class StrategyExtended:
    """`strategy.extended`: the few attributes programs read."""

    def __init__(self, strategy):
        self._strategy = strategy

    @property
    def worker_devices(self):
        return tuple(self._strategy._devices)

    @property
    def parameter_devices(self):
        return tuple(self._strategy._devices)

    @property
    def should_checkpoint(self):
        return self._strategy._is_chief()

    should_save_summary = should_checkpoint

    def variable_created_in_scope(self, v):
        return True


class Strategy:
    """Base of every strategy: scope, run, reduce, distributed datasets."""

    _num_local_replicas = 1
    _devices = ("/job:localhost/replica:0/task:0/device:CPU:0",)

    def __init__(self):
        self.extended = StrategyExtended(self)
        self.cluster_resolver = None

    # -- what subclasses change --------------------------------------------------------------
    @property
    def num_replicas_in_sync(self):
        return self._num_local_replicas * self._num_workers()

    def _num_workers(self):
        return 1

    def _worker_index(self):
        return 0

    def _replica_offset(self):
        return self._worker_index() * self._num_local_replicas

    def _is_chief(self):
        return self._worker_index() == 0

    def _cross_worker_sum(self, arrays, donate=False):
        """Sums a list of arrays over every worker (identity on one worker). With `donate`
        the caller gives the arrays up (fresh ones it computed): they may be summed in
        place."""
        return arrays

    def _cross_worker_gather(self, arrays):
        """Concatenates a list of arrays along axis 0 over every worker, in rank order."""
        return arrays

    def _broadcast_from_chief(self, arrays):
        return arrays

    def _overlap_plan(self, grad_shapes, grad_dtypes):
        """The overlap.BucketPlan when gradients of these shapes are all-reduced during the
        backward pass (the step must then run eagerly, for the tape to report them), else
        None: they are summed after it."""
        return None

    def _overlapped_reduction(self, grad_shapes, grad_dtypes, weight):
        """An OverlappedReduction summing one replica's gradients over the workers during
        its backward pass, or None where gradients are summed after it (one worker)."""
        return None

    def _run_replicas(self, fn, args, kwargs, grad_weights):
        """Runs fn once per local replica; returns the list of results."""
        ctx = ReplicaContext(self, 0, grad_weights[0] if grad_weights else 1.0)
        with replica_scope(ctx):
            return [fn(*values_lib.select_replica(0, args),
                       **values_lib.select_replica(0, kwargs))]

    def _all_reduce_among_replicas(self, ctx, op, flat, donate=False):
        total = self._cross_worker_sum(flat, donate)
        if op is ReduceOp.MEAN:
            total = [t / self.num_replicas_in_sync for t in total]
        return total

    def _merge_call(self, ctx, merge_fn, args, kwargs):
        saved = _replica_ctx()
        _state.replica = None
        try:
            return merge_fn(self, *args, **kwargs)
        finally:
            _state.replica = saved

    # -- the public API ------------------------------------------------------------------------
    @contextlib.contextmanager
    def scope(self):
        """Variables, models and optimizers created inside belong to this strategy."""
        _scopes.append(self)
        try:
            with self._variable_scope():
                yield self
        finally:
            _scopes.remove(self)

    def _variable_scope(self):
        return contextlib.nullcontext()

    def run(self, fn, args=(), kwargs=None, options=None):
        """Runs `fn` on every replica; PerReplica arguments give each replica its part.
        Returns the replicas' results (PerReplica when more than one local replica)."""
        return values_lib.regroup(self._run_replicas(fn, args, kwargs or {}, None))

    def reduce(self, reduce_op, value, axis=None):
        """Combines a per-replica value over all replicas into one tensor. With `axis`, each
        replica's value is first reduced along that axis (MEAN then weights by length)."""
        op = as_reduce_op(reduce_op)
        parts = list(value.values) if isinstance(value, values_lib.PerReplica) else [value]
        if not executing_eagerly():  # in tf.function: ops of the graph, run at each call
            return self._traced_reduce(op, value, parts, axis)
        flat_parts = [[values_lib.to_numpy(v) for v in nest.flatten(p)] for p in parts]
        template = parts[0]
        counts = np.zeros(len(flat_parts[0]))
        sums = []
        for i in range(len(flat_parts[0])):
            arrays = [fp[i] for fp in flat_parts]
            if axis is not None:
                counts[i] = sum(a.shape[axis] for a in arrays)
                arrays = [np.sum(a, axis=axis) for a in arrays]
            else:
                counts[i] = len(arrays)
            sums.append(np.sum(arrays, axis=0))
        if not isinstance(value, values_lib.PerReplica) and axis is None:
            # A value that is the same on every local replica (TF's mirrored value).
            sums = [s * self._num_local_replicas for s in sums]
            counts = counts * self._num_local_replicas
        sums = self._cross_worker_sum(sums, donate=True)   # fresh arrays computed here
        counts = self._cross_worker_sum([counts], donate=True)[0]
        if op is ReduceOp.MEAN:
            sums = [s / c for s, c in zip(sums, counts)]
        return nest.pack_like(template, [wrap(np.asarray(s, dtype=np.asarray(f).dtype))
                                         for s, f in zip(sums, flat_parts[0])])

    def _traced_reduce(self, op, value, parts, axis):
        """`reduce` inside a traced function: the same sums written as graph ops (the
        workers' sum a NumPy call of the graph), so every call reduces that call's values
        instead of the trace's."""
        from tensorlite.ops import array_ops, math_ops, script_ops  # noqa: PLC0415
        mirrored = not isinstance(value, values_lib.PerReplica) and axis is None
        out = []
        for leaves in zip(*[nest.flatten(p) for p in parts]):
            tensors = [convert_to_tensor(t) for t in leaves]
            if axis is not None:
                count = math_ops.add_n([array_ops.shape(t)[axis] for t in tensors])
                tensors = [math_ops.reduce_sum(t, axis=axis) for t in tensors]
            else:
                count = len(tensors) * (self._num_local_replicas if mirrored else 1)
            total = math_ops.add_n(tensors) if len(tensors) > 1 else tensors[0]
            if mirrored:
                total = total * self._num_local_replicas
            if self._num_workers() > 1:
                count = convert_to_tensor(count)
                total, count = script_ops.numpy_function(
                    lambda t, c: tuple(np.asarray(x, dtype=np.asarray(y).dtype) for x, y in
                                       zip(self._cross_worker_sum([t, np.asarray(c)]),
                                           (t, c))),
                    [total, count], [total.dtype, count.dtype])
            if op is ReduceOp.MEAN:
                total = total / math_ops.cast(count, total.dtype)
            out.append(total)
        return nest.pack_like(parts[0], out)

    def experimental_local_results(self, value):
        return value.values if isinstance(value, values_lib.PerReplica) else (value,)

    def gather(self, value, axis):
        """Concatenates a per-replica value along `axis` over all replicas."""
        parts = [values_lib.to_numpy(v) for v in self.experimental_local_results(value)]
        local = np.concatenate(parts, axis=axis)
        moved = np.moveaxis(local, axis, 0)
        return wrap(np.moveaxis(self._cross_worker_gather([moved])[0], 0, axis))

    def experimental_distribute_dataset(self, dataset, options=None):
        """A dataset of global batches -> an iterable of per-replica batches (each global
        batch split along its first axis among all replicas; this worker keeps its part)."""
        from tensorlite.distribute.input_lib import DistributedDataset  # noqa: PLC0415
        return DistributedDataset(self, dataset)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """Calls dataset_fn(InputContext) once for this worker's input pipeline; its
        elements are per-replica batches handed to the local replicas in turn."""
        from tensorlite.distribute.input_lib import DatasetsFromFunction  # noqa: PLC0415
        ctx = InputContext(self._num_workers(), self._worker_index(),
                           self.num_replicas_in_sync)
        return DatasetsFromFunction(self, dataset_fn(ctx))

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def experimental_run_v2(self, fn, args=(), kwargs=None):
        return self.run(fn, args, kwargs)

    def __repr__(self):
        return f"<{type(self).__name__} num_replicas_in_sync={self.num_replicas_in_sync}>"


class _DefaultStrategy(Strategy):
    """The strategy in force outside every scope: one replica, this process."""


_DEFAULT = []


def _default():
    if not _DEFAULT:
        _DEFAULT.append(_DefaultStrategy())
    return _DEFAULT[0]


def replica_apply_gradients(grads_and_vars, apply_fn):
    """The optimizer's hook: inside a replica of a multi-replica strategy, gradients are
    weighted by the replica's grad_weight, summed over all replicas and applied once
    (TF's apply_gradients in replica context). Elsewhere apply_fn runs as is."""
    ctx = _replica_ctx()
    if ctx is None:
        return apply_fn(grads_and_vars)
    pairs = [(g, v) for g, v in grads_and_vars]
    if ctx.strategy.num_replicas_in_sync == 1 and ctx.grad_weight == 1.0:
        return ctx.merge_call(lambda _strategy: apply_fn(pairs))
    present = [i for i, (g, _) in enumerate(pairs) if g is not None]
    flat = [values_lib.to_numpy(pairs[i][0]) * ctx.grad_weight for i in present]
    summed = ctx.strategy._all_reduce_among_replicas(ctx, ReduceOp.SUM, flat, donate=True)
    for i, g in zip(present, summed):
        pairs[i] = (wrap(g), pairs[i][1])
    return ctx.merge_call(lambda _strategy: apply_fn(pairs))


_WORKER_STRATEGY = []


def set_worker_strategy(strategy):
    """Records the process's multi-worker strategy (one per process)."""
    _WORKER_STRATEGY[:] = [strategy]


def worker_strategy():
    """The multi-worker strategy of this process, or None."""
    return _WORKER_STRATEGY[0] if _WORKER_STRATEGY else None


def should_write_checkpoint():
    """False on a non-chief worker of a multi-worker strategy: checkpoints, saved models and
    summaries are written by the chief only."""
    strategy = worker_strategy()
    return strategy is None or strategy._is_chief()


# Checkpoints and Keras saves ask framework.write_policy; only the chief writes.
_write_policy.GUARDS.append(should_write_checkpoint)
