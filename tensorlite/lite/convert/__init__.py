"""The TensorFlow Lite converter: graph IR -> `.tflite` (see converter.py for the op rules)."""
