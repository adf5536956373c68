"""`tf.compat.v1.metrics`: TF1's streaming metrics for graphs run in a Session.

Each metric returns TF1's `(value, update_op)` pair. Its running state (`total`, `count`)
lives in LOCAL_VARIABLES, as in TF1, so `tf.compat.v1.local_variables_initializer()` resets
it; fetching `update_op` folds one batch in and gives the value so far, fetching `value`
reads it without updating. This is what Estimator.evaluate runs for `eval_metric_ops`.

Example:
    >>> with tf.Graph().as_default():
    ...     acc, update = tf.compat.v1.metrics.accuracy(labels, predictions)
    ...     with tf.compat.v1.Session() as s:
    ...         s.run(tf.compat.v1.local_variables_initializer())
    ...         s.run(update); s.run(acc)
"""
from tensorlite.compat.v1 import graph_mode
from tensorlite.compat.v1.graph import GraphKeys
from tensorlite.compat.v1.variable_scope import get_variable, variable_scope
from tensorlite.compat.v1.variables import _assign
from tensorlite.framework import dtypes
from tensorlite.ops import array_ops, math_ops
from tensorlite.ops.common import to_tensor

__all__ = ["accuracy", "mean", "mean_absolute_error", "mean_squared_error",
           "root_mean_squared_error"]


def _state(name):
    return get_variable(name, dtype=dtypes.float32,
                        initializer=array_ops.zeros([], dtypes.float32), trainable=False,
                        collections=[GraphKeys.LOCAL_VARIABLES, "metric_variables"])


def _safe_div(total, count):
    # count is 0 only while total is 0 too: 0 / tiny is TF's div_no_nan result, 0
    return math_ops.divide(total, math_ops.maximum(count, 1e-30))


def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name=None):
    """`tf.compat.v1.metrics.mean`: the (weighted) mean of every value seen so far."""
    if not graph_mode.recording():
        raise RuntimeError("tf.compat.v1.metrics.mean is not supported when eager execution "
                           "is enabled; use tf.keras.metrics.Mean (or build a tf.Graph)")
    values = math_ops.cast(to_tensor(values), dtypes.float32)
    if weights is None:
        batch_total = math_ops.reduce_sum(values)
        batch_count = math_ops.cast(array_ops.size(values), dtypes.float32)
    else:
        w = math_ops.cast(to_tensor(weights), dtypes.float32) * array_ops.ones_like(values)
        batch_total = math_ops.reduce_sum(values * w)
        batch_count = math_ops.reduce_sum(w)
    with variable_scope(name, default_name="mean"):
        total, count = _state("total"), _state("count")
        value = _safe_div(total, count)
        update_op = _safe_div(_assign(total, batch_total, "add"),
                              _assign(count, batch_count, "add"))
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def _collect(collections, item):
    from tensorlite.compat.v1.graph import add_to_collections  # noqa: PLC0415
    if collections:
        add_to_collections(collections, item)


def _pair(labels, predictions):
    labels, predictions = to_tensor(labels), to_tensor(predictions)
    if labels.shape.rank is not None and predictions.shape.rank is not None \
            and labels.shape.rank != predictions.shape.rank:
        labels = array_ops.reshape(labels, array_ops.shape(predictions))
    return labels, predictions


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """`tf.compat.v1.metrics.accuracy`: how often `predictions` equals `labels`."""
    labels, predictions = _pair(labels, predictions)
    hits = math_ops.cast(math_ops.equal(math_ops.cast(labels, predictions.dtype),
                                        predictions), dtypes.float32)
    return mean(hits, weights, metrics_collections, updates_collections,
                name or "accuracy")


def _mean_error(error, default_name):
    """A streaming mean of `error(labels - predictions)` in float32, as TF's metric."""
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        labels, predictions = _pair(labels, predictions)
        err = error(math_ops.cast(labels, dtypes.float32)
                    - math_ops.cast(predictions, dtypes.float32))
        return mean(err, weights, metrics_collections, updates_collections,
                    name or default_name)
    metric.__name__ = default_name
    metric.__doc__ = f"`tf.compat.v1.metrics.{default_name}`."
    return metric


mean_squared_error = _mean_error(math_ops.square, "mean_squared_error")
mean_absolute_error = _mean_error(math_ops.abs, "mean_absolute_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """`tf.compat.v1.metrics.root_mean_squared_error`: sqrt of the streaming MSE."""
    mse, update = mean_squared_error(labels, predictions, weights, None, None,
                                     name or "root_mean_squared_error")
    value, update_op = math_ops.sqrt(mse), math_ops.sqrt(update)
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op
