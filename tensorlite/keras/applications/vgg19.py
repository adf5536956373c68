"""`tf.keras.applications.VGG19`, Keras's architecture and layer names (vgg.py):
143,667,240 parameters with the 1000-class top.

Example:
    >>> tf.keras.applications.VGG19(weights=None, include_top=False).count_params()
    20024384
"""
from tensorlite.keras.applications import vgg
from tensorlite.keras.applications.vgg import decode_predictions, preprocess_input  # noqa: F401

# Keras's published ImageNet weights and their MD5s: (with the top, without)
BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/vgg19/"
WEIGHTS_HASHES = {"vgg19": ("cbe5617147190e668d6c5d5026f83318",
                            "253f8cb515780f3b799900260a226db6")}


def VGG19(include_top=True, weights=None, input_tensor=None, input_shape=None,  # noqa: N802
          pooling=None, classes=1000, classifier_activation="softmax"):
    """VGG19 for BGR images minus the ImageNet means (see preprocess_input)."""
    return vgg.build("vgg19", (2, 2, 4, 4, 4), include_top, weights, input_tensor, input_shape,
                     pooling, classes, classifier_activation,
                     vgg.imagenet_file("vgg19", BASE_WEIGHTS_PATH, WEIGHTS_HASHES,
                                       include_top, weights))
