"""The heads of tf.estimator.BoostedTrees*: per-example loss, its gradient and (diagonal)
hessian with respect to the logits, predictions and evaluation metrics, as TF's binary
(sigmoid), multi-class (softmax) and regression (squared error) heads define them.

Example:
    >>> head = Head("binary", 2, None)
    >>> g, h, loss = head.grads(np.zeros((1, 1)), np.array([1]))
    >>> g.tolist(), h.tolist()
    ([[-0.5]], [[0.25]])
"""
import numpy as np


def _softmax(logits):
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


class Head:
    """`kind` is 'binary', 'multi' or 'regression'."""

    def __init__(self, kind, n_classes, label_vocabulary):
        self.kind, self.n_classes = kind, n_classes
        self.vocab = None if label_vocabulary is None else [
            v.decode() if isinstance(v, bytes) else str(v) for v in label_vocabulary]
        self.dim = 1 if kind in ("binary", "regression") else n_classes

    def label_ids(self, labels):
        """Labels as class ids (classifiers, checked to lie in range) or floats."""
        raw = np.asarray(labels.numpy() if hasattr(labels, "numpy") else labels)
        if self.kind == "regression":
            return raw.astype(np.float64).reshape(-1)
        raw = raw.reshape(-1)
        if self.vocab is not None:
            index = {v: i for i, v in enumerate(self.vocab)}
            try:
                return np.array([index[v.decode() if isinstance(v, bytes) else str(v)]
                                 for v in raw], np.int64)
            except KeyError as e:
                raise ValueError(f"BoostedTreesClassifier: label {e.args[0]!r} is not in "
                                 f"label_vocabulary {self.vocab}") from None
        ids = raw.astype(np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.n_classes or
                         np.any(ids != raw.astype(np.float64))):
            raise ValueError(f"BoostedTreesClassifier: labels must be integers in "
                             f"[0, {self.n_classes}) (or use label_vocabulary); got values "
                             f"from {raw.min()} to {raw.max()}")
        return ids

    def grads(self, logits, y):
        """(gradient, hessian, loss) per example; gradient and hessian are [n, dim]."""
        if self.kind == "regression":
            diff = logits[:, 0] - y
            return (2.0 * diff)[:, None], np.full((len(y), 1), 2.0), diff ** 2
        if self.kind == "binary":
            z = logits[:, 0]
            p = 1.0 / (1.0 + np.exp(-z))
            loss = np.logaddexp(0.0, z) - y * z
            return (p - y)[:, None], (p * (1.0 - p))[:, None], loss
        p = _softmax(logits)
        onehot = np.eye(self.n_classes)[y]
        loss = -np.log(np.maximum(p[np.arange(len(y)), y], 1e-300))
        return p - onehot, p * (1.0 - p), loss

    def predictions(self, logits):
        """TF's prediction dict for a batch of logits."""
        if self.kind == "regression":
            return {"predictions": logits.astype(np.float32)}
        if self.kind == "binary":
            p1 = 1.0 / (1.0 + np.exp(-logits))
            probs = np.concatenate([1.0 - p1, p1], axis=1)
            out = {"logits": logits.astype(np.float32), "logistic": p1.astype(np.float32)}
        else:
            probs, out = _softmax(logits), {"logits": logits.astype(np.float32)}
        ids = np.argmax(probs, axis=1)
        names = np.array([v.encode() for v in self.vocab] if self.vocab else
                         [str(i).encode() for i in range(self.n_classes)], dtype=object)
        n = len(logits)
        out.update({"probabilities": probs.astype(np.float32),
                    "class_ids": ids[:, None].astype(np.int64),
                    "classes": names[ids][:, None],
                    "all_class_ids": np.tile(np.arange(self.n_classes, dtype=np.int32),
                                             (n, 1)),
                    "all_classes": np.tile(names, (n, 1))})
        return out

    def metrics(self, logits, y, weights):
        """Evaluation metrics over the whole data (weighted means)."""
        _, _, loss = self.grads(logits, y)
        w = weights / weights.sum()
        out = {"average_loss": float(np.sum(w * loss)), "loss": float(np.sum(w * loss))}
        if self.kind == "regression":
            out.update({"label/mean": float(np.sum(w * y)),
                        "prediction/mean": float(np.sum(w * logits[:, 0]))})
            return out
        ids = np.argmax(self.predictions(logits)["probabilities"], axis=1)
        out["accuracy"] = float(np.sum(w * (ids == y)))
        if self.kind == "binary":
            out.update(_binary_metrics(1.0 / (1.0 + np.exp(-logits[:, 0])), y, ids, w))
        return out


def _binary_metrics(p, y, ids, w):
    """auc (exact, by ranks: TF's estimates it with 200 thresholds), precision, recall,
    label and prediction means and the baseline accuracy."""
    positives = float(np.sum(w * y))
    tp = float(np.sum(w * ((ids == 1) & (y == 1))))
    predicted = float(np.sum(w * (ids == 1)))
    out = {"accuracy_baseline": max(positives, 1.0 - positives),
           "label/mean": positives, "prediction/mean": float(np.sum(w * p)),
           "precision": tp / predicted if predicted else 0.0,
           "recall": tp / positives if positives else 0.0}
    pos, neg = y == 1, y == 0
    if pos.any() and neg.any():
        _, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
        starts = np.cumsum(counts) - counts           # ties share their mean rank
        ranks = (starts + (counts + 1) / 2.0)[inverse]
        n_pos, n_neg = pos.sum(), neg.sum()
        out["auc"] = float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
    return out
