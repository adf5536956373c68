"""`tf.keras.layers.Masking(mask_value=0.)`: steps whose features all equal `mask_value`
are masked (zeroed, and skipped by the layers that take a mask).

Example:
    >>> x = tf.constant([[[1.0], [0.0]]])
    >>> tf.keras.layers.Masking()(x).numpy().ravel().tolist()
    [1.0, 0.0]
"""
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, math_ops


class Masking(Layer):
    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def _keep(self, inputs):
        return math_ops.reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = math_ops.cast(array_ops.expand_dims(self._keep(inputs), -1), inputs.dtype)
        return math_ops.multiply(inputs, keep)

    def compute_mask(self, inputs, mask=None):
        return self._keep(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
