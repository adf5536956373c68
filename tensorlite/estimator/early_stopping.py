"""`tf.estimator.experimental` early stopping: hooks that stop `train` when a predicate
holds, such as an evaluation metric not decreasing for some steps, as in TensorFlow.

The predicate runs every `run_every_secs` seconds or every `run_every_steps` global steps
(exactly one of them; the first step always runs it), after the training step. The metric
hooks read the evaluations `Estimator.evaluate` wrote to `estimator.eval_dir()` (event
files: eval_events.py), so training is interleaved with evaluation, e.g. by
train_and_evaluate.

Example:
    >>> hook = tf.estimator.experimental.stop_if_no_decrease_hook(
    ...     estimator, "loss", max_steps_without_decrease=1000, run_every_steps=100,
    ...     run_every_secs=None)
    >>> estimator.train(input_fn, hooks=[hook])
"""
import operator
import time

from tensorlite.estimator import eval_events
from tensorlite.estimator.hooks import SessionRunArgs, SessionRunHook


class _Timer:
    """TF's SecondOrStepTimer: triggers every `secs` seconds or every `steps` steps."""

    def __init__(self, secs, steps):
        if (secs is None) == (steps is None):
            raise ValueError("Either every_secs or every_steps should be provided, not both "
                             "(pass run_every_secs=None with run_every_steps)")
        self.secs, self.steps = secs, steps
        self.last_step, self.last_time = None, None

    def should_trigger(self, step):
        if self.last_step is None:
            return True
        if step == self.last_step:
            return False
        if self.steps is not None:
            return step >= self.last_step + self.steps
        return time.monotonic() >= self.last_time + self.secs

    def update(self, step):
        self.last_step, self.last_time = step, time.monotonic()


class _StopOnPredicateHook(SessionRunHook):
    """Requests a stop once `should_stop_fn()` returns True."""

    def __init__(self, should_stop_fn, run_every_secs, run_every_steps):
        if not callable(should_stop_fn):
            raise TypeError(f"`should_stop_fn` must be callable, got {should_stop_fn!r}")
        self._fn = should_stop_fn
        self._timer = _Timer(run_every_secs, run_every_steps)

    def before_run(self, run_context):
        from tensorlite.compat.v1.optimizers import get_global_step  # noqa: PLC0415
        step = get_global_step(run_context.session.graph)
        if step is None:
            raise RuntimeError("Global step should be created to use early stopping hooks")
        return SessionRunArgs(step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if self._timer.should_trigger(step):
            self._timer.update(step)
            if self._fn():
                run_context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60,
                             run_every_steps=None):
    """A hook that stops training once `should_stop_fn()` is True (checked every
    `run_every_secs` seconds or `run_every_steps` steps)."""
    if not hasattr(estimator, "eval_dir"):
        raise TypeError(f"`estimator` must be a tf.estimator.Estimator, got "
                        f"{type(estimator).__name__}")
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


def _metric(metrics, metric_name, step):
    if metric_name not in metrics:
        raise ValueError(f"Metric {metric_name} is not found in eval metrics of step {step}. "
                         f"Available metrics: {sorted(metrics)}")
    return metrics[metric_name]


def _no_improvement_hook(estimator, metric_name, max_steps, min_steps, better,
                         run_every_secs, run_every_steps):
    eval_dir = estimator.eval_dir()

    def stop():
        best_val = best_step = None
        for step, metrics in eval_events.read(eval_dir).items():
            if step < min_steps:
                continue
            val = _metric(metrics, metric_name, step)
            if best_val is None or better(val, best_val):
                best_val, best_step = val, step
            if step - best_step >= max_steps:
                return True
        return False
    return make_early_stopping_hook(estimator, stop, run_every_secs, run_every_steps)


def _threshold_hook(estimator, metric_name, threshold, min_steps, crossed,
                    run_every_secs, run_every_steps):
    eval_dir = estimator.eval_dir()

    def stop():
        return any(crossed(_metric(metrics, metric_name, step), threshold)
                   for step, metrics in eval_events.read(eval_dir).items()
                   if step >= min_steps)
    return make_early_stopping_hook(estimator, stop, run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease, min_steps=0,
                             run_every_secs=60, run_every_steps=None):
    """Stops when `metric_name` has not decreased for `max_steps_without_decrease` steps."""
    return _no_improvement_hook(estimator, metric_name, max_steps_without_decrease,
                                min_steps, operator.lt, run_every_secs, run_every_steps)


def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase, min_steps=0,
                             run_every_secs=60, run_every_steps=None):
    """Stops when `metric_name` has not increased for `max_steps_without_increase` steps."""
    return _no_improvement_hook(estimator, metric_name, max_steps_without_increase,
                                min_steps, operator.gt, run_every_secs, run_every_steps)


def stop_if_higher_hook(estimator, metric_name, threshold, min_steps=0, run_every_secs=60,
                        run_every_steps=None):
    """Stops once an evaluation's `metric_name` is above `threshold`."""
    return _threshold_hook(estimator, metric_name, threshold, min_steps, operator.gt,
                           run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator, metric_name, threshold, min_steps=0, run_every_secs=60,
                       run_every_steps=None):
    """Stops once an evaluation's `metric_name` is below `threshold`."""
    return _threshold_hook(estimator, metric_name, threshold, min_steps, operator.lt,
                           run_every_secs, run_every_steps)
