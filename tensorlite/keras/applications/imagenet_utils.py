"""What the applications share: input shape checks, weights files, ImageNet preprocessing
modes and `decode_predictions`.

Weights: `weights=None` (random initialization), the path of a local weights file saved
by `model.save_weights`, or "imagenet": Keras's published `.h5` file for the model, downloaded
once into $KERAS_HOME/models (~/.keras/models), checked against Keras's published MD5 where
Keras publishes one (a mismatch is a ValueError and nothing is cached), then loaded.
`decode_predictions` reads ImageNet's class index (imagenet_class_index.json) from a path
given, or downloads Keras's once into $KERAS_HOME/models (~/.keras/models), checked against
its published hash; the file is JSON, parsed as data only.
"""
import json
import os

import numpy as np

from tensorlite.framework import errors
from tensorlite.keras import backend, layers
from tensorlite.keras.engine_symbolic import KerasTensor

CLASS_INDEX_URL = ("https://storage.googleapis.com/download.tensorflow.org/data/"
                   "imagenet_class_index.json")
CLASS_INDEX_HASH = "c2c37ea517e94d9795004a39431a14cb"  # Keras's published MD5
_CLASS_INDEX = {}  # path -> parsed index


def correct_pad(inputs, kernel_size):
    """((top, bottom), (left, right)) zero padding for a stride-2 'valid' conv to match
    TF's 'same' (Keras's imagenet_utils.correct_pad)."""
    size = inputs.shape.as_list()[1:3]
    k = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    correct = (k[0] // 2, k[1] // 2)
    return ((correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1]))


def check_weights(weights, classes, include_top, name, classifier_activation="softmax"):
    """Keras's checks of `weights` (None, 'imagenet' or an existing file), of `classes`
    (ImageNet's classifier has 1000) and of the activation of a pretrained classifier."""
    if not (weights in (None, "imagenet") or os.path.exists(os.fspath(weights)) or
            os.path.exists(os.fspath(weights) + ".index")):  # a save_weights checkpoint
        raise ValueError(f"The `weights` argument should be either `None` (random "
                         f"initialization), 'imagenet' (pre-training on ImageNet), or the "
                         f"path to the weights file to be loaded. Received: weights="
                         f"{weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(f"{name}: if using `weights` as `'imagenet'` with `include_top` as "
                         f"true, `classes` should be 1000. Received: classes={classes}")
    if weights is not None and include_top:
        from tensorlite.keras import activations  # noqa: PLC0415
        if activations.get(classifier_activation) not in (activations.softmax,
                                                          activations.linear):
            raise ValueError(f"Only `None` and `softmax` activations are allowed for the "
                             f"`classifier_activation` argument when using pretrained "
                             f"weights, with `include_top=True`; Received: "
                             f"classifier_activation={classifier_activation}")


def image_input(input_tensor, input_shape, default_size, min_size, include_top, weights):
    """The model's Input: input_shape (None dims allowed without the top) checked against
    the family's minimum size; ImageNet's classifier takes only its default size."""
    if weights == "imagenet" and include_top and input_shape is not None and \
            tuple(input_shape) != (default_size, default_size, 3):
        raise ValueError(f"When setting `include_top=True` and loading `imagenet` weights, "
                         f"`input_shape` should be {(default_size, default_size, 3)}. "
                         f"Received: input_shape={tuple(input_shape)}")
    if input_shape is None:
        input_shape = (default_size, default_size, 3) if include_top else (None, None, 3)
    input_shape = tuple(input_shape)
    if len(input_shape) != 3:
        raise ValueError(f"`input_shape` must be a tuple of three integers (height, width, "
                         f"channels), got {input_shape}")
    if include_top and None in input_shape[:2]:
        raise ValueError("With include_top=True the input height and width must be known "
                         "(the classifier's input size depends on them)")
    for d in input_shape[:2]:
        if d is not None and d < min_size:
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    if input_tensor is not None:
        return input_tensor, input_tensor
    inp = layers.Input(shape=input_shape)
    return inp, inp


def top(x, include_top, pooling, classes, classifier_activation, dropout=None):
    """Global pooling and the classifier, as each application ends."""
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout:
            x = layers.Dropout(dropout, name="top_dropout")(x)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    return pooled(x, pooling)


def pooled(x, pooling, names=("avg_pool", "max_pool")):
    """A headless application's output for Keras's `pooling` argument (None, 'avg' or
    'max'); `names` of the pooling layers ((None, None) where Keras leaves them unnamed)."""
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=names[1])(x)
    if pooling is not None:
        raise ValueError(f"`pooling` must be None, 'avg' or 'max', got {pooling!r}")
    return x


def finish(model, weights, imagenet_file=None, by_name=True):
    """Loads `weights`: a local file, or for "imagenet" `imagenet_file` = (file name, URL,
    MD5 or None), Keras's published file, downloaded once into $KERAS_HOME/models and
    matched by layer name (`by_name`, for models that name every layer) or in order."""
    if weights == "imagenet":
        from tensorlite.keras.saving import legacy_h5  # noqa: PLC0415
        from tensorlite.keras.utils.data_utils import get_file  # noqa: PLC0415
        from tensorlite.keras.engine.layer_order import keras_layer_order  # noqa: PLC0415
        fname, origin, file_hash = imagenet_file
        path = get_file(fname, origin, cache_subdir="models", file_hash=file_hash)
        weighted = [layer for layer in keras_layer_order(model) if layer.weights]
        legacy_h5.load_published_weights(weighted, path, by_name)
    elif weights is not None:
        model.load_weights(os.fspath(weights))
    return model


def preprocess_input(x, data_format=None, mode="caffe"):
    """ImageNet preprocessing of RGB images in [0, 255]: 'tf' -> [-1, 1], 'torch' -> ImageNet
    mean/std, 'caffe' -> BGR minus the ImageNet means. NumPy in, NumPy out; tensors in,
    tensors out."""
    if isinstance(x, KerasTensor):  # a functional model's input: TF-op layers, as Keras
        return _preprocess_symbolic(x, mode)
    is_np = isinstance(x, np.ndarray) or np.isscalar(x)
    from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
    from tensorlite.ops import math_ops  # noqa: PLC0415
    t = convert_to_tensor(x)
    t = t if t.dtype.is_floating else math_ops.cast(t, backend.floatx())
    if mode == "tf":
        out = t / 127.5 - 1.0
    elif mode == "torch":
        out = (t / 255.0 - np.array([0.485, 0.456, 0.406], np.float32)) / \
            np.array([0.229, 0.224, 0.225], np.float32)
    elif mode == "caffe":
        from tensorlite.ops import array_ops  # noqa: PLC0415
        out = array_ops.reverse(t, axis=[-1]) - np.array([103.939, 116.779, 123.68],
                                                         np.float32)
    else:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: "
                         f"mode={mode}")
    return out.numpy() if is_np else out


def _preprocess_symbolic(x, mode):
    """preprocess_input on a KerasTensor (`x = preprocess_input(keras.Input(...))`, the
    transfer-learning tutorial's way): the same arithmetic through the KerasTensor operators,
    which record it as layers of the model."""
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        return (x / 255.0 - np.array([0.485, 0.456, 0.406], np.float32)) / \
            np.array([0.229, 0.224, 0.225], np.float32)
    if mode == "caffe":
        return x[..., ::-1] - np.array([103.939, 116.779, 123.68], np.float32)
    raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: "
                     f"mode={mode}")


def _index_path(path):
    """The class index: the path given, else Keras's, downloaded once into the Keras cache
    ($KERAS_HOME/models) and checked against its published MD5."""
    if path is not None:
        path = os.fspath(path)
        if not os.path.exists(path):
            raise errors.NotFoundError(None, None, f"decode_predictions: the class index "
                                                   f"{path} does not exist")
        return path
    from tensorlite.keras.utils.data_utils import get_file  # noqa: PLC0415
    return get_file("imagenet_class_index.json", CLASS_INDEX_URL, cache_subdir="models",
                    file_hash=CLASS_INDEX_HASH)


def _load_index(path):
    if path in _CLASS_INDEX:
        return _CLASS_INDEX[path]
    with open(path, encoding="utf-8") as f:
        try:
            raw = json.load(f)
        except json.JSONDecodeError as e:
            raise errors.InvalidArgumentError(None, None, f"{path} is not the ImageNet "
                                              f"class index (invalid JSON: {e})") from None
    ok = isinstance(raw, dict) and len(raw) == 1000 and all(
        isinstance(v, list) and len(v) == 2 and all(isinstance(s, str) for s in v)
        for v in raw.values()) and set(raw) == {str(i) for i in range(1000)}
    if not ok:
        raise errors.InvalidArgumentError(None, None, f"{path} is not the ImageNet class "
                                          f"index: expected 1000 entries \"i\": [\"wnid\", "
                                          f"\"name\"]")
    index = [tuple(raw[str(i)]) for i in range(1000)]
    _CLASS_INDEX[path] = index
    return index


def decode_predictions(preds, top=5, class_index_path=None):  # noqa: A002 - Keras's name
    """The `top` (class id, name, score) triples per row of [batch, 1000] predictions."""
    p = np.asarray(preds)
    if p.ndim != 2 or p.shape[1] != 1000:
        raise ValueError(f"`decode_predictions` expects a batch of predictions (i.e. a 2D "
                         f"array of shape (samples, 1000)). Received array with shape: "
                         f"{p.shape}")
    index = _load_index(_index_path(class_index_path))
    out = []
    for row in p:
        best = np.argsort(row)[-top:][::-1]
        out.append([(index[i][0], index[i][1], float(row[i])) for i in best])
    return out
