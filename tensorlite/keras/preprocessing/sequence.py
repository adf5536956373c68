"""`tf.keras.preprocessing.sequence`."""
from tensorlite.keras.utils.sequence_utils import pad_sequences  # noqa: F401
from tensorlite.keras.utils.skipgrams import make_sampling_table, skipgrams  # noqa: F401
