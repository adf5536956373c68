"""Canned estimators over feature columns, as TF documents them: `DNNClassifier` (the Google
I/O 2018 talk "TensorFlow in production: TF Extended, TF Hub, and TF Serving"),
`DNNRegressor`, `LinearClassifier`, `LinearRegressor` and `DNNLinearCombinedClassifier` /
`DNNLinearCombinedRegressor`.

They run on the Estimator's eager path: model_fn builds logits from the columns (a linear
part, a DNN part, or their sum), a head (canned_head.py) turns logits into TF's
prediction dict, loss and eval metrics, and train_op is a Keras optimizer. Optimizers may
be given as a name (with TF's canned default learning rates: 0.05 for DNNs, min(0.2,
1/sqrt(#columns)) for linear models), a Keras optimizer, a TF1 optimizer such as
`tf.train.AdagradOptimizer(learning_rate=0.003)` (turned into its Keras equivalent), or a
callable returning one. `weight_column` (a feature name or a numeric_column) weighs each
example's loss and metrics.

Example:
    >>> cols = [tf.feature_column.numeric_column("x", shape=(2,))]
    >>> clf = tf.estimator.DNNClassifier(hidden_units=[8], feature_columns=cols, n_classes=3)
"""
import math

import numpy as np

from tensorlite.estimator import canned_head, eval_events
from tensorlite.estimator.estimator import Estimator, EstimatorSpec, ModeKeys
from tensorlite.framework.name_scope import name_scope
from tensorlite.ops import nn_ops

_DNN_LEARNING_RATE = 0.05
_LINEAR_LEARNING_RATE = 0.2


def _linear_learning_rate(n_columns):
    """TF's default for linear parts: min(0.2, 1 / sqrt(number of columns))."""
    return min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(max(n_columns, 1)))


def _from_tf1(opt):
    """The Keras optimizer with a TF1 optimizer's update rule and hyperparameters."""
    from tensorlite.compat.v1 import optimizers as v1  # noqa: PLC0415
    from tensorlite.keras import optimizers  # noqa: PLC0415
    lr = opt._lr
    if isinstance(opt, v1.AdagradOptimizer):
        # TF1's Adagrad has no epsilon; a tiny one keeps Keras' form the same update
        return optimizers.Adagrad(lr, opt._initial_accumulator_value, epsilon=1e-12)
    if isinstance(opt, v1.AdamOptimizer):
        return optimizers.Adam(lr, beta_1=opt._b1, beta_2=opt._b2, epsilon=opt._eps)
    if isinstance(opt, v1.MomentumOptimizer):
        return optimizers.SGD(lr, momentum=opt._momentum, nesterov=opt._nesterov)
    if isinstance(opt, v1.GradientDescentOptimizer):
        return optimizers.SGD(lr)
    raise NotImplementedError(f"canned estimators: no Keras equivalent for the TF1 optimizer "
                              f"{type(opt).__name__}; pass a tf.keras.optimizers instance")


def resolve_optimizer(spec, default_learning_rate, what):
    """A Keras optimizer from a name, a Keras optimizer, a TF1 optimizer or a callable."""
    from tensorlite.compat.v1 import optimizers as v1  # noqa: PLC0415
    from tensorlite.keras import optimizers  # noqa: PLC0415
    if isinstance(spec, type) or (callable(spec) and not hasattr(spec, "apply_gradients")):
        spec = spec()   # a class or a factory (TF lets an optimizer be made lazily)
    if isinstance(spec, str):
        try:
            return optimizers.get({"class_name": spec,
                                   "config": {"learning_rate": default_learning_rate}})
        except (ValueError, KeyError) as e:
            raise ValueError(f"{what}: unknown optimizer name {spec!r} (use e.g. 'Adagrad', "
                             f"'Adam', 'Ftrl', 'RMSProp', 'SGD')") from e
    if isinstance(spec, v1.Optimizer):
        return _from_tf1(spec)
    if not hasattr(spec, "apply_gradients"):
        raise ValueError(f"{what}: optimizer must be a name, a tf.keras.optimizers instance, "
                         f"a tf.compat.v1.train optimizer or a callable returning one; got "
                         f"{spec!r}")
    return spec


class _SplitOptimizer:
    """Two optimizers, each applying the gradients of its own variables (the combined
    estimators' linear_optimizer and dnn_optimizer)."""

    def __init__(self, linear, dnn, linear_ids):
        self._linear, self._dnn, self._linear_ids = linear, dnn, linear_ids

    def apply_gradients(self, grads_and_vars):
        pairs = list(grads_and_vars)
        lin = [(g, v) for g, v in pairs if id(v) in self._linear_ids]
        dnn = [(g, v) for g, v in pairs if id(v) not in self._linear_ids]
        if lin:
            self._linear.apply_gradients(lin)
        if dnn:
            self._dnn.apply_gradients(dnn)


def _check_columns(columns, what):
    if columns is None or not list(columns):
        raise ValueError(f"{what} needs feature_columns (a non-empty list of "
                         f"tf.feature_column columns)")
    return list(columns)


def _check_units(hidden_units, what):
    units = list(hidden_units or [])
    if not units or any(not isinstance(u, (int, np.integer)) or u < 1 for u in units):
        raise ValueError(f"{what}: hidden_units must be a non-empty list of positive "
                         f"integers, got {hidden_units!r}")
    return units


def _check_reduction(loss_reduction, what):
    """TF2's canned default, the mean over the batch, is the only reduction implemented."""
    if loss_reduction not in (None, "sum_over_batch_size"):
        raise NotImplementedError(f"{what}: loss_reduction={loss_reduction!r} is not "
                                  f"implemented; tensorlite's canned heads average the loss "
                                  f"over the batch (SUM_OVER_BATCH_SIZE)")


def _weight_column_of(what, weight_column, batch_norm=False):
    """The validated weight_column (a feature name or a numeric_column, or None)."""
    from tensorlite.feature_column import NumericColumn  # noqa: PLC0415
    if batch_norm:
        raise NotImplementedError(f"{what}: batch_norm is not implemented in tensorlite; "
                                  f"use a custom model_fn with BatchNormalization layers")
    if weight_column is not None and not isinstance(weight_column, (str, NumericColumn)):
        raise ValueError(f"{what}: weight_column must be a feature name or a numeric_column, "
                         f"got {weight_column!r}")
    return weight_column


def dnn_logits(features, columns, hidden_units, activation, dropout, mode, units):
    """Columns -> Dense(hidden_units) layers -> a Dense(units) logits layer, named as TF's
    (dnn/hiddenlayer_<i>, dnn/logits)."""
    from tensorlite.keras import layers  # noqa: PLC0415
    from tensorlite import feature_column  # noqa: PLC0415
    net = feature_column.input_layer(features, columns, state={})
    with name_scope("dnn"):
        for i, n in enumerate(hidden_units):
            net = layers.Dense(n, activation=activation or nn_ops.relu,
                               name=f"hiddenlayer_{i}")(net)
            if dropout and mode == ModeKeys.TRAIN:
                net = nn_ops.dropout(net, rate=dropout)
        return layers.Dense(units, name="logits")(net)


def linear_logits(features, columns, units):
    """A zero-initialized weighted sum of the columns (categorical ones one-hot); returns the
    logits and the layer's variables."""
    from tensorlite.keras import layers  # noqa: PLC0415
    from tensorlite import feature_column  # noqa: PLC0415
    net = feature_column.input_layer(features, feature_column.as_linear_columns(columns),
                                     state={})
    with name_scope("linear"):
        layer = layers.Dense(units, kernel_initializer="zeros", name="linear_model")
        return layer(net), layer.trainable_weights


class _Canned(Estimator):
    """A canned estimator: `_logits(features, mode, units)` plus a head from canned_head."""

    def __init__(self, head, model_dir, config, warm_start_from):
        self._head, self._resolved = head, None
        self._eval_batches = None   # collected by evaluate for canned_head.dataset_metrics
        super().__init__(self._canned_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)

    def _canned_model_fn(self, features, labels, mode):
        logits = self._logits(features, mode, self._head.logits_dimension)
        predictions = self._head.predictions(logits)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions)
        loss, outputs = self._head.loss(logits, predictions, labels,
                                        _example_weights(features, self._weight_column))
        if mode == ModeKeys.EVAL and self._eval_batches is not None:
            self._collect(features, outputs)
        if mode == ModeKeys.TRAIN and self._resolved is None:
            self._resolved = self._train_op()   # one optimizer (and its slots) for all steps
        return EstimatorSpec(mode, predictions=predictions, loss=loss,
                             train_op=self._resolved if mode == ModeKeys.TRAIN else None)

    def _collect(self, features, outputs):
        """Keeps one batch's outputs; the Estimator's first call runs model_fn twice on the
        same features (before and after restoring), which must count once."""
        if self._eval_batches and self._eval_batches[-1][0] is features:
            self._eval_batches.pop()
        self._eval_batches.append((features, outputs))

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Estimator.evaluate's `loss` and `global_step`, plus the head's metrics computed
        over the whole evaluation set at once (weighted by weight_column; TF's streaming
        metrics), also written to eval_dir(name) at the same global step."""
        self._eval_batches = []
        try:
            out = super().evaluate(input_fn, steps=steps, hooks=hooks,
                                   checkpoint_path=checkpoint_path, name=name)
            batches = [b for _, b in self._eval_batches]
        finally:
            self._eval_batches = None
        extra = self._head.dataset_metrics(batches)
        eval_events.write(self.eval_dir(name), int(out["global_step"]), extra)
        out.update(extra)
        return dict(sorted(out.items()))


def _example_weights(features, weight_column):
    """The weight_column's per-example weights (a feature name or a numeric_column), or
    None."""
    if weight_column is None:
        return None
    from tensorlite.feature_column import NumericColumn, _raw  # noqa: PLC0415
    if isinstance(weight_column, NumericColumn):
        return _numpy_of(weight_column.dense(features, {}))
    return _raw(features, weight_column)


def _numpy_of(t):
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def _head(kind, n_classes, label_vocabulary, label_dimension, what):
    if kind == "classifier":
        return canned_head.ClassificationHead(n_classes, label_vocabulary, what)
    return canned_head.RegressionHead(label_dimension, what)


class _DNN(_Canned):
    def __init__(self, kind, hidden_units, feature_columns, model_dir, n_classes,
                 label_dimension, weight_column, label_vocabulary, optimizer, activation_fn,
                 dropout, config, warm_start_from, batch_norm):
        what = type(self).__name__
        self._weight_column = _weight_column_of(what, weight_column, batch_norm)
        self._hidden = _check_units(hidden_units, what)
        self._columns = _check_columns(feature_columns, what)
        self._optimizer_spec, self._activation, self._dropout = optimizer, activation_fn, dropout
        super().__init__(_head(kind, n_classes, label_vocabulary, label_dimension, what),
                         model_dir, config, warm_start_from)

    def _logits(self, features, mode, units):
        return dnn_logits(features, self._columns, self._hidden, self._activation,
                          self._dropout, mode, units)

    def _train_op(self):
        return resolve_optimizer(self._optimizer_spec, _DNN_LEARNING_RATE, type(self).__name__)


class DNNClassifier(_DNN):
    """A feed-forward classifier: feature columns -> hidden_units Dense layers -> logits.
    Two classes use one logit and a sigmoid (TF's binary head), more use softmax."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=None, dropout=None, config=None, warm_start_from=None,
                 loss_reduction=None, batch_norm=False):
        _check_reduction(loss_reduction, type(self).__name__)
        super().__init__("classifier", hidden_units, feature_columns, model_dir, n_classes,
                         None, weight_column, label_vocabulary, optimizer, activation_fn,
                         dropout, config, warm_start_from, batch_norm)


class DNNRegressor(_DNN):
    """A feed-forward regressor; predictions["predictions"] is [batch, label_dimension]."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=None, dropout=None,
                 config=None, warm_start_from=None, loss_reduction=None, batch_norm=False):
        _check_reduction(loss_reduction, type(self).__name__)
        super().__init__("regressor", hidden_units, feature_columns, model_dir, None,
                         label_dimension, weight_column, None, optimizer, activation_fn,
                         dropout, config, warm_start_from, batch_norm)


class _Linear(_Canned):
    def __init__(self, head, feature_columns, model_dir, weight_column, optimizer, config,
                 warm_start_from, sparse_combiner):
        what = type(self).__name__
        self._weight_column = _weight_column_of(what, weight_column)
        if sparse_combiner not in ("sum", "mean", "sqrtn"):
            raise ValueError(f"{what}: sparse_combiner must be 'sum', 'mean' or 'sqrtn', got "
                             f"{sparse_combiner!r}")
        self._columns = _check_columns(feature_columns, what)
        self._optimizer_spec = optimizer
        super().__init__(head, model_dir, config, warm_start_from)

    def _logits(self, features, mode, units):
        return linear_logits(features, self._columns, units)[0]

    def _train_op(self):
        return resolve_optimizer(self._optimizer_spec,
                                 _linear_learning_rate(len(self._columns)),
                                 type(self).__name__)


class LinearClassifier(_Linear):
    """A linear (logistic-regression) classifier over feature columns, trained with FTRL by
    default; categorical columns get one weight per bucket."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, warm_start_from=None,
                 loss_reduction=None, sparse_combiner="sum"):
        _check_reduction(loss_reduction, type(self).__name__)
        super().__init__(_head("classifier", n_classes, label_vocabulary, None,
                               type(self).__name__),
                         feature_columns, model_dir, weight_column, optimizer, config,
                         warm_start_from, sparse_combiner)


class LinearRegressor(_Linear):
    """A linear regressor over feature columns (FTRL by default)."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, warm_start_from=None, loss_reduction=None,
                 sparse_combiner="sum"):
        _check_reduction(loss_reduction, type(self).__name__)
        super().__init__(_head("regressor", None, None, label_dimension, type(self).__name__),
                         feature_columns, model_dir, weight_column, optimizer, config,
                         warm_start_from, sparse_combiner)


class _Combined(_Canned):
    """Logits = a linear part's + a DNN part's, each trained by its own optimizer."""

    def __init__(self, head, model_dir, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                 dnn_dropout, weight_column, config, warm_start_from, batch_norm):
        what = type(self).__name__
        self._weight_column = _weight_column_of(what, weight_column, batch_norm)
        self._linear_columns = list(linear_feature_columns or [])
        self._dnn_columns = list(dnn_feature_columns or [])
        if not self._linear_columns and not self._dnn_columns:
            raise ValueError(f"{what}: either linear_feature_columns or dnn_feature_columns "
                             f"must be defined.")
        if self._dnn_columns:
            self._hidden = _check_units(dnn_hidden_units, what)
        self._linear_spec, self._dnn_spec = linear_optimizer, dnn_optimizer
        self._activation, self._dropout = dnn_activation_fn, dnn_dropout
        self._linear_ids = set()
        super().__init__(head, model_dir, config, warm_start_from)

    def _logits(self, features, mode, units):
        total = None
        if self._linear_columns:
            total, weights = linear_logits(features, self._linear_columns, units)
            self._linear_ids.clear()   # this call's variables (the store's, after the first)
            self._linear_ids.update(id(w) for w in weights)
        if self._dnn_columns:
            dnn = dnn_logits(features, self._dnn_columns, self._hidden, self._activation,
                             self._dropout, mode, units)
            total = dnn if total is None else total + dnn
        return total

    def _train_op(self):
        what = type(self).__name__
        return _SplitOptimizer(
            resolve_optimizer(self._linear_spec,
                              _linear_learning_rate(len(self._linear_columns)), what),
            resolve_optimizer(self._dnn_spec, _DNN_LEARNING_RATE, what), self._linear_ids)


class DNNLinearCombinedClassifier(_Combined):
    """A wide-and-deep classifier: linear_feature_columns (FTRL) + dnn_feature_columns
    through dnn_hidden_units (Adagrad), their logits summed."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=None, dnn_dropout=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, config=None, warm_start_from=None,
                 loss_reduction=None, batch_norm=False, linear_sparse_combiner="sum"):
        _check_reduction(loss_reduction, type(self).__name__)
        super().__init__(_head("classifier", n_classes, label_vocabulary, None,
                               type(self).__name__),
                         model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, weight_column, config,
                         warm_start_from, batch_norm)


class DNNLinearCombinedRegressor(_Combined):
    """A wide-and-deep regressor (see DNNLinearCombinedClassifier)."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=None, dnn_dropout=None, label_dimension=1,
                 weight_column=None, config=None, warm_start_from=None, loss_reduction=None,
                 batch_norm=False, linear_sparse_combiner="sum"):
        _check_reduction(loss_reduction, type(self).__name__)
        super().__init__(_head("regressor", None, None, label_dimension, type(self).__name__),
                         model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, weight_column, config,
                         warm_start_from, batch_norm)
