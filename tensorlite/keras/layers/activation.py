"""Keras's activation layers: ReLU, LeakyReLU, PReLU, ELU, Softmax, ThresholdedReLU.

Example:
    >>> tf.keras.layers.ReLU(max_value=6.0)(tf.constant([-1.0, 3.0, 9.0])).numpy()
    array([0., 3., 6.], dtype=float32)
"""
from tensorlite.ops import nn_ops as nn
from tensorlite.keras import activations
from tensorlite.keras.layers.base_layer_utils import (serialize_constraint,
                                                      serialize_initializer,
                                                      serialize_regularizer, weight_args)
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import math_ops


class ReLU(Layer):
    """`tf.keras.layers.ReLU`: max(x, 0) capped at max_value; below `threshold` the output
    is negative_slope * (x - threshold)."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0:
            raise ValueError(f"max_value of a ReLU layer cannot be a negative value. "
                             f"Received: {max_value}")
        if negative_slope is None or negative_slope < 0:
            raise ValueError(f"negative_slope of a ReLU layer cannot be a negative value. "
                             f"Received: {negative_slope}")
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, \
            threshold
        self.supports_masking = True

    def call(self, inputs):
        return activations.relu(inputs, alpha=self.negative_slope, max_value=self.max_value,
                                threshold=self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value,
                "negative_slope": self.negative_slope, "threshold": self.threshold}


class LeakyReLU(Layer):
    """`tf.keras.layers.LeakyReLU`: x for x >= 0, alpha * x below (alpha=0.3 as Keras 2;
    Keras 3's `negative_slope` is accepted too)."""

    def __init__(self, alpha=0.3, negative_slope=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha if negative_slope is None else negative_slope)
        if self.alpha < 0:
            raise ValueError(f"The alpha value of a Leaky ReLU layer cannot be None or "
                             f"negative, received: {alpha}")
        self.supports_masking = True

    def call(self, inputs):
        return nn.leaky_relu(inputs, alpha=self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class PReLU(Layer):
    """`tf.keras.layers.PReLU`: leaky ReLU whose slope `alpha` is learned per unit
    (shared along `shared_axes`)."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None,
                 alpha_constraint=None, shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer, self.alpha_regularizer, self.alpha_constraint = \
            weight_args(alpha_initializer, alpha_regularizer, alpha_constraint)
        self.shared_axes = None if shared_axes is None else (
            [shared_axes] if isinstance(shared_axes, int) else list(shared_axes))
        self.supports_masking = True

    def build(self, input_shape):
        shape = list(input_shape)[1:]
        for ax in self.shared_axes or ():
            shape[ax - 1] = 1
        self.alpha = self.add_weight("alpha", shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        self.built = True

    def call(self, inputs):
        pos = nn.relu(inputs)
        neg = math_ops.multiply(-self.alpha, nn.relu(-inputs))
        return pos + neg

    def get_config(self):
        return {**super().get_config(), "shared_axes": self.shared_axes,
                "alpha_initializer": serialize_initializer(self.alpha_initializer),
                "alpha_regularizer": serialize_regularizer(self.alpha_regularizer),
                "alpha_constraint": serialize_constraint(self.alpha_constraint)}


class ELU(Layer):
    """`tf.keras.layers.ELU`: x for x > 0, alpha * (exp(x) - 1) below."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        if alpha is None:
            raise ValueError("Alpha of an ELU layer cannot be None, expecting a float. "
                             "Received: None")
        self.alpha = float(alpha)
        self.supports_masking = True

    def call(self, inputs):
        out = nn.elu(inputs)
        if self.alpha == 1.0:
            return out
        return math_ops.where(math_ops.greater(inputs, 0.0), out,
                              math_ops.multiply(out, self.alpha))

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class Softmax(Layer):
    """`tf.keras.layers.Softmax`: softmax over `axis`; positions where `mask` is False
    get (almost) zero probability."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is not None:
            big = -1e9 if inputs.dtype.name != "float16" else -6e4
            inputs = math_ops.add(inputs, math_ops.multiply(
                1.0 - math_ops.cast(mask, inputs.dtype), big))
        if isinstance(self.axis, (list, tuple)):
            lse = math_ops.reduce_logsumexp(inputs, axis=self.axis, keepdims=True)
            return math_ops.exp(inputs - lse)
        return nn.softmax(inputs, axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class ThresholdedReLU(Layer):
    """`tf.keras.layers.ThresholdedReLU`: x where x > theta, else 0."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None or theta < 0:
            raise ValueError(f"Theta of a Thresholded ReLU layer cannot be None or "
                             f"negative, expecting a float. Received: {theta}")
        self.theta = float(theta)
        self.supports_masking = True

    def call(self, inputs):
        return math_ops.where(math_ops.greater(inputs, self.theta), inputs,
                              math_ops.zeros_like_t(inputs))

    def get_config(self):
        return {**super().get_config(), "theta": self.theta}
