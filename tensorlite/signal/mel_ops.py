"""`tf.signal.linear_to_mel_weight_matrix`: TensorFlow's HTK-style mel filterbank."""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import constant

# HTK's mel scale: mel = 1127 ln(1 + hertz / 700)
_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hertz, dt):
    return dt(_MEL_HIGH_FREQUENCY_Q) * np.log(dt(1.0) + hertz / dt(_MEL_BREAK_FREQUENCY_HERTZ))


def _linspace(start, stop, num, dt):
    # TensorFlow's LinSpace: start + i * step in the dtype, the last value exactly `stop`
    if num == 1:
        return np.array([start], dt)
    step = dt((stop - start) / dt(num - 1))
    out = (dt(start) + np.arange(num).astype(dt) * step).astype(dt)
    out[-1] = stop
    return out


def _validate(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz, dtype):
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz "
                         f"{upper_edge_hertz:.1f}")
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency "
                         f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: "
                         f"{sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype.name}")


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=dtypes.float32, name=None):
    """`tf.signal.linear_to_mel_weight_matrix`: a [num_spectrogram_bins, num_mel_bins]
    matrix of triangular filters, linear in mel and evenly spaced between lower_edge_hertz
    and upper_edge_hertz, that maps a linear-frequency magnitude spectrogram (bins up to
    sample_rate / 2) to mel bands. The DC bin gets no weight (HTK).

    >>> tf.signal.linear_to_mel_weight_matrix().shape
    TensorShape([129, 20])
    """
    dtype = dtypes.as_dtype(dtype)
    sample_rate, lower, upper = (float(np.asarray(v)) for v in
                                 (sample_rate, lower_edge_hertz, upper_edge_hertz))
    num_mel_bins, num_spectrogram_bins = int(num_mel_bins), int(num_spectrogram_bins)
    _validate(num_mel_bins, sample_rate, lower, upper, dtype)
    if num_spectrogram_bins <= 0:
        raise ValueError(f"num_spectrogram_bins must be positive. Got: {num_spectrogram_bins}")
    dt = dtype.as_numpy_dtype
    bands_to_zero = 1  # HTK excludes the spectrogram's DC bin
    nyquist = dt(sample_rate) / dt(2.0)
    linear = _linspace(dt(0.0), nyquist, num_spectrogram_bins, dt)[bands_to_zero:]
    bins_mel = _hertz_to_mel(linear, dt)[:, None]
    edges = _linspace(_hertz_to_mel(dt(lower), dt), _hertz_to_mel(dt(upper), dt),
                      num_mel_bins + 2, dt)
    lower_mel, center_mel, upper_mel = (edges[i:i + num_mel_bins][None, :] for i in range(3))
    lower_slopes = (bins_mel - lower_mel) / (center_mel - lower_mel)
    upper_slopes = (upper_mel - bins_mel) / (upper_mel - center_mel)
    weights = np.maximum(dt(0.0), np.minimum(lower_slopes, upper_slopes)).astype(dt)
    return constant(np.pad(weights, [[bands_to_zero, 0], [0, 0]]))
