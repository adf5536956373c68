"""`tf.debugging`: Assert (ops/logging_ops.py)."""
from tensorlite.ops.logging_ops import Assert

__all__ = ["Assert"]
