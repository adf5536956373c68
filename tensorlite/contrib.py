"""`tf.contrib` was removed in TensorFlow 2: every name under it raises AttributeError that
says where the feature lives now (TF 1 code uses tf.contrib.data and tf.contrib.distribute).

Example:
    >>> try:
    ...     tf.contrib.data.shuffle_and_repeat
    ... except AttributeError as e:
    ...     print("tf.data.experimental.shuffle_and_repeat" in str(e))
    True
"""
import types

_MOVED = {
    "data": {"shuffle_and_repeat": "tf.data.experimental.shuffle_and_repeat",
             "map_and_batch": "tf.data.experimental.map_and_batch",
             "parallel_interleave": "dataset.interleave(..., num_parallel_calls=...)",
             "batch_and_drop_remainder": "dataset.batch(n, drop_remainder=True)",
             "AUTOTUNE": "tf.data.AUTOTUNE", "": "tf.data / tf.data.experimental"},
    "distribute": {"MirroredStrategy": "tf.distribute.MirroredStrategy",
                   "": "tf.distribute"},
    "lite": {"": "tf.lite"},
}


class _Removed(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        moved = _MOVED.get(self.__name__.rsplit(".", 1)[-1], {})
        where = moved.get(name) or moved.get("", "its TensorFlow 2 replacement")
        raise AttributeError(f"tf.contrib was removed in TensorFlow 2 (and tensorlite): "
                             f"use {where} instead of {self.__name__}.{name}")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Removed(f"tf.contrib.{name}")
