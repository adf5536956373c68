"""`tf.lite.experimental`: custom ops for tensorlite's interpreter, registered from Python.

Example:
    >>> tf.lite.experimental.register_custom_op("AddPi", add_pi)  # doctest: +SKIP
"""
from tensorlite.lite.interpreter import register_custom_op

__all__ = ["register_custom_op"]
