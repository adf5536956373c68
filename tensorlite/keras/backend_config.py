"""Keras backend state: unique layer names, the float type, clear_session, epsilon, the
learning phase. `tf.keras.backend` (backend.py) re-exports it beside the backend ops, which
read it from here (so neither of the two modules imports the other).

Example:
    >>> tf.keras.backend.floatx()
    'float32'
"""
import collections
import threading

_state = threading.local()
_config = {"floatx": "float32", "epsilon": 1e-7, "image_data_format": "channels_last"}


def _counts():
    c = getattr(_state, "names", None)
    if c is None:
        c = _state.names = collections.defaultdict(int)
    return c


def unique_object_name(base):
    """'dense', then 'dense_1', 'dense_2', ... per session, as Keras names layers."""
    counts = _counts()
    n = counts[base]
    counts[base] += 1
    return base if n == 0 else f"{base}_{n}"


def clear_session():
    """Resets layer-name counters (and nothing else needs resetting in tensorlite)."""
    _counts().clear()


def floatx():
    return _config["floatx"]


def set_floatx(value):
    if value not in ("float16", "float32", "float64", "bfloat16"):
        raise ValueError(f"Unknown floatx type: {value}")
    _config["floatx"] = value


def epsilon():
    return _config["epsilon"]


def set_epsilon(value):
    _config["epsilon"] = float(value)


def image_data_format():
    return _config["image_data_format"]


_learning_phase = {"value": 0}


def learning_phase():
    return _learning_phase["value"]


def set_learning_phase(value):
    _learning_phase["value"] = int(value)
