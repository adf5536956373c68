"""`tf.keras.losses`: loss functions and the `Loss` classes that reduce them.

A functional form (`mean_squared_error(y_true, y_pred)`, ...) returns one loss per sample
(the last axis reduced). A `Loss` object calls it and reduces with optional sample weights:
SUM_OVER_BATCH_SIZE (the default: the weighted sum divided by the number of loss elements),
SUM, or NONE. Everything is built from tensorlite ops, so losses are differentiable.

Crossentropies on probabilities clip them to [epsilon, 1 - epsilon] as Keras does; when a
probability tensor is known to come from a softmax/sigmoid (`_remember_logits`), the stable
logits form is used instead, as Keras does with `_keras_logits`.

Example:
    >>> cce = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    >>> float(cce([1], [[0.0, 0.0]]))
    0.6931471824645996
"""
import weakref
import warnings

import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.keras import backend
from tensorlite.ops import math_ops as M
from tensorlite.ops import nn_ops as N
from tensorlite.ops.array_ops import expand_dims, reshape, size, squeeze, transpose
from tensorlite.ops.control_flow_ops import graph_tracing


class Reduction:
    """`tf.keras.losses.Reduction` (ReductionV2): how a `Loss` reduces per-sample losses."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


# -- probabilities known to come from logits (Keras's `_keras_logits`) ----------------------
_LOGITS = {}  # id(probabilities) -> (weakref to them, logits, 'softmax' | 'sigmoid')


def _remember_logits(output, logits, kind):
    """Records output = softmax(logits) (kind 'softmax') or sigmoid(logits) ('sigmoid'), so
    that a crossentropy on `output` can use the exact logits form. For activations."""
    key = id(output)

    def forget(ref, key=key):
        entry = _LOGITS.get(key)
        if entry is not None and entry[0] is ref:
            del _LOGITS[key]
    _LOGITS[key] = (weakref.ref(output, forget), logits, kind)


def _logits_of(output, kind):
    entry = _LOGITS.get(id(output))
    if entry is not None and entry[2] == kind and entry[0]() is output:
        return entry[1]
    return None


def _use_cached_logits(fn_name, y_pred, from_logits, kind):
    logits = _logits_of(y_pred, kind)
    if logits is None:
        return y_pred, from_logits
    if from_logits:
        warnings.warn(f'"`{fn_name}` received `from_logits=True`, but the `output` argument '
                      f'was produced by a {kind} activation and thus does not represent '
                      f'logits. Was this intended?', stacklevel=4)
    return logits, True


# -- helpers -----------------------------------------------------------------------------
_CLASS_OF = {}  # function name -> class name, for error messages


def _who(fn_name):
    cls = _CLASS_OF.get(fn_name)
    return f"{fn_name} ({cls})" if cls else fn_name


def _float_pair(y_true, y_pred):
    """y_pred as a float tensor (integers become floatx) and y_true cast to its dtype."""
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = M.cast(y_pred, backend.floatx())
    y_true = convert_to_tensor(y_true)
    if y_true.dtype is not y_pred.dtype:
        y_true = M.cast(y_true, y_pred.dtype)
    return y_true, y_pred


def _check_broadcast(fn_name, y_true, y_pred):
    a, b = y_true._value.shape, y_pred._value.shape
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        raise ValueError(f"{_who(fn_name)}: labels of shape {a} and predictions of shape {b} "
                         f"are incompatible (not broadcastable); give y_true the shape of "
                         f"y_pred") from None


def _check_same_shape(fn_name, y_true, y_pred, hint):
    a, b = y_true._value.shape, y_pred._value.shape
    if a != b:
        raise ValueError(f"{_who(fn_name)}: Shapes {a} and {b} are incompatible: labels "
                         f"{a} vs predictions {b}. {hint}")


def _eps(dtype):
    return float(np.asarray(backend.epsilon(), dtype=dtype.as_numpy_dtype))


def _clip(x, lo, hi):
    return M.minimum(M.maximum(x, lo), hi)


def _mean_last(x, axis=-1):
    if x._value.ndim == 0:
        return x
    return M.reduce_mean(x, axis=axis)


def squeeze_or_expand_dimensions(y_pred, y_true=None, sample_weight=None):
    """Keras's rank matching: squeeze a trailing size-1 axis from whichever of y_true/y_pred
    has one more dimension, and squeeze or expand sample_weight to the rank of y_pred."""
    if y_true is not None:
        dp, dt = y_pred._value.ndim, y_true._value.ndim
        if dp - dt == 1 and y_pred._value.shape[-1] == 1:
            y_pred = squeeze(y_pred, [-1])
        elif dt - dp == 1 and y_true._value.shape[-1] == 1:
            y_true = squeeze(y_true, [-1])
    if sample_weight is None:
        return y_pred, y_true
    dw, dp = sample_weight._value.ndim, y_pred._value.ndim
    if dw and dw - dp == 1 and sample_weight._value.shape[-1] == 1:
        sample_weight = squeeze(sample_weight, [-1])
    elif dw and dp - dw == 1:
        sample_weight = expand_dims(sample_weight, -1)
    return y_pred, y_true, sample_weight


def compute_weighted_loss(losses, sample_weight=None, reduction=Reduction.SUM_OVER_BATCH_SIZE,
                          mask=None, name=None):
    """Weights per-sample losses and reduces them. SUM_OVER_BATCH_SIZE divides the weighted
    sum by the number of loss elements (valid ones, when a `mask` says which)."""
    Reduction.validate(reduction)
    if reduction == Reduction.AUTO:
        reduction = Reduction.SUM_OVER_BATCH_SIZE
    losses = convert_to_tensor(losses)
    if not losses.dtype.is_floating:
        losses = M.cast(losses, "float32")
    if sample_weight is not None:
        sample_weight = convert_to_tensor(sample_weight)
        if sample_weight.dtype is not losses.dtype:
            sample_weight = M.cast(sample_weight, losses.dtype)
        losses, _, sample_weight = squeeze_or_expand_dimensions(losses, None, sample_weight)
        try:
            np.broadcast_shapes(losses._value.shape, sample_weight._value.shape)
        except ValueError:
            raise ValueError(f"{name or 'loss'}: sample_weight of shape "
                             f"{sample_weight._value.shape} does not fit the per-sample losses "
                             f"of shape {losses._value.shape}; give one weight per sample "
                             f"(shape [batch])") from None
        losses = M.multiply(losses, sample_weight)
    if mask is not None:  # a tensor, so a traced graph recomputes it per batch
        mask = M.cast(convert_to_tensor(mask), losses.dtype)
        losses = M.multiply(losses, mask)
    if reduction == Reduction.NONE:
        return losses
    total = M.reduce_sum(losses)
    if reduction == Reduction.SUM:
        return total
    if mask is None:
        if graph_tracing():  # the count from the batch: one graph serves every batch size
            return M.divide(total, M.cast(size(losses), losses.dtype))
        return M.divide(total, float(losses._value.size))
    # the mean over valid elements (0 when none is valid)
    return M.divide(total, M.maximum(M.reduce_sum(mask), 1.0))


# -- the Loss classes ----------------------------------------------------------------------
def _as_prediction_dtype(y_true, y_pred):
    """Floating targets in the predictions' floating dtype, as Keras gives a loss its
    arguments (tf.keras 2 casts float64 arrays to floatx before the step, Keras 3 converts
    to the loss dtype): Hands-On ML's `huber_fn(y_true, y_pred)` computes y_true - y_pred on
    float64 California-housing targets and float32 predictions."""
    want = getattr(y_pred, "dtype", None)
    if not getattr(want, "is_floating", False) or getattr(y_true, "dtype", None) is None:
        return y_true
    y_true = convert_to_tensor(y_true)
    if y_true.dtype.is_floating and y_true.dtype != want:
        return M.cast(y_true, want)
    return y_true


class Loss:
    """Base class: subclasses implement `call(y_true, y_pred)` returning per-sample losses."""

    def __init__(self, reduction=Reduction.AUTO, name=None):
        Reduction.validate(reduction)
        self.reduction = reduction
        self.name = name
        self._allow_sum_over_batch_size = False

    def __call__(self, y_true, y_pred, sample_weight=None):
        losses = self.call(_as_prediction_dtype(y_true, y_pred), y_pred)
        return compute_weighted_loss(losses, sample_weight, self.reduction,
                                     name=self.name or type(self).__name__)

    def call(self, y_true, y_pred):
        raise NotImplementedError("Must be implemented in subclasses.")

    def get_config(self):
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A `Loss` around a function `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, reduction=Reduction.AUTO, name=None, **kwargs):
        super().__init__(reduction=reduction, name=name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        y_pred, y_true = squeeze_or_expand_dimensions(y_pred, y_true)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        config = {k: (float(np.asarray(v)) if isinstance(v, Tensor) else v)
                  for k, v in self._fn_kwargs.items()}
        config.update(super().get_config())
        return config

    @classmethod
    def from_config(cls, config):
        if cls is LossFunctionWrapper:
            raise NotImplementedError("LossFunctionWrapper.from_config needs the function; "
                                      "use the Loss subclass")
        return cls(**config)


# -- functional forms ---------------------------------------------------------------------
def mean_squared_error(y_true, y_pred):
    """`tf.keras.losses.mean_squared_error`: mean((y_pred - y_true)**2, axis=-1)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("mean_squared_error", y_true, y_pred)
    return _mean_last(M.squared_difference(y_pred, y_true))


def mean_absolute_error(y_true, y_pred):
    """`tf.keras.losses.mean_absolute_error`: mean(|y_pred - y_true|, axis=-1)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("mean_absolute_error", y_true, y_pred)
    return _mean_last(M.abs(M.subtract(y_pred, y_true)))


def mean_absolute_percentage_error(y_true, y_pred):
    """`tf.keras.losses.mean_absolute_percentage_error`: 100 * mean(|(y - p) / y|)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("mean_absolute_percentage_error", y_true, y_pred)
    eps = _eps(y_pred.dtype)
    diff = M.abs(M.divide(M.subtract(y_true, y_pred), M.maximum(M.abs(y_true), eps)))
    return M.multiply(_mean_last(diff), 100.0)


def mean_squared_logarithmic_error(y_true, y_pred):
    """`tf.keras.losses.mean_squared_logarithmic_error`: mean((log(p+1) - log(y+1))**2)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("mean_squared_logarithmic_error", y_true, y_pred)
    eps = _eps(y_pred.dtype)
    first = M.log(M.add(M.maximum(y_pred, eps), 1.0))
    second = M.log(M.add(M.maximum(y_true, eps), 1.0))
    return _mean_last(M.squared_difference(first, second))


def huber(y_true, y_pred, delta=1.0):
    """`tf.keras.losses.huber`: 0.5 e**2 where |e| <= delta, else delta * (|e| - delta/2)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("huber", y_true, y_pred)
    delta = float(delta)
    error = M.subtract(y_pred, y_true)
    abs_error = M.abs(error)
    quadratic = M.multiply(M.square(error), 0.5)
    linear = M.subtract(M.multiply(abs_error, delta), 0.5 * delta * delta)
    return _mean_last(M.where(M.less_equal(abs_error, delta), quadratic, linear))


def log_cosh(y_true, y_pred):
    """`tf.keras.losses.log_cosh`: mean(log(cosh(y_pred - y_true)), axis=-1), stable."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("log_cosh", y_true, y_pred)
    x = M.subtract(y_pred, y_true)
    return _mean_last(M.subtract(M.add(x, N.softplus(M.multiply(x, -2.0))),
                                 float(np.log(2.0))))


def kl_divergence(y_true, y_pred):
    """`tf.keras.losses.kl_divergence`: sum(y_true * log(y_true / y_pred), axis=-1)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("kl_divergence", y_true, y_pred)
    eps = _eps(y_pred.dtype)
    y_true, y_pred = _clip(y_true, eps, 1.0), _clip(y_pred, eps, 1.0)
    return M.reduce_sum(M.multiply(y_true, M.log(M.divide(y_true, y_pred))), axis=-1)


def poisson(y_true, y_pred):
    """`tf.keras.losses.poisson`: mean(y_pred - y_true * log(y_pred + epsilon), axis=-1)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("poisson", y_true, y_pred)
    eps = _eps(y_pred.dtype)
    return _mean_last(M.subtract(y_pred, M.multiply(y_true, M.log(M.add(y_pred, eps)))))


def cosine_similarity(y_true, y_pred, axis=-1):
    """`tf.keras.losses.cosine_similarity`: -sum(l2_normalize(y_true) * l2_normalize(y_pred))
    (so minimising it maximises the similarity)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("cosine_similarity", y_true, y_pred)
    y_true, y_pred = N.l2_normalize(y_true, axis=axis), N.l2_normalize(y_pred, axis=axis)
    return M.negative(M.reduce_sum(M.multiply(y_true, y_pred), axis=axis))


def _signed_labels(y_true):
    """Keras's hinge label convention: labels that are all 0/1 become -1/1."""
    v = y_true._value
    if v.size and np.all((v == 0) | (v == 1)):
        return M.subtract(M.multiply(y_true, 2.0), 1.0)
    return y_true


def hinge(y_true, y_pred):
    """`tf.keras.losses.hinge`: mean(max(1 - y_true * y_pred, 0), axis=-1)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("hinge", y_true, y_pred)
    margin = M.subtract(1.0, M.multiply(_signed_labels(y_true), y_pred))
    return _mean_last(M.maximum(margin, 0.0))


def squared_hinge(y_true, y_pred):
    """`tf.keras.losses.squared_hinge`: mean(max(1 - y_true * y_pred, 0)**2, axis=-1)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("squared_hinge", y_true, y_pred)
    margin = M.subtract(1.0, M.multiply(_signed_labels(y_true), y_pred))
    return _mean_last(M.square(M.maximum(margin, 0.0)))


def categorical_hinge(y_true, y_pred):
    """`tf.keras.losses.categorical_hinge`: max(max((1-y)*p) - sum(y*p) + 1, 0)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("categorical_hinge", y_true, y_pred)
    pos = M.reduce_sum(M.multiply(y_true, y_pred), axis=-1)
    neg = M.reduce_max(M.multiply(M.subtract(1.0, y_true), y_pred), axis=-1)
    return M.maximum(M.add(M.subtract(neg, pos), 1.0), 0.0)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """`tf.keras.losses.binary_crossentropy`: mean over `axis` of
    -(y log p + (1 - y) log(1 - p)), p clipped to [eps, 1 - eps] (or from logits)."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_broadcast("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    y_pred, from_logits = _use_cached_logits("binary_crossentropy", y_pred, from_logits,
                                             "sigmoid")
    if from_logits:
        # softplus(x) - x * z: sigmoid_cross_entropy_with_logits, broadcasting
        per = M.subtract(N.softplus(y_pred), M.multiply(y_pred, y_true))
    else:
        eps = _eps(y_pred.dtype)
        p = _clip(y_pred, eps, 1.0 - eps)
        bce = M.add(M.multiply(y_true, M.log(M.add(p, eps))),
                    M.multiply(M.subtract(1.0, y_true), M.log(M.add(M.subtract(1.0, p), eps))))
        per = M.negative(bce)
    return _mean_last(per, axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """`tf.keras.losses.categorical_crossentropy`: -sum(y_true * log(p), axis) with one-hot
    (or probability) labels; p renormalised and clipped to [eps, 1 - eps] unless logits."""
    y_true, y_pred = _float_pair(y_true, y_pred)
    _check_same_shape("categorical_crossentropy", y_true, y_pred,
                      "Categorical crossentropy needs one-hot labels with one column per "
                      "class (the shape of the predictions); for integer class labels use "
                      "sparse_categorical_crossentropy (SparseCategoricalCrossentropy).")
    if label_smoothing:
        n = y_true._value.shape[axis]
        y_true = M.add(M.multiply(y_true, 1.0 - label_smoothing), label_smoothing / n)
    y_pred, from_logits = _use_cached_logits("categorical_crossentropy", y_pred, from_logits,
                                             "softmax")
    if from_logits:
        return N.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    eps = _eps(y_pred.dtype)
    p = M.divide(y_pred, M.reduce_sum(y_pred, axis=axis, keepdims=True))
    p = _clip(p, eps, 1.0 - eps)
    return M.negative(M.reduce_sum(M.multiply(y_true, M.log(p)), axis=axis))


def _sparse_labels(y_true, y_pred, fn_name):
    """Integer labels of shape y_pred.shape[:-1] (a trailing size-1 axis is dropped)."""
    # Tensor ops throughout (not NumPy on the values): a traced graph must recompute the
    # labels for every batch instead of freezing the first one.
    lab = convert_to_tensor(y_true)
    if lab.dtype.is_floating:
        lab = M.cast(lab, np.int64)
    elif not lab.dtype.is_integer:
        raise TypeError(f"{_who(fn_name)}: labels must be integer class indices, got dtype "
                        f"{lab.dtype.name}")
    pshape = y_pred._value.shape
    lshape = lab._value.shape
    if len(lshape) == len(pshape) and lshape and lshape[-1] == 1:
        lab = reshape(lab, lshape[:-1])
    if lab._value.shape != pshape[:-1]:
        raise ValueError(f"{_who(fn_name)}: labels of shape {lab._value.shape} do not fit predictions "
                         f"of shape {pshape}: sparse labels are integer class indices of shape "
                         f"{pshape[:-1]} (or {pshape[:-1] + (1,)}); for one-hot labels use "
                         f"categorical_crossentropy (CategoricalCrossentropy).")
    return lab


def _sparse_valid(lab, ignore_class):
    return None if ignore_class is None else M.not_equal(lab, ignore_class)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1,
                                    ignore_class=None):
    """`tf.keras.losses.sparse_categorical_crossentropy`: -log p[label] with integer labels,
    through the fused sparse softmax crossentropy (probabilities: log of the clipped p)."""
    fn_name = "sparse_categorical_crossentropy"
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = M.cast(y_pred, backend.floatx())
    if y_pred._value.ndim == 0:
        raise ValueError(f"{_who(fn_name)}: predictions must have a class axis, got a scalar")
    nd = y_pred._value.ndim
    axis = axis % nd
    if axis != nd - 1:
        perm = [i for i in range(nd) if i != axis] + [axis]
        y_pred = transpose(y_pred, perm)
    lab = _sparse_labels(y_true, y_pred, fn_name)
    valid = _sparse_valid(lab, ignore_class)
    if valid is not None:
        lab = M.where(valid, lab, M.zeros_like_t(lab))
    n = y_pred._value.shape[-1]
    values = lab._value  # checked eagerly here; the crossentropy op checks again when run
    bad = (values < 0) | (values >= n)
    if np.any(bad):
        raise errors.InvalidArgumentError(
            None, None, f"{_who(fn_name)}: Received a label value of {values[bad].reshape(-1)[0]} "
            f"which is outside the valid range of [0, {n}). Label values: "
            f"{' '.join(str(v) for v in values.reshape(-1)[:20])}; labels are class indices "
            f"into the last axis of the predictions (did the model get one unit per class?)")
    y_pred, from_logits = _use_cached_logits(fn_name, y_pred, from_logits, "softmax")
    if not from_logits:
        eps = _eps(y_pred.dtype)
        y_pred = M.log(_clip(y_pred, eps, 1.0 - eps))
    res = N.sparse_softmax_cross_entropy_with_logits(labels=M.cast(lab, np.int64),
                                                     logits=y_pred)
    if valid is not None:
        res = M.multiply(res, M.cast(valid, res.dtype))
    return res


# Keras's short names.
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


# -- classes ------------------------------------------------------------------------------
class MeanSquaredError(LossFunctionWrapper):
    """`tf.keras.losses.MeanSquaredError`."""

    def __init__(self, reduction=Reduction.AUTO, name="mean_squared_error"):
        super().__init__(mean_squared_error, reduction=reduction, name=name)


class MeanAbsoluteError(LossFunctionWrapper):
    """`tf.keras.losses.MeanAbsoluteError`."""

    def __init__(self, reduction=Reduction.AUTO, name="mean_absolute_error"):
        super().__init__(mean_absolute_error, reduction=reduction, name=name)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """`tf.keras.losses.MeanAbsolutePercentageError`."""

    def __init__(self, reduction=Reduction.AUTO, name="mean_absolute_percentage_error"):
        super().__init__(mean_absolute_percentage_error, reduction=reduction, name=name)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """`tf.keras.losses.MeanSquaredLogarithmicError`."""

    def __init__(self, reduction=Reduction.AUTO, name="mean_squared_logarithmic_error"):
        super().__init__(mean_squared_logarithmic_error, reduction=reduction, name=name)


class Huber(LossFunctionWrapper):
    """`tf.keras.losses.Huber`."""

    def __init__(self, delta=1.0, reduction=Reduction.AUTO, name="huber_loss"):
        super().__init__(huber, reduction=reduction, name=name, delta=delta)


class LogCosh(LossFunctionWrapper):
    """`tf.keras.losses.LogCosh`."""

    def __init__(self, reduction=Reduction.AUTO, name="log_cosh"):
        super().__init__(log_cosh, reduction=reduction, name=name)


class KLDivergence(LossFunctionWrapper):
    """`tf.keras.losses.KLDivergence`."""

    def __init__(self, reduction=Reduction.AUTO, name="kl_divergence"):
        super().__init__(kl_divergence, reduction=reduction, name=name)


class Poisson(LossFunctionWrapper):
    """`tf.keras.losses.Poisson`."""

    def __init__(self, reduction=Reduction.AUTO, name="poisson"):
        super().__init__(poisson, reduction=reduction, name=name)


class CosineSimilarity(LossFunctionWrapper):
    """`tf.keras.losses.CosineSimilarity`."""

    def __init__(self, axis=-1, reduction=Reduction.AUTO, name="cosine_similarity"):
        super().__init__(cosine_similarity, reduction=reduction, name=name, axis=axis)


class Hinge(LossFunctionWrapper):
    """`tf.keras.losses.Hinge`."""

    def __init__(self, reduction=Reduction.AUTO, name="hinge"):
        super().__init__(hinge, reduction=reduction, name=name)


class SquaredHinge(LossFunctionWrapper):
    """`tf.keras.losses.SquaredHinge`."""

    def __init__(self, reduction=Reduction.AUTO, name="squared_hinge"):
        super().__init__(squared_hinge, reduction=reduction, name=name)


class CategoricalHinge(LossFunctionWrapper):
    """`tf.keras.losses.CategoricalHinge`."""

    def __init__(self, reduction=Reduction.AUTO, name="categorical_hinge"):
        super().__init__(categorical_hinge, reduction=reduction, name=name)


class BinaryCrossentropy(LossFunctionWrapper):
    """`tf.keras.losses.BinaryCrossentropy`."""

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction=Reduction.AUTO, name="binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits


class CategoricalCrossentropy(LossFunctionWrapper):
    """`tf.keras.losses.CategoricalCrossentropy`."""

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction=Reduction.AUTO, name="categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """`tf.keras.losses.SparseCategoricalCrossentropy`; with `ignore_class`, labels equal to
    it contribute no loss and the mean is over the other entries."""

    def __init__(self, from_logits=False, ignore_class=None, reduction=Reduction.AUTO,
                 name="sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits, ignore_class=ignore_class)
        self.from_logits = from_logits
        self.ignore_class = ignore_class

    def call(self, y_true, y_pred):
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def __call__(self, y_true, y_pred, sample_weight=None):
        losses = self.call(_as_prediction_dtype(y_true, y_pred), y_pred)
        mask = None
        if self.ignore_class is not None:
            lab = _sparse_labels(convert_to_tensor(y_true), convert_to_tensor(y_pred), "")
            mask = M.not_equal(lab, self.ignore_class)
        return compute_weighted_loss(losses, sample_weight, self.reduction, mask=mask,
                                     name=self.name)


_FUNCTIONS = {
    "mean_squared_error": mean_squared_error, "mse": mse, "MSE": mse,
    "mean_absolute_error": mean_absolute_error, "mae": mae, "MAE": mae,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mape,
    "MAPE": mape, "mean_squared_logarithmic_error": mean_squared_logarithmic_error,
    "msle": msle, "MSLE": msle, "huber": huber, "huber_loss": huber, "log_cosh": log_cosh,
    "logcosh": log_cosh, "kl_divergence": kl_divergence, "kld": kld, "KLD": kld,
    "kullback_leibler_divergence": kl_divergence, "poisson": poisson,
    "cosine_similarity": cosine_similarity, "hinge": hinge, "squared_hinge": squared_hinge,
    "categorical_hinge": categorical_hinge, "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
}
_CLASSES = {c.__name__: c for c in (
    Loss, MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, Huber, LogCosh, KLDivergence, Poisson, CosineSimilarity,
    Hinge, SquaredHinge, CategoricalHinge, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy)}
_CLASS_OF.update({
    "mean_squared_error": "MeanSquaredError", "mean_absolute_error": "MeanAbsoluteError",
    "mean_absolute_percentage_error": "MeanAbsolutePercentageError",
    "mean_squared_logarithmic_error": "MeanSquaredLogarithmicError", "huber": "Huber",
    "log_cosh": "LogCosh", "kl_divergence": "KLDivergence", "poisson": "Poisson",
    "cosine_similarity": "CosineSimilarity", "hinge": "Hinge", "squared_hinge": "SquaredHinge",
    "categorical_hinge": "CategoricalHinge", "binary_crossentropy": "BinaryCrossentropy",
    "categorical_crossentropy": "CategoricalCrossentropy",
    "sparse_categorical_crossentropy": "SparseCategoricalCrossentropy"})


def serialize(loss):
    """`tf.keras.losses.serialize`: a Loss's {'class_name', 'config'}, a function's name."""
    if isinstance(loss, Loss):
        return {"class_name": type(loss).__name__, "config": loss.get_config()}
    return getattr(loss, "__name__", loss)


def deserialize(name, custom_objects=None):
    """`tf.keras.losses.deserialize`: a function from its name, a Loss from its config."""
    objects = dict(custom_objects or {})
    if isinstance(name, dict):
        cls = objects.get(name.get("class_name")) or _CLASSES.get(name.get("class_name"))
        if cls is None:
            raise ValueError(f"Unknown loss class: {name.get('class_name')!r}. Valid classes: "
                             f"{sorted(_CLASSES)}")
        return cls.from_config(name.get("config", {}))
    if name in objects:
        return objects[name]
    if name in _FUNCTIONS:
        return _FUNCTIONS[name]
    if name in _CLASSES and name != "Loss":
        return _CLASSES[name]()
    raise ValueError(f"Unknown loss function: '{name}'. Valid names: "
                     f"{sorted(_FUNCTIONS)} and classes {sorted(set(_CLASSES) - {'Loss'})}; "
                     f"or pass a callable loss(y_true, y_pred).")


def get(identifier):
    """`tf.keras.losses.get`: a loss from a name ('mse', 'categorical_crossentropy', ...,
    or a class name), a config dict, or a callable (returned as is)."""
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss function identifier: {identifier!r}")


def _loss_kind(loss):
    """'binary', 'categorical' or 'sparse' for a crossentropy loss (a name, function or
    Loss), else None; compile uses it to pick the accuracy metric."""
    if isinstance(loss, str):
        loss = _FUNCTIONS.get(loss, _CLASSES.get(loss))
    fn = getattr(loss, "fn", loss)
    if isinstance(loss, type):
        fn = {BinaryCrossentropy: binary_crossentropy,
              CategoricalCrossentropy: categorical_crossentropy,
              SparseCategoricalCrossentropy: sparse_categorical_crossentropy}.get(loss)
    kinds = ((binary_crossentropy, "binary"), (categorical_crossentropy, "categorical"),
             (sparse_categorical_crossentropy, "sparse"))
    return next((kind for f, kind in kinds if fn is f), None)
