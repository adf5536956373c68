"""A compiled model's settings as model.json's `trainingConfig`, which `tf.loadLayersModel`
turns into `model.compile(...)` so the model trains in TF.js (`model.fit`) as it loads.

TF.js 4 has its own optimizer classes (`Adam`, `SGD`, `Momentum`, `RMSProp`, `Adagrad`,
`Adadelta`, `Adamax`, read from camel-cased configs), its losses by name (no `from_logits`)
and a few metrics. Settings with no TF.js equivalent (a learning-rate schedule, AMSGrad,
`from_logits=True`, a custom loss) leave `trainingConfig` out, with a warning naming the
setting: the model still loads in TF.js, uncompiled.
"""
import warnings

LOSSES = frozenset("""mean_squared_error mean_absolute_error mean_absolute_percentage_error
mean_squared_logarithmic_error squared_hinge hinge categorical_hinge logcosh
categorical_crossentropy sparse_categorical_crossentropy binary_crossentropy
kullback_leibler_divergence poisson""".split())
_LOSS_ALIASES = {"mse": "mean_squared_error", "mae": "mean_absolute_error",
                 "mape": "mean_absolute_percentage_error", "msle":
                 "mean_squared_logarithmic_error", "kld": "kullback_leibler_divergence",
                 "log_cosh": "logcosh"}
METRICS = frozenset("""accuracy acc binary_accuracy categorical_accuracy precision
categorical_crossentropy sparse_categorical_crossentropy mse mae mape cosine""".split())


class _NoEquivalent(Exception):
    """A compile setting TF.js cannot express."""


def _number(config, key, default=None):
    value = config.get(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _NoEquivalent(f"optimizer {key}={value!r} (TF.js takes a number, not a "
                            f"schedule)")
    return float(value)


def _optimizer(entry):
    """TF.js's {"class_name", "config"} (snake_case keys, TF.js camel-cases them)."""
    name, config = entry["class_name"], entry.get("config", {})
    lr = _number(config, "learning_rate")
    if config.get("amsgrad") or config.get("weight_decay") or config.get("use_ema"):
        raise _NoEquivalent(f"{name} with amsgrad, weight_decay or use_ema")
    if name == "Adam":
        return {"class_name": "Adam", "config": {
            "learning_rate": lr, "beta1": _number(config, "beta_1", 0.9),
            "beta2": _number(config, "beta_2", 0.999), "epsilon": _number(config, "epsilon",
                                                                             1e-7)}}
    if name == "SGD":
        momentum = _number(config, "momentum", 0.0)
        if momentum == 0.0 and not config.get("nesterov"):
            return {"class_name": "SGD", "config": {"learning_rate": lr}}
        return {"class_name": "Momentum", "config": {
            "learning_rate": lr, "momentum": momentum,
            "use_nesterov": bool(config.get("nesterov"))}}
    if name == "RMSprop":  # TF.js's `decay` is Keras's rho
        return {"class_name": "RMSProp", "config": {
            "learning_rate": lr, "decay": _number(config, "rho", 0.9),
            "momentum": _number(config, "momentum", 0.0),
            "epsilon": _number(config, "epsilon", 1e-7),
            "centered": bool(config.get("centered"))}}
    if name == "Adagrad":
        return {"class_name": "Adagrad", "config": {
            "learning_rate": lr, "initial_accumulator_value": _number(
                config, "initial_accumulator_value", 0.1)}}
    if name == "Adadelta":
        return {"class_name": "Adadelta", "config": {
            "learning_rate": lr, "rho": _number(config, "rho", 0.95),
            "epsilon": _number(config, "epsilon", 1e-7)}}
    if name == "Adamax":
        return {"class_name": "Adamax", "config": {
            "learning_rate": lr, "beta1": _number(config, "beta_1", 0.9),
            "beta2": _number(config, "beta_2", 0.999),
            "epsilon": _number(config, "epsilon", 1e-7), "decay": 0.0}}
    raise _NoEquivalent(f"optimizer {name} (TF.js has Adam, SGD, RMSprop, Adagrad, Adadelta, "
                        f"Adamax)")


def _loss(loss):
    """A loss as the snake_case name TF.js camel-cases into its losses."""
    if isinstance(loss, dict) and "class_name" in loss:
        config = loss.get("config") or {}
        if config.get("from_logits") or config.get("label_smoothing"):
            raise _NoEquivalent(f"loss {loss['class_name']} with from_logits or "
                                f"label_smoothing")
        loss = config.get("name") or loss["class_name"]
    if isinstance(loss, str):
        loss = _LOSS_ALIASES.get(loss, loss)
        if loss in LOSSES:
            return loss
    raise _NoEquivalent(f"loss {loss!r} (TF.js knows {', '.join(sorted(LOSSES))})")


def _metric(metric):
    if isinstance(metric, dict):
        metric = (metric.get("config") or {}).get("name") or metric.get("class_name")
    if isinstance(metric, str) and metric in METRICS:
        return metric
    raise _NoEquivalent(f"metric {metric!r}")


def to_tfjs(model):
    """model.json's `trainingConfig` for a compiled model; None (with a warning naming the
    setting) where TF.js has no equivalent, None without a word for an uncompiled model."""
    compiled = getattr(model, "_compile_config", None)
    if not compiled or model.optimizer is None:
        return None
    try:
        if compiled.get("loss_weights"):
            raise _NoEquivalent("loss_weights")
        loss = compiled.get("loss")
        loss = [_loss(v) for v in loss] if isinstance(loss, (list, tuple)) else _loss(loss)
        metrics = [_metric(m) for m in compiled.get("metrics") or []]
        return {"optimizer_config": _optimizer(compiled["optimizer"]), "loss": loss,
                "metrics": metrics}
    except _NoEquivalent as e:
        warnings.warn(f"model.json gets no trainingConfig: TF.js has no equivalent of the "
                      f"{e}; the model loads uncompiled there (call model.compile in JS)",
                      stacklevel=3)
        return None


# -- back: TF.js's trainingConfig as compile arguments -------------------------------------------
def _snake(name):
    """`sparseCategoricalCrossentropy` -> `sparse_categorical_crossentropy`."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def _keras_optimizer(entry):
    """A tensorlite optimizer from TF.js's optimizer_config (camelCase config keys)."""
    from tensorlite.keras import optimizers  # noqa: PLC0415
    name = entry.get("class_name")
    c = {_snake(k): v for k, v in (entry.get("config") or {}).items()}
    lr = c.get("learning_rate", 0.001)
    if name == "Adam":
        return optimizers.Adam(lr, beta_1=c.get("beta1", 0.9), beta_2=c.get("beta2", 0.999),
                               epsilon=c.get("epsilon", 1e-7))
    if name in ("SGD", "Momentum"):
        return optimizers.SGD(lr, momentum=c.get("momentum", 0.0),
                              nesterov=bool(c.get("use_nesterov")))
    if name == "RMSProp":
        return optimizers.RMSprop(lr, rho=c.get("decay", 0.9), momentum=c.get("momentum", 0.0),
                                  epsilon=c.get("epsilon", 1e-7),
                                  centered=bool(c.get("centered")))
    if name == "Adagrad":
        return optimizers.Adagrad(lr, initial_accumulator_value=c.get(
            "initial_accumulator_value", 0.1))
    if name == "Adadelta":
        return optimizers.Adadelta(lr, rho=c.get("rho", 0.95), epsilon=c.get("epsilon", 1e-7))
    if name == "Adamax":
        return optimizers.Adamax(lr, beta_1=c.get("beta1", 0.9), beta_2=c.get("beta2", 0.999),
                                 epsilon=c.get("epsilon", 1e-7))
    raise ValueError(f"trainingConfig names optimizer {name!r}, which is not one of TF.js's "
                     f"(Adam, SGD, Momentum, RMSProp, Adagrad, Adadelta, Adamax)")


def compile_from_tfjs(model, training):
    """Compiles `model` as a model.json `trainingConfig` says (TF.js's or ours). The
    optimizer starts fresh: TF.js's saved optimizer weights are not restored."""
    loss = training.get("loss")
    loss = [_snake(v) for v in loss] if isinstance(loss, list) else (
        {k: _snake(v) for k, v in loss.items()} if isinstance(loss, dict) else _snake(loss))
    metrics = training.get("metrics") or None
    if isinstance(metrics, list):
        metrics = [_snake(m) for m in metrics]
    elif isinstance(metrics, dict):
        metrics = {k: _snake(v) if isinstance(v, str) else v for k, v in metrics.items()}
    model.compile(optimizer=_keras_optimizer(training.get("optimizer_config") or {}),
                  loss=loss, metrics=metrics)
