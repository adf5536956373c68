"""Shared by the TF Lite (and ONNX) tests: the seed models and running a .tflite file in
LiteRT."""
import os
import sys

import numpy as np

import tensorlite as tf
from tensorlite.lite.interpreter import Interpreter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from seed_models import generate_model  # noqa: E402,F401


def mlp():
    return tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(8,)),
                                tf.keras.layers.Dense(3)])


def mobilenet_v2_small(seed=0):
    """Keras MobileNetV2(weights=None, alpha=0.35) on 96x96 images, its BatchNormalization
    statistics and affine weights drawn away from their initial 0/1 (so that folding them
    into the filters changes the filters)."""
    rng = np.random.default_rng(seed)
    model = tf.keras.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35,
                                              weights=None)
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            layer.set_weights([rng.uniform(0.5, 1.5, w.shape).astype("float32")
                               for w in layer.get_weights()])
    return model


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


def template_images(n, seed):
    """A ten-class task a CNN can learn: class templates (fixed) under noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    templates = np.random.default_rng(42).normal(size=(10, 32, 32, 3)).astype("float32")
    return (templates[labels] * 0.7 + rng.normal(size=(n, 32, 32, 3))).astype("float32"), \
        labels


def fitted_cifar_cnn(seed=1):
    """Seed 002's CIFAR CNN made a real classifier of `template_images` in seconds: its
    convolutions stay random features and its last Dense layer is fitted by ridge
    regression to one-hot targets (held-out accuracy about 0.9), so its outputs have the
    margins of a trained model (an untrained one's near-uniform softmax makes argmax
    comparisons meaningless)."""
    tf.random.set_seed(seed)
    model = generate_model()
    x, y = template_images(400, 1)
    h = x
    for layer in model.layers[:-2]:  # up to the last Dense and its softmax
        h = layer(h, training=False)
    feats = np.concatenate([h.numpy(), np.ones((len(x), 1), np.float32)], 1)
    gram = feats.T @ feats
    ridge = 0.1 * np.trace(gram) / len(gram)
    w = np.linalg.solve(gram + ridge * np.eye(len(gram)), feats.T @ (np.eye(10)[y] * 10))
    model.layers[-2].set_weights([w[:-1].astype("float32"), w[-1].astype("float32")])
    return model


def quantize_input(x, detail):
    """A float batch in an integer input's quantization (what a caller of an int8 model
    does)."""
    if detail["dtype"] == np.float32:
        return x
    scale, zero = detail["quantization"]
    info = np.iinfo(detail["dtype"])
    return np.clip(np.round(x / scale + zero), info.min, info.max).astype(detail["dtype"])


def dequantize_output(y, detail):
    if detail["dtype"] == np.float32:
        return y
    scale, zero = detail["quantization"]
    return (y.astype(np.float32) - zero) * scale


def attention_model():
    """Keras's Attention and MultiHeadAttention (its einsums), LayerNormalization, pooling."""
    inp = tf.keras.Input((6, 8))
    a = tf.keras.layers.Attention()([inp, inp])
    b = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)(inp, inp)
    x = tf.keras.layers.Concatenate()([a, b])
    x = tf.keras.layers.LayerNormalization()(x)
    x = tf.keras.layers.GlobalAveragePooling1D()(x)
    return tf.keras.Model(inp, tf.keras.layers.Dense(3, activation="softmax")(x))


def full_integer(model, input_shape, seed=6):
    """The model's full-int8 file (int8 ends) and an int8 batch for it."""
    rng = np.random.default_rng(seed)

    def representative():
        for _ in range(32):
            yield [rng.normal(size=(1,) + input_shape).astype("float32")]
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.inference_input_type = converter.inference_output_type = tf.int8
    data = converter.convert()
    x = rng.normal(size=(16,) + input_shape).astype("float32")
    return data, quantize_input(x, Interpreter(model_content=data).get_input_details()[0])


def every_int8_tensor_matches(data, x):
    """Runs LiteRT's reference kernels and ours keeping every tensor; asserts each int8
    tensor equal; returns {tensor name: its LiteRT value}."""
    from ai_edge_litert.interpreter import Interpreter as LiteRT, OpResolverType  # noqa: PLC0415
    theirs = LiteRT(model_content=data, experimental_preserve_all_tensors=True,
                    experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    ours = Interpreter(model_content=data, experimental_preserve_all_tensors=True)
    theirs.allocate_tensors(), ours.allocate_tensors()  # run() allocates only on a resize
    run(theirs, x), run(ours, x)
    seen = {}
    for d in theirs.get_tensor_details()[:len(ours.get_tensor_details())]:  # not scratch
        if d["dtype"] == np.int8:
            seen[d["name"]] = want = theirs.get_tensor(d["index"])
            np.testing.assert_array_equal(ours.get_tensor(d["index"]), want, d["name"])
    return seen


def spread(values):
    return int(values.max()) - int(values.min())
