"""The canned estimators' heads, as TF's: logits -> the prediction dict, the loss and the
eval metrics.

ClassificationHead (n_classes == 2: one logit and a sigmoid, TF's binary head; more: softmax)
predicts `logits`, `logistic` (binary only), `probabilities`, `class_ids`, `classes` (the
label_vocabulary's strings, or the ids as strings, as bytes), `all_class_ids` and
`all_classes`; its metrics are `accuracy` and `average_loss`, plus, for two classes,
`label/mean`, `prediction/mean` and the ones needing the whole evaluation set at once
(dataset_metrics: `accuracy_baseline`, `auc` and `auc_precision_recall` (Keras' AUC with
200 thresholds, as TF2's binary head), `precision`, `recall`). RegressionHead predicts `predictions`
([batch, label_dimension]) with a mean squared error loss, and reports `average_loss`,
`label/mean` and `prediction/mean`. The Estimator adds `loss` and `global_step`.

Example:
    >>> head = ClassificationHead(3, None, "DNNClassifier")
    >>> head.logits_dimension
    3
"""
import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.tensor import Tensor, wrap


def _numpy(v):
    return v._value if isinstance(v, Tensor) else np.asarray(v.numpy() if hasattr(v, "numpy")
                                                               else v)


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _mean(x):
    return wrap(np.float32(np.mean(_numpy(x))))


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
        import tensorlite as tf  # noqa: PLC0415
        out = {"logits": logits}
        if self._n == 2:
            out["logistic"] = p1 = tf.sigmoid(logits)
            out["probabilities"] = tf.concat([1.0 - p1, p1], axis=1)
        else:
            out["probabilities"] = tf.nn.softmax(logits)
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

    def loss_and_metrics(self, logits, predictions, labels):
        """The mean cross-entropy and TF's classification eval metrics."""
        import tensorlite as tf  # noqa: PLC0415
        ids = self.label_ids(labels)
        if self._n == 2:
            per_example = tf.nn.sigmoid_cross_entropy_with_logits(
                labels=wrap(ids.astype(np.float32).reshape(-1, 1)), logits=logits)
        else:
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=wrap(ids), logits=logits)
        loss = tf.reduce_mean(per_example)
        hits = _numpy(predictions["class_ids"]).reshape(-1) == ids
        metrics = {"accuracy": _mean(hits.astype(np.float32)), "average_loss": loss}
        if self._n == 2:
            metrics["label/mean"] = _mean(ids.astype(np.float32))
            metrics["prediction/mean"] = _mean(predictions["logistic"])
        return loss, metrics

    def eval_outputs(self, predictions, labels):
        """What dataset_metrics needs of one batch (None: this head has no such metrics)."""
        if self._n != 2:
            return None
        return (_numpy(predictions["logistic"]), _numpy(predictions["class_ids"]),
                self.label_ids(labels))


def _keras_auc(curve, positive, scores):
    """TF2's binary head computes its AUCs with Keras' AUC (200 thresholds)."""
    from tensorlite.keras import metrics  # noqa: PLC0415
    auc = metrics.AUC(curve=curve)
    auc.update_state(positive.astype(np.float32), scores.astype(np.float32))
    return np.float32(_numpy(auc.result()))


def dataset_metrics(batches):
    """TF's binary-head metrics over all (logistic, class_ids, label_ids) batches."""
    scores = np.concatenate([np.reshape(b[0], -1) for b in batches])
    predicted = np.concatenate([np.reshape(b[1], -1) for b in batches]) == 1
    positive = np.concatenate([b[2] for b in batches]) == 1
    label_mean = float(positive.mean()) if positive.size else 0.0
    hits = float((predicted & positive).sum())
    return {"accuracy_baseline": np.float32(max(label_mean, 1.0 - label_mean)),
            "auc": _keras_auc("ROC", positive, scores),
            "auc_precision_recall": _keras_auc("PR", positive, scores),
            "precision": np.float32(hits / predicted.sum() if predicted.any() else 0.0),
            "recall": np.float32(hits / positive.sum() if positive.any() else 0.0)}


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

    def eval_outputs(self, predictions, labels):
        return None

    def loss_and_metrics(self, logits, predictions, labels):
        """The mean squared error and TF's regression eval metrics."""
        import tensorlite as tf  # noqa: PLC0415
        if labels is None:
            raise ValueError(f"{self._what}: labels must be given to train or evaluate")
        raw = _numpy(labels)
        if raw.dtype.kind not in "iufb" or raw.size != _numpy(logits).size:
            raise ValueError(f"{self._what}: labels must be numbers of shape [batch, "
                             f"label_dimension={self._dim}], got {raw.dtype} {raw.shape}")
        target = wrap(raw.astype(np.float32).reshape(-1, self._dim))
        loss = tf.reduce_mean(tf.square(logits - target))
        return loss, {"average_loss": loss, "label/mean": _mean(raw),
                      "prediction/mean": _mean(logits)}
