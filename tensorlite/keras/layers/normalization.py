"""BatchNormalization and LayerNormalization.

BatchNormalization normalises with the batch's statistics while training and with its
moving averages otherwise; each training call moves `moving_mean` / `moving_variance`
(non-trainable weights) toward the batch's statistics by `1 - momentum`. As in TF 2.x,
a layer with `trainable=False` always runs in inference mode, and where TF would take its
fused kernel (rank-4/5 input normalised on axis 1 or the last axis, float16/32) the moving
variance is updated with Bessel's correction n / (n - 1) (TF's fused kernel does that; its
unfused path does not; pass `fused=False` for the uncorrected update everywhere).

Example:
    >>> bn = tf.keras.layers.BatchNormalization()
    >>> y = bn(tf.ones([4, 3]), training=True)
    >>> [w.name for w in bn.weights]
    ['batch_normalization/gamma:0', 'batch_normalization/beta:0',
     'batch_normalization/moving_mean:0', 'batch_normalization/moving_variance:0']
"""
from tensorlite.ops import nn_ops as nn
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras import backend
from tensorlite.keras.layers.base_layer_utils import (check_ndim, serialize_constraint,
                                                      serialize_initializer,
                                                      serialize_regularizer, weight_args)
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, batch_norm_ops, layer_norm_ops, math_ops


def _axes(layer, axis, rank):
    """axis (int or list, negative allowed) -> sorted positive axes, checked."""
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid axis for layer {layer.name!r}: {a}. Expected "
                             f"{-rank} <= axis < {rank} for an input of rank {rank}")
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"Duplicate axis for layer {layer.name!r}: {axis}")
    return sorted(out)


def _param_dims(layer, shape, axes):
    dims = [shape[a] for a in axes]
    if None in dims:
        raise ValueError(f"Axis {axes} of input tensor to layer {layer.name!r} should have a "
                         f"defined dimension but the layer received an input with shape "
                         f"{tuple(shape)}.")
    return dims


class _Normalization(Layer):
    """The gamma/beta half shared by both normalisations."""
    _casts_numeric_inputs = True

    def __init__(self, axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                 beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint,
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axis, int):
            axis = [int(a) for a in axis]
        self.axis = axis
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer, self.beta_regularizer, self.beta_constraint = \
            weight_args(beta_initializer, beta_regularizer, beta_constraint)
        self.gamma_initializer, self.gamma_regularizer, self.gamma_constraint = \
            weight_args(gamma_initializer, gamma_regularizer, gamma_constraint)
        self.supports_masking = True

    def _add_affine(self, param_shape):
        self.gamma = self.add_weight("gamma", param_shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight("beta", param_shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None

    def _broadcast(self, t):
        """A parameter of shape param_shape -> a shape that broadcasts against the input."""
        if t is None or self._bshape is None:
            return t
        return array_ops.reshape(t, self._bshape)

    def _check_input(self, inputs):
        check_ndim(self, inputs.shape, ndim=self._rank)
        shape = inputs.shape.as_list()
        got = [shape[a] for a in self._axes]
        if got != self._dims:
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: '
                             f"expected axis {self._axes} of input shape to have value "
                             f"{self._dims}, but received input with shape {tuple(shape)}")

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": serialize_initializer(self.beta_initializer),
                "gamma_initializer": serialize_initializer(self.gamma_initializer),
                "beta_regularizer": serialize_regularizer(self.beta_regularizer),
                "gamma_regularizer": serialize_regularizer(self.gamma_regularizer),
                "beta_constraint": serialize_constraint(self.beta_constraint),
                "gamma_constraint": serialize_constraint(self.gamma_constraint)}


class BatchNormalization(_Normalization):
    """`tf.keras.layers.BatchNormalization`: gamma * (x - mean) / sqrt(var + epsilon) +
    beta, with the batch's statistics in training and the moving ones in inference."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, synchronized=False, **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         beta_regularizer, gamma_regularizer, beta_constraint,
                         gamma_constraint, trainable=trainable, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError(f"BatchNormalization {self.name!r}: renorm, "
                                      f"virtual_batch_size and adjustment are not supported "
                                      f"by tensorlite")
        self.momentum = float(momentum)
        self.moving_mean_initializer = weight_args(moving_mean_initializer, None, None)[0]
        self.moving_variance_initializer = weight_args(moving_variance_initializer, None,
                                                       None)[0]
        self.fused = fused
        self.synchronized = bool(synchronized)

    def build(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        if not shape:
            raise ValueError(f"Input has undefined rank: layer {self.name!r} needs a known "
                             f"input rank")
        self._rank = len(shape)
        self._axes = _axes(self, self.axis, self._rank)
        self._dims = _param_dims(self, shape, self._axes)
        self._reduce = [a for a in range(self._rank) if a not in self._axes]
        if len(self._axes) == 1:
            param_shape = self._dims
            last = self._axes[0] == self._rank - 1
            self._bshape = None if last else [self._dims[0] if a == self._axes[0] else 1
                                              for a in range(self._rank)]
        else:  # Keras keeps multi-axis parameters at full rank, 1 on the reduced axes
            param_shape = [shape[a] if a in self._axes else 1 for a in range(self._rank)]
            self._bshape = None
        self._add_affine(param_shape)
        self.moving_mean = self.add_weight("moving_mean", param_shape,
                                           initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", param_shape,
                                               initializer=self.moving_variance_initializer,
                                               trainable=False)
        # the moving statistics stay float32 when read, also under a mixed-precision
        # policy, so their updates do not round through float16 (as Keras keeps them)
        self.moving_mean._autocast = self.moving_variance._autocast = False
        self._param_shape = param_shape
        self.built = True

    def _fused_path(self, dtype):
        """Whether TF 2.x would run its fused kernel (which Bessel-corrects the variance)."""
        if self.fused is False or self._rank not in (4, 5) or len(self._axes) != 1:
            return False
        return self._axes[0] in (1, self._rank - 1) and dtype.name in (
            "float16", "bfloat16", "float32")

    def _training(self, training):
        if not self.trainable:  # TF 2 semantics: a frozen BN layer runs in inference mode
            return False
        if training is None:
            return bool(backend.learning_phase())
        return bool(training)

    def call(self, inputs, training=None):
        self._check_input(inputs)
        if self._training(training) and self._one_op(inputs.dtype):
            return self._fused_train(inputs)
        if self._training(training):
            mean, variance = nn.moments(inputs, self._reduce, keepdims=True)
            self._update_moving(inputs, mean, variance)
        else:
            mean = math_ops.cast(self._broadcast(self.moving_mean), inputs.dtype)
            variance = math_ops.cast(self._broadcast(self.moving_variance), inputs.dtype)
        return nn.batch_normalization(inputs, mean, variance, self._broadcast(self.beta),
                                      self._broadcast(self.gamma), self.epsilon)

    def _one_op(self, dtype):
        """Whether training runs as one op each way (ops/batch_norm_ops.py): TF's fused
        path on the last axis, float32/64 (float16 keeps the float32 composite)."""
        return self._fused_path(dtype) and self._axes[0] == self._rank - 1 and \
            dtype.name in ("float32", "float64")

    def _fused_train(self, inputs):
        gamma = self.gamma if self.gamma is not None else array_ops.ones(self._dims,
                                                                          inputs.dtype)
        beta = self.beta if self.beta is not None else array_ops.zeros(self._dims,
                                                                       inputs.dtype)
        y, mean, variance = batch_norm_ops.fused_batch_norm_train(
            inputs, math_ops.cast(gamma, inputs.dtype), math_ops.cast(beta, inputs.dtype),
            self.epsilon)
        self._update_moving(inputs, mean, variance)
        return y

    def _update_moving(self, inputs, mean, variance):
        shape = inputs.shape.as_list()
        count = 1
        for a in self._reduce:
            count *= shape[a]
        if self._fused_path(inputs.dtype) and count > 1:
            variance = math_ops.multiply(variance, count / (count - 1))
        decay = 1.0 - self.momentum
        for var, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
            value = array_ops.reshape(math_ops.stop_gradient_t(value), self._param_shape)
            value = math_ops.cast(value, var.dtype)
            var.assign_sub(math_ops.multiply(math_ops.subtract(var, value), decay))

    def get_config(self):
        config = {**super().get_config(), "momentum": self.momentum,
                  "moving_mean_initializer": serialize_initializer(
                      self.moving_mean_initializer),
                  "moving_variance_initializer": serialize_initializer(
                      self.moving_variance_initializer)}
        if self.fused is not None:
            config["fused"] = self.fused
        if self.synchronized:
            config["synchronized"] = True
        return config


class LayerNormalization(_Normalization):
    """`tf.keras.layers.LayerNormalization`: normalises each example over `axis` (the
    feature axes), then gamma * x + beta with gamma, beta of the shape of those axes."""

    def __init__(self, axis=-1, epsilon=0.001, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         beta_regularizer, gamma_regularizer, beta_constraint,
                         gamma_constraint, **kwargs)

    def build(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        self._rank = len(shape)
        self._axes = _axes(self, self.axis, self._rank)
        self._dims = _param_dims(self, shape, self._axes)
        trailing = self._axes == list(range(self._rank - len(self._axes), self._rank))
        self._bshape = None if trailing else [shape[a] if a in self._axes else 1
                                              for a in range(self._rank)]
        self._add_affine(self._dims)
        self.built = True

    def call(self, inputs, training=None):
        self._check_input(inputs)
        if self._fused(inputs, training):
            return layer_norm_ops.layer_norm(inputs, self.gamma, self.beta, self.epsilon)
        mean, variance = nn.moments(inputs, self._axes, keepdims=True)
        return nn.batch_normalization(inputs, mean, variance, self._broadcast(self.beta),
                                      self._broadcast(self.gamma), self.epsilon)

    def _fused(self, inputs, training):
        """Whether the training step takes the fused LayerNorm ops (ops/layer_norm_ops.py):
        while training, over the last axis only, with gamma and beta, in float32/64. They
        compute what the composition below does; inference (and so every export, which
        traces it) keeps the composition, whose ops TF, ONNX and TFLite read."""
        if training is None:
            training = backend.learning_phase()
        return bool(training) and self._axes == [self._rank - 1] and self.center and \
            self.scale and inputs.dtype.name in ("float32", "float64") and \
            self.gamma.dtype == inputs.dtype and self.beta.dtype == inputs.dtype
