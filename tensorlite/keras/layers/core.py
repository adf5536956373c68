"""Core layers: InputLayer, Dense, Flatten, Reshape, Dropout, Activation, Lambda."""
import numpy as np

from tensorlite.ops import nn_ops as nn

from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras import activations
from tensorlite.keras.layers.base_layer_utils import (check_last_dim, kernel_bias_config,
                                                      set_kernel_bias_args)
from tensorlite.keras.layers.layer import Layer
from tensorlite.keras.saving.object_registration import deserialize_function, serialize_function
from tensorlite.ops import array_ops, math_ops, sparse_ops


class InputLayer(Layer):
    """`tf.keras.layers.InputLayer`: marks a Sequential model's input shape."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, name=None,
                 batch_input_shape=None, **kwargs):
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size,) + tuple(input_shape)
        super().__init__(name=name, dtype=dtype, batch_input_shape=batch_input_shape)

    def call(self, inputs):
        return inputs


class Dense(Layer):
    """`tf.keras.layers.Dense`: activation(inputs @ kernel + bias)."""
    _casts_numeric_inputs = True

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.supports_masking = True  # a mask passes through, as in Keras
        units = int(units) if not isinstance(units, int) else units
        if units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        set_kernel_bias_args(self, kernel_initializer, kernel_regularizer, kernel_constraint,
                             bias_initializer, bias_regularizer, bias_constraint)

    def build(self, input_shape):
        last = TensorShape(input_shape)[-1]
        if last is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be "
                             "defined. Found None. Full input shape received: "
                             f"{input_shape}")
        self.kernel = self.add_weight("kernel", [last, self.units],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self._in_dim = last
        self.built = True

    def call(self, inputs):
        if isinstance(inputs, SparseTensor):  # tf.keras 2: a sparse batch of rows
            out = sparse_ops.sparse_dense_matmul(inputs, self.kernel)
            if self.use_bias:
                out = math_ops.add(out, self.bias)
            return self.activation(out)
        check_last_dim(self, inputs, self._in_dim)
        if inputs.shape.rank > 2:
            out = math_ops.tensordot(inputs, self.kernel, [[inputs.shape.rank - 1], [0]])
        else:
            out = math_ops.matmul(inputs, self.kernel)
        if self.use_bias:
            out = math_ops.add(out, self.bias)
        return self.activation(out)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)[:-1].concatenate([self.units])

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias, **kernel_bias_config(self)}


class Flatten(Layer):
    """`tf.keras.layers.Flatten`: [batch, ...] -> [batch, prod(...)]."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format

    def call(self, inputs):
        shape = inputs.shape.as_list()
        if len(shape) == 1:
            return array_ops.expand_dims(inputs, 1)
        if None not in shape[1:] and shape[0] != 0:  # -1: any batch size (a None dim)
            return array_ops.reshape(inputs, (-1, int(np.prod(shape[1:]))))
        return array_ops.reshape(inputs, (inputs.ndim and len(inputs), -1))

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        rest = s[1:]
        return TensorShape([s[0], None if None in rest else int(np.prod(rest))])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    """`tf.keras.layers.Reshape`: reshapes every example to `target_shape`."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def call(self, inputs):
        target = self.target_shape
        rest = inputs.shape.as_list()[1:]
        if -1 in target and None not in rest:  # the -1 from the example's known size, so
            known = int(np.prod([d for d in target if d != -1]))  # the batch can be -1
            target = tuple(int(np.prod(rest)) // max(known, 1) if d == -1 else d
                           for d in target)
        if -1 not in target and inputs.shape[0] != 0:  # any batch size (a None dimension)
            return array_ops.reshape(inputs, (-1,) + target)
        return array_ops.reshape(inputs, (inputs.shape[0],) + target)

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


class Dropout(Layer):
    """`tf.keras.layers.Dropout`: zeroes `rate` of the inputs while training."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        if not 0 <= float(rate) <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float "
                             f"value between 0 and 1. Received: rate={rate}")
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        return nn.dropout(inputs, self.rate, noise_shape=self.noise_shape, seed=self.seed)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}


class Activation(Layer):
    """`tf.keras.layers.Activation`."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


class Lambda(Layer):
    """`tf.keras.layers.Lambda`: wraps a function of the inputs.

    Saved with the function's bytecode; loading it runs that code, so `load_model` refuses
    it unless the function is registered or passed in `custom_objects`, or the caller
    passes `safe_mode=False`, as Keras 3 does."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.output_shape_arg = output_shape  # kept for the config, as tf.keras writes it
        self.arguments = arguments or {}

    def call(self, inputs):
        return self.function(inputs, **self.arguments)

    def get_config(self):
        shape = self.output_shape_arg
        return {**super().get_config(), "function": serialize_function(self.function),
                "output_shape": serialize_function(shape) if callable(shape) else shape,
                "arguments": dict(self.arguments)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["function"] = deserialize_function(config["function"], custom_objects)
        if isinstance(config.get("output_shape"), dict):  # a function's serialization
            config["output_shape"] = deserialize_function(config["output_shape"],
                                                          custom_objects)
        return cls(**config)


