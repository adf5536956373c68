"""`tf.keras.layers.Embedding`: integer ids -> rows of an [input_dim, output_dim] table.

With `mask_zero=True`, id 0 is padding: `compute_mask` gives `ids != 0`, which the
recurrent layers and GlobalAveragePooling1D take as their `mask` argument.

Example:
    >>> emb = tf.keras.layers.Embedding(10, 4, mask_zero=True)
    >>> emb(tf.constant([[1, 2, 0]])).shape, emb.compute_mask(tf.constant([[1, 2, 0]]))
"""
from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras import initializers
from tensorlite.keras.layers.base_layer_utils import (serialize_constraint,
                                                      serialize_initializer,
                                                      serialize_regularizer, weight_args)
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import gather_ops, math_ops

# Keras's short names for its default embedding initializers
_SHORT = {"uniform": initializers.RandomUniform, "normal": initializers.RandomNormal}


class Embedding(Layer):
    """`tf.keras.layers.Embedding`: embeddings weight [input_dim, output_dim]; the output is
    the input's shape + [output_dim]."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, activity_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, input_length=None, **kwargs):
        if "input_shape" not in kwargs and "batch_input_shape" not in kwargs:
            # tf.keras 2: (input_length,), else (None,): a Sequential starting with an
            # Embedding is built (summary() works) before its first call
            kwargs["input_shape"] = (input_length,)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(input_dim, int) or input_dim <= 0 or \
                not isinstance(output_dim, int) or output_dim <= 0:
            raise ValueError(f"Both `input_dim` and `output_dim` should be positive, Received "
                             f"input_dim = {input_dim} and output_dim = {output_dim}")
        self.input_dim = input_dim
        self.output_dim = output_dim
        if isinstance(embeddings_initializer, str) and embeddings_initializer in _SHORT:
            embeddings_initializer = _SHORT[embeddings_initializer]()
        self.embeddings_initializer, self.embeddings_regularizer, \
            self.embeddings_constraint = weight_args(embeddings_initializer,
                                                     embeddings_regularizer,
                                                     embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        self.input_length = input_length

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        self.built = True

    def _cast_inputs(self, inputs):
        if hasattr(inputs, "flat_values"):  # a RaggedTensor: looked up through its values
            return inputs
        return convert_to_tensor(inputs)  # ids keep their integer dtype

    def call(self, inputs):
        ids = inputs
        if not ids.dtype.is_integer:
            ids = math_ops.cast(ids, dtypes.int32)
        return gather_ops.gather(self.embeddings, ids)

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return math_ops.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape).concatenate([self.output_dim])

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim,
                "embeddings_initializer": serialize_initializer(self.embeddings_initializer),
                "embeddings_regularizer": serialize_regularizer(self.embeddings_regularizer),
                "activity_regularizer": serialize_regularizer(self.activity_regularizer),
                "embeddings_constraint": serialize_constraint(self.embeddings_constraint),
                "mask_zero": self.mask_zero, "input_length": self.input_length}
