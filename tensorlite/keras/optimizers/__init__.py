"""`tf.keras.optimizers`: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, Nadam, Ftrl,
Lion, the `Optimizer` base class (OptimizerV2 API, for subclassing), learning-rate
`schedules`, and `get`.

Example:
    >>> opt = tf.keras.optimizers.get("adam")
    >>> type(opt).__name__, float(opt.learning_rate)
    ('Adam', 0.0010000000474974513)
"""
from tensorlite.keras.optimizers import schedules  # noqa: F401
from tensorlite.keras.optimizers.adadelta import Adadelta
from tensorlite.keras.optimizers.adagrad import Adagrad
from tensorlite.keras.optimizers.adam import Adam, AdamW
from tensorlite.keras.optimizers.adamax import Adamax
from tensorlite.keras.optimizers.ftrl import Ftrl
from tensorlite.keras.optimizers.lion import Lion
from tensorlite.keras.optimizers.nadam import Nadam
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.keras.optimizers.rmsprop import RMSprop
from tensorlite.keras.optimizers.sgd import SGD

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop,
            "adagrad": Adagrad, "adadelta": Adadelta, "adamax": Adamax, "nadam": Nadam,
            "ftrl": Ftrl, "lion": Lion}


def serialize(optimizer):
    """`tf.keras.optimizers.serialize`: {'class_name', 'config'}."""
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config, custom_objects=None):
    """`tf.keras.optimizers.deserialize`: an optimizer from `serialize`'s dict."""
    name = config.get("class_name", "")
    classes = {c.__name__: c for c in _BY_NAME.values()}
    classes.update(custom_objects or {})
    cls = classes.get(name) or _BY_NAME.get(name.lower())
    if cls is None:
        raise ValueError(f"Unknown optimizer: {name!r}. Known optimizers: "
                         f"{sorted(classes)}; pass custom ones in `custom_objects`.")
    return cls.from_config(config.get("config", {}))


def get(identifier):
    """`tf.keras.optimizers.get`: an optimizer from an instance, a name ('adam', 'sgd',
    'rmsprop', 'adagrad', 'adamw', 'adadelta', 'adamax', 'nadam', 'ftrl', 'lion') or a
    config dict."""
    if isinstance(identifier, Optimizer):
        return identifier
    from tensorlite.keras.mixed_precision import LossScaleOptimizer  # noqa: PLC0415
    if isinstance(identifier, LossScaleOptimizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"Unknown optimizer: {identifier!r}. Valid names: "
                             f"{sorted(_BY_NAME)}; or pass an optimizer instance.")
        return cls()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


class legacy:  # noqa: N801 - TF's module name: tf.keras.optimizers.legacy.Adam, ...
    """`tf.keras.optimizers.legacy`: the same OptimizerV2 classes."""
    Optimizer, SGD, Adam, RMSprop, Adagrad = Optimizer, SGD, Adam, RMSprop, Adagrad
    Adadelta, Adamax, Nadam, Ftrl = Adadelta, Adamax, Nadam, Ftrl


class experimental:  # noqa: N801 - tf.keras.optimizers.experimental (has AdamW)
    """`tf.keras.optimizers.experimental`."""
    Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad = Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad
    Adadelta, Adamax, Nadam, Ftrl, Lion = Adadelta, Adamax, Nadam, Ftrl, Lion
