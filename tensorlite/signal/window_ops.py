"""Window functions of `tf.signal` (constants in the requested floating dtype)."""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import constant
from tensorlite.ops.common import int_list


def _check(name, window_length, dtype):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{name}: dtype must be a floating point type, got {dtype.name}")
    (length,) = int_list(window_length, "window_length")
    if length is None or length < 0:
        raise ValueError(f"{name}: window_length must be a non-negative integer, got "
                         f"{window_length!r}")
    return length, dtype.as_numpy_dtype


def _raised_cosine(name, window_length, periodic, dtype, a, b):
    """a - b * cos(2 pi n / N), TensorFlow's construction: N is window_length for a periodic
    window of even length, else window_length - 1 (odd periodic windows are symmetric)."""
    length, np_dtype = _check(name, window_length, dtype)
    if length == 1:
        return constant(np.ones(1, np_dtype))
    even = 1 - length % 2
    n = np_dtype(length + int(bool(periodic)) * even - 1)
    count = np.arange(length).astype(np_dtype)
    window = np_dtype(a) - np_dtype(b) * np.cos(np_dtype(2 * np.pi) * count / n)
    return constant(window.astype(np_dtype))


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """`tf.signal.hann_window`: 0.5 - 0.5 cos(2 pi n / N) (periodic by default)."""
    return _raised_cosine("hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """`tf.signal.hamming_window`: 0.54 - 0.46 cos(2 pi n / N) (periodic by default)."""
    return _raised_cosine("hamming_window", window_length, periodic, dtype, 0.54, 0.46)


def _kaiser(length, beta):
    """The symmetric Kaiser window in float64: I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) /
    I0(beta)."""
    if length == 1:
        return np.ones(1)
    half = (length - 1) / 2.0
    arg = (np.arange(length) - half) / half
    return np.i0(beta * np.sqrt(np.maximum(0.0, 1.0 - arg * arg))) / np.i0(beta)


def kaiser_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """`tf.signal.kaiser_window`: the (symmetric) Kaiser window with shape parameter beta."""
    length, np_dtype = _check("kaiser_window", window_length, dtype)
    return constant(_kaiser(length, float(beta)).astype(np_dtype))


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """`tf.signal.kaiser_bessel_derived_window`: the KBD window (for MDCTs): square roots of
    the normalised running sum of a Kaiser window of window_length // 2 + 1, mirrored."""
    length, np_dtype = _check("kaiser_bessel_derived_window", window_length, dtype)
    csum = np.cumsum(_kaiser(length // 2 + 1, float(beta)))
    half = np.sqrt(csum[:-1] / csum[-1])
    return constant(np.concatenate([half, half[::-1]]).astype(np_dtype))


def vorbis_window(window_length, dtype=dtypes.float32, name=None):
    """`tf.signal.vorbis_window`: sin(pi / 2 sin^2(pi (n + 0.5) / N)), the Vorbis codec's
    power-complementary window (for MDCTs)."""
    length, np_dtype = _check("vorbis_window", window_length, dtype)
    n = np.arange(length, dtype=np.float64)
    window = np.sin(np.pi / 2.0 * np.sin(np.pi / length * (n + 0.5)) ** 2) if length else n
    return constant(window.astype(np_dtype))
