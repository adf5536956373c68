"""TF 1.8's `convert_savedmodel.convert(saved_model_dir=..., output_tflite=...)`.

Example:
    >>> tf.lite.convert_savedmodel.convert(saved_model_dir="exported",  # doctest: +SKIP
    ...                                    output_tflite="model.tflite")
"""
from tensorlite.lite.convert.tflite_converter import convert

__all__ = ["convert"]
