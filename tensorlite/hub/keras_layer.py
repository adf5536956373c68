"""`hub.KerasLayer`: a loaded SavedModel as a Keras layer; its variables become the layer's
weights (trainable when `trainable=True`, so fine-tuning updates them).

Example:
    >>> layer = hub.KerasLayer(handle, input_shape=[3], trainable=True)
    >>> model = tf.keras.Sequential([layer, tf.keras.layers.Dense(1)])
"""
from tensorlite.keras.layers.layer import Layer


def _variables(obj):
    """The variables a restored object holds (its `variables` list when it has one)."""
    from tensorlite.checkpoint import object_graph as og  # noqa: PLC0415
    found = getattr(obj, "variables", None)
    if isinstance(found, (list, tuple)):
        return list(found)
    return [node for node in og.gather(obj).nodes if og.is_variable(node)]


class KerasLayer(Layer):
    """Wraps a hub handle (or an already loaded object) as a layer."""

    def __init__(self, handle, trainable=False, arguments=None, signature=None,
                 signature_outputs_as_dict=None, output_key=None, output_shape=None,
                 load_options=None, **kwargs):
        super().__init__(trainable=trainable, **kwargs)
        from tensorlite.hub import load  # noqa: PLC0415
        self._handle = handle if isinstance(handle, str) else None
        self._func = load(handle) if isinstance(handle, str) else handle
        self._arguments = dict(arguments or {})
        self._signature, self._output_key = signature, output_key
        self._as_dict = bool(signature_outputs_as_dict)
        if signature is not None:
            self._callable = self._func.signatures[signature]
        elif callable(self._func):
            self._callable = self._func
        else:
            raise ValueError(f"{handle} is not callable: pass signature= (one of "
                             f"{sorted(getattr(self._func, 'signatures', {}))})")
        for v in _variables(self._func):
            if all(v is not w for w in self._own_weights):
                self._own_weights.append(v)
        self.built = True

    def call(self, inputs, training=None):
        if self._signature is not None:
            keys = sorted(self._callable.structured_input_signature[1])
            out = self._callable(**{keys[0]: inputs}, **self._arguments)
            if self._as_dict:
                return out
            if self._output_key is not None:
                return out[self._output_key]
            return next(iter(out.values())) if len(out) == 1 else out
        out = self._callable(inputs, **self._arguments)
        if isinstance(out, dict) and self._output_key is not None:
            return out[self._output_key]
        return out

    def get_config(self):
        if self._handle is None:
            raise NotImplementedError("a KerasLayer made from a loaded object (not a handle) "
                                      "cannot be serialized: pass the handle")
        return {**super().get_config(), "handle": self._handle, "trainable": self.trainable,
                "signature": self._signature, "output_key": self._output_key,
                "arguments": self._arguments}
