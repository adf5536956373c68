"""`tf.keras.layers.serialize` and `deserialize`: a layer as its config entry (Keras 3's
form: module, class_name, config, registered_name) and back, by the same rules as loading a
saved model (custom_objects, the active custom_object_scope, registered classes, Keras's
own; a class named in an entry is never imported).

Example:
    >>> entry = tf.keras.layers.serialize(tf.keras.layers.Dense(3, name="d"))
    >>> tf.keras.layers.deserialize(entry).units
    3
"""
from tensorlite.keras.saving.object_registration import serialize_layer
from tensorlite.keras.saving.registry import layer_from_config


def serialize(layer):
    """A layer's config entry."""
    return serialize_layer(layer)


def deserialize(config, custom_objects=None):
    """The layer a `serialize` entry describes (a ValueError naming an unknown class)."""
    return layer_from_config(config, custom_objects)
