"""`tf.keras.applications.InceptionV3` (Szegedy et al. 2015), Keras's architecture and
layer names: 23,851,784 parameters with the 1000-class top; inputs at least 75x75.

Example:
    >>> tf.keras.applications.InceptionV3(weights=None).count_params()
    23851784
"""
from tensorlite.keras import layers
from tensorlite.keras.applications import imagenet_utils
from tensorlite.keras.engine.training import Model

# Keras's published ImageNet weights (layers under Keras's generated names: loaded in order)
BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/inception_v3/"
WEIGHTS_HASHES = {"inception_v3": ("9a0d58056eeedaa3f26cb7ebd46da564",
                                   "bcbd6486424b2319ff4ef7d526e38f63")}


def _conv_bn(x, filters, rows, cols, padding="same", strides=(1, 1)):
    x = layers.Conv2D(filters, (rows, cols), strides=strides, padding=padding,
                      use_bias=False)(x)
    x = layers.BatchNormalization(axis=3, scale=False)(x)
    return layers.Activation("relu")(x)


def _avg_branch(x, filters):
    pool = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x)
    return _conv_bn(pool, filters, 1, 1)


def _block35(x, pool_filters, name):
    b1 = _conv_bn(x, 64, 1, 1)
    b5 = _conv_bn(_conv_bn(x, 48, 1, 1), 64, 5, 5)
    b3 = _conv_bn(_conv_bn(_conv_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3)
    return layers.Concatenate(axis=3, name=name)([b1, b5, b3, _avg_branch(x, pool_filters)])


def _block17(x, mid, name):
    b1 = _conv_bn(x, 192, 1, 1)
    b7 = _conv_bn(_conv_bn(_conv_bn(x, mid, 1, 1), mid, 1, 7), 192, 7, 1)
    d = _conv_bn(x, mid, 1, 1)
    for filters, (r, c) in ((mid, (7, 1)), (mid, (1, 7)), (mid, (7, 1)), (192, (1, 7))):
        d = _conv_bn(d, filters, r, c)
    return layers.Concatenate(axis=3, name=name)([b1, b7, d, _avg_branch(x, 192)])


def _block8(x, i):
    b1 = _conv_bn(x, 320, 1, 1)
    b3 = _conv_bn(x, 384, 1, 1)
    b3 = layers.Concatenate(axis=3, name=f"mixed9_{i}")([_conv_bn(b3, 384, 1, 3),
                                                         _conv_bn(b3, 384, 3, 1)])
    d = _conv_bn(_conv_bn(x, 448, 1, 1), 384, 3, 3)
    d = layers.Concatenate(axis=3)([_conv_bn(d, 384, 1, 3), _conv_bn(d, 384, 3, 1)])
    return layers.Concatenate(axis=3, name=f"mixed{9 + i}")([b1, b3, d, _avg_branch(x, 192)])


def InceptionV3(include_top=True, weights=None, input_tensor=None, input_shape=None,  # noqa: N802
                pooling=None, classes=1000, classifier_activation="softmax", **kwargs):
    """InceptionV3 for images in [-1, 1] (see preprocess_input)."""
    imagenet_utils.check_weights(weights, classes, include_top, "InceptionV3",
                                 classifier_activation)
    inputs, x = imagenet_utils.image_input(input_tensor, input_shape, 299, 75, include_top,
                                           weights)
    x = _conv_bn(x, 32, 3, 3, strides=(2, 2), padding="valid")
    x = _conv_bn(x, 32, 3, 3, padding="valid")
    x = _conv_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _conv_bn(x, 80, 1, 1, padding="valid")
    x = _conv_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    for i, pool_filters in enumerate((32, 64, 64)):
        x = _block35(x, pool_filters, f"mixed{i}")
    b3 = _conv_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    d = _conv_bn(_conv_bn(_conv_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3, strides=(2, 2),
                 padding="valid")
    x = layers.Concatenate(axis=3, name="mixed3")(
        [b3, d, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)])
    for i, mid in enumerate((128, 160, 160, 192)):
        x = _block17(x, mid, f"mixed{4 + i}")
    b3 = _conv_bn(_conv_bn(x, 192, 1, 1), 320, 3, 3, strides=(2, 2), padding="valid")
    b7 = _conv_bn(x, 192, 1, 1)
    for r, c in ((1, 7), (7, 1)):
        b7 = _conv_bn(b7, 192, r, c)
    b7 = _conv_bn(b7, 192, 3, 3, strides=(2, 2), padding="valid")
    x = layers.Concatenate(axis=3, name="mixed8")(
        [b3, b7, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)])
    for i in range(2):
        x = _block8(x, i)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation)
    fname = (f"inception_v3_weights_tf_dim_ordering_tf_kernels"
             f"{'' if include_top else '_notop'}.h5")
    imagenet_file = (fname, BASE_WEIGHTS_PATH + fname,
                     WEIGHTS_HASHES["inception_v3"][0 if include_top else 1])
    return imagenet_utils.finish(Model(inputs, x, name="inception_v3"), weights, imagenet_file,
                                 by_name=False)  # generated layer names: in Keras's order


def preprocess_input(x, data_format=None):
    """Scales RGB [0, 255] to [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
