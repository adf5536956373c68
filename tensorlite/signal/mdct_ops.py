"""The modified discrete cosine transform (`tf.signal.mdct` / `inverse_mdct`), TensorFlow's
construction: frames of frame_length every frame_length / 2 samples, windowed, folded into
half-length frames and transformed by a type-IV DCT (and the reverse, overlap-added).
Composed from registered ops, so both are differentiable."""
import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.convert import constant
from tensorlite.ops import array_ops, math_ops
from tensorlite.ops.common import check_kind, int_list, to_tensor
from tensorlite.signal.dct_ops import dct
from tensorlite.signal.shape_ops import frame, overlap_and_add
from tensorlite.signal.window_ops import vorbis_window


def _check_norm(norm):
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm!r}")


def _times(t, value):
    return math_ops.multiply(t, constant(np.asarray(value, t._dtype.as_numpy_dtype)))


def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None, name=None):
    """`tf.signal.mdct`: [..., samples] -> [..., frames, frame_length // 2] MDCT
    coefficients of frames of frame_length samples (a multiple of 4) every frame_length / 2
    samples, windowed by `window_fn` (None: scaled by 1 / sqrt(2)); norm='ortho' makes it
    orthonormal (with a power-complementary window such as vorbis or KBD)."""
    _check_norm(norm)
    x = check_kind("mdct", to_tensor(signals), "f", "signals")
    (length,) = int_list(frame_length, "frame_length")
    if length is None or length < 4 or length % 4:
        raise ValueError(f"The frame length must be a multiple of 4, got {frame_length!r}")
    if x._value.ndim < 1:
        raise errors.InvalidArgumentError(None, None, "mdct: signals must have rank at least 1")
    frames = frame(x, length, length // 2, pad_end=pad_end)
    frames = math_ops.multiply(frames, window_fn(length, dtype=frames.dtype)) \
        if window_fn is not None else _times(frames, 1.0 / np.sqrt(2))
    a, b, c, d = array_ops.split(frames, 4, axis=-1)
    first = math_ops.subtract(math_ops.negative(array_ops.reverse(c, [-1])), d)
    second = math_ops.subtract(a, array_ops.reverse(b, [-1]))
    return dct(array_ops.concat([first, second], axis=-1), type=4, norm=norm)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """`tf.signal.inverse_mdct`: MDCT coefficients [..., frames, half_len] back to a signal
    [..., samples] by a type-IV DCT, unfolding, `window_fn` (None: 1 / sqrt(2)) and
    overlap-add; with the forward window and norm it reconstructs mdct's input where frames
    overlap."""
    _check_norm(norm)
    y = check_kind("inverse_mdct", to_tensor(mdcts), "f", "mdcts")
    if y._value.ndim < 2:
        raise errors.InvalidArgumentError(None, None, f"inverse_mdct: mdcts must have rank at "
                                          f"least 2, got shape {list(y._value.shape)}")
    half = y._value.shape[-1]
    out = dct(y, type=4, norm=norm)
    if norm is None:
        out = _times(out, 0.5 / half)
    first, second = array_ops.split(out, 2, axis=-1)
    frames = array_ops.concat([second, math_ops.negative(array_ops.reverse(second, [-1])),
                               math_ops.negative(array_ops.reverse(first, [-1])),
                               math_ops.negative(first)], axis=-1)
    frames = math_ops.multiply(frames, window_fn(2 * half, dtype=frames.dtype)) \
        if window_fn is not None else _times(frames, 1.0 / np.sqrt(2))
    return overlap_and_add(frames, half)
