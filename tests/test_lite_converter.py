"""tf.lite.TFLiteConverter: LiteRT (TensorFlow's own TF Lite runtime) runs the files we write,
giving tensorlite's outputs (1e-5), with biases and activations fused into the ops."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors

pytest.importorskip("ai_edge_litert", reason="ai-edge-litert is in the test extra")
from tests.lite_helpers import (  # noqa: E402
    builtin_ops, generate_model, images, litert, mlp, mobilenet_v2_small, run)


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_mlp_fused_fully_connected():
    model = mlp()
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    assert data[4:8] == b"TFL3"
    assert builtin_ops(data) == ["FULLY_CONNECTED", "FULLY_CONNECTED"]
    x = np.random.default_rng(1).normal(size=(1, 8)).astype("float32")
    for reference in (True, False):
        _close(run(litert(data, reference), x), model(x).numpy())


def test_cifar_cnn_fused_conv_and_dynamic_batch():
    model = generate_model()
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    assert builtin_ops(data) == ["CONV_2D", "CONV_2D", "MAX_POOL_2D", "CONV_2D", "CONV_2D",
                                 "MAX_POOL_2D", "RESHAPE", "FULLY_CONNECTED",
                                 "FULLY_CONNECTED", "SOFTMAX"]
    interpreter = litert(data)
    detail = interpreter.get_input_details()[0]
    assert list(detail["shape"]) == [1, 32, 32, 3]
    assert list(detail["shape_signature"]) == [-1, 32, 32, 3]
    x = images(3)
    _close(run(interpreter, x[:1]), model(x[:1]).numpy())
    _close(run(interpreter, x), model(x).numpy())  # resized to batch 3


def test_explicit_padding_and_depthwise():
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(4, 3, strides=2, padding="same", activation="relu6",
                               input_shape=(8, 8, 3)),
        tf.keras.layers.DepthwiseConv2D(3, padding="valid", activation="relu"),
        tf.keras.layers.AveragePooling2D(padding="same"),
        tf.keras.layers.Flatten(), tf.keras.layers.Dense(2, activation="tanh")])
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    x = np.random.default_rng(2).normal(size=(1, 8, 8, 3)).astype("float32")
    _close(run(litert(data), x), model(x).numpy())


def test_from_concrete_functions():
    @tf.function
    def f(x):
        return tf.nn.softmax(tf.matmul(x, tf.constant([[1.0, -1.0], [0.5, 2.0]])) + 1.0)

    concrete = f.get_concrete_function(tf.TensorSpec([1, 2], tf.float32))
    data = tf.lite.TFLiteConverter.from_concrete_functions([concrete]).convert()
    x = np.array([[0.3, -0.7]], np.float32)
    _close(run(litert(data), x), f(tf.constant(x)).numpy())


def test_from_saved_model_without_a_savedmodel(tmp_path):
    # converting SavedModels TensorFlow wrote: tests/interop/test_lite_interop.py
    with pytest.raises(errors.NotFoundError, match="SavedModel file does not exist"):
        tf.lite.TFLiteConverter.from_saved_model(str(tmp_path))


def test_op_without_mapping_names_op_and_node():
    @tf.function
    def f(x):
        return tf.math.cumsum(x, axis=1)

    concrete = f.get_concrete_function(tf.TensorSpec([1, 4], tf.float32))
    with pytest.raises(errors.UnimplementedError, match=r"Cumsum.*test_lite_converter.py"):
        tf.lite.TFLiteConverter.from_concrete_functions([concrete]).convert()


def test_seed_convert_spelling(tmp_path):
    model = mlp()
    out = tmp_path / "m.tflite"
    data = tf.lite.convert_savedmodel.convert(model=model, output_tflite=out)
    assert out.read_bytes() == data
    x = np.ones((1, 8), np.float32)
    _close(run(litert(data), x), model(x).numpy())


def test_lstm_text_classifier_in_litert_and_ours():
    from tensorlite.lite.interpreter import Interpreter  # noqa: PLC0415
    tokens = tf.keras.Input((10,), dtype="int32")
    h = tf.keras.layers.Embedding(100, 8)(tokens)
    h = tf.keras.layers.LSTM(16)(h)
    model = tf.keras.Model(tokens, tf.keras.layers.Dense(2, activation="softmax")(h))
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    assert {"GATHER", "UNPACK", "SPLIT_V", "FULLY_CONNECTED"} <= set(builtin_ops(data))
    x = np.random.default_rng(3).integers(0, 100, size=(3, 10)).astype("int32")
    ours = Interpreter(model_content=data)
    ours.allocate_tensors()
    for batch in (x[:1], x):  # the zero state, written at batch 1, broadcasts to batch 3
        _close(run(litert(data), batch), model(batch).numpy())
        _close(run(ours, batch), model(batch).numpy())


def test_reshape_to_a_shape_read_from_the_input():
    # a SavedModel's Flatten: Reshape(x, Pack(StridedSlice(Shape(x)), -1)); the shape read
    # fixes the Reshape's target in each trace and is itself dead in the file
    @tf.function(input_signature=[tf.TensorSpec([None, 3, 4])])
    def f(x):
        y = x * 2.0
        return tf.reshape(y, tf.stack([tf.shape(y)[0], -1]))

    data = tf.lite.convert_savedmodel.convert(model=f)
    assert builtin_ops(data) == ["MUL", "RESHAPE"]
    x = np.random.default_rng(4).normal(size=(3, 3, 4)).astype("float32")
    interpreter = litert(data)
    for batch in (x[:1], x):
        _close(run(interpreter, batch), f(batch).numpy())
    assert f(x[:2]).shape == (2, 12)  # the polymorphic tf.function: one graph per shape
    assert "one graph per input shape" in f.retrace_log[-1]


def test_mobilenet_v2_with_folded_batch_norm_matches_keras_in_litert():
    """MobileNetV2's BatchNormalizations are folded into the convolution filters (no MUL
    left, as TensorFlow's converter writes it); LiteRT gives the Keras model's outputs."""
    model = mobilenet_v2_small()
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    ops = builtin_ops(data)
    assert "MUL" not in ops and ops.count("CONV_2D") == 35 and \
        ops.count("DEPTHWISE_CONV_2D") == 17 and "PAD" in ops
    x = np.random.default_rng(3).uniform(-1, 1, (2, 96, 96, 3)).astype("float32")
    want = model(x, training=False).numpy()
    for reference in (True, False):
        np.testing.assert_allclose(run(litert(data, reference), x), want, rtol=1e-4,
                                   atol=1e-6 * float(np.abs(want).max()))


def test_pad_with_a_nonzero_constant_is_padv2():
    @tf.function(input_signature=[tf.TensorSpec([1, 3, 3, 2], tf.float32)])
    def f(x):
        return tf.pad(x, [[0, 0], [1, 2], [0, 1], [0, 0]], constant_values=2.5)

    data = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()]).convert()
    assert builtin_ops(data) == ["PADV2"]
    x = np.random.default_rng(4).normal(size=(1, 3, 3, 2)).astype("float32")
    _close(run(litert(data), x), f(x).numpy())
