"""`tf.keras.applications.Xception` (Chollet 2017), Keras's layer-for-layer architecture and
names: 22,910,480 parameters with the 1000-class top (the transfer learning guide's base).
Its residual branches' layers are unnamed in Keras, so ImageNet weights load in order.

Example:
    >>> tf.keras.applications.Xception(weights=None).count_params()
    22910480
"""
from tensorlite.keras import layers
from tensorlite.keras.applications import imagenet_utils
from tensorlite.keras.engine.training import Model

# Keras's published ImageNet weights and their MD5s: (with the top, without)
BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/xception/"
WEIGHTS_HASHES = {"xception": ("0a58e3b7378bc2990ea3b43d5981f1f6",
                               "b0042744bf5b25fce3cb969f33bebb97")}


def _sep_bn(x, filters, name, relu_before=True):
    """(ReLU,) SeparableConv2D and BatchNormalization, named as Keras names them."""
    if relu_before:
        x = layers.Activation("relu", name=name + "_act")(x)
    x = layers.SeparableConv2D(filters, 3, padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=-1, name=name + "_bn")(x)


def _downsampling_block(x, filters, block, relu_first=True):
    """Two separable convolutions and a strided max pooling, plus a strided 1x1 residual."""
    residual = layers.Conv2D(filters[1], 1, strides=2, padding="same", use_bias=False)(x)
    residual = layers.BatchNormalization(axis=-1)(residual)
    x = _sep_bn(x, filters[0], f"block{block}_sepconv1", relu_before=relu_first)
    if not relu_first:  # block 2: its first ReLU comes after the first convolution
        x = layers.Activation("relu", name=f"block{block}_sepconv2_act")(x)
    x = _sep_bn(x, filters[1], f"block{block}_sepconv2", relu_before=relu_first)
    x = layers.MaxPooling2D(3, strides=2, padding="same", name=f"block{block}_pool")(x)
    return layers.add([x, residual])


def Xception(include_top=True, weights=None, input_tensor=None, input_shape=None,  # noqa: N802
             pooling=None, classes=1000, classifier_activation="softmax", **kwargs):
    """Xception for images in [-1, 1] (see preprocess_input)."""
    imagenet_utils.check_weights(weights, classes, include_top, "Xception",
                                 classifier_activation)
    inputs, x = imagenet_utils.image_input(input_tensor, input_shape, 299, 71, include_top,
                                           weights)
    x = layers.Conv2D(32, 3, strides=2, use_bias=False, name="block1_conv1")(x)
    x = layers.BatchNormalization(axis=-1, name="block1_conv1_bn")(x)
    x = layers.Activation("relu", name="block1_conv1_act")(x)
    x = layers.Conv2D(64, 3, use_bias=False, name="block1_conv2")(x)
    x = layers.BatchNormalization(axis=-1, name="block1_conv2_bn")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(x)
    x = _downsampling_block(x, (128, 128), 2, relu_first=False)
    x = _downsampling_block(x, (256, 256), 3)
    x = _downsampling_block(x, (728, 728), 4)
    for block in range(5, 13):  # the middle flow: eight residual blocks
        residual = x
        for conv in (1, 2, 3):
            x = _sep_bn(x, 728, f"block{block}_sepconv{conv}")
        x = layers.add([x, residual])
    x = _downsampling_block(x, (728, 1024), 13)
    x = _sep_bn(x, 1536, "block14_sepconv1", relu_before=False)
    x = layers.Activation("relu", name="block14_sepconv1_act")(x)
    x = _sep_bn(x, 2048, "block14_sepconv2", relu_before=False)
    x = layers.Activation("relu", name="block14_sepconv2_act")(x)
    if include_top:
        x = imagenet_utils.top(x, True, None, classes, classifier_activation)
    else:
        x = imagenet_utils.pooled(x, pooling, names=(None, None))
    imagenet_file = None
    if weights == "imagenet":
        fname = f"xception_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
        imagenet_file = (fname, BASE_WEIGHTS_PATH + fname,
                         WEIGHTS_HASHES["xception"][0 if include_top else 1])
    return imagenet_utils.finish(Model(inputs, x, name="xception"), weights, imagenet_file,
                                 by_name=False)


def preprocess_input(x, data_format=None):
    """Scales RGB [0, 255] to [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
