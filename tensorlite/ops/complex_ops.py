"""Complex-number ops: `tf.complex`, `tf.math.angle` and the magnitude behind `tf.abs`.

`tf.math.conj`, `tf.math.real` and `tf.math.imag` live with the other unary ops in
math_ops.py. Gradients follow TensorFlow's convention for complex numbers: for a real loss L
of a complex z = x + iy, `tape.gradient(L, z)` is dL/dx + i dL/dy (for a holomorphic f that
is the incoming gradient times conj(f'(z))).
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import Spec, declare, register
from tensorlite.ops import math_ops
from tensorlite.ops.batching import elementwise
from tensorlite.ops.common import check_kind, tensor_args, to_tensor, unbroadcast

__all__ = ["complex", "angle", "complex_abs"]

_COMPLEX_OF = {"float32": dtypes.complex64, "float64": dtypes.complex128}


def _complex_fwd(x, y):
    out = np.empty(np.broadcast_shapes(x.shape, y.shape),
                   np.complex64 if x.dtype == np.float32 else np.complex128)
    out.real = x
    out.imag = y
    return out


def _complex_grad(g, ans, x, y):
    return (unbroadcast(math_ops.real(g), x, ans), unbroadcast(math_ops.imag(g), y, ans))


def _complex_shape(x, y):
    return Spec(math_ops.broadcast_spec(x, y), _COMPLEX_OF[x.dtype.name])


COMPLEX = declare(
    register("Complex", _complex_fwd, grad=_complex_grad, shape=_complex_shape,
             unsupported="onnx tflite"),
    tf=lambda attrs, specs: ("Complex", {"Tout": _COMPLEX_OF[specs[0].dtype.name]}),
    batch=elementwise(_complex_fwd),
    tf_import=lambda ins, a: execute(COMPLEX, (ins[0], ins[1]), None), tf_outputs="out")


def complex(real, imag, name=None):  # noqa: A001 - TF's name
    """`tf.complex`: real + i * imag elementwise (float32 -> complex64, float64 ->
    complex128); both parts must have the same floating dtype (TypeError otherwise)."""
    real, imag = tensor_args("Complex", (real, imag), names=("real", "imag")) \
        if _same_kind(real, imag) else (to_tensor(real), to_tensor(imag))
    if real._dtype is not imag._dtype or real._dtype.name not in _COMPLEX_OF:
        raise TypeError(f"The `real` and `imag` components have incorrect types: "
                        f"{real._dtype.name} {imag._dtype.name}. They must be consistent, "
                        f"and one of [float32, float64]; tf.cast them first")
    return execute(COMPLEX, (real, imag), None)


def _same_kind(a, b):
    # Two tensors of different dtypes must reach the TypeError, not tensor_args' error.
    da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
    return not (isinstance(da, dtypes.DType) and isinstance(db, dtypes.DType) and da is not db)


def _abs_grad(g, ans, x):
    # d|z| = Re(conj(z) dz) / |z|, so TF's gradient is g * z / |z| (0 at z = 0).
    safe = math_ops.where(math_ops.equal(ans, 0), math_ops.ones_like_t(ans), ans)
    scale = math_ops.divide(g, safe)
    return math_ops.multiply(complex(scale, math_ops.zeros_like_t(scale)), x)


COMPLEX_ABS = declare(
    register("ComplexAbs", lambda x: np.abs(x), grad=_abs_grad,
             shape=lambda x: Spec(x.shape, x.dtype.real_dtype), unsupported="onnx tflite"),
    tf=lambda attrs, specs: ("ComplexAbs", {"Tout": specs[0].dtype.real_dtype}),
    tf_import=lambda ins, a: complex_abs(ins[0]),
    batch=elementwise(np.abs), tf_outputs="y")


def complex_abs(x):
    """|x| of a complex tensor, real-valued (what `tf.abs` runs for complex inputs)."""
    return execute(COMPLEX_ABS, (check_kind("ComplexAbs", to_tensor(x), "c"),), None)


def _angle_grad(g, ans, z):
    # angle = atan2(y, x): d/dx = -y / r^2, d/dy = x / r^2 (0 at the origin).
    x, y = math_ops.real(z), math_ops.imag(z)
    r2 = math_ops.add(math_ops.square(x), math_ops.square(y))
    scale = math_ops.divide(g, math_ops.where(math_ops.equal(r2, 0), math_ops.ones_like_t(r2), r2))
    return complex(math_ops.negative(math_ops.multiply(scale, y)), math_ops.multiply(scale, x))


ANGLE = declare(
    register("Angle", lambda z: np.angle(z).astype(z.real.dtype), grad=_angle_grad,
             shape=lambda z: Spec(z.shape, z.dtype.real_dtype), unsupported="onnx tflite"),
    tf=lambda attrs, specs: ("Angle", {"Tout": specs[0].dtype.real_dtype}),
    tf_import=lambda ins, a: angle(ins[0]),
    batch=elementwise(lambda z: np.angle(z).astype(z.real.dtype)), tf_outputs="output")


def angle(input, name=None):  # noqa: A002 - TF's argument name
    """`tf.math.angle`: the argument of a complex tensor, in (-pi, pi]; for a real tensor,
    pi where it is negative and 0 elsewhere (as TensorFlow)."""
    x = to_tensor(input)
    if x._dtype.is_complex:
        return execute(ANGLE, (x,), None)
    x = check_kind("Angle", x, "f", "input")
    return math_ops.where(math_ops.less(x, 0), math_ops.ones_like_t(x) * np.pi,
                          math_ops.zeros_like_t(x))
