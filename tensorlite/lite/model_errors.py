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


def _error_class(name, base_name, python_class):
    cls = _CLASSES.get(name)
    if cls is None:
        from tensorlite.framework import errors  # noqa: PLC0415 - see the module docstring
        base = getattr(errors, base_name)
        cls = type(name, (base, python_class),
                   {"__doc__": f"A .tflite model that cannot be loaded or run: {base.__doc__}",
                    "__module__": __name__})
        _CLASSES[name] = globals()[name] = cls  # found by name when unpickled
    return cls


def data_loss(source, message):
    """DataLossError (and ValueError) for a corrupt model, naming `source`."""
    return _error_class("ModelDataLossError", "DataLossError", ValueError)(
        None, None, f"{source}: {message}")


def invoke_failed(source, message):
    """DataLossError (and RuntimeError, TF Lite's class for a failed invoke) for an
    operator whose kernel trips over tensors that do not fit it."""
    return _error_class("ModelInvokeError", "DataLossError", RuntimeError)(
        None, None, f"{source}: {message}")


def exhausted(source, message):
    """ResourceExhaustedError (and ValueError) for a model that asks for too much memory."""
    return _error_class("ModelResourceExhaustedError", "ResourceExhaustedError", ValueError)(
        None, None, f"{source}: {message}")


def memory_cap():
    """The most bytes a model's tensors may ask for: the decompression cap of
    tensorlite/framework/size_limits.py (TENSORLITE_MAX_DECOMPRESSED_BYTES)."""
    from tensorlite.framework import size_limits  # noqa: PLC0415
    return size_limits.decompression_cap()
