"""keras/tf_functions.py hands Keras's own code the public TensorFlow functions without
importing the public namespace: each must be the very function the public path names, and
dispatch on tf.keras.Input tensors under the same public path."""
import numpy as np

import tensorlite as tf
from tensorlite.keras import tf_functions


def _public(path):
    obj = tf
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _unwrapped(fn):
    return fn.__wrapped__ if getattr(fn, "_tf_api_symbol", None) else fn


def _entries():
    ns = tf_functions.tf
    for name, value in vars(ns).items():
        if name in ("math", "nn", "random"):
            for sub, fn in vars(value).items():
                yield f"{name}.{sub}", fn
        else:
            yield name, value


def test_every_function_is_the_public_one_under_its_public_symbol():
    tf.keras.Input(shape=(2,))  # installs the symbolic dispatch
    for path, fn in _entries():
        public = _public(path)
        assert _unwrapped(fn) is _unwrapped(public), path
        assert getattr(fn, "_tf_api_symbol", None) == getattr(public, "_tf_api_symbol", None), path


def test_backend_function_on_keras_input_becomes_the_public_functions_layer():
    from tensorlite.keras import backend as K
    inp = tf.keras.Input(shape=(3,))
    model = tf.keras.Model(inp, K.mean(K.square(inp), axis=1))
    config = model.get_config()
    assert [layer["config"].get("function") for layer in config["layers"]] == \
        [None, "square", "reduce_mean"]
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_allclose(model(x).numpy(), np.mean(x ** 2, axis=1), rtol=1e-6)
