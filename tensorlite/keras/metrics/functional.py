"""The functional metric forms (`tf.keras.metrics.binary_accuracy`, `mse`, ...): NumPy
implementations wrapped to take and return tensors; the probabilistic ones are the losses'.
"""
import numpy as np

from tensorlite.framework.tensor import wrap
from tensorlite.keras import backend
from tensorlite.keras import losses as _losses
from tensorlite.keras.metrics.base import _float_arrays, _np


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


def _public(np_fn, name, doc, cast_true=True):
    """The public functional form (Tensors in, Tensor out) of a NumPy metric."""
    def fn(y_true, y_pred, **kwargs):
        if cast_true:
            t, p = _float_arrays(y_true, y_pred)
        else:
            t, p = _np(y_true), _np(y_pred)
        return wrap(np.asarray(np_fn(t, p, **kwargs)))
    fn.__name__ = fn.__qualname__ = name  # (so tf.keras.metrics documents it by name)
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
