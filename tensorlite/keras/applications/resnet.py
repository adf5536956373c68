"""`tf.keras.applications.ResNet50` (He et al. 2015), Keras's v1 architecture and layer
names: 25,636,712 parameters with the 1000-class top.

Example:
    >>> tf.keras.applications.ResNet50(weights=None).count_params()
    25636712
"""
from tensorlite.keras import layers
from tensorlite.keras.applications import imagenet_utils
from tensorlite.keras.engine.training import Model

_EPS = 1.001e-5
# Keras's published ImageNet weights and their MD5s: (with the top, without)
BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/"
WEIGHTS_HASHES = {"resnet50": ("2cb95161c43110f7111970584f804107",
                               "4d473c1dd8becc155b73f8504c6f6626")}


def _block(x, filters, stride=1, conv_shortcut=True, name=None):
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = layers.BatchNormalization(epsilon=_EPS, name=name + "_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=name + "_1_conv")(x)
    x = layers.BatchNormalization(epsilon=_EPS, name=name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.Conv2D(filters, 3, padding="same", name=name + "_2_conv")(x)
    x = layers.BatchNormalization(epsilon=_EPS, name=name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    x = layers.BatchNormalization(epsilon=_EPS, name=name + "_3_bn")(x)
    x = layers.Add(name=name + "_add")([shortcut, x])
    return layers.Activation("relu", name=name + "_out")(x)


def _stack(x, filters, blocks, stride1=2, name=None):
    x = _block(x, filters, stride=stride1, name=name + "_block1")
    for i in range(2, blocks + 1):
        x = _block(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def ResNet50(include_top=True, weights=None, input_tensor=None, input_shape=None,  # noqa: N802
             pooling=None, classes=1000, classifier_activation="softmax", **kwargs):
    """ResNet50 for BGR images minus the ImageNet means (see preprocess_input)."""
    imagenet_utils.check_weights(weights, classes, include_top, "ResNet50",
                                 classifier_activation)
    inputs, x = imagenet_utils.image_input(input_tensor, input_shape, 224, 32, include_top,
                                           weights)
    x = layers.ZeroPadding2D(((3, 3), (3, 3)), name="conv1_pad")(x)
    x = layers.Conv2D(64, 7, strides=2, name="conv1_conv")(x)
    x = layers.BatchNormalization(epsilon=_EPS, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = _stack(x, 64, 3, stride1=1, name="conv2")
    x = _stack(x, 128, 4, name="conv3")
    x = _stack(x, 256, 6, name="conv4")
    x = _stack(x, 512, 3, name="conv5")
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation)
    fname = (f"resnet50_weights_tf_dim_ordering_tf_kernels"
             f"{'' if include_top else '_notop'}.h5")
    imagenet_file = (fname, BASE_WEIGHTS_PATH + fname,
                     WEIGHTS_HASHES["resnet50"][0 if include_top else 1])
    return imagenet_utils.finish(Model(inputs, x, name="resnet50"), weights, imagenet_file)


def preprocess_input(x, data_format=None):
    """RGB [0, 255] -> BGR minus the ImageNet channel means (Caffe's convention)."""
    return imagenet_utils.preprocess_input(x, data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
