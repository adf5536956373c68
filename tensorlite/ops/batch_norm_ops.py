"""Training-mode batch normalization over all axes but the last as one op each way:
`_FusedBatchNormTrain(x, gamma, beta)` -> (y, batch mean, batch variance) with
`y = gamma (x - mean) / sqrt(variance + epsilon) + beta` (variance biased, as
`tf.nn.moments`), and its gradient `_FusedBatchNormTrainGrad`. With `activation="Relu6"`
(set by graph/passes/kernel_fusion.py when a ReLU6 follows, never by users) the op also
clips y to [0, 6] and its gradient masks by that output, as TF's Relu6Grad.

Keras's BatchNormalization calls it in training (rank >= 2, the last axis, float32/64).
The compiled loops are ops/numba_batch_norm.py's; without numba the NumPy forms below
compute the same formulas.

The statistics outputs carry no gradient (as TF's FusedBatchNormV3). Gradients: the forward's gradient rule runs the fused gradient op when nothing records the
backward pass; when a tape records it (a second derivative) or the cotangent has leading
jacobian dimensions, it is written with differentiable tensorlite ops instead, so every
order is exact. The fused gradient op itself is therefore never differentiated.

Example:
    >>> y, mean, var = fused_batch_norm_train(x, gamma, beta, 1e-3)
"""
import numpy as np

from tensorlite.framework import dispatch, dtypes
from tensorlite.framework.registry import Spec, register
from tensorlite.ops import numba_batch_norm
from tensorlite.ops.common import execute, to_tensor

ACTIVATIONS = (None, "Relu6")


def _rows(a):
    return a.reshape(-1, a.shape[-1])


def _check(activation):
    if activation not in ACTIVATIONS:
        raise NotImplementedError(f"_FusedBatchNormTrain: activation {activation!r}; only "
                                  f"{ACTIVATIONS} are built")
    return activation == "Relu6"


def _np_forward(x2, gamma, beta, epsilon, relu6):
    mean = x2.mean(axis=0)
    var = np.square(x2 - mean).mean(axis=0)
    scale = gamma / np.sqrt(var + np.asarray(epsilon, x2.dtype))
    out = x2 * scale + (beta - mean * scale)
    if relu6:
        np.clip(out, 0, 6, out=out)
    return out, mean, var


def _forward(x, gamma, beta, epsilon, activation=None):
    relu6 = _check(activation)
    x2 = _rows(x)
    out = numba_batch_norm.forward(x2, gamma, beta, epsilon, relu6) or \
        _np_forward(x2, gamma, beta, epsilon, relu6)
    y, mean, var = out
    return y.reshape(x.shape), mean, var


def _np_backward(g2, x2, y2, gamma, mean, var, epsilon, relu6):
    if relu6:
        g2 = g2 * ((y2 > 0) & (y2 < 6))
    rstd = 1 / np.sqrt(var + np.asarray(epsilon, x2.dtype))
    xhat = (x2 - mean) * rstd
    sg, sgx = g2.sum(axis=0), (g2 * xhat).sum(axis=0)
    dx = (gamma * rstd / len(x2)) * (len(x2) * g2 - sg - xhat * sgx)
    return dx.astype(x2.dtype, copy=False), sgx, sg


def _grad_forward(g, x, gamma, mean, var, *act_out, epsilon, activation=None):
    relu6 = _check(activation)
    g2, x2 = _rows(g), _rows(x)
    y2 = _rows(act_out[0]) if relu6 else None
    out = numba_batch_norm.backward(g2, x2, y2, gamma, mean, var, epsilon, relu6) or \
        _np_backward(g2, x2, y2, gamma, mean, var, epsilon, relu6)
    dx, dgamma, dbeta = out
    return dx.reshape(x.shape), dgamma, dbeta


def _recording_backward():
    """Whether a tape records the ops run now (the backward pass is differentiated)."""
    return any(getattr(ob, "_recording", False) for ob in dispatch.OBSERVERS)


def _composite_grad(gy, x, gamma, epsilon, y, relu6):
    """(dx, dgamma, dbeta) written with differentiable tensorlite ops (any order)."""
    from tensorlite.ops import math_ops as m  # noqa: PLC0415 - math_ops is above this file
    axes = list(range(x._value.ndim - 1))
    lead = list(range(gy._value.ndim - x._value.ndim))  # a jacobian's leading dims
    if relu6:
        gy = m.multiply(gy, m.cast(m.logical_and(m.greater(y, 0.0), m.less(y, 6.0)),
                                   gy._dtype))
    mean = m.reduce_mean(x, axis=axes)
    centered = m.subtract(x, mean)
    rstd = m.rsqrt(m.add(m.reduce_mean(m.square(centered), axis=axes), epsilon))
    xhat = m.multiply(centered, rstd)
    red = [a + len(lead) for a in axes]
    sg, sgx = m.reduce_sum(gy, axis=red), m.reduce_sum(m.multiply(gy, xhat), axis=red)
    n = float(np.prod(x._value.shape[:-1]))
    inner = m.subtract(m.subtract(m.multiply(gy, n), _expand(sg, len(axes))),
                       m.multiply(xhat, _expand(sgx, len(axes))))
    dx = m.multiply(inner, m.divide(m.multiply(gamma, rstd), n))
    return dx, sgx, sg


def _expand(t, k):
    """[lead..., C] -> [lead..., 1 x k, C]: broadcast against the input's rows."""
    from tensorlite.ops import array_ops  # noqa: PLC0415
    shape = t._value.shape
    return array_ops.reshape(t, shape[:-1] + (1,) * k + shape[-1:])


def _grad(cots, ans, x, gamma, beta, epsilon, activation=None):
    """Input, gamma and beta gradients from y's cotangent; the statistics' cotangents are
    ignored, as by TF's FusedBatchNormV3 gradient (Keras feeds them to the moving averages
    through stop_gradient only)."""
    gy = cots[0] if isinstance(cots, tuple) else cots
    y, mean, var = ans
    relu6 = _check(activation)
    if _recording_backward() or gy._value.ndim != x._value.ndim:
        return _composite_grad(gy, x, gamma, epsilon, y, relu6)
    ins = (gy, x, gamma, mean, var) + ((y,) if relu6 else ())
    return execute(BATCH_NORM_TRAIN_GRAD, ins, {"epsilon": epsilon, "activation": activation})


def _forward_shape(x, gamma, beta, epsilon, activation=None):
    c = Spec((x.shape[-1],), x.dtype)
    return [Spec(x.shape, x.dtype), c, c]


def _grad_shape(g, x, gamma, mean, var, *act_out, epsilon, activation=None):
    c = Spec((x.shape[-1],), x.dtype)
    return [Spec(x.shape, x.dtype), c, c]


def _tf(attrs, specs):
    """SavedModel export: the plain composition in TensorFlow's ops (what tf.nn.moments and
    tf.nn.batch_normalization write), so TensorFlow runs a saved training function as is."""
    dt, eps = specs[0].dtype, attrs["epsilon"]
    axes = np.arange(len(specs[0].shape) - 1, dtype=np.int32)

    def write(add, ins):
        x, gamma, beta = ins

        def op(name, inputs, out="z", **more):
            return add(name, inputs, T=dt, **more) + f":{out}:0"
        mean = op("Mean", [x, axes], "output", Tidx=dtypes.int32, keep_dims=False)
        var = op("Mean", [op("SquaredDifference", [x, mean]), axes], "output",
                 Tidx=dtypes.int32, keep_dims=False)
        inv = op("Rsqrt", [op("AddV2", [var, np.asarray(eps, dt.as_numpy_dtype)])], "y")
        scale = op("Mul", [inv, gamma])
        shift = op("Sub", [beta, op("Mul", [mean, scale])])
        y = op("AddV2", [op("Mul", [x, scale]), shift])
        if attrs.get("activation") == "Relu6":
            y = op("Relu6", [y], "activations")
        return [y, mean, var]
    return write


BATCH_NORM_TRAIN = register(
    "_FusedBatchNormTrain", _forward, grad=_grad,
    shape=_forward_shape, multi_output=True, tf=_tf,
    # the export rule writes several nodes of ops declared elsewhere and names their
    # outputs itself: nothing to add to the output-name table
    tf_outputs={}, unsupported="onnx tflite batch tf_import")
# Never differentiated (see the module docstring): a second derivative takes the composite;
# grad=None makes a differentiation that still reaches it a loud LookupError.
BATCH_NORM_TRAIN_GRAD = register(
    "_FusedBatchNormTrainGrad", _grad_forward, grad=None,
    shape=_grad_shape, multi_output=True, batchable=False,
    unsupported="tf onnx tflite batch tf_import")


def fused_batch_norm_train(x, gamma, beta, epsilon):
    """(y, mean, variance): x normalised with its statistics over all axes but the last
    (biased variance), scaled by gamma and shifted by beta ([C] each)."""
    x = to_tensor(x)
    return execute(BATCH_NORM_TRAIN, (x, to_tensor(gamma, x._dtype), to_tensor(beta, x._dtype)),
                   {"epsilon": float(epsilon)})


__all__ = ["BATCH_NORM_TRAIN", "BATCH_NORM_TRAIN_GRAD", "fused_batch_norm_train"]
