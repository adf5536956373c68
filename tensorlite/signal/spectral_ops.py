"""Short-time Fourier transforms: `tf.signal.stft`, `inverse_stft` and
`inverse_stft_window_fn`, composed from frame, windows, RFFT/IRFFT and overlap_and_add (so
they are differentiable)."""
import math

from tensorlite.framework import errors
from tensorlite.ops import array_ops, fft_ops, math_ops
from tensorlite.ops.common import check_kind, int_list, to_tensor
from tensorlite.signal.shape_ops import frame, overlap_and_add
from tensorlite.signal.window_ops import hann_window


def _enclosing_power_of_two(n):
    return 1 << max(0, math.ceil(math.log2(n))) if n > 0 else 1


def _ints(op_name, frame_length, frame_step, fft_length):
    values = []
    for what, v in (("frame_length", frame_length), ("frame_step", frame_step),
                    ("fft_length", fft_length)):
        (n,) = int_list(v, what) if v is not None else (None,)
        if v is not None and (n is None or n < 1):
            raise errors.InvalidArgumentError(None, None, f"{op_name}: {what} must be a "
                                              f"positive integer, got {v!r}")
        values.append(n)
    if values[2] is None:
        values[2] = _enclosing_power_of_two(values[0])
    return values


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """`tf.signal.stft`: frames `signals` [..., samples] (frame_length samples every
    frame_step), multiplies each frame by `window_fn(frame_length, dtype)` and returns its
    RFFT: complex [..., frames, fft_length // 2 + 1]. fft_length defaults to the smallest
    power of 2 enclosing frame_length.

    >>> tf.signal.stft(tf.zeros([16000]), frame_length=255, frame_step=128).shape
    TensorShape([124, 129])
    """
    x = to_tensor(signals)
    check_kind("stft", x, "f", "signals")
    if x._value.ndim < 1:
        raise errors.InvalidArgumentError(None, None, "stft: signals must have rank at least 1")
    frame_length, frame_step, fft_length = _ints("stft", frame_length, frame_step, fft_length)
    framed = frame(x, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = math_ops.multiply(framed, window_fn(frame_length, dtype=framed.dtype))
    return fft_ops.rfft(framed, [fft_length])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """`tf.signal.inverse_stft`: IRFFT of each frame of `stfts` [..., frames, bins], cut or
    zero-padded to frame_length, multiplied by `window_fn(frame_length, dtype)`, then
    overlap-added every frame_step samples. For perfect reconstruction of an `stft` pass
    `window_fn=tf.signal.inverse_stft_window_fn(frame_step)`."""
    y = to_tensor(stfts)
    check_kind("inverse_stft", y, "c", "stfts")
    if y._value.ndim < 2:
        raise errors.InvalidArgumentError(None, None, f"inverse_stft: stfts must have rank at "
                                          f"least 2, got shape {list(y._value.shape)}")
    frame_length, frame_step, fft_length = _ints("inverse_stft", frame_length, frame_step,
                                                 fft_length)
    frames = fft_ops.irfft(y, [fft_length])
    frames = frames[..., :frame_length]
    if frame_length > fft_length:
        pads = [[0, 0]] * (frames._value.ndim - 1) + [[0, frame_length - fft_length]]
        frames = array_ops.pad(frames, pads)
    if window_fn is not None:
        frames = math_ops.multiply(frames, window_fn(frame_length, dtype=frames.dtype))
    return overlap_and_add(frames, frame_step)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """`tf.signal.inverse_stft_window_fn`: a window function for inverse_stft that undoes
    `forward_window_fn`'s weighting: the forward window divided by the overlap-added sum of
    its squares."""
    (step,) = int_list(frame_step, "frame_step")

    def window_fn(frame_length, dtype):
        forward = forward_window_fn(frame_length, dtype=dtype)
        denom = math_ops.square(forward)
        overlaps = -(-frame_length // step)
        denom = array_ops.pad(denom, [[0, overlaps * step - frame_length]])
        denom = array_ops.reshape(denom, [overlaps, step])
        denom = math_ops.reduce_sum(denom, axis=0, keepdims=True)
        denom = array_ops.tile(denom, [overlaps, 1])
        denom = array_ops.reshape(denom, [overlaps * step])
        return math_ops.divide(forward, denom[:frame_length])
    return window_fn
