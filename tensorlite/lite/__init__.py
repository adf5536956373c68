"""`tf.lite`: the TensorFlow Lite converter and a NumPy interpreter for `.tflite` files.

The interpreter side (interpreter.py, kernels, memory plan, flatbuf.py, schema.py) imports
nothing beyond NumPy and flatbuffers, as seed 004's small interpreter; the converter
(convert/) walks tensorlite's graph IR. Names load on first use so that `import tensorlite`
needs neither.

Example:
    >>> interpreter = tf.lite.Interpreter(model_content=tflite_model)
    >>> interpreter.allocate_tensors()
"""
import importlib

_NAMES = {
    "TFLiteConverter": "tensorlite.lite.convert.tflite_converter",
    "Optimize": "tensorlite.lite.convert.tflite_converter",
    "OpsSet": "tensorlite.lite.convert.tflite_converter",
    "TargetSpec": "tensorlite.lite.convert.tflite_converter",
    "Interpreter": "tensorlite.lite.interpreter",
}


def __getattr__(name):
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'tensorlite.lite' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
