"""`tf.signal.fftshift` / `ifftshift`: move the zero-frequency bin to the centre and back
(tf.roll by half of each dimension)."""
from tensorlite.ops import array_ops
from tensorlite.ops.common import int_list, to_tensor


def _shift(x, axes, inverse):
    x = to_tensor(x)
    shape = x._value.shape
    axes = list(range(len(shape))) if axes is None else int_list(axes, "axes")
    if not axes:
        return x
    shifts = [shape[a] // 2 for a in axes]
    return array_ops.roll(x, [-s for s in shifts] if inverse else shifts, axes)


def fftshift(x, axes=None, name=None):
    """`tf.signal.fftshift`: rolls each of `axes` (default all) by half its size, so the
    zero-frequency bin of an FFT moves to the centre (numpy.fft.fftshift)."""
    return _shift(x, axes, inverse=False)


def ifftshift(x, axes=None, name=None):
    """`tf.signal.ifftshift`: the inverse of fftshift (numpy.fft.ifftshift)."""
    return _shift(x, axes, inverse=True)
