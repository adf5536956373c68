"""Convolution layers: Conv1D, Conv2D, DepthwiseConv2D, SeparableConv2D, Conv2DTranspose,
Conv1DTranspose.

Each builds its kernel lazily from the input's channel count (`conv2d/kernel:0` is
[kh, kw, in_channels // groups, filters], as in Keras) and runs one `tf.nn` convolution
(im2col + one matmul) per call.

Example:
    >>> layer = tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu")
    >>> layer(tf.ones([2, 16, 16, 3])).shape
    TensorShape([2, 16, 16, 8])
"""

from tensorlite.ops import conv_ops as nn
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras import activations
from tensorlite.keras.layers.base_layer_utils import (check_axis_value, check_ndim,
                                                      kernel_bias_config, serialize_constraint,
                                                      serialize_initializer,
                                                      serialize_regularizer, set_kernel_bias_args,
                                                      weight_args)
from tensorlite.keras.layers.conv_utils import (channels_bias, conv_output_length,
                                                deconv_output_length, normalize_data_format,
                                                normalize_padding, normalize_tuple)
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops


class _Conv(Layer):
    """Shared body of Conv1D and Conv2D (rank = number of spatial axes)."""
    _casts_numeric_inputs = True

    _rank = 2
    _paddings = ("valid", "same")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        n = self._rank
        if filters is not None:
            if not isinstance(filters, int) or filters <= 0:
                raise ValueError(f"Invalid value for argument `filters`. Expected a strictly "
                                 f"positive value. Received filters={filters}.")
        self.filters = filters
        self.groups = int(groups or 1)
        if filters is not None and filters % self.groups:
            raise ValueError(f"The number of filters must be evenly divisible by the number "
                             f"of groups. Received: groups={self.groups}, filters={filters}.")
        self.kernel_size = normalize_tuple(kernel_size, n, "kernel_size")
        self.strides = normalize_tuple(strides, n, "strides")
        self.padding = normalize_padding(padding, self._paddings)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, n, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with "
                             f"`dilation_rate > 1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        set_kernel_bias_args(self, kernel_initializer, kernel_regularizer, kernel_constraint,
                             bias_initializer, bias_regularizer, bias_constraint)

    @property
    def _channel_axis(self):
        return 1 if self.data_format == "channels_first" else -1

    def _add_kernel(self, shape):
        return self.add_weight("kernel", shape, initializer=self.kernel_initializer,
                               regularizer=self.kernel_regularizer,
                               constraint=self.kernel_constraint)

    def _add_bias(self, size):
        """The bias of `size` units, or None without use_bias."""
        if not self.use_bias:
            return None
        return self.add_weight("bias", (size,), initializer=self.bias_initializer,
                               regularizer=self.bias_regularizer,
                               constraint=self.bias_constraint)

    def _input_channels(self, input_shape):
        shape = TensorShape(input_shape)
        check_ndim(self, shape, ndim=self._rank + 2)
        channels = shape.as_list()[self._channel_axis]
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs to layer {self.name!r} "
                             f"should be defined. The input_shape received is "
                             f"{tuple(shape.as_list())}, where axis {self._channel_axis} "
                             f"(0-based) is the channel dimension, which found to be `None`.")
        return channels

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        if channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the "
                             f"number of groups. Received groups={self.groups}, but the input "
                             f"has {channels} channels (full input shape is "
                             f"{tuple(TensorShape(input_shape).as_list())}).")
        self._in_channels = channels
        shape = self.kernel_size + (channels // self.groups, self.filters)
        self.kernel = self._add_kernel(shape)
        self.bias = self._add_bias(self.filters)
        self.built = True

    def _check_input(self, inputs):
        check_ndim(self, inputs.shape, ndim=self._rank + 2)
        check_axis_value(self, inputs.shape, self._channel_axis, self._in_channels)

    def call(self, inputs):
        self._check_input(inputs)
        if self.groups == 1:
            out = self._convolve(inputs, self.kernel)
        else:
            axis = self._channel_axis
            xs = array_ops.split(inputs, self.groups, axis=axis)
            ks = array_ops.split(self.kernel, self.groups, axis=-1)
            out = array_ops.concat([self._convolve(x, k) for x, k in zip(xs, ks)], axis=axis)
        if self.use_bias:
            out = channels_bias(out, self.bias, self.data_format == "channels_first")
        return self.activation(out)

    def _spatial_output(self, spatial):
        return [conv_output_length(n, k, self.padding, s, d) for n, k, s, d in
                zip(spatial, self.kernel_size, self.strides, self.dilation_rate)]

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        if self.data_format == "channels_first":
            return TensorShape([s[0], self.filters] + self._spatial_output(s[2:]))
        return TensorShape([s[0]] + self._spatial_output(s[1:-1]) + [self.filters])

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "groups": self.groups,
                "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias,
                **kernel_bias_config(self)}


class Conv2D(_Conv):
    """`tf.keras.layers.Conv2D`: 2-D convolution, kernel [kh, kw, in // groups, filters]."""

    _rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         groups, activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, **kwargs)

    def _convolve(self, x, kernel):
        fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"
        return nn.conv2d(x, kernel, self.strides, self.padding.upper(), fmt,
                         self.dilation_rate)


class Conv1D(_Conv):
    """`tf.keras.layers.Conv1D`: 1-D convolution over [batch, steps, channels]; padding
    'causal' pads only the start so output t never sees inputs after t."""

    _rank = 1
    _paddings = ("valid", "same", "causal")

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, groups=1, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         groups, activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, **kwargs)
        if self.padding == "causal" and self.data_format != "channels_last":
            raise ValueError("Causal padding is only supported for `Conv1D` with "
                             "`data_format='channels_last'`.")

    def _convolve(self, x, kernel):
        padding = self.padding.upper()
        if self.padding == "causal":
            left = (self.kernel_size[0] - 1) * self.dilation_rate[0]
            x = array_ops.pad(x, [[0, 0], [left, 0], [0, 0]])
            padding = "VALID"
        fmt = "NCW" if self.data_format == "channels_first" else "NWC"
        return nn.conv1d(x, kernel, self.strides[0], padding, fmt, self.dilation_rate[0])


class DepthwiseConv2D(Conv2D):
    """`tf.keras.layers.DepthwiseConv2D`: each input channel convolved with its own
    `depth_multiplier` filters; depthwise_kernel [kh, kw, in, depth_multiplier]."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(None, kernel_size, strides, padding, data_format, dilation_rate, 1,
                         activation, use_bias, bias_initializer=bias_initializer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, **kwargs)
        if not isinstance(depth_multiplier, int) or depth_multiplier <= 0:
            raise ValueError(f"Invalid value for argument `depth_multiplier`. Expected a "
                             f"strictly positive value. Received "
                             f"depth_multiplier={depth_multiplier}.")
        self.depth_multiplier = depth_multiplier
        self.depthwise_initializer, self.depthwise_regularizer, self.depthwise_constraint = \
            weight_args(depthwise_initializer, depthwise_regularizer,
                        depthwise_constraint)

    def build(self, input_shape):
        channels = self._in_channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.bias = self._add_bias(channels * self.depth_multiplier)
        self.built = True

    def call(self, inputs):
        self._check_input(inputs)
        fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"
        out = nn.depthwise_conv2d(inputs, self.depthwise_kernel, self.strides,
                                  self.padding.upper(), fmt, self.dilation_rate)
        if self.use_bias:
            out = channels_bias(out, self.bias, self.data_format == "channels_first")
        return self.activation(out)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        c = None if s[self._channel_axis] is None else s[self._channel_axis] * \
            self.depth_multiplier
        if self.data_format == "channels_first":
            return TensorShape([s[0], c] + self._spatial_output(s[2:]))
        return TensorShape([s[0]] + self._spatial_output(s[1:-1]) + [c])

    def get_config(self):
        config = super().get_config()
        for key in ("filters", "groups", "kernel_initializer", "kernel_regularizer",
                    "kernel_constraint"):
            config.pop(key)
        config.update(depth_multiplier=self.depth_multiplier,
                      depthwise_initializer=serialize_initializer(self.depthwise_initializer),
                      depthwise_regularizer=serialize_regularizer(self.depthwise_regularizer),
                      depthwise_constraint=serialize_constraint(self.depthwise_constraint))
        return config


class SeparableConv2D(Conv2D):
    """`tf.keras.layers.SeparableConv2D`: a depthwise convolution, then a 1x1 pointwise
    one; depthwise_kernel [kh, kw, in, m], pointwise_kernel [1, 1, in * m, filters]."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, 1,
                         activation, use_bias, bias_initializer=bias_initializer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer, self.depthwise_regularizer, self.depthwise_constraint = \
            weight_args(depthwise_initializer, depthwise_regularizer,
                        depthwise_constraint)
        self.pointwise_initializer, self.pointwise_regularizer, self.pointwise_constraint = \
            weight_args(pointwise_initializer, pointwise_regularizer,
                        pointwise_constraint)

    def build(self, input_shape):
        channels = self._in_channels = self._input_channels(input_shape)
        m = self.depth_multiplier
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", self.kernel_size + (channels, m),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", (1, 1, channels * m, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self.bias = self._add_bias(self.filters)
        self.built = True

    def call(self, inputs):
        self._check_input(inputs)
        fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"
        out = nn.separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel,
                                  self.strides, self.padding.upper(), fmt, self.dilation_rate)
        if self.use_bias:
            out = channels_bias(out, self.bias, self.data_format == "channels_first")
        return self.activation(out)

    def get_config(self):
        config = super().get_config()
        for key in ("groups", "kernel_initializer", "kernel_regularizer", "kernel_constraint"):
            config.pop(key)
        config.update(
            depth_multiplier=self.depth_multiplier,
            depthwise_initializer=serialize_initializer(self.depthwise_initializer),
            pointwise_initializer=serialize_initializer(self.pointwise_initializer),
            depthwise_regularizer=serialize_regularizer(self.depthwise_regularizer),
            pointwise_regularizer=serialize_regularizer(self.pointwise_regularizer),
            depthwise_constraint=serialize_constraint(self.depthwise_constraint),
            pointwise_constraint=serialize_constraint(self.pointwise_constraint))
        return config


class Conv2DTranspose(Conv2D):
    """`tf.keras.layers.Conv2DTranspose`: the gradient of a Conv2D with respect to its
    input ("deconvolution"); kernel [kh, kw, filters, in_channels]."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, 1,
                         activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, **kwargs)
        self.output_padding = None if output_padding is None else normalize_tuple(
            output_padding, self._rank, "output_padding", allow_zero=True)
        if self.output_padding is not None:
            for s, p in zip(self.strides, self.output_padding):
                if p >= s:
                    raise ValueError(f"Strides must be greater than output padding. Received "
                                     f"strides={self.strides}, "
                                     f"output_padding={self.output_padding}.")

    def build(self, input_shape):
        channels = self._in_channels = self._input_channels(input_shape)
        self.kernel = self._add_kernel(self.kernel_size + (self.filters, channels))
        self.bias = self._add_bias(self.filters)
        self.built = True

    def _spatial_output(self, spatial):
        pads = self.output_padding or (None,) * self._rank
        return [deconv_output_length(n, k, self.padding, p, s, d) for n, k, p, s, d in
                zip(spatial, self.kernel_size, pads, self.strides, self.dilation_rate)]

    def call(self, inputs):
        self._check_input(inputs)
        out_shape = self.compute_output_shape(inputs.shape).as_list()
        fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"
        out = nn.conv2d_transpose(inputs, self.kernel, out_shape, self.strides,
                                  self.padding.upper(), fmt, self.dilation_rate)
        if self.use_bias:
            out = channels_bias(out, self.bias, self.data_format == "channels_first")
        return self.activation(out)

    def get_config(self):
        config = super().get_config()
        config.pop("groups")
        config["output_padding"] = self.output_padding
        return config


class Conv1DTranspose(Conv2DTranspose):
    """`tf.keras.layers.Conv1DTranspose`: a Conv2DTranspose over a unit height."""

    _rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format,
                         dilation_rate, activation, use_bias, kernel_initializer,
                         bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, **kwargs)

    def call(self, inputs):
        self._check_input(inputs)
        out_shape = self.compute_output_shape(inputs.shape).as_list()
        first = self.data_format == "channels_first"
        axis = 2 if first else 1  # the unit height goes just before the width
        x4 = array_ops.expand_dims(inputs, axis)
        k4 = array_ops.expand_dims(self.kernel, 0)
        out_shape.insert(axis, 1)
        out = nn.conv2d_transpose(x4, k4, out_shape, (1,) + self.strides,
                                  self.padding.upper(), "NCHW" if first else "NHWC",
                                  (1,) + self.dilation_rate)
        out = array_ops.squeeze(out, [axis])
        if self.use_bias:
            out = channels_bias(out, self.bias, first)
        return self.activation(out)


Convolution1D, Convolution2D = Conv1D, Conv2D
Convolution2DTranspose, Convolution1DTranspose = Conv2DTranspose, Conv1DTranspose
SeparableConvolution2D = SeparableConv2D
