"""ONNX export checked by onnxruntime: the file it runs gives tensorlite's outputs (rtol 1e-5,
float32) at two batch sizes (the batch dimension is dynamic)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra")
onnx = pytest.importorskip("onnx", reason="onnx is in the test extra")
from tensorlite.onnx import export  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from seed_models import SequentialModel, generate_model  # noqa: E402
from tests.lite_helpers import attention_model  # noqa: E402

RNG = np.random.default_rng(0)


def _session(path):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _check(model, x, tmp_path, signature=None, call=None):
    path = tmp_path / "model.onnx"
    proto = export(model, path, input_signature=signature)
    assert onnx.load(str(path)) == proto
    session = _session(path)
    feed = session.get_inputs()[0].name
    assert session.get_inputs()[0].shape[0] == "batch"
    call = call or (lambda v: model(v, training=False))
    for batch in (x, x[:1]):
        got = session.run(None, {feed: batch})[0]
        want = call(batch).numpy()
        assert got.shape == want.shape
        # atol at float32's rounding of the output's scale: an output near zero among
        # outputs near 3 is a sum of terms near 3 (seen: 1.6e-6 off at 0.0335)
        np.testing.assert_allclose(got, want, rtol=1e-5,
                                   atol=1e-6 * max(1.0, float(np.abs(want).max())))
    return proto


def test_mlp(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(8,)),
                                 tf.keras.layers.Dense(3)])
    proto = _check(model, RNG.normal(size=(5, 8)).astype("float32"), tmp_path)
    assert {n.op_type for n in proto.graph.node} >= {"MatMul", "Add", "Relu"}


def test_seed_002_cifar_cnn(tmp_path):
    model = generate_model()
    proto = _check(model, RNG.normal(size=(3, 32, 32, 3)).astype("float32"), tmp_path)
    # the weights are written once each, pre-transposed: no unused initializer
    used = {i for n in proto.graph.node for i in n.input}
    assert all(init.name in used for init in proto.graph.initializer)


def test_lstm_text_classifier(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Embedding(100, 8), tf.keras.layers.LSTM(16),
                                 tf.keras.layers.Dense(2, activation="softmax")])
    x = RNG.integers(0, 100, size=(4, 10)).astype("int32")
    _check(model, x, tmp_path, [tf.TensorSpec([None, 10], tf.int32)])


def test_gru_stack(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Embedding(50, 8),
                                 tf.keras.layers.GRU(12, return_sequences=True),
                                 tf.keras.layers.LSTM(4), tf.keras.layers.Dense(2)])
    x = RNG.integers(0, 50, size=(3, 7)).astype("int32")
    _check(model, x, tmp_path, [tf.TensorSpec([None, 7], tf.int32)])


def test_attention_functional_model(tmp_path):
    _check(attention_model(), RNG.normal(size=(4, 6, 8)).astype("float32"), tmp_path)


def test_norm_depthwise_and_pooling(tmp_path):
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(4, 3, input_shape=(9, 9, 3)),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.DepthwiseConv2D(3, padding="same", activation="relu6"),
        tf.keras.layers.AveragePooling2D(padding="same"),
        tf.keras.layers.MaxPooling2D(padding="same"),
        tf.keras.layers.GlobalMaxPooling2D(),
        tf.keras.layers.Dense(2, activation="tanh")])
    model.layers[1].set_weights([RNG.uniform(0.5, 2, 4).astype("float32") for _ in range(4)])
    _check(model, RNG.normal(size=(4, 9, 9, 3)).astype("float32"), tmp_path)


def test_subclassed_model(tmp_path):
    tf.random.set_seed(0)
    model = SequentialModel()
    model(np.zeros((1, 28, 28), "float32"))
    _check(model, RNG.normal(size=(4, 28, 28)).astype("float32"), tmp_path,
           [tf.TensorSpec([None, 28, 28])])


def test_tf_function_with_slicing(tmp_path):
    @tf.function(input_signature=[tf.TensorSpec([None, 5])])
    def f(x):
        return tf.nn.relu6(x[:, 1:4] * 3.0) + tf.reduce_max(x[..., ::2], axis=1, keepdims=True)

    _check(f, RNG.normal(size=(4, 5)).astype("float32") * 4, tmp_path, call=f)


def test_op_without_mapping_names_op_and_node(tmp_path):
    @tf.function(input_signature=[tf.TensorSpec([None, 4])])
    def f(x):
        return tf.math.cumsum(x, axis=1)

    with pytest.raises(errors.UnimplementedError, match=r"Cumsum.*test_onnx_export.py"):
        export(f, tmp_path / "f.onnx")
    assert not (tmp_path / "f.onnx").exists()


def test_only_batch_dimension_may_be_unknown(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="only the batch dimension"):
        export(model, tmp_path / "m.onnx", input_signature=[tf.TensorSpec([None, None])])


def test_command_line(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                                 tf.keras.layers.Dense(2)])
    model.save(tmp_path / "m.keras")
    out = subprocess.run([sys.executable, "-m", "tensorlite.onnx", str(tmp_path / "m.keras"),
                          str(tmp_path / "m.onnx"), "--opset", "18"],
                         capture_output=True, text=True, timeout=120, check=True)
    assert "wrote" in out.stdout
    x = RNG.normal(size=(3, 3)).astype("float32")
    session = _session(tmp_path / "m.onnx")
    got = session.run(None, {session.get_inputs()[0].name: x})[0]
    np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-5, atol=1e-6)


def test_reshape_to_a_shape_read_from_the_input(tmp_path):
    @tf.function(input_signature=[tf.TensorSpec([None, 3, 4])])
    def f(x):
        y = x * 2.0
        return tf.reshape(y, tf.stack([tf.shape(y)[0], -1]))

    proto = _check(f, RNG.normal(size=(3, 3, 4)).astype("float32"), tmp_path, call=f)
    assert [n.op_type for n in proto.graph.node] == ["Mul", "Reshape", "Identity"]


@pytest.mark.parametrize("equation", ["zbc,cde->zbde", "zbij,bjk->zbik", "zij,jk->zk",
                                      "zcd,zc->zd"])
def test_einsum(tmp_path, equation):
    sizes = dict(zip("bcdeijk", [3, 4, 2, 3, 5, 4, 3]))
    rng = np.random.default_rng(5)
    lhs, rhs = equation.split("->")[0].split(",")
    x = rng.normal(size=[4] + [sizes[c] for c in lhs[1:]]).astype("float32")
    if rhs.startswith("z"):  # both operands follow the batch: the second is x's square
        @tf.function(input_signature=[tf.TensorSpec([None] + list(x.shape[1:]))])
        def f(v):
            return tf.einsum(equation, v, v[:, :, 0] * v[:, :, 1])
    else:
        w = tf.constant(rng.normal(size=[sizes[c] for c in rhs]).astype("float32"))

        @tf.function(input_signature=[tf.TensorSpec([None] + list(x.shape[1:]))])
        def f(v):
            return tf.einsum(equation, v, w)
    proto = _check(f, x, tmp_path, call=f)
    assert "Einsum" in {n.op_type for n in proto.graph.node}


def test_mobilenet_v2_with_folded_batch_norm_matches_keras(tmp_path):
    """MobileNetV2's BatchNormalizations are folded into the convolution filters: no Mul
    in the file; onnxruntime gives the Keras model's outputs."""
    from tests.lite_helpers import mobilenet_v2_small  # noqa: PLC0415
    model = mobilenet_v2_small()
    proto = export(model, tmp_path / "mobilenet.onnx")
    ops = [n.op_type for n in proto.graph.node]
    assert "Mul" not in ops and ops.count("Conv") == 52
    session = _session(tmp_path / "mobilenet.onnx")
    x = RNG.uniform(-1, 1, (3, 96, 96, 3)).astype("float32")
    want = model(x, training=False).numpy()
    got = session.run(None, {session.get_inputs()[0].name: x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6 * float(np.abs(want).max()))


def test_batch_norm_folding_can_be_switched_off(tmp_path):
    from tests.lite_helpers import mobilenet_v2_small  # noqa: PLC0415
    before = tf.config.optimizer.get_experimental_options()
    tf.config.optimizer.set_experimental_options({"constant_folding": False})
    try:
        proto = export(mobilenet_v2_small(), tmp_path / "mobilenet.onnx")
    finally:
        tf.config.optimizer.set_experimental_options(before)
    assert [n.op_type for n in proto.graph.node].count("Mul") == 52
