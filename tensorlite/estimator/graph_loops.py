"""train / evaluate / predict of a graph-mode Estimator (model_fn's train_op is a TF1 graph
op), run as TensorFlow's Estimator runs them: a fresh graph per call, a Session whose
variables start from model_dir's latest checkpoint, SessionRunHooks around each step.

- train: runs train_op per batch until `steps` more / `max_steps` / the data ends / a hook
  stops; saves model.ckpt-<step> every `save_checkpoints_steps` (or _secs) and at the end,
  and the loss as a summary in model_dir every `save_summary_steps`. The step's loss and
  the hooks' fetches are read after train_op ran (Session.run runs operations first), so
  they show the updated variables and the incremented global step.
- evaluate: runs every eval_metric_ops update_op (and the loss) per batch, then their
  value tensors; returns {'loss', metrics..., 'global_step'} and writes them as scalar
  summaries in model_dir/eval (eval_<name>) for early-stopping hooks and TensorBoard.
- predict: yields model_fn's predictions per example (or per batch).

Each takes the GraphModel built from input_fn's `first` batch and `batches`, the iterator of
the remaining (features, labels) pairs.
"""
import time

import numpy as np

from tensorlite.distribute.distribute_lib import should_write_checkpoint
from tensorlite.estimator import eval_events, graph_checkpoint
from tensorlite.estimator.graph_model import as_numpy
from tensorlite.estimator.hooks import HookRunner


class NanLossDuringTrainingError(RuntimeError):
    """`tf.compat.v1.train.NanLossDuringTrainingError`: the loss became NaN or infinite."""

    def __str__(self):
        return "NaN loss during training."


class _Checkpoints:
    """Checkpointing during train: every `save_checkpoints_steps` steps, or every
    `save_checkpoints_secs` seconds (RunConfig allows one of them), and at the end, with
    the CheckpointSaverListeners around each save (one whose after_save returns True ends
    training, as in TF)."""

    def __init__(self, estimator, sess, model, listeners):
        config = estimator.config
        self.steps, self.secs = config.save_checkpoints_steps, config.save_checkpoints_secs
        self.last = time.monotonic()
        self.estimator, self.sess, self.model = estimator, sess, model
        self.listeners, self.stop = list(listeners or []), False
        self.last_saved = None
        for listener in self.listeners:
            listener.begin()

    def _due(self, step):
        if self.steps:
            return step % self.steps == 0
        if self.secs and time.monotonic() - self.last >= self.secs:
            self.last = time.monotonic()
            return True
        return False

    def maybe_save(self, step):
        if self._due(step):
            self.save(step)

    def save(self, step):
        if not should_write_checkpoint() or step == self.last_saved:
            return     # the end's save of a step saved already is skipped, as in TF
        self.last_saved = step
        for listener in self.listeners:
            listener.before_save(self.sess, step)
        graph_checkpoint.save(self.sess, self.model.variables, self.estimator.model_dir, step,
                              self.estimator.config.keep_checkpoint_max)
        for listener in self.listeners:
            self.stop = bool(listener.after_save(self.sess, step)) or self.stop

    def end(self, step):
        for listener in self.listeners:
            listener.end(self.sess, step)


class _LossSummaries:
    """The training loss as a `loss` scalar in model_dir's event file every
    `save_summary_steps` steps (TF's Estimator writes it there for TensorBoard)."""

    def __init__(self, estimator):
        self.every = estimator.config.save_summary_steps
        self.model_dir, self.writer = estimator.model_dir, None

    def maybe_write(self, step, loss):
        if not self.every or step % self.every or not should_write_checkpoint():
            return
        from tensorlite.summary.event_writer import (Event, EventFileWriter,  # noqa: PLC0415
                                                     Summary)
        if self.writer is None:
            self.writer = EventFileWriter(self.model_dir)
        self.writer.add_event(Event(step=int(step), summary=Summary(value=[
            Summary.Value(tag="loss", simple_value=float(np.mean(loss)))])))

    def close(self):
        if self.writer is not None:
            self.writer.close()


def train(estimator, model, first, batches, hooks, stop_at, listeners=None):
    """Trains `model` (a TRAIN GraphModel) from batch `first` on; `stop_at(step)` gives the
    step to stop at. Returns the final global step."""
    spec = model.spec
    estimator._hook_stopped = False
    runner = HookRunner(list(hooks or []) + list(spec.training_chief_hooks or [])
                        + list(spec.training_hooks or []), model.graph)
    runner.begin()
    sess = model.session(estimator.model_dir, warm_start=estimator._warm_start)
    step = int(sess.run(model.global_step))
    stop = stop_at(step)
    if stop is not None and step >= stop:
        sess.close()
        return step
    runner.after_create_session(sess)
    saves = _Checkpoints(estimator, sess, model, listeners)
    summaries = _LossSummaries(estimator)
    try:
        step = _steps(model, sess, runner, _chain(first, batches), stop, step, saves,
                      summaries)
    finally:
        summaries.close()
    saves.save(step)
    saves.end(step)
    estimator._hook_stopped = runner.stop or saves.stop
    runner.end(sess)
    sess.close()
    return step


def _steps(model, sess, runner, batches, stop, step, saves, summaries):
    """The training steps; returns the global step reached."""
    spec = model.spec
    for features, labels in batches:
        # the loss is read after train_op ran (Session.run runs operations first)
        _, new, loss = runner.run(sess, [spec.train_op, model.global_step, spec.loss],
                                  model.feed(features, labels))
        if not np.all(np.isfinite(loss)):   # TF's default NanTensorHook
            raise NanLossDuringTrainingError()
        step = _advanced(sess, model, step, int(new))
        summaries.maybe_write(step, loss)
        saves.maybe_save(step)
        if runner.stop or saves.stop or (stop is not None and step >= stop):
            break
    return step


def _advanced(sess, model, before, after):
    """The global step after a step; incremented here when train_op did not (a train_op
    built without minimize(..., global_step=...) would otherwise never reach max_steps)."""
    if after > before:
        return after
    gs = model.global_step
    sess._state[id(gs)] = (gs, np.asarray(before + 1, dtype=gs.dtype.as_numpy_dtype))
    return before + 1


def _chain(first, rest):
    yield first
    yield from rest


def evaluate(estimator, model, first, batches, steps, hooks, checkpoint_path, name):
    """The metrics dict of one evaluation pass of an EVAL GraphModel."""
    spec = model.spec
    values, updates = {}, {}
    for key, pair in spec.eval_metric_ops.items():
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"eval_metric_ops[{key!r}] must be a (value, update_op) pair such "
                            f"as tf.compat.v1.metrics.mean returns, got {type(pair).__name__}")
        values[key], updates[key] = pair
    runner = HookRunner(list(hooks or []) + list(spec.evaluation_hooks or []), model.graph)
    runner.begin()
    sess = model.session(estimator.model_dir, checkpoint_path, require_checkpoint=True)
    runner.after_create_session(sess)
    losses = []
    for i, (features, labels) in enumerate(_chain(first, batches)):
        if steps is not None and i >= steps:
            break
        loss, _ = runner.run(sess, [spec.loss, list(updates.values())],
                             model.feed(features, labels))
        losses.append(float(np.mean(loss)))
        if runner.stop:
            break
    out = {"loss": np.float32(np.mean(losses))}   # TF: metrics.mean of the per-batch losses
    out.update({k: v for k, v in sess.run(values).items()})
    out["global_step"] = np.int64(sess.run(model.global_step))
    runner.end(sess)
    sess.close()
    eval_events.write(estimator.eval_dir(name), int(out["global_step"]), out)
    return out


def predict(estimator, model, first, batches, predict_keys, hooks, checkpoint_path, single):
    """Yields a PREDICT GraphModel's outputs: dicts per example (single) or per batch."""
    spec = model.spec
    preds = spec.predictions
    if isinstance(preds, dict) and predict_keys is not None:
        missing = [k for k in predict_keys if k not in preds]
        if missing:
            raise ValueError(f"Expected to run at least one output from {list(preds)}, "
                             f"provided {missing}")
        preds = {k: v for k, v in preds.items() if k in predict_keys}
    runner = HookRunner(list(hooks or []) + list(spec.prediction_hooks or []), model.graph)
    runner.begin()
    sess = model.session(estimator.model_dir, checkpoint_path, require_checkpoint=True)
    runner.after_create_session(sess)
    try:
        for features, _ in _chain(first, batches):
            out = runner.run(sess, preds, model.feed(features))
            yield from _examples(out, single)
            if runner.stop:
                break
        runner.end(sess)
    finally:
        sess.close()


def _examples(out, single):
    if not single:
        yield out
    elif isinstance(out, dict):
        n = len(as_numpy(next(iter(out.values()))))
        for i in range(n):
            yield {k: v[i] for k, v in out.items()}
    else:
        yield from np.asarray(out)
