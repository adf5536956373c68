"""Keras fit under a distribution strategy: data parallelism over its replicas.

Each global batch is split among all replicas (every worker keeps its replicas' parts);
each replica runs the model's compiled forward and backward on its part; the gradients,
weighted by part/global batch size, are summed over the local replicas and then over the
workers (one fused all-reduce) and applied once. The weighted sum is exactly the gradient of
the global batch's mean loss, so training matches single-process fit on the global batch.
Metrics are updated with every replica's predictions (gathered over workers), so the
progress bar shows global figures on every worker.

Example:
    >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    >>> with strategy.scope():
    ...     model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    >>> model.compile("sgd", "mse")
    >>> model.fit(np.ones((8, 3)), np.ones((8, 1)), batch_size=4, verbose=0)  # 2 x 2 rows
"""
import numpy as np

from tensorlite.distribute import data_parallel, distribute_lib, input_lib, \
    values as values_lib
from tensorlite.framework import nest
from tensorlite.framework.tensor import wrap


def strategy_in_scope():
    """The strategy whose scope() is entered, else None."""
    return distribute_lib.get_strategy() if distribute_lib.has_strategy() else None


def data_parallel_step(model, batches):
    """The step fit runs for `model` under its strategy, or None to run train_step as is."""
    strategy = getattr(model, "_distribution_strategy", None)
    if strategy is None or strategy.num_replicas_in_sync == 1:
        return None
    if strategy._num_workers() > 1 and hasattr(batches, "rng"):
        # Every worker must draw the same shuffle so their parts form one global batch.
        seed = strategy._broadcast_from_chief([np.random.randint(0, 2**31 - 1, size=1)])[0]
        batches.rng = np.random.default_rng(int(seed[0]))
    if type(model).train_step is not _keras_model_class().train_step:
        return CustomStepOnReplicas(model, strategy)
    return DataParallelStep(model, strategy)


def _keras_model_class():
    from tensorlite.keras.engine.training import Model  # noqa: PLC0415
    return Model


class DataParallelStep:
    """One synchronous data-parallel training step of a compiled model."""

    def __init__(self, model, strategy):
        self.model = model
        self.strategy = strategy
        self._synced = False

    def _sync_initial_weights(self, first_part):
        """Builds the model eagerly if needed, then gives every worker the chief's weights
        (as Horovod's broadcast of the initial variables)."""
        model = self.model
        if not model.built:
            model(first_part[0], training=False)
        if self.strategy._num_workers() > 1:
            variables = list(model.variables)
            values = self.strategy._broadcast_from_chief([np.asarray(v.numpy())
                                                          for v in variables])
            for v, a in zip(variables, values):
                v.assign(a)
        self._synced = True

    def __call__(self, batch):
        from tensorlite.keras.engine import data_adapter  # noqa: PLC0415
        model, strategy = self.model, self.strategy
        x, y, sw = data_adapter.unpack(batch)
        if not self._synced:
            self._sync_initial_weights(_first_part(strategy, (x, y, sw)))
        variables = model.trainable_variables
        shapes = [tuple(v.shape) for v in variables]
        dtypes = [np.asarray(v.numpy()).dtype for v in variables]
        # Eager forward and backward where the strategy overlaps the all-reduce with the
        # backward pass: the tape reports each final gradient; a compiled graph yields all
        # of them at its end.
        step_fn = model._loss_and_grads_eager if strategy._overlap_plan(shapes, dtypes) \
            else model._loss_and_grads_step()
        n_per = len(model.compiled_loss.per_output_metrics)

        def compute(part):
            total, per_output, y_pred, grads = step_fn(*part)
            return [total] + [p for p in per_output][:n_per], grads, y_pred
        step = data_parallel.replicated_step(strategy, (x, y, sw), compute, shapes, 1 + n_per,
                                             dtypes)
        model.optimizer.apply_gradients(zip([wrap(g) for g in step.grads], variables))
        kept = [(p, e) for p, n, e in zip(step.parts, step.sizes, step.extras) if n]
        y_pred = _concat([e for _, e in kept])
        y_all, sw_all = _concat([p[1] for p, _ in kept]), _concat([p[2] for p, _ in kept])
        metrics = model.compiled_metrics
        if strategy._num_workers() > 1 and (metrics._spec or metrics._weighted_spec):
            y_pred, y_all, sw_all = (_gather(strategy, s) for s in (y_pred, y_all, sw_all))
        total, per_output = step.scalars[0], step.scalars[1:]
        model.compiled_loss.update_metrics(wrap(total), [wrap(p) for p in per_output],
                                           step.global_size)
        return model.compute_metrics(x, y_all, y_pred, sw_all)


class CustomStepOnReplicas(DataParallelStep):
    """A user's train_step, run by every replica on its part of the batch. Its
    optimizer.apply_gradients sums the replicas' gradients, each weighted by its part of the
    global batch, and applies them once; replicas take turns, so its metric updates do not
    race. Under MultiWorkerMirroredStrategy the metrics it shows are this worker's."""

    def __call__(self, batch):
        model, strategy = self.model, self.strategy
        if not self._synced:
            self._sync_initial_weights(_first_part(strategy, batch))
        value, sizes = input_lib.local_parts_and_sizes(strategy, batch)
        parts = list(value.values) if isinstance(value, values_lib.PerReplica) else [value]
        first = strategy._replica_offset()
        weights = [n / sum(sizes) for n in sizes[first:first + len(parts)]]
        logs = strategy._run_replicas(model.train_step, (values_lib.PerReplica(parts),), {},
                                      weights)[0]
        # read the metrics again: replica 0 returned before the others updated them
        return {**logs, **model.get_metrics_result()}


def _first_part(strategy, batch):
    """This worker's first non-empty part of a global batch (to build the model on)."""
    value, sizes = input_lib.local_parts_and_sizes(strategy, batch)
    parts = list(value.values) if isinstance(value, values_lib.PerReplica) else [value]
    return next((p for p in parts if data_parallel.part_size(p)), batch)


def _concat(parts):
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return nest.map_structure(
        lambda *vs: None if vs[0] is None else
        wrap(np.concatenate([values_lib.to_numpy(v) for v in vs], axis=0)), *parts)


def _gather(strategy, structure):
    if structure is None:
        return None
    flat = nest.flatten(structure)
    gathered = strategy._cross_worker_gather([values_lib.to_numpy(v) for v in flat])
    return nest.pack_like(structure, [wrap(g) for g in gathered])
