"""tf.signal and the complex-number basics against real TensorFlow: the same code
(signal_cases.py) runs under both, and every output and gradient (TensorFlow's complex
convention) must match; and TensorFlow loads and runs a SavedModel whose graph tensorlite
wrote with FFT, RFFT, IRFFT, ComplexAbs, Complex, Angle, Real, Imag and Conj nodes."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop import signal_cases

pytestmark = pytest.mark.interop

TF_SIGNAL_SIDE = __file__.replace("test_signal_interop.py", "tf_signal_side.py")
CASES = sorted(signal_cases.cases())


@pytest.fixture(scope="module")
def tf_values(tmp_path_factory):
    from tests.interop.conftest import run_tf  # noqa: PLC0415
    d = tmp_path_factory.mktemp("signal")
    np.savez(d / "inputs.npz", **signal_cases.make_inputs())
    facts = run_tf("values", d, script=TF_SIGNAL_SIDE)
    got = dict(np.load(d / "tf_out.npz"))
    assert facts["names"] == sorted(got)
    return got


@pytest.fixture(scope="module")
def ours():
    return signal_cases.run_all(tf, signal_cases.make_inputs())


FLOAT32_INSIDE = {"mfcc_pipeline"}  # float64 in and out (its gradient), float32 between


def _close(got, want, what, float32=False):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, TensorFlow's {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, TensorFlow's {want.dtype}"
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    # float32: a few ulps of log/cos differ between NumPy and Eigen (the mel matrix divides
    # mel differences of ~2000 by band widths of ~30, so 2 ulps show as ~1.5e-5)
    float32 = float32 or want.dtype in (np.float32, np.complex64)
    tol = 5e-5 if float32 else 1e-9
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=what)


@pytest.mark.parametrize("name", CASES)
def test_outputs_and_gradients_match_tensorflow(tf_values, ours, name):
    _close(ours[name], tf_values[name], name)
    if name + "/grad" in tf_values:
        _close(ours[name + "/grad"], tf_values[name + "/grad"], name + " gradient",
               float32=name in FLOAT32_INSIDE)
    else:  # TF has no working gradient here; ours is checked by finite differences
        assert signal_cases.cases()[name][1] is None


class SpectralFeatures(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 300], tf.float32)])
    def serve(self, pcm):
        stfts = tf.signal.stft(pcm, frame_length=64, frame_step=32)
        mel = tf.tensordot(tf.abs(stfts), tf.signal.linear_to_mel_weight_matrix(
            12, 33, 8000, 100.0, 3800.0), 1)
        z = tf.complex(pcm, pcm * 0.5)
        return {"mfcc": tf.signal.mfccs_from_log_mel_spectrograms(tf.math.log(mel + 1e-6)),
                "back": tf.signal.inverse_stft(stfts, 64, 32),
                "phase": tf.math.angle(z + 0.25),
                "spectrum": tf.abs(tf.signal.ifft(tf.signal.fft(z))),
                "parts": tf.math.real(z) * tf.math.imag(tf.math.conj(z)),
                "spectrum2d": tf.abs(tf.signal.rfft2d(tf.reshape(pcm, [-1, 15, 20])))}


def test_tensorflow_runs_a_savedmodel_with_tensorlite_fft_nodes(tmp_path):
    from tests.interop.conftest import run_tf  # noqa: PLC0415
    module = SpectralFeatures()
    tf.saved_model.save(module, str(tmp_path / "model"), signatures=module.serve)
    pcm = np.random.default_rng(5).uniform(-1, 1, (3, 300)).astype(np.float32)
    np.save(tmp_path / "pcm.npy", pcm)
    facts = run_tf("load", tmp_path, script=TF_SIGNAL_SIDE)
    want = module.serve(tf.constant(pcm))
    assert facts["outputs"] == sorted(want)
    got = dict(np.load(tmp_path / "tf_load.npz"))
    for key, value in want.items():
        _close(value.numpy(), got[key], key)
