"""Weighted metrics of binary classifiers and regressors over labels, predictions and
example weights (the weights are the Poisson bootstrap's resampling counts, or 1), by TFMA's
class names. AUC is exact (the weighted Mann-Whitney statistic, ties counted half)."""
import numpy as np

from tensorlite.framework import errors


def _auc(y, p, w):
    order = np.argsort(p, kind="stable")
    y, p, w = y[order], p[order], w[order]
    pos, neg = w * (y > 0.5), w * (y <= 0.5)
    total_pos, total_neg = pos.sum(), neg.sum()
    if total_pos == 0 or total_neg == 0:
        return float("nan")
    _, starts = np.unique(p, return_index=True)
    group_pos = np.add.reduceat(pos, starts)
    group_neg = np.add.reduceat(neg, starts)
    neg_below = np.cumsum(group_neg) - group_neg
    return float(np.sum(group_pos * (neg_below + group_neg / 2)) / (total_pos * total_neg))


def _confusion(y, p, w, threshold=0.5):
    predicted, actual = p > threshold, y > 0.5
    return (np.sum(w * (predicted & actual)), np.sum(w * (predicted & ~actual)),
            np.sum(w * (~predicted & actual)), np.sum(w * (~predicted & ~actual)))


def _ratio(a, b):
    return float(a / b) if b else float("nan")


def _precision(y, p, w):
    tp, fp, _, _ = _confusion(y, p, w)
    return _ratio(tp, tp + fp)


def _recall(y, p, w):
    tp, _, fn, _ = _confusion(y, p, w)
    return _ratio(tp, tp + fn)


def _accuracy(y, p, w):
    tp, _, _, tn = _confusion(y, p, w)
    return _ratio(tp + tn, w.sum())


METRICS = {
    "ExampleCount": lambda y, p, w: float(w.sum()),
    "WeightedExampleCount": lambda y, p, w: float(w.sum()),
    "AUC": _auc,
    "BinaryAccuracy": _accuracy,
    "Precision": _precision,
    "Recall": _recall,
    "MeanLabel": lambda y, p, w: _ratio(np.sum(w * y), w.sum()),
    "MeanPrediction": lambda y, p, w: _ratio(np.sum(w * p), w.sum()),
    "MeanSquaredError": lambda y, p, w: _ratio(np.sum(w * (y - p) ** 2), w.sum()),
    "MeanAbsoluteError": lambda y, p, w: _ratio(np.sum(w * np.abs(y - p)), w.sum()),
}

LOWER_IS_BETTER = {"MeanSquaredError", "MeanAbsoluteError"}


def check_names(names):
    """InvalidArgumentError naming a metric class tensorlite does not compute."""
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise errors.InvalidArgumentError(None, None, f"unknown metric class(es) {unknown}; "
                                          f"tensorlite.model_analysis computes {sorted(METRICS)}")


def compute(names, labels, predictions, weights=None):
    """{name: value} of the metrics on (labels, predictions, weights)."""
    y = np.asarray(labels, np.float64)
    p = np.asarray(predictions, np.float64)
    w = np.ones_like(y) if weights is None else np.asarray(weights, np.float64)
    return {name: METRICS[name](y, p, w) for name in names}
