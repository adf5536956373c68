"""`tf.keras.activations`: activation functions by name.

Example:
    >>> tf.keras.activations.get("relu")(tf.constant([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
"""
from tensorlite.keras import backend
from tensorlite.keras.tf_functions import tf
from tensorlite.ops import math_ops
from tensorlite.ops.common import to_tensor

# tf.nn's functions, registered with the symbolic dispatch under their tf.nn names
# (keras/tf_functions.py), so that an activation called on tf.keras.Input tensors becomes
# the same TFOpLambda layer as tf.nn's function would ("nn.softmax").
nn = tf.nn


def linear(x):
    return to_tensor(x)


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    if alpha == 0.0 and max_value is None and threshold == 0.0:
        return nn.relu(to_tensor(x))
    return backend.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)


def elu(x, alpha=1.0):
    return backend.elu(x, alpha=alpha)


def softmax(x, axis=-1):
    out = nn.softmax(x, axis=axis)
    if axis == -1:  # lets a crossentropy on the probabilities use the exact logits form
        from tensorlite.keras.losses import _remember_logits  # noqa: PLC0415
        _remember_logits(out, x, "softmax")
    return out


def log_softmax(x, axis=-1):
    return nn.log_softmax(x, axis=axis)


def exponential(x):
    return math_ops.exp(x)


def hard_sigmoid(x):
    return math_ops.clip_by_value(math_ops.add(math_ops.multiply(to_tensor(x), 0.2), 0.5),
                                  0.0, 1.0)


def gelu(x, approximate=False):
    return nn.gelu(x, approximate=approximate)


sigmoid, tanh = math_ops.sigmoid, math_ops.tanh
selu, softplus, softsign = nn.selu, nn.softplus, nn.softsign
swish = silu = nn.silu
relu6 = nn.relu6
leaky_relu = nn.leaky_relu

_BY_NAME = {
    "linear": linear, "relu": relu, "softmax": softmax, "log_softmax": log_softmax,
    "sigmoid": sigmoid, "tanh": tanh, "elu": elu, "selu": selu, "softplus": softplus,
    "softsign": softsign, "swish": swish, "silu": silu, "gelu": gelu, "relu6": relu6,
    "exponential": exponential, "hard_sigmoid": hard_sigmoid, "leaky_relu": leaky_relu,
}


def get(identifier):
    """A callable for a name, None (linear) or a callable."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:  # a registered one ("package>name"), or in a custom_object_scope
            from tensorlite.keras.saving.object_registration import (  # noqa: PLC0415
                get_registered_object)
            fn = get_registered_object(identifier)
        if fn is None:
            raise ValueError(f"Unknown activation function: '{identifier}'. Known: "
                             f"{sorted(_BY_NAME)}; register your own with "
                             f"@tf.keras.utils.register_keras_serializable() or pass it "
                             f"in custom_objects")
        return fn
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")


def serialize(activation):
    for name, fn in _BY_NAME.items():
        if fn is activation:
            return name
    from tensorlite.keras.saving.object_registration import get_registered_name  # noqa: PLC0415
    return get_registered_name(activation) or repr(activation)


def deserialize(name):
    return get(name)
