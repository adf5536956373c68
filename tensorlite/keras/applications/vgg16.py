"""`tf.keras.applications.VGG16`, Keras's architecture and layer names (vgg.py):
138,357,544 parameters with the 1000-class top.

Example:
    >>> tf.keras.applications.VGG16(weights=None, include_top=False).count_params()
    14714688
"""
from tensorlite.keras.applications import vgg
from tensorlite.keras.applications.vgg import decode_predictions, preprocess_input  # noqa: F401

# Keras's published ImageNet weights and their MD5s: (with the top, without)
BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/vgg16/"
WEIGHTS_HASHES = {"vgg16": ("64373286793e3c8b2b4e3219cbf3544b",
                            "6d6bbae143d832006294945121d1f1fc")}


def VGG16(include_top=True, weights=None, input_tensor=None, input_shape=None,  # noqa: N802
          pooling=None, classes=1000, classifier_activation="softmax"):
    """VGG16 for BGR images minus the ImageNet means (see preprocess_input)."""
    return vgg.build("vgg16", (2, 2, 3, 3, 3), include_top, weights, input_tensor, input_shape,
                     pooling, classes, classifier_activation,
                     vgg.imagenet_file("vgg16", BASE_WEIGHTS_PATH, WEIGHTS_HASHES,
                                       include_top, weights))
