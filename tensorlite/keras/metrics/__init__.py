"""`tf.keras.metrics`: stateful metrics and the functional metric forms.

A `Metric` accumulates over batches in its variables: `update_state(y_true, y_pred,
sample_weight=None)` adds a batch, `result()` reads the value (a float32 Tensor),
`reset_state()` zeroes it, and calling the metric does update + result. Metrics are not
differentiated, so the built-ins update on NumPy values (fast, and invisible to a tape).

`resolve(identifier, loss, y_true_shape, y_pred_shape)` turns what `compile(metrics=...)`
receives into Metric objects, choosing the accuracy that fits the loss and shapes when
given 'accuracy' / 'acc', as Keras does.

Example:
    >>> m = tf.keras.metrics.SparseCategoricalAccuracy()
    >>> float(m([1, 0], [[0.1, 0.9], [0.2, 0.8]]))
    0.5
"""
from tensorlite.framework.module import camel_to_snake
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras import backend
from tensorlite.keras import losses as _losses
from tensorlite.keras.metrics.base import (  # noqa: F401 - tf.keras.metrics
    Mean, MeanMetricWrapper, Metric, Sum, metric_of_result, remember_result)
from tensorlite.keras.metrics.confusion import (  # noqa: F401
    AUC, FalseNegatives, FalsePositives, Precision, Recall, TrueNegatives, TruePositives)
from tensorlite.keras.metrics.functional import (  # noqa: F401
    KLD, MAE, MAPE, MSE, MSLE, accuracy, binary_accuracy, binary_crossentropy,
    categorical_accuracy, categorical_crossentropy, categorical_hinge, cosine_similarity, hinge,
    kl_divergence, kld, log_cosh, logcosh, mae, mape, mean_absolute_error,
    mean_absolute_percentage_error, mean_squared_error, mean_squared_logarithmic_error, mse, msle,
    poisson, sparse_categorical_accuracy, sparse_categorical_crossentropy,
    sparse_top_k_categorical_accuracy, squared_hinge, top_k_categorical_accuracy)
from tensorlite.keras.metrics.mean_metrics import (  # noqa: F401
    Accuracy, BinaryAccuracy, BinaryCrossentropy, CategoricalAccuracy, CategoricalCrossentropy,
    CategoricalHinge, CosineSimilarity, Hinge, KLDivergence, LogCoshError, MeanAbsoluteError,
    MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogarithmicError, Poisson,
    RootMeanSquaredError, SparseCategoricalAccuracy, SparseCategoricalCrossentropy,
    SparseTopKCategoricalAccuracy, SquaredHinge, TopKCategoricalAccuracy)


# -- lookup ---------------------------------------------------------------------------------
_FUNCTIONS = {
    "accuracy": accuracy, "acc": accuracy, "binary_accuracy": binary_accuracy,
    "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
    "mean_squared_error": mse, "mse": mse, "MSE": mse, "mean_absolute_error": mae,
    "mae": mae, "MAE": mae, "mean_absolute_percentage_error": mape, "mape": mape,
    "MAPE": mape, "mean_squared_logarithmic_error": msle, "msle": msle, "MSLE": msle,
    "cosine_similarity": cosine_similarity, "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "kl_divergence": kl_divergence, "kld": kld, "KLD": kld,
    "kullback_leibler_divergence": kl_divergence, "hinge": hinge,
    "squared_hinge": squared_hinge, "categorical_hinge": categorical_hinge,
    "poisson": poisson, "logcosh": log_cosh, "log_cosh": log_cosh,
}
_CLASSES = {c.__name__: c for c in (
    Metric, Mean, Sum, MeanMetricWrapper, Accuracy, BinaryAccuracy, CategoricalAccuracy,
    SparseCategoricalAccuracy, TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy,
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, RootMeanSquaredError, CosineSimilarity, BinaryCrossentropy,
    CategoricalCrossentropy, SparseCategoricalCrossentropy, KLDivergence, Hinge, SquaredHinge,
    CategoricalHinge, Poisson, LogCoshError, AUC, Precision, Recall, TruePositives,
    FalsePositives, TrueNegatives, FalseNegatives)}
_ABSTRACT = {"Metric", "MeanMetricWrapper"}


def serialize(metric):
    """`tf.keras.metrics.serialize`."""
    if isinstance(metric, Metric):
        return {"class_name": type(metric).__name__, "config": metric.get_config()}
    return getattr(metric, "__name__", metric)


def deserialize(config, custom_objects=None):
    """`tf.keras.metrics.deserialize`: a function from its name, a Metric from its config."""
    objects = dict(custom_objects or {})
    if isinstance(config, dict):
        name = config.get("class_name")
        cls = objects.get(name) or _CLASSES.get(name)
        if cls is None or name in _ABSTRACT:
            raise ValueError(f"Unknown metric class: {name!r}. Valid classes: "
                             f"{sorted(set(_CLASSES) - _ABSTRACT)}")
        return cls.from_config(config.get("config", {}))
    if config in objects:
        return objects[config]
    if config in _FUNCTIONS:
        return _FUNCTIONS[config]
    if config in _CLASSES and config not in _ABSTRACT:
        return _CLASSES[config]()
    raise ValueError(f"Unknown metric function: '{config}'. Valid names: "
                     f"{sorted(_FUNCTIONS)} and classes {sorted(set(_CLASSES) - _ABSTRACT)}; "
                     f"or pass a Metric instance or a callable fn(y_true, y_pred).")


def get(identifier):
    """`tf.keras.metrics.get`: a metric function or object from a name, config or callable."""
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


def _dims(shape):
    if shape is None:
        return None
    if isinstance(shape, TensorShape):
        return None if shape.rank is None else shape.as_list()
    return [None if d is None else int(d) for d in shape]


def _accuracy_kind(loss, y_true_shape, y_pred_shape):
    kind = _losses._loss_kind(loss)
    t, p = _dims(y_true_shape), _dims(y_pred_shape)
    p_last = p[-1] if p else None
    t_last = t[-1] if t else None
    if kind == "binary" or p_last == 1:
        return "binary"
    if kind == "sparse":
        return "sparse"
    if t is not None and p is not None and (len(t) < len(p) or (t_last == 1 and
                                                                 (p_last or 0) > 1)):
        return "sparse"
    return "categorical"


def resolve(identifier, loss=None, y_true_shape=None, y_pred_shape=None):
    """A Metric object for one entry of `compile(metrics=[...])`. 'accuracy'/'acc' (and
    'crossentropy'/'ce') pick the binary, sparse categorical or categorical form from the
    loss and the label/output shapes, keeping the name as given; other names, functions and
    Loss objects are wrapped in MeanMetricWrapper; Metric objects pass through."""
    if identifier is None:
        return None
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str) and identifier.lower() in ("accuracy", "acc"):
        kind = _accuracy_kind(loss, y_true_shape, y_pred_shape)
        cls = {"binary": BinaryAccuracy, "sparse": SparseCategoricalAccuracy,
               "categorical": CategoricalAccuracy}[kind]
        return cls(name=identifier)
    if isinstance(identifier, str) and identifier.lower() in ("crossentropy", "ce"):
        kind = _accuracy_kind(loss, y_true_shape, y_pred_shape)
        cls = {"binary": BinaryCrossentropy, "sparse": SparseCategoricalCrossentropy,
               "categorical": CategoricalCrossentropy}[kind]
        return cls(name=identifier)
    obj = get(identifier)
    if isinstance(obj, Metric):
        return obj
    if isinstance(obj, _losses.Loss):
        return MeanMetricWrapper(obj, name=obj.name or camel_to_snake(type(obj).__name__))
    name = identifier if isinstance(identifier, str) else getattr(obj, "__name__", None)
    if name is None or name == "<lambda>":
        name = backend.unique_object_name("custom_metric") if name is None else "lambda"
    return MeanMetricWrapper(obj, name=name)
