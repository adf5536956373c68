"""`tf.keras.layers.experimental.preprocessing`: the same classes as `tf.keras.layers`."""
from tensorlite.keras.layers.preprocessing_encoding import CategoryEncoding, Hashing  # noqa: F401
from tensorlite.keras.layers.preprocessing_lookup import (IntegerLookup,  # noqa: F401
                                                          StringLookup)
from tensorlite.keras.layers.text_vectorization import TextVectorization  # noqa: F401
from tensorlite.keras.layers.image_preprocessing import (CenterCrop,  # noqa: F401
                                                         RandomContrast, RandomCrop,
                                                         RandomFlip, RandomRotation,
                                                         RandomZoom, Rescaling, Resizing)
from tensorlite.keras.layers.preprocessing_normalization import Normalization  # noqa: F401
from tensorlite.keras.layers.preprocessing_discretization import Discretization  # noqa: F401
