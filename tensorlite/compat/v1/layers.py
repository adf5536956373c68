"""`tf.compat.v1.layers`: TF1's functional layers over get_variable (dense).

Example:
    >>> with tf.Graph().as_default():
    ...     x = tf.compat.v1.placeholder(tf.float32, [None, 3])
    ...     y = tf.compat.v1.layers.dense(x, 2, activation=tf.nn.relu, name="fc")
    >>> y.shape.as_list()
    [None, 2]
"""
from tensorlite.compat.v1.initializers import glorot_uniform_initializer, zeros_initializer
from tensorlite.compat.v1.variable_scope import AUTO_REUSE, get_variable, variable_scope
from tensorlite.ops import math_ops

__all__ = ["dense"]


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable=True, name=None, reuse=None):
    """`activation(inputs @ kernel + bias)` with `<name>/kernel` and `<name>/bias` made by
    get_variable (glorot-uniform kernel, zero bias, as TF1)."""
    from tensorlite.ops.common import to_tensor  # noqa: PLC0415
    x = to_tensor(inputs)
    in_dim = x.shape.as_list()[-1]
    if in_dim is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                         "Found `None`.")
    with variable_scope(name, default_name="dense", reuse=AUTO_REUSE if reuse else None):
        kernel = get_variable("kernel", shape=[in_dim, units], dtype=x.dtype,
                              initializer=kernel_initializer or glorot_uniform_initializer(),
                              trainable=trainable)
        y = math_ops.tensordot(x, kernel, [[x.shape.rank - 1], [0]]) if x.shape.rank != 2 \
            else math_ops.matmul(x, kernel)
        if use_bias:
            bias = get_variable("bias", shape=[units], dtype=x.dtype,
                                initializer=bias_initializer or zeros_initializer(),
                                trainable=trainable)
            y = y + bias
    return activation(y) if activation is not None else y
