"""Post-training quantization checked by LiteRT: dynamic-range int8 weights, full-integer
int8 (float, int8 and uint8 model ends) and float16 weights stay within the documented
error of the float model (tensorlite/lite/convert/quantize.py) and give its argmax on at
least 99% of a held-out set; the int8 CIFAR CNN is under 0.3x the float32 file."""
import numpy as np
import pytest

import tensorlite as tf

pytest.importorskip("ai_edge_litert", reason="ai-edge-litert is in the test extra")
from tests.lite_helpers import (dequantize_output, fitted_cifar_cnn, litert,  # noqa: E402
                                quantize_input, run, template_images)

HELD_OUT = 200


@pytest.fixture(scope="module")
def cnn():
    model = fitted_cifar_cnn()
    x, labels = template_images(HELD_OUT, 2)
    want = model(x).numpy()
    assert np.mean(want.argmax(1) == labels) > 0.8  # a real classifier
    float_size = len(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    return model, x, want, float_size


def _representative():
    for i in range(32):
        yield [template_images(1, 100 + i)[0]]


def _convert(model, **settings):
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    for key, value in settings.items():
        if key == "supported_types":
            converter.target_spec.supported_types = value
        else:
            setattr(converter, key, value)
    return converter.convert()


def _run_quantized(data, x):
    interpreter = litert(data, reference=False)
    d_in = interpreter.get_input_details()[0]
    got = run(interpreter, quantize_input(x, d_in))
    return dequantize_output(got, interpreter.get_output_details()[0])


@pytest.mark.parametrize("settings, bound, max_size", [
    ({}, 0.1, 0.3),
    ({"supported_types": [tf.float16]}, 3e-3, 0.55),
    ({"representative_dataset": _representative}, 0.1, 0.3),
    ({"representative_dataset": _representative, "inference_input_type": tf.int8,
      "inference_output_type": tf.int8}, 0.1, 0.3),
    ({"representative_dataset": _representative, "inference_input_type": tf.uint8,
      "inference_output_type": tf.uint8}, 0.1, 0.3),
], ids=["dynamic_range", "float16", "int8", "int8_io", "uint8_io"])
def test_quantized_cnn_in_litert(cnn, settings, bound, max_size):
    model, x, want, float_size = cnn
    data = _convert(model, **settings)
    assert len(data) < max_size * float_size
    got = _run_quantized(data, x)
    assert np.max(np.abs(got - want)) < bound
    assert np.mean(got.argmax(1) == want.argmax(1)) >= 0.99


def test_int8_tensors_and_io_types(cnn):
    from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415
    data = _convert(cnn[0], representative_dataset=_representative,
                    inference_input_type=tf.int8, inference_output_type=tf.int8)
    interpreter = Interpreter(model_content=data)
    details = interpreter.get_tensor_details()
    weights = [d for d in details if d["dtype"] == np.int8 and len(d["shape"]) == 4 and
               d["quantization_parameters"]["scales"].size > 1]
    assert weights, "convolution filters carry per-channel scales"
    assert interpreter.get_input_details()[0]["dtype"] == np.int8
    assert interpreter.get_output_details()[0]["quantization"] == (1 / 256, -128)


def test_integer_io_needs_a_representative_dataset():
    converter = tf.lite.TFLiteConverter.from_keras_model(
        tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))]))
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.inference_input_type = tf.int8
    with pytest.raises(ValueError, match="representative_dataset"):
        converter.convert()
