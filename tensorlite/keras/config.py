"""`tf.keras.config`: process-wide Keras settings."""
from tensorlite.keras.saving.object_registration import (  # noqa: F401
    enable_unsafe_deserialization)
