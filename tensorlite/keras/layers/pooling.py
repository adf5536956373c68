"""Pooling layers: MaxPooling1D/2D, AveragePooling1D/2D and the global poolings.

Example:
    >>> tf.keras.layers.MaxPooling2D()(tf.ones([1, 4, 4, 3])).shape
    TensorShape([1, 2, 2, 3])
"""
from tensorlite.ops import pooling_ops as nn
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras.layers.base_layer_utils import check_ndim
from tensorlite.keras.layers.conv_utils import (conv_output_length, normalize_data_format,
                                                normalize_padding, normalize_tuple)
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, math_ops


class _Pooling(Layer):
    """Windowed pooling over `_rank` spatial axes with one tf.nn pooling op."""

    _rank = 2

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        n = self._rank
        self.pool_size = normalize_tuple(pool_size, n, "pool_size")
        self.strides = self.pool_size if strides is None else normalize_tuple(strides, n,
                                                                              "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)

    def call(self, inputs):
        check_ndim(self, inputs.shape, ndim=self._rank + 2)
        first = self.data_format == "channels_first"
        if self._rank == 1:
            fmt = "NCW" if first else "NWC"
            return self._pool1d(inputs, self.pool_size[0], self.strides[0],
                                self.padding.upper(), fmt)
        return self._pool2d(inputs, self.pool_size, self.strides, self.padding.upper(),
                            "NCHW" if first else "NHWC")

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = s[2:] if first else s[1:-1]
        out = [conv_output_length(n, k, self.padding, st) for n, k, st in
               zip(spatial, self.pool_size, self.strides)]
        return TensorShape([s[0], s[1]] + out if first else [s[0]] + out + [s[-1]])

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "padding": self.padding,
                "strides": self.strides, "data_format": self.data_format}


class MaxPooling2D(_Pooling):
    """`tf.keras.layers.MaxPooling2D`: the max over each window; strides default to
    pool_size."""

    _pool2d = staticmethod(nn.max_pool2d)

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling2D(_Pooling):
    """`tf.keras.layers.AveragePooling2D`: the mean over each window (padding excluded)."""

    _pool2d = staticmethod(nn.avg_pool2d)

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class MaxPooling1D(_Pooling):
    """`tf.keras.layers.MaxPooling1D` over [batch, steps, features]."""

    _rank = 1
    _pool1d = staticmethod(nn.max_pool1d)

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format="channels_last",
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling1D(_Pooling):
    """`tf.keras.layers.AveragePooling1D` over [batch, steps, features]."""

    _rank = 1
    _pool1d = staticmethod(nn.avg_pool1d)

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format="channels_last",
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class _GlobalPooling(Layer):
    """Reduces every spatial axis with `_reduce` (keepdims keeps them as size 1)."""

    _rank = 2

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        self.keepdims = bool(keepdims)

    def _axes(self):
        first = self.data_format == "channels_first"
        return list(range(2, 2 + self._rank)) if first else list(range(1, 1 + self._rank))

    def call(self, inputs):
        check_ndim(self, inputs.shape, ndim=self._rank + 2)
        return self._reduce(inputs, axis=self._axes(), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        axes = self._axes()
        if self.keepdims:
            return TensorShape([1 if i in axes else d for i, d in enumerate(s)])
        return TensorShape([d for i, d in enumerate(s) if i not in axes])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


class GlobalAveragePooling2D(_GlobalPooling):
    """`tf.keras.layers.GlobalAveragePooling2D`: [b, h, w, c] -> [b, c]."""

    _reduce = staticmethod(math_ops.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling):
    """`tf.keras.layers.GlobalMaxPooling2D`: [b, h, w, c] -> [b, c]."""

    _reduce = staticmethod(math_ops.reduce_max)


class GlobalAveragePooling1D(_GlobalPooling):
    """`tf.keras.layers.GlobalAveragePooling1D`: [b, steps, c] -> [b, c]; with a mask, the
    mean over the unmasked steps only."""

    _rank = 1
    _reduce = staticmethod(math_ops.reduce_mean)

    def __init__(self, data_format="channels_last", keepdims=False, **kwargs):
        super().__init__(data_format, keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        check_ndim(self, inputs.shape, ndim=3)
        steps = self._axes()[0]
        m = math_ops.cast(mask, inputs.dtype)
        m = array_ops.expand_dims(m, 2 if steps == 1 else 1)
        total = math_ops.reduce_sum(math_ops.multiply(inputs, m), axis=steps,
                                    keepdims=self.keepdims)
        return math_ops.divide(total, math_ops.reduce_sum(m, axis=steps,
                                                          keepdims=self.keepdims))

    def compute_mask(self, inputs, mask=None):
        return None


class GlobalMaxPooling1D(_GlobalPooling):
    """`tf.keras.layers.GlobalMaxPooling1D`: [b, steps, c] -> [b, c]."""

    _rank = 1
    _reduce = staticmethod(math_ops.reduce_max)

    def __init__(self, data_format="channels_last", keepdims=False, **kwargs):
        super().__init__(data_format, keepdims, **kwargs)


MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = (MaxPooling1D, MaxPooling2D, AveragePooling1D,
                                              AveragePooling2D)
GlobalAvgPool1D, GlobalAvgPool2D = GlobalAveragePooling1D, GlobalAveragePooling2D
GlobalMaxPool1D, GlobalMaxPool2D = GlobalMaxPooling1D, GlobalMaxPooling2D
