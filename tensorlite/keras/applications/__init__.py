"""`tf.keras.applications`: MobileNetV2, ResNet50, InceptionV3 and EfficientNetB0 (seed
004's model list), MobileNet, VGG16, VGG19 and Xception (the bases of TensorFlow's guides) with
Keras's architectures, layer names and parameter counts, each family's `preprocess_input`
and `decode_predictions` in its module.

Example:
    >>> model = tf.keras.applications.MobileNetV2(weights=None, include_top=False,
    ...                                           pooling="avg", input_shape=(96, 96, 3))
    >>> model.outputs[0].shape
    TensorShape([None, 1280])
"""
from tensorlite.keras.applications import (efficientnet, imagenet_utils,  # noqa: F401
                                           inception_v3, mobilenet, mobilenet_v2, resnet,
                                           vgg16, vgg19, xception)
from tensorlite.keras.applications.efficientnet import EfficientNetB0  # noqa: F401
from tensorlite.keras.applications.inception_v3 import InceptionV3  # noqa: F401
from tensorlite.keras.applications.mobilenet import MobileNet  # noqa: F401
from tensorlite.keras.applications.mobilenet_v2 import MobileNetV2  # noqa: F401
from tensorlite.keras.applications.resnet import ResNet50  # noqa: F401
from tensorlite.keras.applications.vgg16 import VGG16  # noqa: F401
from tensorlite.keras.applications.vgg19 import VGG19  # noqa: F401
from tensorlite.keras.applications.xception import Xception  # noqa: F401

resnet50 = resnet
