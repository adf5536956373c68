"""Layer normalization over the last axis as two registered ops, forward and backward, each
one compiled pass per row where numba applies (ops/numba_layer_norm.py), NumPy otherwise.

  * `LayerNorm(x, gamma, beta)`: gamma * (x - mean) * rsqrt(var + epsilon) + beta, the
    statistics over x's last axis (what moments + batch_normalization compute);
  * `LayerNormGrad(x, gamma, g) -> (dx, dgamma, dbeta)`: its vector-Jacobian product in
    closed form (the statistics recomputed from x, so the forward keeps no temporaries).
    Its own gradient (second order) is written with LayerNormGrad again, so every order
    stays closed: with r = rsqrt(var + eps), xh = (x - mean) * r and Pr(w) = r * (w -
    mean(w) - xh * mean(w * xh)) (LayerNormGrad's dx with gamma = 1), for cotangents
    (hx, hgamma, hbeta) and v = g * gamma, b = mean(v * xh):
        dg     = gamma * Pr(hx) + xh * hgamma + hbeta
        dgamma = sum over rows of g * Pr(hx)
        dx     = Pr(g * hgamma - r * b * hx - r * v * mean(hx * xh)) - r^2 S xh / n,
                 S = sum(hx * (v - mean(v) - xh * b)) per row.
keras' LayerNormalization uses them while training; exports trace its inference path, the
plain composition. A training step saved to a SavedModel writes LayerNorm as the TF nodes of
that composition; LayerNormGrad (a gradient) has no TF, ONNX or TFLite rule.

Example:
    >>> y = layer_norm(x, gamma, beta, 1e-3)   # x [..., C], gamma and beta [C]
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import Spec, declare, register
from tensorlite.ops import numba_layer_norm
from tensorlite.ops.array_ops import broadcast_to
from tensorlite.ops.batching import with_batch_axis
from tensorlite.ops.common import FLOAT, tensor_args, to_tensor
from tensorlite.ops.math_ops import (add, multiply, reduce_mean, reduce_sum, rsqrt, subtract)

_INTERNAL = "tf onnx tflite tf_import"


def _stats(x, epsilon):
    mean = x.mean(axis=-1, keepdims=True)
    xc = x - mean
    var = np.square(xc).mean(axis=-1, keepdims=True)
    return xc, 1.0 / np.sqrt(var + np.asarray(epsilon, x.dtype))


def _forward(x, gamma, beta, epsilon):
    out = numba_layer_norm.forward(x, gamma, beta, epsilon)
    if out is not None:
        return out
    xc, r = _stats(x, epsilon)
    return (xc * r * gamma + beta).astype(x.dtype, copy=False)


def _backward(x, gamma, g, epsilon):
    """NumPy form; g may carry a jacobian's leading batch dimensions."""
    done = numba_layer_norm.backward(x, gamma, g, epsilon)
    if done is not None:
        return done
    nb = g.ndim - x.ndim
    return _numpy_backward(x, gamma, g, epsilon, tuple(range(nb, g.ndim - 1)))


def _numpy_backward(x, gamma, g, epsilon, rows):
    """(dx, dgamma, dbeta), gamma's and beta's gradients summed over the axes `rows`."""
    xc, r = _stats(x, epsilon)
    xh = xc * r
    gh = g * gamma
    dx = r * (gh - gh.mean(axis=-1, keepdims=True) - xh * (gh * xh).mean(axis=-1,
                                                                         keepdims=True))
    return (dx.astype(x.dtype, copy=False), (g * xh).sum(axis=rows).astype(x.dtype),
            g.sum(axis=rows).astype(x.dtype))


def _forward_batch(arrays, batched, epsilon):
    """vectorized_map: a batch is more rows; batched gamma or beta broadcast per example."""
    if not batched[1] and not batched[2]:  # shared weights: the compiled rows apply
        return _forward(*arrays, epsilon=epsilon)
    x, gamma, beta = with_batch_axis(arrays, batched)
    lead = (x.shape[0],) + (1,) * (x.ndim - 2)
    return _forward(x, gamma.reshape(lead + gamma.shape[-1:]),
                    beta.reshape(lead + beta.shape[-1:]), epsilon)


def _backward_batch(arrays, batched, epsilon):
    """vectorized_map: rows as for one example, gamma's and beta's sums per example."""
    x, gamma, g = with_batch_axis(arrays, batched)
    if not batched[1]:
        gamma = arrays[1]
    else:
        gamma = gamma.reshape((x.shape[0],) + (1,) * (x.ndim - 2) + gamma.shape[-1:])
    return _numpy_backward(x, gamma, g, epsilon, tuple(range(1, g.ndim - 1)))


_forward_batch.kind = _backward_batch.kind = "leading"


def _layer_norm_grad(g, ans, x, gamma, beta, epsilon):
    dx, dgamma, dbeta = layer_norm_grad(x, gamma, g, epsilon)
    return dx, dgamma, dbeta


def _row_terms(x, epsilon):
    """(r, xh) as tensors: the row statistics of the grad-of-grad rule."""
    xc = subtract(x, reduce_mean(x, axis=-1, keepdims=True))
    r = rsqrt(add(reduce_mean(multiply(xc, xc), axis=-1, keepdims=True), epsilon))
    return r, multiply(xc, r)


def _project(x, w, epsilon):
    """Pr(w) = r * (w - mean(w) - xh * mean(w * xh)): LayerNormGrad's dx with gamma = 1."""
    ones = to_tensor(np.ones(x._value.shape[-1:], x._value.dtype))
    return layer_norm_grad(x, ones, w, epsilon)[0]


def _layer_norm_grad_grad(gs, ans, x, gamma, g, epsilon):
    """Gradients of LayerNormGrad's outputs (the formulas in the module docstring)."""
    hx, hgamma, hbeta = gs
    n = x._value.shape[-1]
    r, xh = _row_terms(x, epsilon)
    rows = list(range(x._value.ndim - 1))
    dg = dgamma = None
    u = None
    if hx is not None:
        p = _project(x, hx, epsilon)
        dg = multiply(gamma, p)
        dgamma = reduce_sum(multiply(g, p), axis=rows)
        v = multiply(g, gamma)
        b = reduce_mean(multiply(v, xh), axis=-1, keepdims=True)
        hxh = reduce_mean(multiply(hx, xh), axis=-1, keepdims=True)
        u = multiply(add(multiply(multiply(r, b), hx), multiply(multiply(r, v), hxh)), -1.0)
        s = reduce_sum(multiply(hx, subtract(subtract(v, reduce_mean(v, axis=-1,
                                                                     keepdims=True)),
                                             multiply(xh, b))), axis=-1, keepdims=True)
        tail = multiply(multiply(multiply(r, r), s), multiply(xh, 1.0 / n))
    if hgamma is not None:
        term = multiply(xh, hgamma)
        dg = term if dg is None else add(dg, term)
        gh = multiply(g, hgamma)
        u = gh if u is None else add(u, gh)
    if hbeta is not None:
        term = broadcast_to(hbeta, g._value.shape)
        dg = term if dg is None else add(dg, term)
    dx = None
    if u is not None:
        dx = _project(x, u, epsilon)
        if hx is not None:
            dx = subtract(dx, tail)
    return dx, dgamma, dg


def _forward_shape(x, gamma, beta, epsilon):
    return Spec(tuple(x.shape), x.dtype)


def _backward_shape(x, gamma, g, epsilon):
    lead = tuple(g.shape[:len(g.shape) - len(x.shape)])
    return [Spec(lead + tuple(x.shape), x.dtype), Spec(lead + tuple(x.shape[-1:]), x.dtype),
            Spec(lead + tuple(x.shape[-1:]), x.dtype)]


def _layer_norm_tf(attrs, specs):
    """TensorFlow has no layer-norm op: the nodes of the composition keras' layer uses at
    inference (moments, then batch_normalization's x * scale + (beta - mean * scale))."""
    t = specs[0].dtype
    axis = np.array([-1], np.int32)
    eps = np.array(attrs["epsilon"], t.as_numpy_dtype)

    def write(add, ins):
        x, gamma, beta = ins

        def node(op, inputs, out="z", **more):
            return f"{add(op, inputs, T=t, **more)}:{out}:0"
        mean = node("Mean", [x, axis], "output", Tidx=dtypes.int32, keep_dims=True)
        var = node("Mean", [node("SquaredDifference", [x, mean]), axis], "output",
                   Tidx=dtypes.int32, keep_dims=True)
        scale = node("Mul", [node("Rsqrt", [node("AddV2", [var, eps])], "y"), gamma])
        shift = node("Sub", [beta, node("Mul", [mean, scale])])
        return [node("AddV2", [node("Mul", [x, scale]), shift])]
    return write


# exported to TF as the composition (a training step saved in a tf.Module); ONNX and TFLite
# read the inference path, the composition itself
LAYER_NORM = declare(register("LayerNorm", _forward, grad=_layer_norm_grad,
                              shape=_forward_shape, unsupported="onnx tflite tf_import"),
                     batch=_forward_batch, tf=_layer_norm_tf, tf_outputs={})
LAYER_NORM_GRAD = declare(register("LayerNormGrad", _backward, grad=_layer_norm_grad_grad,
                                   shape=_backward_shape, multi_output=True, batchable=False,
                                   unsupported=_INTERNAL),
                          batch=_backward_batch)


def layer_norm(x, gamma, beta, epsilon):
    """gamma * (x - mean) * rsqrt(var + epsilon) + beta over x's last axis (Tensors)."""
    xs = tensor_args("LayerNorm", [x, gamma, beta], FLOAT)
    return execute(LAYER_NORM, tuple(xs), {"epsilon": float(epsilon)})


def layer_norm_grad(x, gamma, g, epsilon):
    """(dx, dgamma, dbeta) of layer_norm for the cotangent g."""
    return execute(LAYER_NORM_GRAD, (x, gamma, g), {"epsilon": float(epsilon)})
