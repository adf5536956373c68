"""`tf.keras.preprocessing.sequence`."""
from tensorlite.keras.utils.sequence_utils import pad_sequences  # noqa: F401
