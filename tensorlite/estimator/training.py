"""`tf.estimator.train_and_evaluate` with TrainSpec and EvalSpec (the Google I/O 2018 talk
"Distributed TensorFlow training": "use Estimator train_and_evaluate"). Locally it trains to
max_steps, evaluating every `throttle_steps` (our stand-in for TF's throttle_secs, so runs
are reproducible) and at the end.

Example:
    >>> metrics, exports = tf.estimator.train_and_evaluate(
    ...     est, tf.estimator.TrainSpec(train_fn, max_steps=100),
    ...     tf.estimator.EvalSpec(eval_fn))
"""


class TrainSpec:
    def __init__(self, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if not callable(input_fn):
            raise TypeError("TrainSpec: input_fn must be callable")
        self.input_fn, self.max_steps, self.hooks = input_fn, max_steps, hooks or []


class EvalSpec:
    def __init__(self, input_fn, steps=100, name=None, hooks=None, exporters=None,
                 start_delay_secs=120, throttle_secs=600, throttle_steps=None):
        if not callable(input_fn):
            raise TypeError("EvalSpec: input_fn must be callable")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        self.input_fn, self.steps, self.name = input_fn, steps, name
        self.hooks, self.exporters = hooks or [], exporters or []
        self.throttle_steps = throttle_steps


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains and evaluates; returns (the last evaluation's metrics, export results)."""
    metrics = None
    chunk = eval_spec.throttle_steps
    if chunk:
        target = train_spec.max_steps
        while target is None or estimator._global_step < target:
            before = estimator._global_step
            stop = before + chunk if target is None else min(before + chunk, target)
            estimator.train(train_spec.input_fn, max_steps=stop, hooks=train_spec.hooks)
            metrics = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps,
                                         name=eval_spec.name, hooks=eval_spec.hooks)
            if estimator._global_step == before or estimator._hook_stopped:
                break     # the training data ran out, or a hook (early stopping) ended it
    else:
        estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps,
                        hooks=train_spec.hooks)
        metrics = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps,
                                     name=eval_spec.name, hooks=eval_spec.hooks)
    return metrics, []
