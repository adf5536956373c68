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
import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.module import Module, camel_to_snake
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_notes import TensorNotes
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.variables import Variable
from tensorlite.keras import backend
from tensorlite.keras.host_state import graph_aware
from tensorlite.keras import losses as _losses


def _np(x):
    """A value as a NumPy array without going through Tensor.numpy (no tape hooks)."""
    if type(x) is Tensor:
        return x._value
    if type(x) is Variable:
        return x._t._value
    return np.asarray(x)


def _set(var, value):
    if type(var) is Variable:
        var._t = wrap(np.asarray(value, dtype=var._t._value.dtype))
    else:
        var.assign(np.asarray(value, dtype=var.dtype.as_numpy_dtype))


def _add(var, value):
    _set(var, _np(var) + value)


def _divide_no_nan(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b == 0, 0.0, a / np.where(b == 0, 1.0, b))


def _squeeze_or_expand(y_pred, y_true=None, sample_weight=None):
    """Keras's rank matching on NumPy arrays (see losses.squeeze_or_expand_dimensions)."""
    if y_true is not None:
        if y_pred.ndim - y_true.ndim == 1 and y_pred.shape[-1] == 1:
            y_pred = y_pred[..., 0]
        elif y_true.ndim - y_pred.ndim == 1 and y_true.shape[-1] == 1:
            y_true = y_true[..., 0]
    if sample_weight is None:
        return y_pred, y_true, None
    if sample_weight.ndim and sample_weight.ndim - y_pred.ndim == 1 and \
            sample_weight.shape[-1] == 1:
        sample_weight = sample_weight[..., 0]
    elif sample_weight.ndim and y_pred.ndim - sample_weight.ndim == 1:
        sample_weight = sample_weight[..., None]
    return y_pred, y_true, sample_weight


def _broadcast_weights(name, weights, values):
    try:
        return np.broadcast_to(weights, values.shape)
    except ValueError:
        raise ValueError(f"{name}: sample_weight of shape {weights.shape} cannot be broadcast "
                         f"to the values of shape {values.shape}; give one weight per sample "
                         f"(shape [batch])") from None


_RESULTS = TensorNotes()  # a metric's result tensor -> the metric


def remember_result(result, metric):
    """Marks `result` as `metric`'s: `layer.add_metric(metric(y, p))` then tracks that
    metric itself (already updated), as tf.keras 2 does through the tensor's _metric_obj."""
    _RESULTS.set(result, metric)


def metric_of_result(value):
    """The metric whose __call__ returned `value`, or None."""
    return _RESULTS.get(value)


class Metric(Module):
    """Base class of stateful metrics: subclasses create variables with `add_weight` and
    implement `update_state` and `result`.

    The built-in metrics keep NumPy state: inside a tf.function their update_state, result
    and reset_state each become one host callback node (keras/host_state.py), so every run
    of the graph updates and reads the real state. A user's subclass written with tf ops and
    `assign_add` traces op by op as usual."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__ == __name__:
            _make_graph_aware(cls)

    def __init__(self, name=None, dtype=None, **kwargs):
        if name is None:
            name = backend.unique_object_name(camel_to_snake(type(self).__name__))
        self._name = name
        self._scope_name = name + "/"
        self._dtype = dtypes.as_dtype(dtype or backend.floatx())
        self._metric_vars = []
        self.stateful = True
        self.built = True

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype.name

    def add_weight(self, name, shape=(), aggregation=None, synchronization=None,
                   initializer=None, dtype=None):
        """A non-trainable state variable (zeros unless `initializer` says otherwise)."""
        dt = dtypes.as_dtype(dtype or self._dtype)
        shape = tuple(TensorShape(shape).as_list())
        if initializer is None:
            value = np.zeros(shape, dt.as_numpy_dtype)
        else:
            from tensorlite.keras import initializers  # noqa: PLC0415
            value = initializers.get(initializer)(shape, dtype=dt)
        v = Variable(value, name=name, dtype=dt, trainable=False)
        self._metric_vars.append(v)
        return v

    @property
    def variables(self):
        extra = [v for v in Module.variables.fget(self)
                 if all(v is not w for w in self._metric_vars)]
        return list(self._metric_vars) + extra

    @property
    def weights(self):
        return self.variables

    @property
    def trainable_weights(self):
        return []

    @property
    def non_trainable_weights(self):
        return self.variables

    @property
    def trainable_variables(self):
        return ()

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("Must be implemented in subclasses.")

    def result(self):
        raise NotImplementedError("Must be implemented in subclasses.")

    def reset_state(self):
        """Sets every state variable back to zeros."""
        for v in self.variables:
            _set(v, np.zeros(_np(v).shape))

    def reset_states(self):
        return self.reset_state()

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        result = self.result()
        remember_result(result, self)
        return result

    def _out(self, value):
        return wrap(np.asarray(value, dtype=self._dtype.as_numpy_dtype))

    def get_config(self):
        return {"name": self._name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<tf.keras.metrics.{type(self).__name__} name={self._name!r}>"


def _make_graph_aware(cls):
    for name in ("update_state", "result", "reset_state"):
        fn = cls.__dict__.get(name)
        if fn is not None and not getattr(fn, "_graph_aware", False):
            dtype = (lambda self: self._dtype) if name == "result" else None
            setattr(cls, name, graph_aware(fn, "KerasMetric", dtype))


_make_graph_aware(Metric)


# -- Sum / Mean ------------------------------------------------------------------------------
class _Reduce(Metric):
    _weighted_mean = True

    def __init__(self, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_weight("total")
        if self._weighted_mean:
            self.count = self.add_weight("count")

    def update_state(self, values, sample_weight=None):
        """Adds `values` (weighted, if `sample_weight` is given) to the state."""
        v = np.asarray(_np(values), dtype=np.float64)
        if sample_weight is None:
            n = v.size
        else:
            w = np.asarray(_np(sample_weight), dtype=np.float64)
            v, _, w = _squeeze_or_expand(v, None, w)
            if w.ndim and w.ndim < v.ndim:
                # Weights of lower rank (TF broadcasts weights only at equal rank): reduce
                # the values down to the weights' rank.
                axes = tuple(range(w.ndim, v.ndim))
                v = v.sum(axis=axes) if not self._weighted_mean else v.mean(axis=axes)
            w = _broadcast_weights(self._name, w, v)
            v = v * w
            n = w.sum()
        _add(self.total, v.sum())
        if self._weighted_mean:
            _add(self.count, n)

    def result(self):
        total = float(_np(self.total))
        if not self._weighted_mean:
            return self._out(total)
        count = float(_np(self.count))
        return self._out(total / count if count else 0.0)


class Sum(_Reduce):
    """`tf.keras.metrics.Sum`: the (weighted) sum of the values."""

    _weighted_mean = False

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)


class Mean(_Reduce):
    """`tf.keras.metrics.Mean`: the (weighted) mean of the values."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)


# -- functional metrics on NumPy arrays ------------------------------------------------------
def _np_accuracy(y_true, y_pred):
    if y_true.dtype != y_pred.dtype:
        y_pred = y_pred.astype(y_true.dtype)
    return (y_true == y_pred).astype(np.float32)


def _np_binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = (y_pred > threshold).astype(y_pred.dtype)
    eq = (y_true == y_pred).astype(np.float32)
    return eq.mean(axis=-1) if eq.ndim else eq


def _np_sparse_matches(y_true, y_pred):
    y_true = np.asarray(y_true)
    squeezed = y_true.ndim == y_pred.ndim and y_true.ndim > 0
    if squeezed:
        if y_true.shape[-1] != 1:
            raise ValueError(f"sparse categorical accuracy: labels of shape {y_true.shape} do "
                             f"not fit predictions of shape {y_pred.shape}; sparse labels are "
                             f"class indices of shape {y_pred.shape[:-1]}. For one-hot labels "
                             f"use categorical accuracy.")
        y_true = y_true[..., 0]
    pred = np.argmax(y_pred, axis=-1)
    matches = (y_true == pred.astype(y_true.dtype)).astype(np.float32)
    return matches[..., None] if squeezed else matches


def _np_categorical_accuracy(y_true, y_pred):
    if y_true.shape != y_pred.shape:
        raise ValueError(f"categorical accuracy: labels of shape {y_true.shape} do not fit "
                         f"predictions of shape {y_pred.shape}; one-hot labels need one "
                         f"column per class. For integer labels use sparse categorical "
                         f"accuracy.")
    return _np_sparse_matches(np.argmax(y_true, axis=-1), y_pred)


def _in_top_k(pred, labels, k):
    """tf.math.in_top_k: fewer than k classes score strictly higher than the label's (ties
    count in its favour); out-of-range labels and non-finite scores are not in the top k."""
    n = pred.shape[-1]
    pred = pred.reshape(-1, n)
    labels = labels.reshape(-1).astype(np.int64)
    ok = (labels >= 0) & (labels < n)
    target = pred[np.arange(len(labels)), np.where(ok, labels, 0)]
    higher = (pred > target[:, None]).sum(axis=-1)
    return (higher < k) & ok & np.isfinite(target)


def _np_sparse_top_k(y_true, y_pred, k=5):
    y_true = np.asarray(y_true)
    if y_true.ndim == y_pred.ndim and y_true.ndim and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    out = _in_top_k(y_pred, y_true, k).astype(np.float32)
    return out.reshape(y_pred.shape[:-1])


def _np_top_k(y_true, y_pred, k=5):
    return _np_sparse_top_k(np.argmax(y_true, axis=-1), y_pred, k)


def _mean_last(x):
    return x.mean(axis=-1) if x.ndim else x


def _np_mse(y_true, y_pred):
    return _mean_last(np.square(y_pred - y_true))


def _np_mae(y_true, y_pred):
    return _mean_last(np.abs(y_pred - y_true))


def _np_mape(y_true, y_pred):
    eps = backend.epsilon()
    return 100.0 * _mean_last(np.abs((y_true - y_pred) / np.maximum(np.abs(y_true), eps)))


def _np_msle(y_true, y_pred):
    eps = backend.epsilon()
    return _mean_last(np.square(np.log(np.maximum(y_pred, eps) + 1)
                                - np.log(np.maximum(y_true, eps) + 1)))


def _np_cosine(y_true, y_pred, axis=-1):
    def unit(x):
        return x / np.sqrt(np.maximum(np.sum(x * x, axis=axis, keepdims=True), 1e-12))
    return np.sum(unit(y_true) * unit(y_pred), axis=axis)


def _float_arrays(y_true, y_pred):
    y_pred = _np(y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = y_pred.astype(np.float32)
    return _np(y_true).astype(y_pred.dtype, copy=False), y_pred


def _public(np_fn, name, doc, cast_true=True):
    """The public functional form (Tensors in, Tensor out) of a NumPy metric."""
    def fn(y_true, y_pred, **kwargs):
        if cast_true:
            t, p = _float_arrays(y_true, y_pred)
        else:
            t, p = _np(y_true), _np(y_pred)
        return wrap(np.asarray(np_fn(t, p, **kwargs)))
    fn.__name__ = name
    fn.__doc__ = doc
    fn._numpy_fn = np_fn
    fn._cast_true = cast_true
    return fn


accuracy = _public(_np_accuracy, "accuracy", "`tf.keras.metrics.accuracy`: y_true == y_pred.",
                   cast_true=False)
binary_accuracy = _public(_np_binary_accuracy, "binary_accuracy",
                          "`tf.keras.metrics.binary_accuracy`: mean(y_true == (y_pred > t)).")
categorical_accuracy = _public(_np_categorical_accuracy, "categorical_accuracy",
                               "`tf.keras.metrics.categorical_accuracy`: argmax match.")
sparse_categorical_accuracy = _public(
    _np_sparse_matches, "sparse_categorical_accuracy",
    "`tf.keras.metrics.sparse_categorical_accuracy`: label == argmax(y_pred).",
    cast_true=False)
top_k_categorical_accuracy = _public(_np_top_k, "top_k_categorical_accuracy",
                                     "`tf.keras.metrics.top_k_categorical_accuracy`.")
sparse_top_k_categorical_accuracy = _public(
    _np_sparse_top_k, "sparse_top_k_categorical_accuracy",
    "`tf.keras.metrics.sparse_top_k_categorical_accuracy`.", cast_true=False)
mean_squared_error = mse = MSE = _public(_np_mse, "mean_squared_error",
                                         "`tf.keras.metrics.mean_squared_error`.")
mean_absolute_error = mae = MAE = _public(_np_mae, "mean_absolute_error",
                                          "`tf.keras.metrics.mean_absolute_error`.")
mean_absolute_percentage_error = mape = MAPE = _public(
    _np_mape, "mean_absolute_percentage_error",
    "`tf.keras.metrics.mean_absolute_percentage_error`.")
mean_squared_logarithmic_error = msle = MSLE = _public(
    _np_msle, "mean_squared_logarithmic_error",
    "`tf.keras.metrics.mean_squared_logarithmic_error`.")
cosine_similarity = _public(_np_cosine, "cosine_similarity",
                            "`tf.keras.metrics.cosine_similarity`: sum of unit vectors' product.")
binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
kl_divergence = kld = KLD = _losses.kl_divergence
hinge, squared_hinge = _losses.hinge, _losses.squared_hinge
categorical_hinge, poisson, log_cosh = (_losses.categorical_hinge, _losses.poisson,
                                        _losses.log_cosh)
logcosh = log_cosh


class MeanMetricWrapper(Mean):
    """`tf.keras.metrics.MeanMetricWrapper`: the mean of `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        np_fn = getattr(self._fn, "_numpy_fn", None)
        if np_fn is not None:
            t, p = (_float_arrays(y_true, y_pred) if self._fn._cast_true
                    else (_np(y_true), _np(y_pred)))
            p, t, _ = _squeeze_or_expand(p, t)
            values = np_fn(t, p, **self._fn_kwargs)
        else:
            t, p = convert_to_tensor(y_true), convert_to_tensor(y_pred)
            p, t = _losses.squeeze_or_expand_dimensions(p, t)
            values = _np(self._fn(t, p, **self._fn_kwargs))
        super().update_state(values, sample_weight)

    def get_config(self):
        config = {k: (float(_np(v)) if isinstance(v, (Tensor, Variable)) else v)
                  for k, v in self._fn_kwargs.items()}
        if type(self) is MeanMetricWrapper:
            config["fn"] = self._fn
        config.update(super().get_config())
        return config


def _wrapper_class(class_name, fn, default_name, doc, params=()):
    """A MeanMetricWrapper subclass with Keras's constructor (name, dtype, *params)."""
    def __init__(self, name=default_name, dtype=None, **kwargs):
        extra = {}
        for p, default in params:
            extra[p] = kwargs.pop(p, default)
        if kwargs:
            raise TypeError(f"{class_name}() got unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **extra)
        for p, _ in params:
            setattr(self, p, extra[p])
    return type(class_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc})


class Accuracy(MeanMetricWrapper):
    """`tf.keras.metrics.Accuracy`: how often predictions equal labels."""

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """`tf.keras.metrics.BinaryAccuracy`: how often (y_pred > threshold) equals the label."""

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self.threshold = threshold


class CategoricalAccuracy(MeanMetricWrapper):
    """`tf.keras.metrics.CategoricalAccuracy`: argmax(y_pred) == argmax(one-hot y_true)."""

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """`tf.keras.metrics.SparseCategoricalAccuracy`: argmax(y_pred) == integer label."""

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """`tf.keras.metrics.TopKCategoricalAccuracy`: the one-hot label among the top k."""

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """`tf.keras.metrics.SparseTopKCategoricalAccuracy`: the integer label in the top k."""

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None):
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


MeanSquaredError = _wrapper_class("MeanSquaredError", mean_squared_error,
                                  "mean_squared_error", "`tf.keras.metrics.MeanSquaredError`.")
MeanAbsoluteError = _wrapper_class("MeanAbsoluteError", mean_absolute_error,
                                   "mean_absolute_error",
                                   "`tf.keras.metrics.MeanAbsoluteError`.")
MeanAbsolutePercentageError = _wrapper_class(
    "MeanAbsolutePercentageError", mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "`tf.keras.metrics.MeanAbsolutePercentageError`.")
MeanSquaredLogarithmicError = _wrapper_class(
    "MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "`tf.keras.metrics.MeanSquaredLogarithmicError`.")
CosineSimilarity = _wrapper_class("CosineSimilarity", cosine_similarity, "cosine_similarity",
                                  "`tf.keras.metrics.CosineSimilarity`.", (("axis", -1),))
BinaryCrossentropy = _wrapper_class(
    "BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
    "`tf.keras.metrics.BinaryCrossentropy`.", (("from_logits", False),
                                                ("label_smoothing", 0.0)))
CategoricalCrossentropy = _wrapper_class(
    "CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
    "`tf.keras.metrics.CategoricalCrossentropy`.", (("from_logits", False),
                                                     ("label_smoothing", 0.0)))
SparseCategoricalCrossentropy = _wrapper_class(
    "SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "`tf.keras.metrics.SparseCategoricalCrossentropy`.",
    (("from_logits", False), ("axis", -1)))
KLDivergence = _wrapper_class("KLDivergence", kl_divergence, "kullback_leibler_divergence",
                              "`tf.keras.metrics.KLDivergence`.")
Hinge = _wrapper_class("Hinge", hinge, "hinge", "`tf.keras.metrics.Hinge`.")
SquaredHinge = _wrapper_class("SquaredHinge", squared_hinge, "squared_hinge",
                              "`tf.keras.metrics.SquaredHinge`.")
CategoricalHinge = _wrapper_class("CategoricalHinge", categorical_hinge, "categorical_hinge",
                                  "`tf.keras.metrics.CategoricalHinge`.")
Poisson = _wrapper_class("Poisson", poisson, "poisson", "`tf.keras.metrics.Poisson`.")
LogCoshError = _wrapper_class("LogCoshError", log_cosh, "logcosh",
                              "`tf.keras.metrics.LogCoshError`.")


class RootMeanSquaredError(Mean):
    """`tf.keras.metrics.RootMeanSquaredError`: sqrt of the (weighted) mean squared error
    over all elements."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        t, p = _float_arrays(y_true, y_pred)
        p, t, _ = _squeeze_or_expand(p, t)
        super().update_state(np.square(p - t), sample_weight)

    def result(self):
        return self._out(np.sqrt(_divide_no_nan(_np(self.total), _np(self.count))))


# -- confusion-matrix metrics ------------------------------------------------------------------
def _check_thresholds(thresholds):
    t = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    if t.ndim != 1 or np.any((t < 0) | (t > 1)):
        raise ValueError(f"Threshold values must be in [0, 1]. Received: {thresholds}")
    return t


def _filter_top_k(x, k):
    """Keeps each row's top k scores and sets the rest to -inf."""
    if k >= x.shape[-1]:
        return x
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    keep = np.zeros(x.shape, bool)
    np.put_along_axis(keep, order, True, axis=-1)
    return np.where(keep, x, -np.inf)


def _positive_counts(thresholds, pred, weights):
    """For each threshold t: the summed weight of predictions strictly above t."""
    order = np.argsort(thresholds, kind="stable")
    ts = thresholds[order]
    idx = np.searchsorted(ts, pred, side="left")  # how many thresholds lie below each pred
    hist = np.bincount(idx, weights=weights, minlength=len(ts) + 1)
    above = np.cumsum(hist[::-1])[::-1][1:]  # above[i] = weight with idx > i
    out = np.empty_like(above)
    out[order] = above
    return out


def _confusion_update(thresholds, y_true, y_pred, weights):
    """(tp, fp, tn, fn) increments per threshold for flattened, weighted predictions."""
    pos = y_true.astype(bool)
    wp = np.where(pos, weights, 0.0)
    wn = np.where(pos, 0.0, weights)
    tp = _positive_counts(thresholds, y_pred, wp)
    fp = _positive_counts(thresholds, y_pred, wn)
    return tp, fp, wn.sum() - fp, wp.sum() - tp


def _prepare_confusion(name, y_true, y_pred, sample_weight, class_id=None, top_k=None):
    """y_true, y_pred and broadcast weights as float64 arrays, checked and filtered."""
    t, p = np.asarray(_np(y_true), np.float64), np.asarray(_np(y_pred), np.float64)
    w = None if sample_weight is None else np.asarray(_np(sample_weight), np.float64)
    p, t, w = _squeeze_or_expand(p, t, w)
    if t.shape != p.shape:
        try:
            t = np.broadcast_to(t, p.shape)
        except ValueError:
            raise ValueError(f"{name}: labels of shape {t.shape} do not fit predictions of "
                             f"shape {p.shape}") from None
    if p.size and (p.min() < 0 or p.max() > 1):
        raise errors.InvalidArgumentError(
            None, None, f"{name}: predictions must be >= 0 and <= 1 (got values in "
            f"[{p.min():g}, {p.max():g}]); these metrics take probabilities — apply a sigmoid "
            f"(or pass from_logits=True to AUC)")
    if top_k is not None:
        p = _filter_top_k(p, top_k)
    w = np.ones(p.shape) if w is None else _broadcast_weights(name, w, p)
    if class_id is not None:
        t, p, w = t[..., class_id], p[..., class_id], w[..., class_id]
    return t, p, w


class _ConfusionMatrixMetric(Metric):
    def __init__(self, thresholds, name, dtype, top_k=None, class_id=None,
                 counts=("true_positives", "false_positives", "true_negatives",
                         "false_negatives")):
        super().__init__(name=name, dtype=dtype)
        self.top_k = top_k
        self.class_id = class_id
        default = 0.5 if top_k is None else -np.inf
        self._single = thresholds is None or np.ndim(thresholds) == 0
        self.thresholds = (np.array([default]) if thresholds is None
                           else _check_thresholds(thresholds))
        self.init_thresholds = thresholds
        self._counts = counts
        for c in counts:
            setattr(self, c, self.add_weight(c, shape=(len(self.thresholds),)))

    def update_state(self, y_true, y_pred, sample_weight=None):
        t, p, w = _prepare_confusion(self._name, y_true, y_pred, sample_weight,
                                     self.class_id, self.top_k)
        tp, fp, tn, fn = _confusion_update(self.thresholds, t.reshape(-1), p.reshape(-1),
                                           w.reshape(-1))
        values = {"true_positives": tp, "false_positives": fp, "true_negatives": tn,
                  "false_negatives": fn}
        for c in self._counts:
            _add(getattr(self, c), values[c])

    def _scalar_or_vector(self, v):
        return self._out(v[0] if self._single else v)

    def get_config(self):
        config = {"thresholds": self.init_thresholds, "top_k": self.top_k,
                  "class_id": self.class_id}
        config.update(super().get_config())
        return config


class Precision(_ConfusionMatrixMetric):
    """`tf.keras.metrics.Precision`: tp / (tp + fp) at each threshold (0.5 by default)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, name, dtype, top_k, class_id,
                         ("true_positives", "false_positives"))

    def result(self):
        tp, fp = _np(self.true_positives), _np(self.false_positives)
        return self._scalar_or_vector(_divide_no_nan(tp, tp + fp))


class Recall(_ConfusionMatrixMetric):
    """`tf.keras.metrics.Recall`: tp / (tp + fn) at each threshold (0.5 by default)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, name, dtype, top_k, class_id,
                         ("true_positives", "false_negatives"))

    def result(self):
        tp, fn = _np(self.true_positives), _np(self.false_negatives)
        return self._scalar_or_vector(_divide_no_nan(tp, tp + fn))


def _count_class(attr, doc):
    class _Count(_ConfusionMatrixMetric):
        def __init__(self, thresholds=None, name=None, dtype=None):
            super().__init__(thresholds, name, dtype, counts=(attr,))
            self.accumulator = getattr(self, attr)

        def result(self):
            return self._scalar_or_vector(_np(self.accumulator))

        def get_config(self):
            return {"thresholds": self.init_thresholds, "name": self._name,
                    "dtype": self.dtype}
    _Count.__doc__ = doc
    return _Count


TruePositives = _count_class("true_positives", "`tf.keras.metrics.TruePositives`.")
FalsePositives = _count_class("false_positives", "`tf.keras.metrics.FalsePositives`.")
TrueNegatives = _count_class("true_negatives", "`tf.keras.metrics.TrueNegatives`.")
FalseNegatives = _count_class("false_negatives", "`tf.keras.metrics.FalseNegatives`.")
for _cls, _n in ((TruePositives, "TruePositives"), (FalsePositives, "FalsePositives"),
                 (TrueNegatives, "TrueNegatives"), (FalseNegatives, "FalseNegatives")):
    _cls.__name__ = _cls.__qualname__ = _n


class AUC(Metric):
    """`tf.keras.metrics.AUC`: area under the ROC or PR curve, from confusion counts at
    `num_thresholds` thresholds (Riemann sum; 'interpolation' is the trapezoid rule for ROC
    and Davis & Goadrich's interpolation for PR)."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        curve = str(curve).upper()
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are '
                             f'["PR", "ROC"]')
        summation_method = str(summation_method).lower()
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". '
                             f'Expected values are ["interpolation", "majoring", "minoring"]')
        super().__init__(name=name, dtype=dtype)
        eps = backend.epsilon()
        if thresholds is not None:
            inner = sorted(_check_thresholds(thresholds).tolist())
            num_thresholds = len(inner) + 2
        else:
            if not isinstance(num_thresholds, (int, np.integer)) or num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. "
                                 f"Received: num_thresholds={num_thresholds}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.num_thresholds = num_thresholds
        self._thresholds = np.array([0.0 - eps] + inner + [1.0 + eps])
        self._init_thresholds = thresholds
        self.curve = curve
        self.summation_method = summation_method
        self.multi_label = multi_label
        self.num_labels = num_labels
        self.label_weights = None if label_weights is None else \
            np.asarray(_np(label_weights), np.float64)
        self._from_logits = from_logits
        self._built = False
        if not multi_label or num_labels is not None:
            self._build(num_labels)

    @property
    def thresholds(self):
        return list(self._thresholds)

    def _build(self, num_labels):
        shape = (self.num_thresholds,) if not self.multi_label else \
            (self.num_thresholds, num_labels)
        self.num_labels = num_labels
        for c in ("true_positives", "true_negatives", "false_positives", "false_negatives"):
            setattr(self, c, self.add_weight(c, shape=shape))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        p = np.asarray(_np(y_pred), np.float64)
        if self._from_logits:
            p = 1.0 / (1.0 + np.exp(-p))
        if self.multi_label and not self._built:
            self._build(p.shape[-1])
        t, p, w = _prepare_confusion(self._name, y_true, p, sample_weight)
        if self.label_weights is not None and not self.multi_label:
            w = w * self.label_weights
        if self.multi_label:
            n = p.shape[-1]
            counts = [_confusion_update(self._thresholds, t[..., j].reshape(-1),
                                        p[..., j].reshape(-1), w[..., j].reshape(-1))
                      for j in range(n)]
            inc = [np.stack([c[i] for c in counts], axis=-1) for i in range(4)]
        else:
            inc = _confusion_update(self._thresholds, t.reshape(-1), p.reshape(-1),
                                    w.reshape(-1))
        for var, d in zip((self.true_positives, self.false_positives, self.true_negatives,
                           self.false_negatives), inc):
            _add(var, d)

    def _counts(self):
        return (np.asarray(_np(self.true_positives), np.float64),
                np.asarray(_np(self.false_positives), np.float64),
                np.asarray(_np(self.true_negatives), np.float64),
                np.asarray(_np(self.false_negatives), np.float64))

    def _by_label(self, per_label):
        if not self.multi_label:
            return per_label
        if self.label_weights is None:
            return per_label.mean()
        return float(_divide_no_nan((per_label * self.label_weights).sum(),
                                    self.label_weights.sum()))

    def interpolate_pr_auc(self):
        """PR-AUC with precision interpolated between thresholds (Davis & Goadrich 2006):
        within a segment precision is tp / p with tp linear in p = tp + fp."""
        tp, fp, _, fn = self._counts()
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = _divide_no_nan(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.where(both, _divide_no_nan(p[:-1], np.maximum(p[1:], 0)), 1.0)
        with np.errstate(divide="ignore"):
            log_ratio = np.log(np.where(ratio > 0, ratio, 1.0))
        inc = _divide_no_nan(slope * (dtp + intercept * log_ratio),
                             np.maximum(tp[1:] + fn[1:], 0))
        return self._out(self._by_label(inc.sum(axis=0)))

    def result(self):
        if not self._built:
            return self._out(0.0)
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self.interpolate_pr_auc()
        tp, fp, tn, fn = self._counts()
        recall = _divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, _divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:-1], y[1:])
        else:
            heights = np.maximum(y[:-1], y[1:])
        return self._out(self._by_label(((x[:-1] - x[1:]) * heights).sum(axis=0)))

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        config = {"num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": self.multi_label,
                  "num_labels": self.num_labels,
                  "label_weights": None if self.label_weights is None
                  else self.label_weights.tolist(),
                  "thresholds": None if self._init_thresholds is None
                  else self.thresholds[1:-1],
                  "from_logits": self._from_logits}
        config.update(super().get_config())
        return config


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
