"""`tf.keras.applications.MobileNet` (Howard et al. 2017, MobileNet v1), Keras's
layer-for-layer architecture and names: 4,253,864 parameters with the 1000-class top at
alpha=1.0 (a 1x1 convolution classifier after global pooling, as Keras builds it).

Example:
    >>> model = tf.keras.applications.MobileNet(weights=None)
    >>> model.count_params()
    4253864
"""
import logging

from tensorlite.keras import layers
from tensorlite.keras.applications import imagenet_utils
from tensorlite.keras.engine.training import Model

# Keras's published ImageNet weights: one file per (alpha, rows), no published hashes
BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet/"
WEIGHTS_HASHES = {}  # file name -> MD5; Keras publishes none for MobileNet
IMAGENET_ALPHAS = {0.25: "2_5", 0.50: "5_0", 0.75: "7_5", 1.0: "1_0"}
IMAGENET_ROWS = (128, 160, 192, 224)

# (pointwise filters, stride) of the 13 depthwise-separable blocks
_BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
           (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]


def _conv_block(inputs, filters, alpha, strides):
    x = layers.Conv2D(int(filters * alpha), 3, padding="same", use_bias=False,
                      strides=strides, name="conv1")(inputs)
    x = layers.BatchNormalization(axis=-1, name="conv1_bn")(x)
    return layers.ReLU(6.0, name="conv1_relu")(x)


def _depthwise_conv_block(inputs, filters, alpha, depth_multiplier, stride, block_id):
    x = inputs
    if stride != 1:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D(3, padding="same" if stride == 1 else "valid",
                               depth_multiplier=depth_multiplier, strides=stride,
                               use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=-1, name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(filters * alpha), 1, padding="same", use_bias=False,
                      name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=-1, name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3,  # noqa: N802
              include_top=True, weights=None, input_tensor=None, pooling=None,
              classes=1000, classifier_activation="softmax", **kwargs):
    """MobileNet v1 for images in [-1, 1] (see preprocess_input)."""
    imagenet_utils.check_weights(weights, classes, include_top, "MobileNet",
                                 classifier_activation)
    shape = tuple(input_tensor.shape.as_list()[1:]) if input_shape is None and \
        input_tensor is not None else input_shape
    rows = shape[0] if shape and shape[0] == shape[1] and shape[0] in IMAGENET_ROWS else 224
    imagenet_file = _imagenet_file(alpha, depth_multiplier, rows, include_top, shape, weights)
    inputs, x = imagenet_utils.image_input(input_tensor, input_shape, rows, 32, include_top,
                                           weights)
    x = _conv_block(x, 32, alpha, strides=(2, 2))
    for block_id, (filters, stride) in enumerate(_BLOCKS, start=1):
        x = _depthwise_conv_block(x, filters, alpha, depth_multiplier, stride, block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, 1, padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        x = layers.Activation(classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.top(x, False, pooling, classes, classifier_activation)
    name_rows = rows if weights == "imagenet" else inputs.shape[1]  # Keras's model name
    model = Model(inputs, x, name=f"mobilenet_{alpha:0.2f}_{name_rows}")
    return imagenet_utils.finish(model, weights, imagenet_file)


def _imagenet_file(alpha, depth_multiplier, rows, include_top, shape, weights):
    """(file name, URL, hash) of Keras's weights for this alpha and input size."""
    if weights != "imagenet":
        return None
    if depth_multiplier != 1:
        raise ValueError(f"If imagenet weights are being loaded, depth multiplier must be 1. "
                         f"Received depth_multiplier={depth_multiplier}")
    if alpha not in IMAGENET_ALPHAS:
        raise ValueError(f"If imagenet weights are being loaded, alpha can be one of"
                         f"`0.25`, `0.50`, `0.75` or `1.0` only. Received alpha={alpha}")
    if not shape or shape[0] != shape[1] or shape[0] not in IMAGENET_ROWS:
        logging.getLogger("tensorlite").warning(
            "`input_shape` is undefined or non-square, or `rows` is not in [128, 160, 192, "
            "224]. Weights for input shape (224, 224) will be loaded as the default.")
    fname = f"mobilenet_{IMAGENET_ALPHAS[alpha]}_{rows}_tf{'' if include_top else '_no_top'}.h5"
    return fname, BASE_WEIGHT_PATH + fname, WEIGHTS_HASHES.get(fname)


def preprocess_input(x, data_format=None):
    """Scales RGB [0, 255] to [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
