"""Keras model saving (`tf.keras.saving`): files, and the names that may load from them."""
from tensorlite.keras.saving.object_registration import (  # noqa: F401
    CustomObjectScope, custom_object_scope, get_custom_objects, get_registered_name,
    get_registered_object, register_keras_serializable)
