"""What `compile` sets up: `model.compiled_loss` (losses per output, weights,
regularization) and `model.compiled_metrics` (resolved lazily, since 'accuracy' depends on
the shapes of the first batch), as the custom train_step of the TF Dev Summit 2020 talk
"Learning to read with TensorFlow and Keras" uses them."""
from tensorlite.framework import nest
from tensorlite.ops import math_ops


def _per_output(spec, output_names, what):
    """Spreads a loss/metric spec over outputs: one for all, a list in order, or a dict."""
    n = len(output_names)
    if isinstance(spec, dict):
        unknown = set(spec) - set(output_names)
        if unknown:
            raise ValueError(f"Unknown entries in {what} dictionary: {sorted(unknown)}. Only "
                             f"expected the following keys: {output_names}")
        return [spec.get(name) for name in output_names]
    if isinstance(spec, (list, tuple)) and n > 1 and what == "loss":
        if len(spec) != n:
            raise ValueError(f"When passing a list as loss, it should have one entry per model "
                             f"outputs. The model has {n} outputs, but you passed "
                             f"loss={list(spec)}")
        return list(spec)
    if isinstance(spec, (list, tuple)) and what != "loss" and \
            any(isinstance(s, (list, tuple, dict)) for s in spec):
        # Keras broadcasts a flat list to every output; a list of lists is one per output
        if len(spec) != n:
            raise ValueError(f"When passing a list of lists as {what}, it should have one "
                             f"entry per model output. The model has {n} outputs, but you "
                             f"passed {what}={list(spec)}")
        return list(spec)
    return [spec] * n


class LossesContainer:
    def __init__(self, loss, loss_weights=None, output_names=("output_1",)):
        from tensorlite.keras import losses, metrics  # noqa: PLC0415
        self._spec = loss
        self._output_names = list(output_names)
        self._losses = [None if s is None else _as_loss_object(losses, losses.get(s))
                        for s in _per_output(loss, self._output_names, "loss")]
        if loss_weights is None:
            self._weights = [1.0] * len(self._losses)
        elif isinstance(loss_weights, dict):
            self._weights = [loss_weights.get(n, 1.0) for n in self._output_names]
        else:
            self._weights = list(loss_weights)
        self._loss_metric = metrics.Mean(name="loss")
        self._per_output_metrics = [metrics.Mean(name=f"{n}_loss") for n in self._output_names] \
            if len(self._output_names) > 1 and loss is not None else []
        self._used = False  # compiled without a loss: tracked once a step computes one

    @property
    def losses(self):
        return self._losses

    @property
    def per_output_metrics(self):
        """The per-output loss trackers (a model with several outputs and a loss)."""
        return list(self._per_output_metrics)

    @property
    def metrics(self):
        """The loss trackers: none for a model compiled without a loss until a step
        computes its losses (those it adds itself, add_loss), as in tf.keras 2."""
        if self._spec is None and not self._used:
            return []
        return [self._loss_metric] + self._per_output_metrics

    def __call__(self, y_true, y_pred, sample_weight=None, regularization_losses=None):
        total, per_output, batch = self.compute(y_true, y_pred, sample_weight,
                                                regularization_losses)
        self.update_metrics(total, per_output, batch)
        return total

    def update_metrics(self, total, per_output, batch):
        """The loss trackers' update, separate so a graph-compiled step can run it eagerly."""
        self._used = True
        for metric, value in zip(self._per_output_metrics, per_output):
            if value is not None:
                metric.update_state(value, sample_weight=batch)
        self._loss_metric.update_state(total, sample_weight=batch)

    def compute(self, y_true, y_pred, sample_weight=None, regularization_losses=None):
        """(total loss, per-output losses, batch size) without touching the metrics."""
        ys_true = _as_list(y_true, self._output_names)
        ys_pred = _as_list(y_pred, self._output_names)
        sws = _as_list(sample_weight, self._output_names) if sample_weight is not None else \
            [None] * len(ys_pred)
        total = None
        per_output = [None] * len(self._per_output_metrics)
        batch = nest.flatten(ys_pred)[0].shape[0] if ys_pred else None
        for i, (loss_fn, w) in enumerate(zip(self._losses, self._weights)):
            if loss_fn is None or i >= len(ys_pred):
                continue
            value = loss_fn(ys_true[i], ys_pred[i], sample_weight=sws[i] if len(sws) > i else None)
            if per_output:
                per_output[i] = value
            if w != 1.0:
                value = math_ops.multiply(value, w)
            total = value if total is None else math_ops.add(total, value)
        if regularization_losses:  # add_loss and regularizer losses
            reg = math_ops.add_n([math_ops.cast(r, total.dtype if total is not None else r.dtype)
                                  for r in regularization_losses])
            total = reg if total is None else math_ops.add(total, reg)
        if total is None:
            raise ValueError("No loss found. You may have forgotten to provide a `loss` "
                             "argument in the `compile()` method (or to add one with "
                             "add_loss, or to override train_step).")
        return total, per_output, batch

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()


def _as_loss_object(losses, fn):
    """String aliases give plain functions (as in Keras); wrap them to take sample_weight."""
    if isinstance(fn, losses.Loss):
        return fn
    return losses.LossFunctionWrapper(fn, name=getattr(fn, "__name__", "loss"))


def _named(spec):
    """Whether a compile() metrics argument names at least one metric."""
    if isinstance(spec, dict):
        return any(_named(v) for v in spec.values())
    if isinstance(spec, (list, tuple)):
        return any(_named(v) for v in spec)
    return spec is not None


def _as_list(values, output_names):
    if isinstance(values, dict):
        return [values[n] for n in output_names]
    if isinstance(values, (list, tuple)) and len(output_names) > 1:
        return list(values)
    return [values]


class MetricsContainer:
    def __init__(self, metrics=None, weighted_metrics=None, output_names=("output_1",),
                 loss=None):
        self._spec = metrics
        self._weighted_spec = weighted_metrics
        self._output_names = list(output_names)
        self._loss = loss
        self._metrics = None  # per output: list of (metric, weighted)

    name = "compile_metrics"  # as Keras 3 names the compiled metrics in `model.metrics`

    @property
    def built(self):
        return self._metrics is not None

    def has_metrics(self):
        """Whether compile() named any metric (they are made at the first update)."""
        return any(_named(spec) for spec in (self._spec, self._weighted_spec))

    def result(self):
        """Each compiled metric's result by name (empty before the first update)."""
        return {m.name: m.result() for m in self.metrics}

    def _build(self, ys_true, ys_pred):
        from tensorlite.keras import metrics as metrics_mod  # noqa: PLC0415
        self._metrics = []
        specs = _per_output(self._spec or [], self._output_names, "metrics")
        wspecs = _per_output(self._weighted_spec or [], self._output_names, "weighted_metrics")
        losses = _per_output(self._loss, self._output_names, "loss")
        multi = len(self._output_names) > 1
        for i, name in enumerate(self._output_names):
            out = []
            for group, weighted in ((specs[i], False), (wspecs[i], True)):
                for s in group if isinstance(group, (list, tuple)) else [group]:
                    if s is None:
                        continue
                    m = metrics_mod.resolve(s, losses[i], ys_true[i].shape, ys_pred[i].shape)
                    if multi:
                        m._name = f"{name}_{m.name}"
                    out.append((m, weighted))
            self._metrics.append(out)

    @property
    def metrics(self):
        if self._metrics is None:
            return []
        return [m for per in self._metrics for m, _ in per]

    def update_state(self, y_true, y_pred, sample_weight=None):
        ys_true = _as_list(y_true, self._output_names)
        ys_pred = _as_list(y_pred, self._output_names)
        if self._metrics is None:
            self._build(ys_true, ys_pred)
        sws = _as_list(sample_weight, self._output_names) if sample_weight is not None else \
            [None] * len(ys_pred)
        for i, per in enumerate(self._metrics):
            for m, weighted in per:
                # as in TF 2 Keras: only weighted_metrics see sample weights
                m.update_state(ys_true[i], ys_pred[i], sample_weight=sws[i] if weighted else None)

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()
