"""The errors a malformed `.tflite` file raises.

TensorFlow Lite's Python interpreter raises ValueError for a model it cannot load, and
tensorlite raises DataLossError (a corrupt file) or ResourceExhaustedError (a file asking
for more memory than the cap) for every file it reads: these classes are both, so code
written against either keeps working. tensorlite's error classes are imported only when an
error is raised, so the interpreter still loads with nothing but NumPy and flatbuffers.

Example:
    >>> raise data_loss("m.tflite", "operator 3 refers to tensor 99 of 12")
    Traceback (most recent call last):
    ModelDataLossError: m.tflite: operator 3 refers to tensor 99 of 12
"""
_CLASSES = {}


def _error_class(kind):
    cls = _CLASSES.get(kind)
    if cls is None:
        from tensorlite.framework import errors  # noqa: PLC0415 - see the module docstring
        base = getattr(errors, kind)
        cls = type(f"Model{kind}", (base, ValueError),
                   {"__doc__": f"A .tflite file that cannot be loaded: {base.__doc__}",
                    "__module__": __name__})
        _CLASSES[kind] = globals()[cls.__name__] = cls  # found by name when unpickled
    return cls


def data_loss(source, message):
    """DataLossError (and ValueError) for a corrupt model, naming `source`."""
    return _error_class("DataLossError")(None, None, f"{source}: {message}")


def exhausted(source, message):
    """ResourceExhaustedError (and ValueError) for a model that asks for too much memory."""
    return _error_class("ResourceExhaustedError")(None, None, f"{source}: {message}")


def memory_cap():
    """The most bytes a model's tensors may ask for: the decompression cap of
    tensorlite/framework/size_limits.py (TENSORLITE_MAX_DECOMPRESSED_BYTES)."""
    from tensorlite.framework import size_limits  # noqa: PLC0415
    return size_limits.decompression_cap()
