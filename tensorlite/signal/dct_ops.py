"""Discrete cosine transforms (`tf.signal.dct` / `idct`, types I-IV, unnormalised or
'ortho', with scipy.fft's and TensorFlow's definitions) and
`tf.signal.mfccs_from_log_mel_spectrograms`.

Each transform is a matmul with a constant [N, N] cosine matrix: exact, differentiable
through MatMul's gradient, and cheap for the lengths DCTs are used at (mel bins, frames).
"""
import numpy as np

from tensorlite.framework.convert import constant
from tensorlite.ops import array_ops, math_ops
from tensorlite.ops.common import check_kind, to_tensor

_INVERSE_TYPE = {1: 1, 2: 3, 3: 2, 4: 4}


def _validate(op_name, dct_type, n, axis, norm):
    if axis != -1:
        raise NotImplementedError(f"{op_name}: axis must be -1. Got: {axis}")
    if n is not None and (not isinstance(n, (int, np.integer)) or n < 1):
        raise ValueError(f"{op_name}: n should be a positive integer or None, got {n!r}")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError(f"{op_name}: Only Types I, II, III and IV (I)DCT are supported, "
                         f"got type={dct_type!r}")
    if norm not in (None, "ortho"):
        raise ValueError(f"{op_name}: Unknown normalization. Expected None or 'ortho', "
                         f"got: {norm!r}")
    if dct_type == 1 and norm == "ortho":
        raise ValueError(f"{op_name}: Normalization not supported for type-I DCT")


def _matrix(dct_type, size, ortho):
    """M with y = x @ M: y_k = sum_n x_n M[n, k] (scipy.fft.dct's definitions)."""
    n = np.arange(size)[:, None].astype(np.float64)
    k = np.arange(size)[None, :].astype(np.float64)
    if dct_type == 1:
        m = 2 * np.cos(np.pi * n * k / (size - 1))
        m[0, :] = 1.0
        m[-1, :] = (-1.0) ** np.arange(size)
        return m
    if dct_type == 4:
        m = 2 * np.cos(np.pi * (2 * n + 1) * (2 * k + 1) / (4 * size))
        return m * np.sqrt(1.0 / (2 * size)) if ortho else m
    m2 = 2 * np.cos(np.pi * k * (2 * n + 1) / (2 * size))
    if ortho:  # orthonormal DCT-II; its transpose is the orthonormal DCT-III
        m2 = m2 * np.where(k == 0, np.sqrt(1.0 / (4 * size)), np.sqrt(1.0 / (2 * size)))
        return m2 if dct_type == 2 else m2.T
    if dct_type == 2:
        return m2
    m3 = 2 * np.cos(np.pi * n * (2 * k + 1) / (2 * size))  # n indexes the input here
    m3[0, :] = 1.0
    return m3


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    """`tf.signal.dct`: the type-I/II/III/IV DCT of a float tensor along its last axis,
    cut or zero-padded to `n` points first; norm=None is scipy.fft.dct's unnormalised
    transform, 'ortho' the orthonormal one (not for type I)."""
    _validate("dct", type, n, axis, norm)
    x = check_kind("dct", to_tensor(input), "f", "input")
    if x._value.ndim < 1:
        raise ValueError("dct: input must have rank at least 1, got a scalar")
    size = x._value.shape[-1]
    if n is not None and n != size:
        x = x[..., :n] if n < size else array_ops.pad(
            x, [[0, 0]] * (x._value.ndim - 1) + [[0, n - size]])
        size = n
    if type == 1 and size < 2:
        raise ValueError("dct: DCT type I requires at least two points")
    m = constant(_matrix(type, size, norm == "ortho").astype(x._dtype.as_numpy_dtype))
    if x._value.ndim == 1:
        return array_ops.squeeze(math_ops.matmul(array_ops.expand_dims(x, 0), m), axis=0)
    return math_ops.matmul(x, m)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """`tf.signal.idct`: the inverse of dct of the same type, as TensorFlow defines it: the
    DCT of the inverse type (I <-> I, II <-> III, IV <-> IV). With norm='ortho' it inverts
    dct exactly; unnormalised, idct(dct(x)) is 2N x (2(N-1) x for type I)."""
    _validate("idct", type, n, axis, norm)
    return dct(input, type=_INVERSE_TYPE[type], n=n, axis=axis, norm=norm)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """`tf.signal.mfccs_from_log_mel_spectrograms`: MFCCs of [..., num_mel_bins] log-mel
    spectrograms: their DCT-II scaled by 1 / sqrt(2 num_mel_bins) (TensorFlow's scaling, the
    orthonormal DCT-II except for the first coefficient). Keep the first ~13 for speech."""
    x = to_tensor(log_mel_spectrograms)
    if x._value.ndim < 1 or x._value.shape[-1] == 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {list(x._value.shape)}")
    num_mel_bins = x._value.shape[-1]
    out = dct(x, type=2)
    return math_ops.multiply(out, constant(np.asarray(1.0 / np.sqrt(2.0 * num_mel_bins),
                                                      x._dtype.as_numpy_dtype)))
