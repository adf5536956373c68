"""`tf.experimental`: `tf.experimental.numpy` (loaded when used) and `Optional`."""
from tensorlite.experimental.optional import Optional  # noqa: F401


def __getattr__(name):
    if name == "numpy":
        import importlib  # noqa: PLC0415
        return importlib.import_module("tensorlite.experimental.numpy")
    raise AttributeError(f"module 'tensorlite.experimental' has no attribute {name!r}")
