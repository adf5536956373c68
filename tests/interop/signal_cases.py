"""tf.signal and complex-number cases run by both sides of test_signal_interop.py: each case
is a function of the framework module (`tf`: real TensorFlow in tf_signal_side.py,
tensorlite in the test) and the inputs, so both run the very same code. This module imports
neither framework.

`run_all(tf, inputs)` returns {name: output} and, for cases marked differentiable,
{name + "/grad": gradient of a fixed weighted sum of the output with respect to the first
input} (for complex inputs TensorFlow's convention: dL/dRe + i dL/dIm). Values only (None)
where TensorFlow itself has no working gradient: RFFT/IRFFT with an fft_length that cuts
the input (its rules assume the input is not cut) and the 3-D real transforms (no gradient
registered); tensorlite's gradients there are checked by finite differences in
tests/test_signal_ops.py.
"""
import numpy as np


def make_inputs():
    rng = np.random.default_rng(29)

    def cplx(*shape):
        return rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
    return {"x": rng.uniform(-1, 1, (2, 12)), "z": cplx(2, 3, 4), "y": cplx(2, 5),
            "pcm": rng.uniform(-1, 1, (2, 300)), "mel": rng.uniform(-3, 1, (2, 4, 10)),
            "spec": cplx(9, 9), "zr": np.array([[-2.0, 0.0, 1.5]])}


def _complex_cases():
    return {
        "complex": (lambda tf, d: tf.complex(d["x"], d["x"][::-1]), "x"),
        "real": (lambda tf, d: tf.math.real(d["z"]), "z"),
        "imag": (lambda tf, d: tf.math.imag(d["z"]), "z"),
        "conj": (lambda tf, d: tf.math.conj(d["z"]), "z"),
        "angle": (lambda tf, d: tf.math.angle(d["z"]), "z"),
        "angle_of_real": (lambda tf, d: tf.math.angle(d["zr"]), None),
        "abs": (lambda tf, d: tf.abs(d["z"]), "z"),
        "mul_exp_square": (lambda tf, d: tf.exp(d["z"]) * tf.square(d["z"]) /
                           tf.constant(0.5 - 2j, tf.complex128), "z"),
        "matmul": (lambda tf, d: tf.matmul(d["z"], d["z"], adjoint_b=True), "z"),
        "prod": (lambda tf, d: tf.reduce_prod(d["z"], axis=-1), "z"),
    }


def _fft_cases():
    return {
        "fft": (lambda tf, d: tf.signal.fft(d["z"]), "z"),
        "ifft": (lambda tf, d: tf.signal.ifft(d["z"]), "z"),
        "fft2d": (lambda tf, d: tf.signal.fft2d(d["z"]), "z"),
        "ifft2d": (lambda tf, d: tf.signal.ifft2d(d["z"]), "z"),
        "fft3d": (lambda tf, d: tf.signal.fft3d(d["z"]), "z"),
        "ifft3d": (lambda tf, d: tf.signal.ifft3d(d["z"]), "z"),
        "rfft": (lambda tf, d: tf.signal.rfft(d["x"]), "x"),
        "rfft_cut": (lambda tf, d: tf.signal.rfft(d["x"], [7]), None),
        "rfft_pad": (lambda tf, d: tf.signal.rfft(d["x"], [17]), "x"),
        "irfft": (lambda tf, d: tf.signal.irfft(d["y"]), "y"),
        "irfft_odd": (lambda tf, d: tf.signal.irfft(d["y"], [9]), "y"),
        "irfft_pad": (lambda tf, d: tf.signal.irfft(d["y"], [14]), "y"),
        "irfft_cut": (lambda tf, d: tf.signal.irfft(d["y"], [5]), None),
        "rfft2d": (lambda tf, d: tf.signal.rfft2d(d["x"], [2, 15]), "x"),
        "rfft2d_cut": (lambda tf, d: tf.signal.rfft2d(d["x"], [3, 10]), None),
        "irfft2d": (lambda tf, d: tf.signal.irfft2d(d["z"], [3, 7]), "z"),
        "rfft3d": (lambda tf, d: tf.signal.rfft3d(tf.math.real(d["z"]), [2, 3, 5]), None),
        "irfft3d": (lambda tf, d: tf.signal.irfft3d(d["z"], [2, 4, 6]), None),
        "fftshift": (lambda tf, d: tf.signal.fftshift(d["z"], axes=[1, 2]), "z"),
        "ifftshift": (lambda tf, d: tf.signal.ifftshift(d["x"]), "x"),
    }


def _spectral_cases():
    inverse = "inverse_stft_window_fn"
    return {
        "frame": (lambda tf, d: tf.signal.frame(d["x"], 5, 3), "x"),
        "frame_pad_end": (lambda tf, d: tf.signal.frame(d["x"], 5, 3, pad_end=True,
                                                        pad_value=0.5), "x"),
        "frame_axis0": (lambda tf, d: tf.signal.frame(d["mel"], 2, 1, axis=1), "mel"),
        "overlap_and_add": (lambda tf, d: tf.signal.overlap_and_add(d["mel"], 3), "mel"),
        "hann_periodic_even": (lambda tf, d: tf.signal.hann_window(8), None),
        "hann_periodic_odd": (lambda tf, d: tf.signal.hann_window(7), None),
        "hann_symmetric": (lambda tf, d: tf.signal.hann_window(7, periodic=False), None),
        "hamming": (lambda tf, d: tf.signal.hamming_window(10, dtype=tf.float64), None),
        "stft": (lambda tf, d: tf.signal.stft(d["pcm"], 64, 16), "pcm"),
        "stft_pad_end": (lambda tf, d: tf.signal.stft(d["pcm"], 50, 20, fft_length=64,
                                                      pad_end=True), "pcm"),
        "stft_cut": (lambda tf, d: tf.signal.stft(d["pcm"], 50, 20, fft_length=40), None),
        "stft_hamming": (lambda tf, d: tf.signal.stft(
            d["pcm"], 30, 10, window_fn=tf.signal.hamming_window), "pcm"),
        "inverse_stft": (lambda tf, d: tf.signal.inverse_stft(d["spec"], 16, 4), "spec"),
        "inverse_stft_window_fn": (lambda tf, d: tf.signal.inverse_stft(
            d["spec"], 12, 4, fft_length=16,
            window_fn=getattr(tf.signal, inverse)(4)), "spec"),
        "inverse_stft_long_frames": (lambda tf, d: tf.signal.inverse_stft(
            d["spec"], 20, 6, fft_length=16), "spec"),
        "mel_default": (lambda tf, d: tf.signal.linear_to_mel_weight_matrix(), None),
        "mel_16k": (lambda tf, d: tf.signal.linear_to_mel_weight_matrix(
            80, 513, 16000, 80.0, 7600.0), None),
        "mel_float64": (lambda tf, d: tf.signal.linear_to_mel_weight_matrix(
            10, 33, 8000, 0.0, 4000.0, dtype=tf.float64), None),
    }


def _mdct_cases():
    return {
        "kaiser": (lambda tf, d: tf.signal.kaiser_window(9, beta=5.0, dtype=tf.float64), None),
        "kaiser_default": (lambda tf, d: tf.signal.kaiser_window(16), None),
        "kbd": (lambda tf, d: tf.signal.kaiser_bessel_derived_window(12, dtype=tf.float64),
                None),
        "vorbis": (lambda tf, d: tf.signal.vorbis_window(10, dtype=tf.float64), None),
        "mdct": (lambda tf, d: tf.signal.mdct(d["pcm"], 16), "pcm"),
        "mdct_ortho_kbd_pad_end": (lambda tf, d: tf.signal.mdct(
            d["pcm"], 12, window_fn=tf.signal.kaiser_bessel_derived_window, pad_end=True,
            norm="ortho"), "pcm"),
        "mdct_no_window": (lambda tf, d: tf.signal.mdct(d["x"], 8, window_fn=None), "x"),
        "inverse_mdct": (lambda tf, d: tf.signal.inverse_mdct(d["mel"]), "mel"),
        "inverse_mdct_ortho": (lambda tf, d: tf.signal.inverse_mdct(d["mel"], norm="ortho"),
                               "mel"),
        "inverse_mdct_no_window": (lambda tf, d: tf.signal.inverse_mdct(d["mel"],
                                                                        window_fn=None), "mel"),
    }


def _dct_cases():
    cases = {}
    for t in (1, 2, 3, 4):
        for norm in (None, "ortho"):
            if t == 1 and norm:
                continue
            cases[f"dct{t}_{norm}"] = ((lambda t, norm: lambda tf, d: tf.signal.dct(
                d["mel"], type=t, norm=norm))(t, norm), "mel")
            cases[f"idct{t}_{norm}_n"] = ((lambda t, norm: lambda tf, d: tf.signal.idct(
                d["mel"], type=t, n=7, norm=norm))(t, norm), "mel")
    cases["mfccs"] = (lambda tf, d: tf.signal.mfccs_from_log_mel_spectrograms(d["mel"]), "mel")
    cases["mfcc_pipeline"] = (_mfcc_pipeline, "pcm")
    return cases


def _mfcc_pipeline(tf, d):
    stfts = tf.signal.stft(tf.cast(d["pcm"], tf.float32), frame_length=64, frame_step=32)
    mel = tf.tensordot(tf.abs(stfts), tf.signal.linear_to_mel_weight_matrix(
        12, 33, 8000, 100.0, 3800.0), 1)
    return tf.signal.mfccs_from_log_mel_spectrograms(tf.math.log(mel + 1e-6))[..., :5]


def cases():
    """{name: (fn(tf, inputs) -> tensor, name of the input to differentiate or None)}."""
    return {**_complex_cases(), **_fft_cases(), **_spectral_cases(), **_dct_cases(),
            **_mdct_cases()}


def _weights(shape, phase):
    return np.cos(np.arange(int(np.prod(shape))) * 0.7 + phase).reshape(shape)


def _weighted_sum(tf, out):
    shape = tuple(out.shape)
    real = tf.math.real(out) if out.dtype.is_complex else out
    w = tf.constant(_weights(shape, 0.0), real.dtype)
    loss = tf.reduce_sum(real * w)
    if out.dtype.is_complex:
        loss += tf.reduce_sum(tf.math.imag(out) * tf.constant(_weights(shape, 1.0), real.dtype))
    return loss


def run_all(tf, inputs):
    """Every case's output (and gradient) as NumPy arrays."""
    out = {}
    for name, (fn, wrt) in cases().items():
        data = {k: tf.constant(v) for k, v in inputs.items()}
        if wrt is None:
            out[name] = np.asarray(fn(tf, data))
            continue
        with tf.GradientTape() as tape:
            tape.watch(data[wrt])
            value = fn(tf, data)
            loss = _weighted_sum(tf, value)
        out[name] = np.asarray(value)
        out[name + "/grad"] = np.asarray(tape.gradient(loss, data[wrt]))
    return out
