"""`tf.compat.v1.nn`: TF1's spellings (keep_prob dropout, *_v2 names) over tf.nn; every
other name is tf.nn's."""
from tensorlite.compat.v1.forwarding import forward_to
from tensorlite.ops import nn_ops

__all__ = ["dropout", "softmax_cross_entropy_with_logits_v2", "xw_plus_b"]


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1's dropout: `keep_prob` (or TF2's `rate`) of the units are kept, scaled up."""
    if rate is None:
        if keep_prob is None:
            raise ValueError("dropout needs keep_prob (or rate)")
        rate = 1 - keep_prob
    return nn_ops.dropout(x, rate, noise_shape=noise_shape, seed=seed)


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=-1, name=None, dim=None):
    """TF1's name for tf.nn.softmax_cross_entropy_with_logits."""
    return nn_ops.softmax_cross_entropy_with_logits(labels, logits,
                                                    axis=axis if dim is None else dim)


def xw_plus_b(x, weights, biases, name=None):
    """`matmul(x, weights) + biases`."""
    from tensorlite.ops import math_ops  # noqa: PLC0415
    return math_ops.matmul(x, weights) + biases


__getattr__ = forward_to("tensorlite.nn", __name__)
