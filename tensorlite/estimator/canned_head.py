"""The canned estimators' heads, as TF's: logits -> the prediction dict, the loss and the
eval metrics.

ClassificationHead (n_classes == 2: one logit and a sigmoid, TF's binary head; more: softmax)
predicts `logits`, `logistic` (binary only), `probabilities`, `class_ids`, `classes` (the
label_vocabulary's strings, or the ids as strings, as bytes), `all_class_ids` and
`all_classes`. RegressionHead predicts `predictions` ([batch, label_dimension]) with a
squared-error loss. `loss` sums the per-example losses times the weight_column's weights over
the batch size (TF's SUM_OVER_BATCH_SIZE) and hands each batch's outputs to
`dataset_metrics`, which computes the eval metrics over the whole evaluation set at once, as
TF's streaming metrics do, weighted: `accuracy` and `average_loss` (classifiers), plus for
two classes `label/mean`, `prediction/mean`, `accuracy_baseline`, `auc` and
`auc_precision_recall` (Keras' AUC with 200 thresholds, as TF2's binary head), `precision`,
`recall`; `average_loss`, `label/mean`, `prediction/mean` (regressors). The Estimator adds
`loss` and `global_step`.

Example:
    >>> head = ClassificationHead(3, None, "DNNClassifier")
    >>> head.logits_dimension
    3
"""
import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import array_ops, math_ops, nn_ops


def _numpy(v):
    return v._value if isinstance(v, Tensor) else np.asarray(v.numpy() if hasattr(v, "numpy")
                                                               else v)


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


class ClassificationHead:
    """Sigmoid (two classes) or softmax cross-entropy over n_classes."""

    def __init__(self, n_classes, label_vocabulary, what):
        if not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
            raise ValueError(f"{what}: n_classes must be an integer > 1, got {n_classes!r}")
        if label_vocabulary is not None:
            vocab = [_text(v) for v in label_vocabulary]
            if len(vocab) != n_classes or len(set(vocab)) != len(vocab):
                raise ValueError(f"{what}: label_vocabulary must hold n_classes={n_classes} "
                                 f"distinct strings, got {list(label_vocabulary)!r}")
        self._n, self._vocab, self._what = int(n_classes), label_vocabulary, what
        names = [_text(v) for v in label_vocabulary] if label_vocabulary is not None else \
            [str(i) for i in range(self._n)]
        self._names = np.array([n.encode() for n in names], dtype=object)
        self._index = {n: i for i, n in enumerate(names)}

    @property
    def logits_dimension(self):
        return 1 if self._n == 2 else self._n

    def predictions(self, logits):
        """TF's classifier prediction dict for [batch, logits_dimension] logits."""
        out = {"logits": logits}
        if self._n == 2:
            out["logistic"] = p1 = math_ops.sigmoid(logits)
            out["probabilities"] = array_ops.concat([1.0 - p1, p1], axis=1)
        else:
            out["probabilities"] = nn_ops.softmax(logits)
        ids = np.argmax(_numpy(out["probabilities"]), axis=1).astype(np.int64)[:, None]
        batch = ids.shape[0]
        out["class_ids"] = wrap(ids)
        out["classes"] = self._names[ids]
        out["all_class_ids"] = wrap(np.tile(np.arange(self._n, dtype=np.int32), (batch, 1)))
        out["all_classes"] = np.tile(self._names, (batch, 1))
        return out

    def label_ids(self, labels):
        """[batch] int64 class ids of the labels (through label_vocabulary if given)."""
        if labels is None:
            raise ValueError(f"{self._what}: labels must be given to train or evaluate")
        raw = _numpy(labels).reshape(-1)
        if self._vocab is not None:
            if raw.dtype.kind not in "OSU":
                raise ValueError(f"{self._what}: labels must be strings when "
                                 f"label_vocabulary is set, got dtype {raw.dtype}")
            unknown = sorted({_text(v) for v in raw} - set(self._index))
            if unknown:
                raise errors.InvalidArgumentError(
                    f"{self._what}: labels {unknown} are not in label_vocabulary "
                    f"{list(self._vocab)}")
            return np.array([self._index[_text(v)] for v in raw], np.int64)
        if raw.dtype.kind not in "iub":
            raise ValueError(f"{self._what}: labels must be integer class ids (or set "
                             f"label_vocabulary for string labels), got dtype {raw.dtype}")
        ids = raw.astype(np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self._n):
            raise errors.InvalidArgumentError(
                f"{self._what}: labels must be in [0, n_classes={self._n}), got values from "
                f"{ids.min()} to {ids.max()}")
        return ids

    def loss(self, logits, predictions, labels, weights):
        """The cross-entropy summed with the example weights over the batch size (TF's
        SUM_OVER_BATCH_SIZE), and what dataset_metrics needs of this batch."""
        ids = self.label_ids(labels)
        if self._n == 2:
            per_example = nn_ops.sigmoid_cross_entropy_with_logits(
                labels=wrap(ids.astype(np.float32).reshape(-1, 1)), logits=logits)
        else:
            per_example = nn_ops.sparse_softmax_cross_entropy_with_logits(
                labels=wrap(ids), logits=logits)
        per_example = array_ops.reshape(per_example, [-1])
        w = _weights(weights, len(ids))
        loss = math_ops.reduce_sum(per_example * wrap(w)) / float(max(len(ids), 1))
        outputs = {"loss": _numpy(per_example), "weight": w, "label": ids,
                   "class_id": _numpy(predictions["class_ids"]).reshape(-1)}
        if self._n == 2:
            outputs["logistic"] = _numpy(predictions["logistic"]).reshape(-1)
        return loss, outputs

    def dataset_metrics(self, batches):
        """TF's classification metrics over all the evaluation batches' outputs."""
        b = {k: np.concatenate([x[k] for x in batches]) for k in batches[0]}
        w = b["weight"].astype(np.float64)
        out = {"accuracy": _wmean(b["class_id"] == b["label"], w),
               "average_loss": _wmean(b["loss"], w)}
        if self._n == 2:
            positive, predicted = b["label"] == 1, b["class_id"] == 1
            label_mean = _wmean(positive, w)
            out.update({
                "label/mean": label_mean, "prediction/mean": _wmean(b["logistic"], w),
                "accuracy_baseline": np.float32(max(label_mean, 1.0 - label_mean)),
                "auc": _keras_auc("ROC", positive, b["logistic"], w),
                "auc_precision_recall": _keras_auc("PR", positive, b["logistic"], w),
                "precision": _wmean(positive[predicted], w[predicted]),
                "recall": _wmean(predicted[positive], w[positive])})
        return out


def _weights(weights, n):
    """[n] float32 example weights (all ones without a weight_column)."""
    if weights is None:
        return np.ones(n, np.float32)
    w = np.asarray(weights, np.float32).reshape(-1)
    if w.shape != (n,):
        raise ValueError(f"weight_column must give one weight per example: {n} examples, "
                         f"got weights of shape {np.shape(weights)}")
    return w


def _wmean(values, w):
    """The weighted mean (0 when the weights sum to 0, as TF's mean metrics)."""
    total = float(np.sum(w))
    return np.float32(np.sum(np.asarray(values, np.float64) * w) / total if total else 0.0)


def _keras_auc(curve, positive, scores, w):
    """TF2's binary head computes its AUCs with Keras' AUC (200 thresholds)."""
    from tensorlite.keras import metrics  # noqa: PLC0415
    auc = metrics.AUC(curve=curve)
    auc.update_state(positive.astype(np.float32), scores.astype(np.float32),
                     sample_weight=w.astype(np.float32))
    return np.float32(_numpy(auc.result()))


class RegressionHead:
    """Mean squared error over [batch, label_dimension] float labels."""

    def __init__(self, label_dimension, what):
        if not isinstance(label_dimension, (int, np.integer)) or label_dimension < 1:
            raise ValueError(f"{what}: label_dimension must be an integer >= 1, got "
                             f"{label_dimension!r}")
        self._dim, self._what = int(label_dimension), what

    @property
    def logits_dimension(self):
        return self._dim

    def predictions(self, logits):
        return {"predictions": logits}

    def loss(self, logits, predictions, labels, weights):
        """The squared error summed with the example weights over the batch's elements
        (SUM_OVER_BATCH_SIZE), and what dataset_metrics needs of this batch."""
        if labels is None:
            raise ValueError(f"{self._what}: labels must be given to train or evaluate")
        raw = _numpy(labels)
        if raw.dtype.kind not in "iufb" or raw.size != _numpy(logits).size:
            raise ValueError(f"{self._what}: labels must be numbers of shape [batch, "
                             f"label_dimension={self._dim}], got {raw.dtype} {raw.shape}")
        target = raw.astype(np.float32).reshape(-1, self._dim)
        w = _weights(weights, len(target))
        squared = math_ops.square(logits - wrap(target))
        loss = math_ops.reduce_sum(squared * wrap(w[:, None])) / float(max(target.size, 1))
        return loss, {"loss": _numpy(squared).mean(axis=1), "weight": w,
                      "label": target.mean(axis=1), "prediction": _numpy(logits).mean(axis=1)}

    def dataset_metrics(self, batches):
        """TF's regression metrics over all the evaluation batches' outputs."""
        b = {k: np.concatenate([x[k] for x in batches]) for k in batches[0]}
        w = b["weight"].astype(np.float64)
        return {"average_loss": _wmean(b["loss"], w), "label/mean": _wmean(b["label"], w),
                "prediction/mean": _wmean(b["prediction"], w)}
