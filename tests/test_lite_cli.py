"""`python -m tensorlite.lite`, the converter's command line (tflite_convert's flags): a
SavedModel and a .keras file converted float, dynamic range, float16 and full integer, each
result run by LiteRT (the real TFLite runtime) against the Keras model's own outputs."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.lite.convert import cli

pytest.importorskip("ai_edge_litert")
from tests.lite_helpers import litert  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small classifier saved both ways, calibration samples and held-out inputs."""
    d = tmp_path_factory.mktemp("lite_cli")
    tf.random.set_seed(3)
    model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu",
                                                       input_shape=(32,)),
                                 tf.keras.layers.Dense(3)])
    model.save(str(d / "model.keras"))
    tf.saved_model.save(model, str(d / "exported"))
    rng = np.random.default_rng(0)
    np.save(d / "samples.npy", rng.normal(size=(64, 32)).astype("float32"))
    x = rng.normal(size=(16, 32)).astype("float32")
    return d, x, model(x).numpy()


def _litert_outputs(path, x):
    interpreter = litert(open(path, "rb").read())
    inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
    interpreter.resize_tensor_input(inp["index"], list(x.shape))
    interpreter.allocate_tensors()
    inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
    feed = x
    if inp["dtype"] != np.float32:  # integer input: quantize with the file's own parameters
        scale, zero = inp["quantization"]
        feed = np.clip(np.round(x / scale) + zero, -128, 127).astype(inp["dtype"])
    interpreter.set_tensor(inp["index"], feed)
    interpreter.invoke()
    y = interpreter.get_tensor(out["index"])
    if out["dtype"] != np.float32:
        scale, zero = out["quantization"]
        y = (y.astype(np.float32) - zero) * scale
    return inp["dtype"], y


def test_saved_model_dir_from_the_command_line(saved):
    d, x, expected = saved
    out = d / "float.tflite"
    result = subprocess.run([sys.executable, "-m", "tensorlite.lite",
                             f"--saved_model_dir={d / 'exported'}", f"--output_file={out}"],
                            capture_output=True, text=True, timeout=300, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr
    assert f"wrote {out}" in result.stdout
    dtype, y = _litert_outputs(out, x)
    assert dtype == np.float32
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("source", ["keras", "saved_model"])
@pytest.mark.parametrize("flags,tolerance", [
    ([], 1e-4),
    (["--post_training_quantize"], 0.15),
    (["--quantize_to_float16"], 0.02),
    (["--representative_dataset=SAMPLES", "--inference_input_type=int8",
      "--inference_output_type=int8"], 0.3),
])
def test_quantization_options_run_in_litert(saved, source, flags, tolerance):
    d, x, expected = saved
    out = d / f"{source}-{len(flags)}-{'_'.join(flags)[:20].strip('-=')}.tflite"
    model_flag = (f"--keras_model_file={d / 'model.keras'}" if source == "keras"
                  else f"--saved_model_dir={d / 'exported'}")
    flags = [f.replace("SAMPLES", str(d / "samples.npy")) for f in flags]
    assert cli.main([model_flag, f"--output_file={out}"] + flags) == 0
    dtype, y = _litert_outputs(out, x)
    assert dtype == (np.int8 if "--inference_input_type=int8" in flags else np.float32)
    np.testing.assert_allclose(y, expected, atol=tolerance)
    assert (y.argmax(1) == expected.argmax(1)).mean() >= 0.8
    sizes = {"--post_training_quantize": 0.6, "--quantize_to_float16": 0.7}
    if flags and flags[0] in sizes:  # the weights really are stored smaller
        plain = d / f"{source}-plain.tflite"
        cli.main([model_flag, f"--output_file={plain}"])
        assert out.stat().st_size < sizes[flags[0]] * plain.stat().st_size


def test_bad_flags_and_files_are_named(saved, capsys):
    d, _, _ = saved
    keras_file = f"--keras_model_file={d / 'model.keras'}"
    with pytest.raises(SystemExit) as e:
        cli.main([keras_file, "--output_file=x.tflite", "--inference_input_type=int8"])
    assert e.value.code == 2 and "--representative_dataset" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main([keras_file, "--output_file=x.tflite", "--post_training_quantize",
                  "--quantize_to_float16"])
    assert "not allowed with" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["--output_file=x.tflite"])
    assert "--saved_model_dir" in capsys.readouterr().err
    missing = d / "nothing.npy"
    out = d / "never.tflite"
    assert cli.main([keras_file, f"--output_file={out}",
                     f"--representative_dataset={missing}"]) == 1
    assert "is not a file" in capsys.readouterr().err and not out.exists()
    assert cli.main([f"--saved_model_dir={d}", f"--output_file={out}"]) == 1
    assert "cannot convert" in capsys.readouterr().err and not out.exists()


def test_two_inputs_calibrate_from_a_npz(tmp_path, capsys):
    a, b = tf.keras.Input((8,), name="a"), tf.keras.Input((4,), name="b")
    h = tf.keras.layers.Concatenate()([tf.keras.layers.Dense(16, activation="relu")(a), b])
    model = tf.keras.Model([a, b], tf.keras.layers.Dense(2)(h))
    model.save(str(tmp_path / "two.keras"))
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "two.npz", a=rng.normal(size=(64, 8)).astype("float32"),
             b=rng.normal(size=(64, 4)).astype("float32"))
    out = tmp_path / "two.tflite"
    assert cli.main([f"--keras_model_file={tmp_path / 'two.keras'}", f"--output_file={out}",
                     f"--representative_dataset={tmp_path / 'two.npz'}"]) == 0
    interpreter = litert(out.read_bytes())
    xa, xb = rng.normal(size=(1, 8)).astype("float32"), rng.normal(size=(1, 4)).astype("float32")
    for detail in interpreter.get_input_details():   # inputs told apart by their width
        interpreter.set_tensor(detail["index"], xa if detail["shape"][-1] == 8 else xb)
    interpreter.invoke()
    y = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    np.testing.assert_allclose(y, model([xa, xb]).numpy(), atol=0.15)
    np.save(tmp_path / "one.npy", np.zeros((4, 8), np.float32))
    assert cli.main([f"--keras_model_file={tmp_path / 'two.keras'}", f"--output_file={out}2",
                     f"--representative_dataset={tmp_path / 'one.npy'}"]) == 1
    assert "holds 1 array(s) but the model takes 2 input(s) ['a', 'b']" in \
        capsys.readouterr().err


def test_samples_of_the_wrong_shape_are_named(saved, capsys):
    d, _, _ = saved
    np.save(d / "narrow.npy", np.zeros((4, 31), np.float32))
    for source in (f"--keras_model_file={d / 'model.keras'}",
                   f"--saved_model_dir={d / 'exported'}"):
        assert cli.main([source, f"--output_file={d / 'never.tflite'}",
                         f"--representative_dataset={d / 'narrow.npy'}"]) == 1
        assert "samples of shape [31] do not fit input" in capsys.readouterr().err
    assert not (d / "never.tflite").exists()
