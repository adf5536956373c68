"""Shared by the TF Lite tests: the seed models and running a .tflite file in LiteRT."""
import os
import sys

import numpy as np

import tensorlite as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from seed_models import generate_model  # noqa: E402,F401


def mlp():
    return tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(8,)),
                                tf.keras.layers.Dense(3)])


def litert(data, reference=True):
    """A LiteRT interpreter on the file's bytes (reference kernels: TFLite's own
    arithmetic, no delegate)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: PLC0415
    kind = OpResolverType.BUILTIN_REF if reference else OpResolverType.AUTO
    interpreter = Interpreter(model_content=data, experimental_op_resolver_type=kind)
    interpreter.allocate_tensors()
    return interpreter


def run(interpreter, x):
    """Runs one input batch through a (LiteRT or tensorlite) interpreter, resizing to it."""
    inp = interpreter.get_input_details()[0]
    if tuple(inp["shape"]) != x.shape:
        interpreter.resize_tensor_input(inp["index"], list(x.shape))
        interpreter.allocate_tensors()
        inp = interpreter.get_input_details()[0]
    interpreter.set_tensor(inp["index"], x)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])


def builtin_ops(data):
    """The builtin operator names of a .tflite file, in execution order (read by LiteRT's
    own analyzer-free path: the interpreter's op details without a delegate)."""
    interpreter = litert(data)
    return [d["op_name"] for d in interpreter._get_ops_details()]


def images(n, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 32, 32, 3)).astype("float32")
