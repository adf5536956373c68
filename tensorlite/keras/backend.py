"""`tf.keras.backend`: the backend state (backend_config.py: unique layer names, the float
type, clear_session, epsilon, the learning phase) and the backend ops (backend_ops.py).

Example:
    >>> tf.keras.backend.floatx()
    'float32'
"""
from tensorlite.keras.backend_config import (  # noqa: F401
    _state, clear_session, epsilon, floatx, image_data_format, learning_phase, set_epsilon,
    set_floatx, set_learning_phase, unique_object_name)
from tensorlite.keras.backend_ctc import ctc_batch_cost, ctc_decode  # noqa: F401
from tensorlite.keras.backend_ops import *  # noqa: F401,F403
