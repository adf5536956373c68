"""Which path an Estimator takes, and the graph path's entry points.

A model_fn is a graph one when, built in a `tf.Graph()`, its TRAIN spec's train_op is a
graph op (TF1's `optimizer.minimize(loss, global_step=...)`); it is an eager one when
train_op is a Keras optimizer (tensorlite's eager Estimator, estimator.py). The kind is
decided by the first `train` (or by model_dir's checkpoint: TF-format means graph, an
.npz archive means eager) and kept. Without either, evaluate raises TF's "Could not find
trained model" ValueError and predict takes the eager path (initial values, as TF predicts
from a fresh initialization).

Example:
    >>> if uses_graph(est, "train"):
    ...     step = train(est, input_fn, hooks, steps=None, max_steps=100)
"""
import contextlib

from tensorlite.checkpoint.reader import load_checkpoint
from tensorlite.estimator import graph_checkpoint, graph_loops
from tensorlite.estimator.graph_model import GraphModel, is_graph_train_op


def uses_graph(estimator, mode):
    """Whether `mode` (None: any) runs model_fn as a graph for this Estimator."""
    if estimator._kind is not None:
        return estimator._kind == "graph"
    found = graph_checkpoint.kind(estimator.model_dir)
    if found is not None:
        return found == "graph"
    return mode == "train"   # train probes by building the graph (see _probe)


def _probe(estimator, first):
    """The TRAIN GraphModel, or None when model_fn is an eager one (its build failed, or
    its train_op is a Keras optimizer) and no checkpoint says it must be a graph one."""
    must = estimator._kind == "graph" or \
        graph_checkpoint.kind(estimator.model_dir) == "graph"
    try:
        model = GraphModel(estimator, "train", *first)
    except Exception as e:  # noqa: BLE001 - an eager model_fn may not build as a graph
        if must:
            raise
        estimator._graph_error = e
        return None
    if not is_graph_train_op(model.spec.train_op):
        return None
    return model


@contextlib.contextmanager
def noting_graph_error(estimator):
    """Adds why the graph build failed to an error of the eager path (a graph model_fn
    that failed to build then fails eagerly too, with a less useful message)."""
    try:
        yield
    except Exception as e:
        if estimator._graph_error is not None:
            e.add_note(f"(Building model_fn as a TF1 graph failed first with: "
                       f"{type(estimator._graph_error).__name__}: {estimator._graph_error})")
        raise


def train(estimator, input_fn, hooks, steps, max_steps, saving_listeners=None):
    """The graph path's train; the final global step, or None for an eager model_fn."""
    batches = estimator._batches(input_fn, "train")
    first = next(batches, None)
    if first is None:       # no data: nothing to train (an eager model_fn's path says so)
        prefix = graph_checkpoint.latest(estimator.model_dir)
        if estimator._kind == "graph" or prefix is not None:
            return graph_checkpoint.step_of(prefix) if prefix else 0
        return None
    model = _probe(estimator, first)
    if model is None:
        estimator._kind = "eager"
        return None
    estimator._kind = "graph"

    def stop_at(step):
        if max_steps is not None:
            return max_steps
        return step + steps if steps is not None else None
    return graph_loops.train(estimator, model, first, batches, hooks, stop_at,
                             saving_listeners)


def evaluate(estimator, input_fn, steps, hooks, checkpoint_path, name):
    """The graph path's evaluate."""
    batches = estimator._batches(input_fn, "eval")
    first = next(batches, None)
    if first is None:
        raise ValueError("evaluate: input_fn produced no data")
    model = GraphModel(estimator, "eval", *first)
    return graph_loops.evaluate(estimator, model, first, batches, steps, hooks,
                                checkpoint_path, name)


def predict(estimator, input_fn, predict_keys, hooks, checkpoint_path, single):
    """The graph path's predict (a generator)."""
    batches = estimator._batches(input_fn, "infer")
    first = next(batches, None)
    if first is None:
        return
    model = GraphModel(estimator, "infer", first[0], None)
    yield from graph_loops.predict(estimator, model, first, batches, predict_keys, hooks,
                                   checkpoint_path, single)


def _latest_or_fail(estimator):
    prefix = graph_checkpoint.latest(estimator.model_dir)
    if prefix is None:
        raise ValueError(f"Estimator has no checkpoint in {estimator.model_dir}: train it "
                         f"first")
    return prefix


def checkpoint_names(estimator):
    """The latest checkpoint's variable names, sorted (TF's get_variable_names)."""
    return sorted(load_checkpoint(_latest_or_fail(estimator))
                  .get_variable_to_shape_map())


def checkpoint_value(estimator, name):
    """One variable's value in the latest checkpoint (TF's get_variable_value)."""
    return load_checkpoint(_latest_or_fail(estimator)).get_tensor(name)
