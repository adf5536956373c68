"""The VGG architecture (Simonyan & Zisserman 2014) as Keras builds it, for `vgg16.py` and
`vgg19.py`: 3x3 convolution blocks of 64, 128, 256, 512 and 512 filters, each ending in a
2x2 max pooling, and a top that flattens the last feature map (so it needs 224x224 inputs)
into two 4096-unit layers."""
from tensorlite.keras import layers
from tensorlite.keras.applications import imagenet_utils
from tensorlite.keras.engine.training import Model


def build(name, convs_per_block, include_top, weights, input_tensor, input_shape, pooling,
          classes, classifier_activation, imagenet_file):
    """The model named `name` (Keras's "vgg16", "vgg19"); `imagenet_file` (file name, URL,
    MD5) when weights="imagenet"."""
    imagenet_utils.check_weights(weights, classes, include_top, name.upper(),
                                 classifier_activation)
    inputs, x = imagenet_utils.image_input(input_tensor, input_shape, 224, 32, include_top,
                                           weights)
    for block, (filters, convs) in enumerate(zip((64, 128, 256, 512, 512), convs_per_block),
                                             start=1):
        for conv in range(1, convs + 1):
            x = layers.Conv2D(filters, 3, activation="relu", padding="same",
                              name=f"block{block}_conv{conv}")(x)
        x = layers.MaxPooling2D(2, strides=2, name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.pooled(x, pooling, names=(None, None))
    return imagenet_utils.finish(Model(inputs, x, name=name), weights, imagenet_file)


def imagenet_file(name, base_path, hashes, include_top, weights):
    """(file name, URL, hash) of Keras's weights for this model, or None."""
    if weights != "imagenet":
        return None
    fname = f"{name}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return fname, base_path + fname, hashes[name][0 if include_top else 1]


def preprocess_input(x, data_format=None):
    """RGB [0, 255] to BGR minus the ImageNet channel means (Keras's 'caffe' mode)."""
    return imagenet_utils.preprocess_input(x, data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
