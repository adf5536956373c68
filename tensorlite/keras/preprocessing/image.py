"""`tf.keras.preprocessing.image`: the image file helpers under their older home."""
from tensorlite.keras.utils.image_utils import (array_to_img, img_to_array,  # noqa: F401
                                                load_img, save_img)
