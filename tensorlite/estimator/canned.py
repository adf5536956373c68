"""Canned estimators: `DNNClassifier` (seed 004) over feature columns.

Example:
    >>> cols = [tf.feature_column.numeric_column("x", shape=(2,))]
    >>> clf = tf.estimator.DNNClassifier(hidden_units=[8], feature_columns=cols, n_classes=3)
"""
import numpy as np

from tensorlite.estimator.estimator import Estimator, EstimatorSpec, ModeKeys
from tensorlite.framework.tensor import wrap


class DNNClassifier(Estimator):
    """A feed-forward classifier: feature columns -> hidden_units Dense layers -> logits.
    Two classes use one logit and a sigmoid (TF's binary head), more use softmax."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=None, dropout=None, config=None, warm_start_from=None,
                 loss_reduction=None, batch_norm=False):
        if n_classes < 2:
            raise ValueError(f"n_classes must be > 1, got {n_classes}")
        if not feature_columns:
            raise ValueError("DNNClassifier needs feature_columns")
        if weight_column is not None or batch_norm:
            raise NotImplementedError(
                "DNNClassifier: weight_column and batch_norm are not implemented in "
                "tensorlite; weight examples in a custom model_fn instead")
        self._hidden, self._columns = list(hidden_units), list(feature_columns)
        self._n_classes, self._vocab = n_classes, label_vocabulary
        self._optimizer_spec, self._activation = optimizer, activation_fn
        self._dropout, self._weight_column = dropout, weight_column
        super().__init__(self._dnn_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)

    def _make_optimizer(self):
        from tensorlite.keras import optimizers  # noqa: PLC0415
        spec = self._optimizer_spec
        if callable(spec) and not hasattr(spec, "apply_gradients"):
            spec = spec()
        if isinstance(spec, str):
            # TF's canned estimators default to a 0.05 learning rate
            return optimizers.get({"class_name": spec, "config": {"learning_rate": 0.05}})
        return spec

    def _label_ids(self, labels):
        raw = np.asarray(labels.numpy() if hasattr(labels, "numpy") else labels).reshape(-1)
        if self._vocab is None:
            ids = raw.astype(np.int64)
        else:
            index = {(v.decode() if isinstance(v, bytes) else v): i
                     for i, v in enumerate(self._vocab)}
            ids = np.array([index[(v.decode() if isinstance(v, bytes) else v)] for v in raw])
        if ids.size and (ids.min() < 0 or ids.max() >= self._n_classes):
            raise ValueError(f"DNNClassifier: labels must be in [0, {self._n_classes}), got "
                             f"values from {ids.min()} to {ids.max()}")
        return ids

    def _dnn_model_fn(self, features, labels, mode):
        import tensorlite as tf  # noqa: PLC0415
        from tensorlite import feature_column  # noqa: PLC0415
        net = feature_column.input_layer(features, self._columns, state={})
        for units in self._hidden:
            net = tf.keras.layers.Dense(units, activation=self._activation or tf.nn.relu)(net)
            if self._dropout and mode == ModeKeys.TRAIN:
                net = tf.nn.dropout(net, rate=self._dropout)
        binary = self._n_classes == 2
        logits = tf.keras.layers.Dense(1 if binary else self._n_classes)(net)
        if binary:
            p1 = tf.sigmoid(logits)
            probabilities = tf.concat([1.0 - p1, p1], axis=1)
        else:
            probabilities = tf.nn.softmax(logits)
        class_ids = tf.argmax(probabilities, axis=1)
        predictions = {"logits": logits, "probabilities": probabilities,
                       "class_ids": tf.expand_dims(class_ids, 1)}
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions)
        ids = self._label_ids(labels)
        if binary:
            per_example = tf.nn.sigmoid_cross_entropy_with_logits(
                labels=wrap(ids.astype(np.float32).reshape(-1, 1)), logits=logits)
        else:
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=wrap(ids), logits=logits)
        loss = tf.reduce_mean(per_example)
        accuracy = wrap(np.mean(np.asarray(class_ids.numpy()) == ids).astype(np.float32))
        return EstimatorSpec(mode, predictions=predictions, loss=loss,
                             train_op=self._make_optimizer() if mode == ModeKeys.TRAIN
                             else None,
                             eval_metric_ops={"accuracy": accuracy,
                                              "average_loss": loss})
