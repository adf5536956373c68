"""SavedModels written by real TensorFlow convert to TF Lite: `TFLiteConverter.from_saved_model`
(and seed 004's `convert_savedmodel.convert(saved_model_dir=..., output_tflite=...)`) on
Keras 3's exported MLP and CNN and on a tf.Module saved with tf.saved_model.save; LiteRT and
tensorlite's interpreter run the files with TensorFlow's outputs (1e-5), at batch 1 and at
the full batch, under the SavedModel's signature names."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.lite.interpreter import Interpreter
from tests.interop.conftest import run_tf
from tests.interop.shared_data import X, images

pytest.importorskip("ai_edge_litert", reason="ai-edge-litert is in the test extra")
from tests.lite_helpers import (builtin_ops, every_int8_tensor_matches, litert,  # noqa: E402
                                run)

pytestmark = pytest.mark.interop
MODELS = [("mlp", X, "mlp_pred"), ("cnn", images(), "cnn_pred"), ("scorer", X, "scorer")]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    directory = tmp_path_factory.mktemp("savedmodels")
    run_tf("savedmodel_write", directory, legacy_keras=False)
    return directory, np.load(directory / "savedmodel_expected.npz")


@pytest.mark.parametrize("name, x, key", MODELS, ids=[m[0] for m in MODELS])
def test_tensorflow_savedmodel_in_litert_and_ours(written, name, x, key):
    directory, expected = written
    data = tf.lite.TFLiteConverter.from_saved_model(str(directory / name)).convert()
    for batch in (x[:1], x):
        want = expected[key][:len(batch)]
        for interpreter in (litert(data), Interpreter(model_content=data)):
            if isinstance(interpreter, Interpreter):
                interpreter.allocate_tensors()
            np.testing.assert_allclose(run(interpreter, batch), want, rtol=1e-5, atol=1e-5)


def test_signature_names_and_fused_ops(written):
    directory, _ = written
    data = tf.lite.TFLiteConverter.from_saved_model(str(directory / "cnn")).convert()
    signatures = litert(data).get_signature_list()
    assert signatures == {"serving_default": {"inputs": ["image"], "outputs": ["output_0"]}}
    ops = builtin_ops(data)
    assert ops.count("CONV_2D") == 2 and "SHAPE" not in ops  # Flatten's shape read: folded
    runner = Interpreter(model_content=data).get_signature_runner()
    out = runner(image=images())
    np.testing.assert_allclose(out["output_0"], written[1]["cnn_pred"], rtol=1e-5, atol=1e-5)


def test_seed_convert_spelling_and_quantized(written, tmp_path):
    directory, expected = written
    out = tmp_path / "cnn.tflite"
    data = tf.lite.convert_savedmodel.convert(saved_model_dir=str(directory / "cnn"),
                                              output_tflite=str(out))
    assert out.read_bytes() == data
    np.testing.assert_allclose(run(litert(data), images()), expected["cnn_pred"], rtol=1e-5,
                               atol=1e-5)
    converter = tf.lite.TFLiteConverter.from_saved_model(str(directory / "mlp"))
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    got = run(litert(converter.convert()), X)
    assert np.max(np.abs(got - expected["mlp_pred"])) < 0.05


def test_unknown_signature_key_and_several_keys(written):
    directory, _ = written
    with pytest.raises(ValueError, match="Invalid signature key 'nope'.*serving_default"):
        tf.lite.TFLiteConverter.from_saved_model(str(directory / "mlp"), signature_keys=["nope"])
    with pytest.raises(NotImplementedError, match="one signature"):
        tf.lite.TFLiteConverter.from_saved_model(str(directory / "mlp"),
                                                 signature_keys=["a", "b"])


def test_full_integer_savedmodel_in_litert(written):
    # the CNN's heads (TANH at its fixed 1/128 scale, a linear Dense) meet in an int8
    # CONCATENATION, which needs both inputs requantized to its own scale
    directory, expected = written
    x = images()
    converter = tf.lite.TFLiteConverter.from_saved_model(str(directory / "cnn"))
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: ([x[i:i + 1]] for i in range(len(x)))
    data = converter.convert()
    interpreter = litert(data)
    assert "CONCATENATION" in [d["op_name"] for d in interpreter._get_ops_details()]
    got = run(interpreter, x)
    assert np.max(np.abs(got - expected["cnn_pred"])) < 0.05
    # ours: every int8 tensor (BatchNormalization's MUL and ADD, TANH, the requantized
    # CONCATENATION inputs) as LiteRT's reference kernels compute it
    assert len(every_int8_tensor_matches(data, x)) > 15
