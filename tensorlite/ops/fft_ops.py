"""Fast Fourier transforms over the innermost 1, 2 or 3 axes, as TensorFlow's FFT, IFFT,
RFFT, IRFFT (and their 2D / 3D forms) define them (`tf.signal.fft` ... `tf.signal.irfft3d`).

Gradients follow TensorFlow's convention for complex numbers (for a real loss L of
z = x + iy the gradient is dL/dx + i dL/dy), which makes them these adjoints:
- FFT: N * IFFT(g); IFFT: FFT(g) / N (N: the number of points transformed);
- RFFT: Re(N * IFFT(g zero-extended to the full spectrum)), cut or zero-padded back to the
  input's size (RFFT cuts or pads its input to fft_length);
- IRFFT: RFFT(g) * w / N, where w is 1 for the DC (and, for even lengths, the Nyquist) bin
  and 2 for the others, which IRFFT counts twice through Hermitian symmetry.
All rules are written with tensorlite ops, so they are differentiable again, and they take
cotangents with extra leading (batch) dimensions.
"""
import builtins

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, declare, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import array_ops, math_ops
from tensorlite.ops.batching import leading
from tensorlite.ops.common import check_kind, int_list, to_tensor
from tensorlite.ops.slice_ops import getitem

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d",
           "irfft2d", "rfft3d", "irfft3d"]

_SUFFIX = {1: "", 2: "2D", 3: "3D"}
_COMPLEX_OF = {"float32": dtypes.complex64, "float64": dtypes.complex128}


def _axes(rank):
    return tuple(range(-rank, 0))


def _scale(t, factor):
    """t * factor for a Python float factor, in t's dtype."""
    return math_ops.multiply(t, wrap(np.asarray(factor, t._dtype.as_numpy_dtype)))


def _fit(t, sizes):
    """Cuts or zero-pads the last len(sizes) axes of t to `sizes` (leading axes kept)."""
    have = t._value.shape[t._value.ndim - len(sizes):]
    if tuple(have) == tuple(sizes):
        return t
    cut = tuple(builtins.slice(0, min(h, s)) for h, s in zip(have, sizes))
    if any(h > s for h, s in zip(have, sizes)):
        t = getitem(t, (Ellipsis,) + cut)
    pads = tuple((0, max(0, s - h)) for h, s in zip(have, sizes))
    if any(hi for _, hi in pads):
        zero = wrap(np.zeros((), t._dtype.as_numpy_dtype))
        t = execute(array_ops.PAD, (t, zero), {"paddings": pads})
    return t


def _points(t, rank):
    return float(np.prod(t._value.shape[t._value.ndim - rank:]))


# -- complex-to-complex: FFT, IFFT ------------------------------------------------------------
def _c2c_fwd(rank, inverse):
    def fwd(x):
        if 0 in x.shape[x.ndim - rank:]:
            return x.copy()
        npfn = np.fft.ifftn if inverse else np.fft.fftn  # numpy.fft loads on first use
        return npfn(x, axes=_axes(rank)).astype(x.dtype, copy=False)
    return fwd


def _c2c_grad(rank, inverse):
    def grad(g, ans, x):
        n = _points(g, rank)
        if inverse:
            return _scale(execute(_C2C[(rank, False)], (g,), None), 1.0 / n)
        return _scale(execute(_C2C[(rank, True)], (g,), None), n)
    return grad


def _c2c_spec(x):
    return x


def _register_c2c(rank, inverse):
    name = ("IFFT" if inverse else "FFT") + _SUFFIX[rank]
    op = register(name, _c2c_fwd(rank, inverse), grad=_c2c_grad(rank, inverse),
                  shape=_c2c_spec, unsupported="onnx tflite")  # no ONNX/TFLite FFT export
    return declare(op, tf=lambda attrs, specs: (name, {"Tcomplex": specs[0].dtype, "T": None}),
                   tf_outputs="output",
                   tf_import=lambda ins, a: execute(op, (ins[0],), None),
                   batch=leading(_c2c_fwd(rank, inverse)))


_C2C = {(rank, inverse): _register_c2c(rank, inverse) for rank in (1, 2, 3)
        for inverse in (False, True)}


def _checked(op_name, x, rank, kinds):
    check_kind(op_name, x, kinds, "input")
    if x._value.ndim < rank:
        raise invalid(op_name, f"{op_name}: input must have rank of at least {rank} but got "
                      f"shape {list(x._value.shape)}")
    return x


def _input(value, preferred):
    """TF converts with a preferred dtype: Python numbers and lists take `preferred` when
    they fit it; tensors and NumPy arrays keep their own dtype."""
    if isinstance(value, (Tensor, np.ndarray, np.generic)) or getattr(value, "_is_variable",
                                                                      False):
        return to_tensor(value)
    try:
        return to_tensor(value, preferred)
    except (TypeError, ValueError):  # e.g. complex values for a real transform: checked later
        return to_tensor(value)


def _c2c_public(rank, inverse):
    op = _C2C[(rank, inverse)]

    def fn(input, name=None):  # noqa: A002 - TF's argument name
        x = _checked(op.name, _input(input, dtypes.complex64), rank, "c")
        return execute(op, (x,), None)
    fn.__name__ = op.name.lower()
    fn.__doc__ = (f"`tf.signal.{fn.__name__}`: the {'inverse ' if inverse else ''}discrete "
                  f"Fourier transform over the innermost {rank} dimension(s) of a complex "
                  f"tensor{' (scaled by 1/N, as numpy.fft)' if inverse else ''}.")
    return fn


fft, ifft = _c2c_public(1, False), _c2c_public(1, True)
fft2d, ifft2d = _c2c_public(2, False), _c2c_public(2, True)
fft3d, ifft3d = _c2c_public(3, False), _c2c_public(3, True)


# -- real-to-complex and back: RFFT, IRFFT ----------------------------------------------------
def _rfft_fwd(rank):
    def fwd(x, fft_length):
        out_dtype = np.complex64 if x.dtype == np.float32 else np.complex128
        if 0 in fft_length or 0 in x.shape[x.ndim - rank:]:  # nothing to transform: zeros
            return np.zeros(x.shape[:x.ndim - rank] + tuple(fft_length[:-1]) +
                            (fft_length[-1] // 2 + 1,), out_dtype)
        return np.fft.rfftn(x, s=fft_length, axes=_axes(rank)).astype(out_dtype, copy=False)
    return fwd


def _rfft_grad(rank):
    def grad(g, ans, x, fft_length):
        # Re(sum_k g_k e^{+i theta}) over the full spectrum: N * IFFT of g zero-extended.
        full = _fit(g, tuple(fft_length))
        back = math_ops.real(_scale(execute(_C2C[(rank, True)], (full,), None),
                                    float(np.prod(fft_length))))
        return _fit(back, x._value.shape[x._value.ndim - rank:])
    return grad


def _rfft_spec(x, fft_length):
    lead = tuple(x.shape[:len(x.shape) - len(fft_length)])
    return Spec(lead + tuple(fft_length[:-1]) + (fft_length[-1] // 2 + 1,),
                _COMPLEX_OF[x.dtype.name])


def _irfft_fwd(rank):
    def fwd(y, fft_length):
        out_dtype = np.float32 if y.dtype == np.complex64 else np.float64
        if 0 in fft_length or 0 in y.shape[y.ndim - rank:]:
            return np.zeros(y.shape[:y.ndim - rank] + tuple(fft_length), out_dtype)
        return np.fft.irfftn(y, s=fft_length, axes=_axes(rank)).astype(out_dtype, copy=False)
    return fwd


def _hermitian_weights(n, dtype):
    """1 for the DC bin (and the Nyquist bin of an even length), 2 for the bins IRFFT
    counts twice."""
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return wrap(w.astype(dtype.as_numpy_dtype))


def _irfft_grad(rank):
    def grad(g, ans, y, fft_length):
        spectrum = execute(_R2C[rank], (g,), {"fft_length": fft_length})
        weighted = math_ops.multiply(spectrum, _hermitian_weights(fft_length[-1],
                                                                  spectrum._dtype))
        weighted = _scale(weighted, 1.0 / float(np.prod(fft_length)))
        return _fit(weighted, y._value.shape[y._value.ndim - rank:])
    return grad


def _irfft_spec(y, fft_length):
    lead = tuple(y.shape[:len(y.shape) - len(fft_length)])
    return Spec(lead + tuple(fft_length), y.dtype.real_dtype)


def _length_tf(name, real_in):
    def rule(attrs, specs):
        if None in attrs["fft_length"]:
            raise errors.UnimplementedError(
                None, None, f"SavedModel export: {name}'s fft_length {list(attrs['fft_length'])} "
                f"follows the batch size (None); pass fft_length explicitly or export with a "
                f"fixed batch size")
        c = _COMPLEX_OF[specs[0].dtype.name] if real_in else specs[0].dtype
        return (name, {"Treal": c.real_dtype, "Tcomplex": c, "T": None},
                [0, np.asarray(attrs["fft_length"], np.int32)])
    return rule


def _register_real(rank, inverse):
    name = ("IRFFT" if inverse else "RFFT") + _SUFFIX[rank]
    fwd, grad, spec = ((_irfft_fwd, _irfft_grad, _irfft_spec) if inverse else
                       (_rfft_fwd, _rfft_grad, _rfft_spec))
    op = register(name, fwd(rank), grad=grad(rank), shape=spec,
                  unsupported="onnx tflite")  # no ONNX/TFLite FFT export
    # TF's fft_length input arrives as a constant: it becomes the attribute again
    return declare(op, tf=_length_tf(name, not inverse), tf_outputs="output",
                   batch=leading(fwd(rank)),
                   tf_import=lambda ins, a: execute(
                       op, (ins[0],), {"fft_length": tuple(int(n) for n in np.asarray(ins[1]))}))


_R2C = {rank: _register_real(rank, False) for rank in (1, 2, 3)}
_C2R = {rank: _register_real(rank, True) for rank in (1, 2, 3)}


def _fft_length(op_name, fft_length, default, rank):
    lengths = default if fft_length is None else int_list(fft_length, "fft_length")
    if len(lengths) != rank or any(n is None or n < 0 for n in lengths):
        raise invalid(op_name, f"{op_name}: fft_length must be {rank} non-negative "
                      f"integer(s) known when the op runs, got {lengths}")
    return tuple(int(n) for n in lengths)


def _rfft_public(rank):
    op = _R2C[rank]

    def fn(input_tensor, fft_length=None, name=None):
        x = _checked(op.name, _input(input_tensor, dtypes.float32), rank, "f")
        if x._dtype.name not in _COMPLEX_OF:
            raise invalid(op.name, f"{op.name}: input has dtype {x._dtype.name}; RFFT takes "
                          f"float32 or float64, tf.cast it first")
        lengths = _fft_length(op.name, fft_length, list(x._value.shape[-rank:]), rank)
        return execute(op, (x,), {"fft_length": lengths})
    fn.__name__ = op.name.lower()
    fn.__doc__ = (f"`tf.signal.{fn.__name__}`: the FFT over the innermost {rank} dimension(s) "
                  f"of a real tensor, keeping the fft_length[-1] // 2 + 1 unique bins of the "
                  f"last; each transformed dimension is cut or zero-padded to fft_length "
                  f"(default: its size).")
    return fn


def _irfft_public(rank):
    op = _C2R[rank]

    def fn(input_tensor, fft_length=None, name=None):
        y = _checked(op.name, _input(input_tensor, dtypes.complex64), rank, "c")
        dims = list(y._value.shape[-rank:])
        lengths = _fft_length(op.name, fft_length, dims[:-1] + [2 * (dims[-1] - 1)], rank)
        return execute(op, (y,), {"fft_length": lengths})
    fn.__name__ = op.name.lower()
    fn.__doc__ = (f"`tf.signal.{fn.__name__}`: the inverse of rfft{_SUFFIX[rank].lower()}: a "
                  f"real tensor of shape fft_length in the innermost {rank} dimension(s) "
                  f"(default: the input's sizes, 2 * (n - 1) for the last).")
    return fn


rfft, irfft = _rfft_public(1), _irfft_public(1)
rfft2d, irfft2d = _rfft_public(2), _irfft_public(2)
rfft3d, irfft3d = _rfft_public(3), _irfft_public(3)
