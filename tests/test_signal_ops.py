"""tf.signal against numpy.fft / scipy and TensorFlow's documented outputs: FFTs (values,
shape rules, gradients by finite differences, second order), framing, windows, STFT and its
inverse, mel filterbanks, DCTs, MFCCs, and the TF audio tutorial / MFCC docstring
pipelines."""
import numpy as np
import pytest
import scipy.fft
import scipy.signal

import tensorlite as tf
from tensorlite.framework import errors
from tests.complex_check import check_complex_grads
from tests.op_check import check_op, check_shape_rules, rand


def _z(*shape, seed=0):
    rng = np.random.default_rng([seed, *shape])
    return rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)


# -- FFT ops: values ---------------------------------------------------------------------------
C2C = [(tf.signal.fft, np.fft.fft, 1), (tf.signal.ifft, np.fft.ifft, 1),
       (tf.signal.fft2d, np.fft.fft2, 2), (tf.signal.ifft2d, np.fft.ifft2, 2),
       (tf.signal.fft3d, lambda a: np.fft.fftn(a, axes=(-3, -2, -1)), 3),
       (tf.signal.ifft3d, lambda a: np.fft.ifftn(a, axes=(-3, -2, -1)), 3)]


@pytest.mark.parametrize("fn, ref, rank", C2C, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_transforms_match_numpy(fn, ref, rank, dtype):
    z = _z(2, 3, 4, 5).astype(dtype)
    got = check_shape_rules(fn, [tf.constant(z)])
    assert got.dtype == tf.as_dtype(dtype) and got.shape == z.shape
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    np.testing.assert_allclose(got.numpy(), ref(z), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape, fft_length", [
    ((3, 8), None), ((3, 7), None), ((3, 8), [5]), ((3, 8), [12]), ((2, 1), [1])])
def test_rfft_irfft_match_numpy(shape, fft_length):
    x = rand(*shape, seed=1)
    n = None if fft_length is None else fft_length[0]
    got = check_shape_rules(lambda t: tf.signal.rfft(t, fft_length), [tf.constant(x)])
    assert got.dtype == tf.complex128
    np.testing.assert_allclose(got.numpy(), np.fft.rfft(x, n=n), atol=1e-12)
    y = np.fft.rfft(x, n=n)
    back = check_shape_rules(lambda t: tf.signal.irfft(t, fft_length), [tf.constant(y)])
    assert back.dtype == tf.float64
    np.testing.assert_allclose(back.numpy(), np.fft.irfft(y, n=n), atol=1e-12)


@pytest.mark.parametrize("fft_length", [None, [4, 6], [6, 9], [3, 3]])
def test_2d_and_3d_real_transforms_match_numpy(fft_length):
    x = rand(2, 5, 8, seed=2)
    got = tf.signal.rfft2d(tf.constant(x.astype(np.float32)), fft_length)
    assert got.dtype == tf.complex64
    np.testing.assert_allclose(got.numpy(), np.fft.rfft2(x, s=fft_length), rtol=1e-4, atol=1e-4)
    y = np.fft.rfft2(x)
    np.testing.assert_allclose(tf.signal.irfft2d(y, fft_length).numpy(),
                               np.fft.irfft2(y, s=fft_length), atol=1e-12)
    np.testing.assert_allclose(tf.signal.rfft3d(x).numpy(), np.fft.rfftn(x), atol=1e-12)
    np.testing.assert_allclose(tf.signal.irfft3d(np.fft.rfftn(x), [2, 5, 8]).numpy(), x,
                               atol=1e-12)


def test_python_lists_take_tf_preferred_dtypes():
    assert tf.signal.rfft([1.0, 2.0, 3.0]).dtype == tf.complex64
    assert tf.signal.fft([1.0, 2.0]).dtype == tf.complex64
    assert tf.signal.irfft([1.0, 2.0]).dtype == tf.float32


@pytest.mark.parametrize("call, match", [
    (lambda: tf.signal.fft(tf.constant([1.0, 2.0])), "FFT.*complex"),
    (lambda: tf.signal.rfft(tf.constant([1j])), "RFFT.*floating"),
    (lambda: tf.signal.rfft(tf.constant([1.0], tf.float16)), "float32 or float64"),
    (lambda: tf.signal.fft2d(tf.constant([1j, 2j])), "rank of at least 2"),
    (lambda: tf.signal.rfft(tf.constant(1.0)), "rank of at least 1"),
    (lambda: tf.signal.rfft(tf.constant([1.0, 2.0]), [2, 2]), "fft_length"),
    (lambda: tf.signal.irfft(tf.constant([1j, 2j]), [-1]), "fft_length"),
])
def test_bad_inputs_are_invalid_argument(call, match):
    with pytest.raises(errors.InvalidArgumentError, match=match):
        call()


def test_shape_rules_with_unknown_batch_dimension():
    f = tf.function(lambda x: tf.signal.irfft(tf.signal.rfft(x, [10]) * 2.0, [10]))
    cf = f.get_concrete_function(tf.TensorSpec([None, 8], tf.float32))
    assert cf.output_shapes.as_list() == [None, 10]
    x = rand(3, 8).astype(np.float32)
    np.testing.assert_allclose(cf(tf.constant(x)).numpy(),
                               np.fft.irfft(2 * np.fft.rfft(x, 10), 10), rtol=1e-5, atol=1e-5)


# -- FFT ops: gradients ------------------------------------------------------------------------
@pytest.mark.parametrize("fn, ref, rank", C2C, ids=lambda v: getattr(v, "__name__", str(v)))
def test_complex_transform_gradients(fn, ref, rank):
    shape = {1: (2, 5), 2: (3, 4), 3: (2, 2, 3)}[rank]
    check_complex_grads(fn, [_z(*shape, seed=4)])


@pytest.mark.parametrize("n_in, fft_length", [(6, None), (7, None), (6, [4]), (5, [8]), (6, [7])])
def test_rfft_gradient(n_in, fft_length):
    check_complex_grads(lambda x: tf.signal.rfft(x, fft_length), [rand(2, n_in, seed=5)])


@pytest.mark.parametrize("n_in, fft_length", [(4, None), (4, [7]), (4, [6]), (5, [4]), (3, [8])])
def test_irfft_gradient(n_in, fft_length):
    # the imaginary parts of the DC (and even-length Nyquist) bins do not reach the output:
    # their gradient is 0, which the differences confirm
    check_complex_grads(lambda y: tf.signal.irfft(y, fft_length), [_z(2, n_in, seed=6)])


@pytest.mark.parametrize("fn, shape", [
    (lambda x: tf.signal.rfft2d(x), (3, 4)), (lambda x: tf.signal.rfft2d(x, [2, 5]), (3, 4)),
    (lambda x: tf.signal.rfft3d(x, [2, 3, 3]), (2, 2, 4)),
])
def test_multi_dimensional_rfft_gradients(fn, shape):
    check_complex_grads(fn, [rand(*shape, seed=7)])


@pytest.mark.parametrize("fn, shape", [
    (lambda y: tf.signal.irfft2d(y), (3, 3)), (lambda y: tf.signal.irfft2d(y, [4, 5]), (3, 3)),
    (lambda y: tf.signal.irfft3d(y, [2, 2, 3]), (2, 2, 2)),
])
def test_multi_dimensional_irfft_gradients(fn, shape):
    check_complex_grads(fn, [_z(*shape, seed=8)])


def _real_chain(x):
    c = tf.constant(np.exp(1j * np.arange(5)))
    return tf.signal.irfft(tf.signal.rfft(x, [8]) * c, [9])


@pytest.mark.parametrize("tf_fn, np_fn", [
    (_real_chain, lambda x: np.fft.irfft(np.fft.rfft(x, 8) * np.exp(1j * np.arange(5)), 9)),
    (lambda x: tf.abs(tf.signal.rfft(x)) ** 2, lambda x: np.abs(np.fft.rfft(x)) ** 2),
    (lambda x: tf.math.real(tf.signal.ifft2d(tf.signal.fft2d(tf.complex(x, x * x)))),
     lambda x: x),
])
def test_second_order_gradients_and_batched_jacobians(tf_fn, np_fn):
    check_op(tf_fn, np_fn, [rand(2, 6, seed=9)], atol=1e-10)


def test_fftshift_matches_numpy():
    x = np.arange(30).reshape(5, 6)
    for axes in (None, 0, 1, (0, 1), [-1]):
        np.testing.assert_array_equal(tf.signal.fftshift(x, axes).numpy(),
                                      np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(tf.signal.ifftshift(x, axes).numpy(),
                                      np.fft.ifftshift(x, axes))
    check_op(lambda t: tf.signal.fftshift(t) * t, lambda a: np.fft.fftshift(a) * a,
             [rand(3, 5)])


# -- frame / overlap_and_add --------------------------------------------------------------------
def _np_frame(x, length, step, pad_end=False, pad_value=0, axis=-1):
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    if pad_end:
        frames = -(-n // step)
        extra = max(0, length + step * (frames - 1) - n)
        x = np.concatenate([x, np.full(x.shape[:-1] + (extra,), pad_value, x.dtype)], -1)
    else:
        frames = max(0, 1 + (n - length) // step)
    out = np.stack([x[..., i * step:i * step + length] for i in range(frames)], -2) \
        if frames else np.zeros(x.shape[:-1] + (0, length), x.dtype)
    return np.moveaxis(out, (-2, -1), (axis - 1, axis) if axis < 0 else (axis, axis + 1))


def test_frame_documented_example():
    # TF's docstring: a [3, 9152] batch framed at 512 / 180 gives [3, 49, 512]
    assert tf.signal.frame(tf.zeros([3, 9152]), 512, 180).shape == (3, 49, 512)
    np.testing.assert_array_equal(tf.signal.frame(tf.range(6), 3, 2).numpy(),
                                  [[0, 1, 2], [2, 3, 4]])


@pytest.mark.parametrize("length, step, pad_end, axis", [
    (4, 2, False, -1), (4, 3, True, -1), (5, 5, False, 1), (3, 1, True, 0), (20, 4, False, -1),
    (20, 4, True, -1), (2, 7, True, -1)])
def test_frame_matches_reference(length, step, pad_end, axis):
    x = rand(6, 13, 2, seed=10) if axis in (0, 1) else rand(2, 13, seed=10)
    got = tf.signal.frame(x, length, step, pad_end=pad_end, pad_value=-1.0, axis=axis)
    np.testing.assert_array_equal(got.numpy(), _np_frame(x, length, step, pad_end, -1.0, axis))


def test_frame_gradient_and_errors():
    check_op(lambda x: tf.signal.frame(x, 4, 3, pad_end=True) ** 2,
             lambda x: _np_frame(x, 4, 3, True) ** 2, [rand(2, 10)])
    for bad in (0, -2):
        with pytest.raises(errors.InvalidArgumentError, match="frame_length"):
            tf.signal.frame(tf.zeros([5]), bad, 1)
        with pytest.raises(errors.InvalidArgumentError, match="frame_step"):
            tf.signal.frame(tf.zeros([5]), 2, bad)
    with pytest.raises(errors.InvalidArgumentError, match="axis"):
        tf.signal.frame(tf.zeros([5]), 2, 1, axis=1)


def _np_overlap_add(frames, step):
    count, length = frames.shape[-2:]
    out = np.zeros(frames.shape[:-2] + (length + step * (count - 1),), frames.dtype)
    for i in range(count):
        out[..., i * step:i * step + length] += frames[..., i, :]
    return out


@pytest.mark.parametrize("shape, step", [((4, 6), 2), ((2, 5, 7), 3), ((3, 4), 4), ((3, 3), 5),
                                         ((1, 6), 2)])
def test_overlap_and_add_matches_reference_and_differentiates(shape, step):
    check_op(lambda f: tf.signal.overlap_and_add(f, step),
             lambda f: _np_overlap_add(f, step), [rand(*shape, seed=11)])


def test_overlap_and_add_is_the_adjoint_of_frame():
    x, f = rand(2, 17, seed=12), rand(2, 7, 5, seed=13)
    framed = tf.signal.frame(x, 5, 2).numpy()
    assert framed.shape == f.shape
    np.testing.assert_allclose(np.sum(framed * f),
                               np.sum(x * tf.signal.overlap_and_add(f, 2).numpy()))


# -- windows -------------------------------------------------------------------------------------
@pytest.mark.parametrize("tf_fn, name", [(tf.signal.hann_window, "hann"),
                                         (tf.signal.hamming_window, "hamming")])
@pytest.mark.parametrize("length", [1, 2, 7, 8, 255])
def test_windows_match_scipy(tf_fn, name, length):
    sym = scipy.signal.get_window(name, length, fftbins=False)
    np.testing.assert_allclose(tf_fn(length, periodic=False, dtype=tf.float64).numpy(), sym,
                               atol=1e-12)
    # TF: a periodic window of odd length is the symmetric one (N = length - 1), as its code
    # computes N = length + periodic * even - 1
    want = scipy.signal.get_window(name, length, fftbins=True) if length % 2 == 0 else sym
    got = tf_fn(length)
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), want if length > 1 else [1.0], atol=1e-6)


def test_window_rejects_integer_dtype():
    with pytest.raises(ValueError, match="floating"):
        tf.signal.hann_window(4, dtype=tf.int32)


# -- stft / inverse_stft -------------------------------------------------------------------------
def test_audio_tutorial_spectrogram_shape():
    # TF's "simple audio recognition" tutorial: 16000 samples -> (124, 129) magnitudes
    waveform = tf.random.normal([16000], seed=1)
    spectrogram = tf.abs(tf.signal.stft(waveform, frame_length=255, frame_step=128))
    assert spectrogram.shape == (124, 129) and spectrogram.dtype == tf.float32
    assert tf.signal.stft(waveform, 255, 128).dtype == tf.complex64


def _np_stft(x, length, step, fft_length, pad_end=False):
    window = scipy.signal.get_window("hann", length, fftbins=True) if length % 2 == 0 else \
        scipy.signal.get_window("hann", length, fftbins=False)
    return np.fft.rfft(_np_frame(x, length, step, pad_end) * window, fft_length)


@pytest.mark.parametrize("length, step, fft_length, pad_end", [
    (16, 4, None, False), (15, 5, 32, True), (20, 8, 16, False), (8, 8, 8, True)])
def test_stft_matches_reference(length, step, fft_length, pad_end):
    x = rand(2, 100, seed=14)
    got = tf.signal.stft(x, length, step, fft_length, pad_end=pad_end)
    n = fft_length or 1 << (length - 1).bit_length()
    assert got.dtype == tf.complex128
    np.testing.assert_allclose(got.numpy(), _np_stft(x, length, step, n, pad_end), atol=1e-12)


def test_stft_matches_scipy_signal():
    x = rand(400, seed=15)
    length, step = 64, 16
    window = scipy.signal.get_window("hann", length)  # periodic, as TF's default
    _, _, z = scipy.signal.stft(x, window=window, nperseg=length, noverlap=length - step,
                                boundary=None, padded=False, detrend=False)
    z = z.T * window.sum()  # scipy divides by the window's sum and puts time last
    np.testing.assert_allclose(tf.signal.stft(x, length, step).numpy(), z, atol=1e-10)


def test_inverse_stft_reconstructs_and_matches_reference():
    x = rand(2, 300, seed=16)
    length, step = 32, 8
    stfts = tf.signal.stft(x, length, step)
    back = tf.signal.inverse_stft(stfts, length, step,
                                  window_fn=tf.signal.inverse_stft_window_fn(step))
    # every sample that frames cover fully (away from the ends) comes back exactly
    inner = slice(length, back.shape[-1] - length)
    np.testing.assert_allclose(back.numpy()[:, inner], x[:, inner], atol=1e-12)
    # plain hann synthesis window: irfft, cut to frame_length, window, overlap-add
    frames = np.fft.irfft(stfts.numpy(), 32)[..., :length] * \
        scipy.signal.get_window("hann", length)
    np.testing.assert_allclose(tf.signal.inverse_stft(stfts, length, step).numpy(),
                               _np_overlap_add(frames, step), atol=1e-12)


def test_inverse_stft_frame_length_above_fft_length_pads():
    stfts = tf.constant(_z(5, 5, seed=17))
    got = tf.signal.inverse_stft(stfts, 10, 4, fft_length=8, window_fn=None)
    frames = np.concatenate([np.fft.irfft(stfts.numpy(), 8), np.zeros((5, 2))], -1)
    np.testing.assert_allclose(got.numpy(), _np_overlap_add(frames, 4), atol=1e-12)


def test_stft_and_inverse_stft_gradients():
    check_op(lambda x: tf.abs(tf.signal.stft(x, 8, 4, pad_end=True)),
             lambda x: np.abs(_np_stft(x, 8, 4, 8, True)), [rand(2, 20, seed=18)], order=1)
    check_complex_grads(lambda s: tf.signal.inverse_stft(s, 6, 2, fft_length=8),
                        [_z(4, 5, seed=19)])


# -- mel filterbank ------------------------------------------------------------------------------
def _htk_mel(f):
    return 1127.0 * np.log(1.0 + f / 700.0)


def _np_mel_matrix(num_mel, num_bins, rate, lower, upper):
    """An independent float64 reading of TF's construction: triangles linear in mel between
    evenly spaced mel edges, evaluated at the spectrogram bins' frequencies, DC bin zero."""
    freqs = np.linspace(0, rate / 2, num_bins)
    edges = np.linspace(_htk_mel(lower), _htk_mel(upper), num_mel + 2)
    out = np.zeros((num_bins, num_mel))
    for b in range(1, num_bins):
        m = _htk_mel(freqs[b])
        for j in range(num_mel):
            lo, c, hi = edges[j:j + 3]
            out[b, j] = max(0.0, min((m - lo) / (c - lo), (hi - m) / (hi - c)))
    return out


@pytest.mark.parametrize("args", [(), (80, 513, 16000, 80.0, 7600.0), (10, 33, 8000, 0.0, 4000.0)])
def test_mel_matrix_matches_htk_construction(args):
    got = tf.signal.linear_to_mel_weight_matrix(*args)
    want = _np_mel_matrix(*(args or (20, 129, 8000, 125.0, 3800.0)))
    assert got.dtype == tf.float32 and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, atol=2e-5)
    assert np.all(got.numpy()[0] == 0)  # HTK: the DC bin carries no weight
    got64 = tf.signal.linear_to_mel_weight_matrix(*args, dtype=tf.float64)
    np.testing.assert_allclose(got64.numpy(), want, atol=1e-10)


@pytest.mark.parametrize("kwargs, match", [
    ({"num_mel_bins": 0}, "num_mel_bins"), ({"lower_edge_hertz": -1.0}, "non-negative"),
    ({"lower_edge_hertz": 500.0, "upper_edge_hertz": 400.0}, ">="),
    ({"upper_edge_hertz": 5000.0}, "Nyquist"), ({"sample_rate": 0}, "sample_rate"),
    ({"dtype": tf.int32}, "floating")])
def test_mel_matrix_validates_like_tf(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tf.signal.linear_to_mel_weight_matrix(**kwargs)


# -- DCT / MFCC ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dct_type", [1, 2, 3, 4])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_dct_and_idct_match_scipy(dct_type, norm):
    if dct_type == 1 and norm == "ortho":
        with pytest.raises(ValueError, match="type-I"):
            tf.signal.dct(tf.zeros([4]), type=1, norm="ortho")
        return
    x = rand(3, 7, seed=20)
    check_op(lambda t: tf.signal.dct(t, type=dct_type, norm=norm),
             lambda a: scipy.fft.dct(a, type=dct_type, norm=norm), [x], atol=1e-10)
    for n in (4, 9):
        np.testing.assert_allclose(tf.signal.dct(x, type=dct_type, n=n, norm=norm).numpy(),
                                   scipy.fft.dct(x, type=dct_type, n=n, norm=norm), atol=1e-10)
    inverse = tf.signal.idct(tf.signal.dct(x, type=dct_type, norm=norm), type=dct_type,
                             norm=norm).numpy()
    scale = 1.0 if norm else (2 * (7 - 1) if dct_type == 1 else 2 * 7)  # TF's documented scale
    np.testing.assert_allclose(inverse, scale * x, atol=1e-10)
    np.testing.assert_allclose(tf.signal.dct(x[0], type=dct_type, norm=norm).numpy(),
                               scipy.fft.dct(x[0], type=dct_type, norm=norm), atol=1e-10)


@pytest.mark.parametrize("kwargs, exc", [({"axis": 0}, NotImplementedError),
                                         ({"type": 5}, ValueError), ({"norm": "l2"}, ValueError),
                                         ({"n": 0}, ValueError)])
def test_dct_rejects_what_tf_rejects(kwargs, exc):
    with pytest.raises(exc):
        tf.signal.dct(tf.zeros([2, 4]), **kwargs)


def test_mfccs_are_scaled_dct2():
    x = rand(2, 3, 40, seed=21)
    check_op(tf.signal.mfccs_from_log_mel_spectrograms,
             lambda a: scipy.fft.dct(a, type=2) / np.sqrt(2 * 40), [x], atol=1e-10)
    with pytest.raises(ValueError, match="num_mel_bins"):
        tf.signal.mfccs_from_log_mel_spectrograms(tf.zeros([3, 0]))


def _mfcc_pipeline(pcm, sample_rate=16000.0):
    # TF's mfccs_from_log_mel_spectrograms docstring
    stfts = tf.signal.stft(pcm, frame_length=1024, frame_step=256, fft_length=1024)
    spectrograms = tf.abs(stfts)
    num_spectrogram_bins = stfts.shape[-1]
    lower_edge_hertz, upper_edge_hertz, num_mel_bins = 80.0, 7600.0, 80
    linear_to_mel_weight_matrix = tf.signal.linear_to_mel_weight_matrix(
        num_mel_bins, num_spectrogram_bins, sample_rate, lower_edge_hertz, upper_edge_hertz)
    mel_spectrograms = tf.tensordot(spectrograms, linear_to_mel_weight_matrix, 1)
    mel_spectrograms.set_shape(spectrograms.shape[:-1].concatenate(
        linear_to_mel_weight_matrix.shape[-1:]))
    log_mel_spectrograms = tf.math.log(mel_spectrograms + 1e-6)
    return tf.signal.mfccs_from_log_mel_spectrograms(log_mel_spectrograms)[..., :13]


def test_mfcc_pipeline_from_tf_docstring():
    pcm = tf.random.normal([2, 32000], dtype=tf.float32, seed=2)
    mfccs = _mfcc_pipeline(pcm)
    assert mfccs.shape == (2, 122, 13) and mfccs.dtype == tf.float32
    x = pcm.numpy().astype(np.float64)
    spec = np.abs(_np_stft(x, 1024, 256, 1024))
    mel = spec @ _np_mel_matrix(80, 513, 16000.0, 80.0, 7600.0)
    want = scipy.fft.dct(np.log(mel + 1e-6), type=2)[..., :13] / np.sqrt(160)
    np.testing.assert_allclose(mfccs.numpy(), want, rtol=1e-3, atol=1e-3)
    graph = tf.function(_mfcc_pipeline)(pcm)
    np.testing.assert_allclose(graph.numpy(), mfccs.numpy(), rtol=1e-5, atol=1e-5)


def test_mfcc_pipeline_gradient():
    def pipeline(pcm):
        stfts = tf.signal.stft(pcm, frame_length=16, frame_step=8)
        mel = tf.tensordot(tf.abs(stfts), tf.signal.linear_to_mel_weight_matrix(
            6, 9, 8000, 100.0, 3800.0, dtype=tf.float64), 1)
        return tf.signal.mfccs_from_log_mel_spectrograms(tf.math.log(mel + 1e-3))
    tf.test.check_grads(pipeline, [rand(2, 40, seed=22)], order=1)


def test_signal_ops_on_keras_inputs_become_layers():
    inputs = tf.keras.Input(shape=(64,))
    spectrogram = tf.abs(tf.signal.stft(inputs, frame_length=16, frame_step=8))
    model = tf.keras.Model(inputs, spectrogram)
    assert "tf.signal.stft" in [layer.name for layer in model.layers]
    x = rand(3, 64, seed=23).astype(np.float32)
    np.testing.assert_allclose(model(x).numpy(), np.abs(_np_stft(x, 16, 8, 16)), rtol=1e-4,
                               atol=1e-4)


class FeatureModule(tf.Module):
    """Log-mel features and an inverse/complex path, exported as a SavedModel."""

    @tf.function(input_signature=[tf.TensorSpec([None, 400], tf.float32)])
    def __call__(self, pcm):
        stfts = tf.signal.stft(pcm, frame_length=64, frame_step=32)
        mel = tf.tensordot(tf.abs(stfts), tf.signal.linear_to_mel_weight_matrix(
            8, 33, 8000, 100.0, 3800.0), 1)
        back = tf.signal.inverse_stft(stfts, 64, 32)
        z = tf.complex(pcm, -pcm)
        rest = tf.math.angle(tf.signal.ifft(tf.signal.fft2d(z[None]))[0]) + \
            tf.reshape(tf.signal.irfft2d(tf.signal.rfft2d(tf.reshape(pcm, [-1, 20, 20]))),
                       [-1, 400])
        return {"mfcc": tf.signal.mfccs_from_log_mel_spectrograms(tf.math.log(mel + 1e-6)),
                "back": back, "rest": rest}


def test_saved_model_writes_tf_fft_nodes_and_loads_back(tmp_path):
    from tensorlite.saved_model.protos import SavedModel  # noqa: PLC0415
    module = FeatureModule()
    path = str(tmp_path / "features")
    tf.saved_model.save(module, path, signatures=module.__call__)
    meta = SavedModel.FromString(open(f"{path}/saved_model.pb", "rb").read()).meta_graphs[0]
    nodes = {n.op: n for f in meta.graph_def.library.function for n in f.node_def}
    assert {"RFFT", "IRFFT", "ComplexAbs", "Complex", "FFT2D", "IFFT", "Angle", "RFFT2D",
            "IRFFT2D"} <= set(nodes)
    assert nodes["RFFT"].attr["Tcomplex"].type == 8  # DT_COMPLEX64
    assert nodes["ComplexAbs"].attr["Tout"].type == 1  # DT_FLOAT
    pcm = rand(2, 400, seed=24).astype(np.float32)
    loaded = tf.saved_model.load(path)
    got, want = loaded(pcm), module(pcm)
    for key in ("mfcc", "back", "rest"):
        np.testing.assert_allclose(got[key].numpy(), want[key].numpy(), rtol=1e-5, atol=1e-5)


def test_saved_model_refuses_an_fft_length_that_follows_the_batch_size(tmp_path):
    module = tf.Module()
    module.f = tf.function(lambda x: tf.abs(tf.signal.rfft2d(x)),
                           input_signature=[tf.TensorSpec([None, 8], tf.float32)])
    with pytest.raises(errors.UnimplementedError, match="RFFT2D's fft_length"):
        tf.saved_model.save(module, str(tmp_path / "m"), signatures=module.f)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("pad_end", [False, True])
def test_frame_and_stft_count_frames_at_run_time_in_polymorphic_graphs(pad_end):
    # one graph for every length: the number of frames is computed from tf.shape, as in TF
    frames = tf.function(lambda x: tf.signal.frame(x, 4, 3, pad_end=pad_end, axis=0),
                         input_signature=[tf.TensorSpec([None, 2], tf.float64)])
    spectra = tf.function(lambda x: tf.abs(tf.signal.stft(x, 8, 4, pad_end=pad_end)),
                          input_signature=[tf.TensorSpec([2, None], tf.float64)])
    for n in (9, 10, 11, 13, 2, 0):
        x = rand(n, 2, seed=n)
        np.testing.assert_array_equal(frames(x).numpy(), _np_frame(x, 4, 3, pad_end, 0, 0))
        if n:
            y = rand(2, n + 10, seed=n)
            np.testing.assert_allclose(spectra(y).numpy(),
                                       np.abs(_np_stft(y, 8, 4, 8, pad_end)), atol=1e-12)
    assert frames.experimental_get_tracing_count() == 1
    assert spectra.experimental_get_tracing_count() == 1


# -- more windows, MDCT --------------------------------------------------------------------------
def test_kaiser_kbd_and_vorbis_windows():
    np.testing.assert_allclose(tf.signal.kaiser_window(9, beta=5.0, dtype=tf.float64).numpy(),
                               scipy.signal.windows.kaiser(9, 5.0, sym=True), atol=1e-12)
    assert tf.signal.kaiser_window(16).dtype == tf.float32
    kbd = tf.signal.kaiser_bessel_derived_window(12, dtype=tf.float64).numpy()
    np.testing.assert_allclose(kbd, scipy.signal.windows.kaiser_bessel_derived(12, 12.0),
                               atol=1e-12)
    n = np.arange(10)
    vorbis = tf.signal.vorbis_window(10, dtype=tf.float64).numpy()
    np.testing.assert_allclose(vorbis, np.sin(np.pi / 2 * np.sin(np.pi * (n + 0.5) / 10) ** 2))
    for w in (kbd, vorbis):  # power complementary (Princen-Bradley): perfect MDCT synthesis
        half = len(w) // 2
        np.testing.assert_allclose(w[:half] ** 2 + w[half:] ** 2, 1.0, atol=1e-12)


@pytest.mark.parametrize("window_fn", [tf.signal.vorbis_window,
                                       tf.signal.kaiser_bessel_derived_window])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_mdct_round_trip_reconstructs_overlapped_samples(window_fn, norm):
    x = rand(2, 64, seed=25)
    coeffs = tf.signal.mdct(x, 16, window_fn=window_fn, norm=norm)
    assert coeffs.shape == (2, 7, 8) and coeffs.dtype == tf.float64
    back = tf.signal.inverse_mdct(coeffs, window_fn=window_fn, norm=norm).numpy()
    np.testing.assert_allclose(back[:, 8:-8], x[:, 8:56], atol=1e-12)  # all but the ends


def test_mdct_matches_its_definition_and_differentiates():
    # X_k = sum_n w_n x_n cos(pi / N (n + 1/2 + N / 2)(k + 1/2)) for frames of 2N samples
    x, big_n = rand(24, seed=26), 4
    w = tf.signal.vorbis_window(2 * big_n, dtype=tf.float64).numpy()
    n, k = np.arange(2 * big_n)[:, None], np.arange(big_n)[None, :]
    basis = np.cos(np.pi / big_n * (n + 0.5 + big_n / 2) * (k + 0.5))
    want = np.stack([(x[i:i + 2 * big_n] * w) @ basis for i in range(0, 24 - 2 * big_n + 1,
                                                                       big_n)]) * 2
    np.testing.assert_allclose(tf.signal.mdct(x, 2 * big_n).numpy(), want, atol=1e-12)
    # (values: the definition above and the interop test; these check gradients, second
    # order, batched jacobians and shape rules)
    check_op(lambda t: tf.signal.mdct(t, 8, norm="ortho"),
             lambda t: tf.signal.mdct(t, 8, norm="ortho").numpy(), [rand(2, 20, seed=27)])
    check_op(lambda t: tf.signal.inverse_mdct(t), lambda t: tf.signal.inverse_mdct(t).numpy(),
             [rand(3, 4, seed=28)])
    with pytest.raises(ValueError, match="multiple of 4"):
        tf.signal.mdct(tf.zeros([16]), 6)
