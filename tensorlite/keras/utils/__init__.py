"""`tf.keras.utils`."""
from tensorlite.keras.utils.np_utils import normalize, to_categorical  # noqa: F401
from tensorlite.keras.utils.progbar import Progbar  # noqa: F401
from tensorlite.keras.utils.sequence_utils import pad_sequences  # noqa: F401
from tensorlite.keras.utils.text_dataset import text_dataset_from_directory  # noqa: F401
