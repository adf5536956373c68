"""`Bidirectional` and `TimeDistributed`: layers that run another layer.

Example:
    >>> bi = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(3, return_sequences=True))
    >>> bi(tf.zeros([2, 5, 4])).shape
    TensorShape([2, 5, 6])
    >>> tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2))(tf.zeros([2, 5, 4])).shape
    TensorShape([2, 5, 2])
"""
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, math_ops

_MERGE = {
    "concat": lambda a, b: array_ops.concat([a, b], axis=-1),
    "sum": math_ops.add,
    "mul": math_ops.multiply,
    "ave": lambda a, b: math_ops.multiply(math_ops.add(a, b), 0.5),
    None: lambda a, b: [a, b],
}


def _layer_from(config_layer):
    from tensorlite.keras.saving.registry import layer_from_config  # noqa: PLC0415
    return layer_from_config(config_layer)


class Bidirectional(Layer):
    """`tf.keras.layers.Bidirectional(layer, merge_mode='concat')`: the recurrent layer on
    the sequence forwards and (a copy with go_backwards) backwards; outputs merged."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        if isinstance(layer, dict):
            layer = _layer_from(layer)
        if isinstance(backward_layer, dict):  # a config's, as get_config writes it
            backward_layer = _layer_from(backward_layer)
        if merge_mode not in _MERGE:
            raise ValueError(f"Invalid merge mode {merge_mode!r}; use one of "
                             f"['sum', 'mul', 'ave', 'concat', None]")
        if not hasattr(layer, "go_backwards"):
            raise ValueError(f"Bidirectional needs a recurrent layer (with go_backwards), "
                             f"got {type(layer).__name__}")
        super().__init__(**kwargs)
        self.forward_layer = layer
        self._backward_given = backward_layer is not None  # written to the config if so
        if backward_layer is None:
            config = {**layer.get_config(), "go_backwards": not layer.go_backwards,
                      "name": "backward_" + layer.name}
            backward_layer = type(layer).from_config(config)
        elif backward_layer.return_sequences != layer.return_sequences or \
                backward_layer.return_state != layer.return_state:
            raise ValueError("Bidirectional: backward_layer must have the same "
                             "return_sequences and return_state as layer")
        self.backward_layer = backward_layer
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True

    def call(self, inputs, training=None, mask=None, initial_state=None):
        fw_state = bw_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            fw_state, bw_state = initial_state[:half], initial_state[half:]
        fw = self.forward_layer(inputs, training=training, mask=mask, initial_state=fw_state)
        bw = self.backward_layer(inputs, training=training, mask=mask, initial_state=bw_state)
        states = []
        if self.return_state:
            fw, states = fw[0], list(fw[1:]) + list(bw[1:])
            bw = bw[0]
        if self.return_sequences:
            bw = array_ops.reverse(bw, [1])
        merged = _MERGE[self.merge_mode](fw, bw)
        if self.return_state:
            return (merged if isinstance(merged, list) else [merged]) + states
        return merged

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out = mask if self.return_sequences else None
        if self.return_state:
            n = 2 if self.merge_mode is None else 1
            return [out] * n + [None] * (len(self.forward_layer._state_sizes()) * 2)
        return [out, out] if self.merge_mode is None else out

    def get_config(self):
        config = {**super().get_config(), "merge_mode": self.merge_mode,
                  "layer": {"class_name": type(self.forward_layer).__name__,
                            "config": self.forward_layer.get_config()}}
        if self._backward_given:  # as tf.keras: only a backward layer the caller gave
            config["backward_layer"] = {"class_name": type(self.backward_layer).__name__,
                                        "config": self.backward_layer.get_config()}
        return config


class TimeDistributed(Layer):
    """`tf.keras.layers.TimeDistributed(layer)`: the layer on every time step
    ([batch, time, ...] is folded to [batch * time, ...] for one call)."""

    def __init__(self, layer, **kwargs):
        if isinstance(layer, dict):
            layer = _layer_from(layer)
        super().__init__(**kwargs)
        self.layer = layer
        self.supports_masking = True

    def call(self, inputs, training=None, mask=None):
        shape = inputs.shape.as_list()
        if len(shape) < 3:
            raise ValueError(f"TimeDistributed expects inputs of rank >= 3 ([batch, time, "
                             f"...]), got shape {shape}")
        folded = array_ops.reshape(inputs, [shape[0] * shape[1]] + shape[2:])
        kwargs = {"training": training} if "training" in self.layer._call_params else {}
        out = self.layer(folded, **kwargs)
        return array_ops.reshape(out, shape[:2] + out.shape.as_list()[1:])

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape)
        inner = self.layer.compute_output_shape(TensorShape([shape[0]]) + shape[2:])
        return TensorShape(shape[:2]) + TensorShape(inner)[1:]

    def get_config(self):
        return {**super().get_config(),
                "layer": {"class_name": type(self.layer).__name__,
                          "config": self.layer.get_config()}}
