"""`tf.keras.utils`."""
from tensorlite.keras.saving.object_registration import (  # noqa: F401
    CustomObjectScope, custom_object_scope, get_custom_objects, get_registered_name,
    get_registered_object, register_keras_serializable)
from tensorlite.keras.utils.np_utils import normalize, to_categorical  # noqa: F401
from tensorlite.keras.utils.progbar import Progbar  # noqa: F401
from tensorlite.keras.utils.random_seed import set_random_seed  # noqa: F401
from tensorlite.keras.utils.sequence_utils import pad_sequences  # noqa: F401
from tensorlite.keras.utils.text_dataset import text_dataset_from_directory  # noqa: F401
from tensorlite.keras.engine.data_adapter import pack_x_y_sample_weight  # noqa: F401
from tensorlite.keras.engine.data_adapter import unpack as unpack_x_y_sample_weight  # noqa: F401
from tensorlite.keras.utils.data_utils import get_file, validate_file  # noqa: F401
from tensorlite.keras.utils.dataset_utils import (image_dataset_from_directory,  # noqa: F401
                                                  timeseries_dataset_from_array)
from tensorlite.keras.utils.sequence import PyDataset, Sequence  # noqa: F401
from tensorlite.keras.utils.vis_utils import model_to_dot, plot_model  # noqa: F401
from tensorlite.keras.utils.image_utils import (array_to_img, img_to_array,  # noqa: F401
                                                load_img, save_img)
