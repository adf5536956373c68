"""`tf.compat.v1.losses`: the loss collections of TF 1.x graphs.

`get_variable(..., regularizer=...)` puts each variable's regularization loss in the
REGULARIZATION_LOSSES collection; `get_regularization_loss(scope)` sums those whose name
starts with `scope` (the notes "Structure of Deep Learning Frameworks":
`get_regularization_loss(scope="matmul")`).

Example:
    >>> reg_loss = tf.compat.v1.losses.get_regularization_loss(scope="matmul")
"""
from tensorlite.compat.v1.graph import GraphKeys, get_default_graph
from tensorlite.framework.convert import constant


def get_regularization_losses(scope=None):
    """`tf.compat.v1.losses.get_regularization_losses`: the collected regularization
    losses, optionally only those whose name matches `scope` from the start."""
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """`tf.compat.v1.losses.get_regularization_loss`: their sum (0.0 when none)."""
    losses = get_regularization_losses(scope)
    if not losses:
        return constant(0.0)
    return _named_sum(losses, name)


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """`tf.compat.v1.losses.add_loss`: adds `loss` to `loss_collection`."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    """`tf.compat.v1.losses.get_losses`: the losses in `loss_collection`."""
    return get_default_graph().get_collection(loss_collection, scope)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """`tf.compat.v1.losses.get_total_loss`: the sum of the collected losses (and the
    regularization losses)."""
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses found: add losses with tf.compat.v1.losses.add_loss or "
                         "create variables with a regularizer")
    return _named_sum(losses, name)


def _named_sum(losses, name):
    from tensorlite.ops.math_ops import add_n  # noqa: PLC0415
    total = add_n(losses, name=name)
    get_default_graph()._set_tensor_name(total, f"{name}:0")
    return total


def _weighted_mean(err, weights, loss_collection):
    """TF1's default reduction (SUM_BY_NONZERO_WEIGHTS): sum(err * w) / count(w != 0)."""
    from tensorlite.ops import array_ops, math_ops  # noqa: PLC0415
    w = math_ops.cast(weights, err.dtype) * array_ops.ones_like(err)
    nonzero = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(w, 0.0), err.dtype))
    loss = math_ops.divide(math_ops.reduce_sum(err * w), math_ops.maximum(nonzero, 1.0))
    add_loss(loss, loss_collection)
    return loss


def _difference(labels, predictions):
    from tensorlite.ops import math_ops  # noqa: PLC0415
    from tensorlite.ops.common import to_tensor  # noqa: PLC0415
    predictions = to_tensor(predictions)
    labels = math_ops.cast(to_tensor(labels), predictions.dtype)
    if labels.shape.rank is not None and predictions.shape.rank is not None \
            and labels.shape.rank != predictions.shape.rank:
        raise ValueError(f"labels and predictions must have the same rank (TF1 losses do not "
                         f"broadcast them), got shapes {labels.shape} and "
                         f"{predictions.shape}")
    return predictions - labels


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES, reduction=None):
    """`tf.compat.v1.losses.mean_squared_error`: the weighted mean of (pred - label)^2,
    added to `loss_collection`."""
    from tensorlite.ops import math_ops  # noqa: PLC0415
    return _weighted_mean(math_ops.square(_difference(labels, predictions)), weights,
                          loss_collection)


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES, reduction=None):
    """`tf.compat.v1.losses.absolute_difference`: the weighted mean of |pred - label|."""
    from tensorlite.ops import math_ops  # noqa: PLC0415
    return _weighted_mean(math_ops.abs(_difference(labels, predictions)), weights,
                          loss_collection)
