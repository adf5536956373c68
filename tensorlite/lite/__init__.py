"""`tf.lite`: the TensorFlow Lite converter and a NumPy interpreter for `.tflite` files.

The interpreter side (interpreter.py, kernels, memory plan, flatbuf.py, schema.py) imports
nothing beyond NumPy and flatbuffers, as the small interpreter of the Google I/O 2018 talk
"TensorFlow Lite for mobile developers"; the converter (convert/) walks tensorlite's graph
IR. Names load on first use so that `import tensorlite` needs neither.

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
    "experimental": None,  # the module tensorlite.lite.experimental
    "convert_savedmodel": None,  # TF 1.8's spelling: convert_savedmodel.convert(...)
}
_MODULES = {"experimental": "tensorlite.lite.experimental",
            "convert_savedmodel": "tensorlite.lite.convert.convert_savedmodel"}


def __getattr__(name):
    if name not in _NAMES:
        raise AttributeError(f"module 'tensorlite.lite' has no attribute {name!r}")
    if name in _MODULES:
        value = importlib.import_module(_MODULES[name])
    else:
        value = getattr(importlib.import_module(_NAMES[name]), name)
    globals()[name] = value
    return value
