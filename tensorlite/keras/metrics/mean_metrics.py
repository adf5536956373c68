"""The metrics that average a functional form over batches (MeanMetricWrapper subclasses:
accuracies, regression errors, crossentropies, hinges) and RootMeanSquaredError.
"""
import numpy as np

from tensorlite.keras.metrics.base import Mean, MeanMetricWrapper, _divide_no_nan, \
    _float_arrays, _np, _squeeze_or_expand
from tensorlite.keras.metrics.functional import (
    accuracy, binary_accuracy, binary_crossentropy, categorical_accuracy,
    categorical_crossentropy, categorical_hinge, cosine_similarity, hinge, kl_divergence,
    log_cosh, mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
    mean_squared_logarithmic_error, poisson, sparse_categorical_accuracy,
    sparse_categorical_crossentropy, sparse_top_k_categorical_accuracy, squared_hinge,
    top_k_categorical_accuracy)


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
