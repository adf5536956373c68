"""Confusion-matrix metrics: Precision, Recall, the TruePositives... counts and AUC, over
thresholds, with `class_id` and `top_k`.
"""
import numpy as np

from tensorlite.framework import errors
from tensorlite.keras import backend
from tensorlite.keras.metrics.base import Metric, _add, _broadcast_weights, _divide_no_nan, \
    _np, _squeeze_or_expand


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
