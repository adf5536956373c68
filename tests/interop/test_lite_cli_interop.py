"""`python -m tensorlite.lite` on files real TensorFlow wrote: Keras 3's exported CNN
SavedModel and its `.keras` MLP convert from the command line, and LiteRT runs the results
with TensorFlow's own outputs (float: 1e-5; full integer: within the int8 steps)."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.interop.conftest import run_tf
from tests.interop.shared_data import X, images

pytest.importorskip("ai_edge_litert", reason="ai-edge-litert is in the test extra")
from tests.lite_helpers import litert, run  # noqa: E402

pytestmark = pytest.mark.interop
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def convert(*flags):
    """Runs the converter's command line; returns the .tflite file's bytes."""
    out = flags[-1].split("=", 1)[1]
    done = subprocess.run([sys.executable, "-m", "tensorlite.lite", *flags],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stderr
    with open(out, "rb") as f:
        return f.read()


def test_tensorflow_savedmodel_from_the_command_line(tmp_path):
    run_tf("savedmodel_write", tmp_path, legacy_keras=False)
    expected = np.load(tmp_path / "savedmodel_expected.npz")["cnn_pred"]
    data = convert(f"--saved_model_dir={tmp_path / 'cnn'}",
                   f"--output_file={tmp_path / 'cnn.tflite'}")
    assert litert(data).get_signature_list()["serving_default"]["inputs"] == ["image"]
    np.testing.assert_allclose(run(litert(data), images()), expected, rtol=1e-5, atol=1e-5)
    np.save(tmp_path / "calibration.npy",
            np.concatenate([images(), -images(), images() * 0.5]))
    data = convert(f"--saved_model_dir={tmp_path / 'cnn'}",
                   f"--representative_dataset={tmp_path / 'calibration.npy'}",
                   f"--output_file={tmp_path / 'cnn_int8.tflite'}")
    np.testing.assert_allclose(run(litert(data), images()), expected, atol=0.1)


def test_keras3_file_from_the_command_line(tmp_path):
    run_tf("keras_write", tmp_path, legacy_keras=False)
    expected = np.load(tmp_path / "keras_expected.npz")["mlp_pred"]
    data = convert(f"--keras_model_file={tmp_path / 'mlp.keras'}",
                   f"--output_file={tmp_path / 'mlp.tflite'}")
    np.testing.assert_allclose(run(litert(data), X), expected, rtol=1e-5, atol=1e-5)
    data = convert(f"--keras_model_file={tmp_path / 'mlp.keras'}", "--quantize_to_float16",
                   f"--output_file={tmp_path / 'mlp_f16.tflite'}")
    np.testing.assert_allclose(run(litert(data), X), expected, rtol=1e-2, atol=1e-2)
