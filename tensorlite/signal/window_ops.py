"""Window functions of `tf.signal` (constants in the requested floating dtype)."""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import constant
from tensorlite.ops.common import int_list


def _raised_cosine(name, window_length, periodic, dtype, a, b):
    """a - b * cos(2 pi n / N), TensorFlow's construction: N is window_length for a periodic
    window of even length, else window_length - 1 (odd periodic windows are symmetric)."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{name}: dtype must be a floating point type, got {dtype.name}")
    (length,) = int_list(window_length, "window_length")
    if length is None or length < 0:
        raise ValueError(f"{name}: window_length must be a non-negative integer, got "
                         f"{window_length!r}")
    np_dtype = dtype.as_numpy_dtype
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
