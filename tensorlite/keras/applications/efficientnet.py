"""`tf.keras.applications.EfficientNetB0` (Tan & Le 2019), Keras's architecture and layer
names: 5,330,571 parameters with the 1000-class top (the built-in Normalization's mean,
variance and count included). The model rescales RGB [0, 255] itself.

Example:
    >>> tf.keras.applications.EfficientNetB0(weights=None).count_params()
    5330571
"""
import copy
import math

from tensorlite.keras import layers
from tensorlite.keras.applications import imagenet_utils
from tensorlite.keras.engine.training import Model

_BLOCKS = [  # kernel, repeats, filters in, filters out, expand ratio, strides
    (3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
    (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1)]
_SE_RATIO = 0.25
# Keras's published ImageNet weights and their MD5s: (with the top, without)
BASE_WEIGHTS_PATH = "https://storage.googleapis.com/keras-applications/"
WEIGHTS_HASHES = {"b0": ("902e53a9f72be733fc0bcb005b3ebbac",
                         "50bc09e76180e00e4465e1a485ddc09d")}
# the published weights' Normalization divides by the variance where the original divided
# by the standard deviation: Keras rescales by 1/sqrt(stddev) again to match (TF #49930)
IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]


def _round_filters(filters, width, divisor=8):
    filters *= width
    new = max(divisor, int(filters + divisor / 2) // divisor * divisor)
    return int(new + divisor if new < 0.9 * filters else new)


def _block(x, drop_rate, name, filters_in, filters_out, kernel_size, strides, expand_ratio):
    inputs = x
    filters = filters_in * expand_ratio
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False,
                          name=name + "expand_conv")(x)
        x = layers.BatchNormalization(name=name + "expand_bn")(x)
        x = layers.Activation("swish", name=name + "expand_activation")(x)
    if strides == 2:
        x = layers.ZeroPadding2D(imagenet_utils.correct_pad(x, kernel_size),
                                 name=name + "dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, use_bias=False,
                               padding="valid" if strides == 2 else "same",
                               name=name + "dwconv")(x)
    x = layers.BatchNormalization(name=name + "bn")(x)
    x = layers.Activation("swish", name=name + "activation")(x)
    se = layers.GlobalAveragePooling2D(name=name + "se_squeeze")(x)
    se = layers.Reshape((1, 1, filters), name=name + "se_reshape")(se)
    se = layers.Conv2D(max(1, int(filters_in * _SE_RATIO)), 1, padding="same",
                       activation="swish", name=name + "se_reduce")(se)
    se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid",
                       name=name + "se_expand")(se)
    x = layers.Multiply(name=name + "se_excite")([x, se])
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False,
                      name=name + "project_conv")(x)
    x = layers.BatchNormalization(name=name + "project_bn")(x)
    if strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=name + "drop")(x)
        x = layers.Add(name=name + "add")([x, inputs])
    return x


def EfficientNet(width, depth, default_size, dropout_rate, drop_connect_rate=0.2,  # noqa: N802
                 model_name="efficientnet", include_top=True, weights=None,
                 input_tensor=None, input_shape=None, pooling=None, classes=1000,
                 classifier_activation="softmax"):
    """The EfficientNet family's body at a width/depth scaling."""
    imagenet_utils.check_weights(weights, classes, include_top, model_name,
                                 classifier_activation)
    inputs, x = imagenet_utils.image_input(input_tensor, input_shape, default_size, 32,
                                           include_top, weights)
    x = layers.Rescaling(1.0 / 255.0, name="rescaling")(x)
    x = layers.Normalization(axis=-1, name="normalization")(x)
    if weights == "imagenet":
        x = layers.Rescaling([1.0 / math.sqrt(s) for s in IMAGENET_STDDEV_RGB],
                             name="rescaling_1")(x)
    x = layers.ZeroPadding2D(imagenet_utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(_round_filters(32, width), 3, strides=2, padding="valid",
                      use_bias=False, name="stem_conv")(x)
    x = layers.BatchNormalization(name="stem_bn")(x)
    x = layers.Activation("swish", name="stem_activation")(x)
    blocks = copy.deepcopy(_BLOCKS)
    total = float(sum(int(math.ceil(depth * b[1])) for b in blocks))
    b = 0
    for i, (kernel, repeats, f_in, f_out, expand, strides) in enumerate(blocks):
        f_in, f_out = _round_filters(f_in, width), _round_filters(f_out, width)
        for j in range(int(math.ceil(depth * repeats))):
            if j > 0:
                strides, f_in = 1, f_out
            x = _block(x, drop_connect_rate * b / total, f"block{i + 1}{chr(j + 97)}_", f_in,
                       f_out, kernel, strides, expand)
            b += 1
    x = layers.Conv2D(_round_filters(1280, width), 1, padding="same", use_bias=False,
                      name="top_conv")(x)
    x = layers.BatchNormalization(name="top_bn")(x)
    x = layers.Activation("swish", name="top_activation")(x)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation,
                           dropout=dropout_rate)
    fname = model_name + (".h5" if include_top else "_notop.h5")
    imagenet_file = (fname, BASE_WEIGHTS_PATH + fname,
                     WEIGHTS_HASHES[model_name[-2:]][0 if include_top else 1])
    return imagenet_utils.finish(Model(inputs, x, name=model_name), weights, imagenet_file)


def EfficientNetB0(include_top=True, weights=None, input_tensor=None, input_shape=None,  # noqa: N802
                   pooling=None, classes=1000, classifier_activation="softmax", **kwargs):
    """EfficientNetB0 for RGB images in [0, 255] (preprocess_input is the identity)."""
    return EfficientNet(1.0, 1.0, 224, 0.2, model_name="efficientnetb0",
                        include_top=include_top, weights=weights, input_tensor=input_tensor,
                        input_shape=input_shape, pooling=pooling, classes=classes,
                        classifier_activation=classifier_activation)


def preprocess_input(x, data_format=None):
    """The identity: EfficientNet models rescale their inputs themselves."""
    return x


decode_predictions = imagenet_utils.decode_predictions
