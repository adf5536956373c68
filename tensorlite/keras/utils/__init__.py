"""`tf.keras.utils`."""
from tensorlite.keras.utils.np_utils import normalize, to_categorical  # noqa: F401
from tensorlite.keras.utils.progbar import Progbar  # noqa: F401
from tensorlite.keras.engine.data_adapter import pack_x_y_sample_weight  # noqa: F401
from tensorlite.keras.engine.data_adapter import unpack as unpack_x_y_sample_weight  # noqa: F401
