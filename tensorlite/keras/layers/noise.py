"""Regularization layers: GaussianNoise, SpatialDropout1D/2D, ActivityRegularization.

Example:
    >>> tf.keras.layers.GaussianNoise(0.1)(tf.ones([2, 3])).numpy()   # inference: as is
    array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32)
"""
from tensorlite.ops import nn_ops as nn
from tensorlite.keras import regularizers
from tensorlite.keras.layers.core import Dropout
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, math_ops, random_ops


class GaussianNoise(Layer):
    """`tf.keras.layers.GaussianNoise`: adds N(0, stddev^2) noise while training."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev, self.seed = float(stddev), seed
        self.supports_masking = True

    def call(self, inputs, training=None):
        if not training or self.stddev == 0:
            return inputs
        noise = random_ops.normal(array_ops.shape(inputs), stddev=self.stddev,
                                  dtype=inputs.dtype, seed=self.seed)
        return math_ops.add(inputs, noise)

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


class SpatialDropout2D(Dropout):
    """`tf.keras.layers.SpatialDropout2D`: drops whole feature maps (channels) while
    training, so neighbouring, correlated pixels are dropped together."""

    _spatial_rank = 2

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        self.data_format = data_format or "channels_last"

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        shape = inputs.shape.as_list()
        if inputs.shape.rank != self._spatial_rank + 2:
            raise ValueError(f"{type(self).__name__} expects inputs of rank "
                             f"{self._spatial_rank + 2}, got shape {shape}")
        ones = [1] * self._spatial_rank
        noise = [shape[0], *ones, shape[-1]] if self.data_format == "channels_last" else \
            [shape[0], shape[1], *ones]
        return nn.dropout(inputs, self.rate, noise_shape=noise, seed=self.seed)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class SpatialDropout1D(SpatialDropout2D):
    """`tf.keras.layers.SpatialDropout1D`: drops whole channels of [batch, steps, ch]."""

    _spatial_rank = 1

    def __init__(self, rate, **kwargs):
        super().__init__(rate, **kwargs)


class ActivityRegularization(Layer):
    """`tf.keras.layers.ActivityRegularization`: passes inputs on and adds
    l1 * sum|x| + l2 * sum x^2 to the model's losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2
        self.supports_masking = True

    def call(self, inputs):
        return inputs

    def get_config(self):
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}
