"""`tf.keras.applications.MobileNetV2` (Sandler et al. 2018), Keras's layer-for-layer
architecture and names: 3,538,984 parameters with the 1000-class top at alpha=1.0.

Example:
    >>> model = tf.keras.applications.MobileNetV2(weights=None)
    >>> model.count_params()
    3538984
"""
import logging

from tensorlite.keras import layers
from tensorlite.keras.applications import imagenet_utils
from tensorlite.keras.engine.training import Model

# Keras's published ImageNet weights: one file per (alpha, rows), no published hashes
BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/"
WEIGHTS_HASHES = {}  # file name -> MD5; Keras publishes none for MobileNetV2
IMAGENET_ALPHAS = (0.35, 0.50, 0.75, 1.0, 1.3, 1.4)
IMAGENET_ROWS = (96, 128, 160, 192, 224)


def _make_divisible(v, divisor, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _bn(name):
    return layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    in_channels = inputs.shape[-1]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, 1, padding="same", use_bias=False,
                          name=prefix + "expand")(x)
        x = _bn(prefix + "expand_BN")(x)
        x = layers.ReLU(6.0, name=prefix + "expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(imagenet_utils.correct_pad(x, 3), name=prefix + "pad")(x)
    x = layers.DepthwiseConv2D(3, strides=stride, use_bias=False,
                               padding="same" if stride == 1 else "valid",
                               name=prefix + "depthwise")(x)
    x = _bn(prefix + "depthwise_BN")(x)
    x = layers.ReLU(6.0, name=prefix + "depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, 1, padding="same", use_bias=False,
                      name=prefix + "project")(x)
    x = _bn(prefix + "project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=prefix + "add")([inputs, x])
    return x


_BLOCKS = [(16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6),
           (64, 2, 6), (64, 1, 6), (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6),
           (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6), (320, 1, 6)]


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights=None,  # noqa: N802
                input_tensor=None, pooling=None, classes=1000,
                classifier_activation="softmax", **kwargs):
    """MobileNetV2 for images in [-1, 1] (see preprocess_input)."""
    imagenet_utils.check_weights(weights, classes, include_top, "MobileNetV2",
                                 classifier_activation)
    shape = tuple(input_tensor.shape.as_list()[1:]) if input_shape is None and \
        input_tensor is not None else input_shape
    rows = shape[0] if shape and shape[0] == shape[1] and shape[0] in IMAGENET_ROWS else 224
    imagenet_file = _imagenet_file(alpha, rows, include_top, shape, weights)
    inputs, x = imagenet_utils.image_input(input_tensor, input_shape, rows, 32, include_top,
                                           weights)
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), 3, strides=(2, 2), padding="same",
                      use_bias=False, name="Conv1")(x)
    x = _bn("bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = _inverted_res_block(x, expansion, stride, alpha, filters, block_id)
    last = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last, 1, use_bias=False, name="Conv_1")(x)
    x = _bn("Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation)
    name_rows = rows if weights == "imagenet" else inputs.shape[1]  # Keras's model name
    model = Model(inputs, x, name=f"mobilenetv2_{alpha:0.2f}_{name_rows}")
    return imagenet_utils.finish(model, weights, imagenet_file)


def _imagenet_file(alpha, rows, include_top, shape, weights):
    """(file name, URL, hash) of Keras's weights for this alpha and input size."""
    if weights != "imagenet":
        return None
    if alpha not in IMAGENET_ALPHAS:
        raise ValueError(f"If imagenet weights are being loaded, alpha must be one of "
                         f"`0.35`, `0.50`, `0.75`, `1.0`, `1.3` or `1.4` only; Received "
                         f"`alpha={alpha}`")
    if not shape or shape[0] != shape[1] or shape[0] not in IMAGENET_ROWS:
        logging.getLogger("tensorlite").warning(
            "`input_shape` is undefined or non-square, or `rows` is not in [96, 128, 160, "
            "192, 224]. Weights for input shape (224, 224) will be loaded as the default.")
    fname = (f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}"
             f"{'' if include_top else '_no_top'}.h5")
    return fname, BASE_WEIGHT_PATH + fname, WEIGHTS_HASHES.get(fname)


def preprocess_input(x, data_format=None):
    """Scales RGB [0, 255] to [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
