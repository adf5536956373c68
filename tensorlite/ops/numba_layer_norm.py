"""Layer normalization over the last axis as compiled row passes (numba, the `jit` extra).

The plain composition (moments, then batch_normalization) makes ~8 passes over the input
forward and ~20 ops backward (each a NumPy call with its own temporary). Here each row of
[rows, channels] is read once into cache: forward computes its mean and variance (two
passes over the row, in cache) and writes gamma * (x - mean) * rsqrt(var + eps) + beta;
backward recomputes the row's statistics and writes, in closed form,

    dx = rstd * (g*gamma - mean(g*gamma) - xhat * mean(g*gamma * xhat))

while adding g * xhat and g into float64 column sums (gamma's and beta's gradients).
Row statistics are summed in float64.

Example:
    >>> forward(x, gamma, beta, 1e-3)   # None without numba or for other layouts
"""
import numpy as np

from tensorlite.ops.numba_backend import available, compiled, jitable

# reassociation (the row sums vectorise); NaN and inf keep IEEE propagation
_FAST = {"reassoc", "contract", "nsz", "arcp"}


def row_stats(row, eps):
    """(mean, 1 / sqrt(variance + eps)) of one row (the kernels' helper)."""
    k = row.shape[0]
    s = 0.0
    for j in range(k):
        s += row[j]
    mean = s / k
    v = 0.0
    for j in range(k):
        d = row[j] - mean
        v += d * d
    return mean, 1.0 / np.sqrt(v / k + eps)


def _build(numba):
    jitable(row_stats, fastmath=_FAST)

    @numba.njit(cache=True, nogil=True, fastmath=_FAST)
    def forward(x, gamma, beta, eps, out):
        n, k = x.shape
        for i in range(n):
            mean, rstd = row_stats(x[i], eps)
            for j in range(k):
                out[i, j] = (x[i, j] - mean) * rstd * gamma[j] + beta[j]

    @numba.njit(cache=True, nogil=True, fastmath=_FAST)
    def backward(x, gamma, g, eps, dx, dgamma, dbeta):
        n, k = x.shape
        for i in range(n):
            mean, rstd = row_stats(x[i], eps)
            a = 0.0
            b = 0.0
            for j in range(k):
                xhat = (x[i, j] - mean) * rstd
                gh = g[i, j] * gamma[j]
                a += gh
                b += gh * xhat
                dgamma[j] += g[i, j] * xhat
                dbeta[j] += g[i, j]
            a /= k
            b /= k
            for j in range(k):
                xhat = (x[i, j] - mean) * rstd
                dx[i, j] = rstd * (g[i, j] * gamma[j] - a - xhat * b)
    return forward, backward


def _kernels(x, *others):
    """The kernels when they apply: float32/64, one dtype, x and g of one shape, gamma and
    beta vectors of x's last axis (the callers make strided operands contiguous: one copy
    costs less than the NumPy form's passes)."""
    if not available() or x.ndim == 0 or x.size == 0 or x.dtype.char not in "fd":
        return None
    for a in others:
        if a.dtype != x.dtype or (a.shape != x.shape and a.shape != x.shape[-1:]):
            return None
    return compiled("layer_norm_rows", _build)


def forward(x, gamma, beta, epsilon):
    """gamma * (x - mean) / sqrt(var + epsilon) + beta over x's last axis, or None."""
    kernels = _kernels(x, gamma, beta)
    if kernels is None or gamma.shape != x.shape[-1:] or beta.shape != x.shape[-1:]:
        return None
    k = x.shape[-1]
    x, gamma, beta = (np.ascontiguousarray(a) for a in (x, gamma, beta))
    out = np.empty_like(x)
    kernels[0](x.reshape(-1, k), gamma, beta, float(epsilon), out.reshape(-1, k))
    return out


def backward(x, gamma, g, epsilon):
    """(dx, dgamma, dbeta) for cotangent g of x's shape, or None."""
    kernels = _kernels(x, gamma, g)
    if kernels is None or g.shape != x.shape or gamma.shape != x.shape[-1:]:
        return None
    k = x.shape[-1]
    x, gamma, g = (np.ascontiguousarray(a) for a in (x, gamma, g))
    dx = np.empty_like(x)
    dgamma, dbeta = np.zeros(k), np.zeros(k)
    kernels[1](x.reshape(-1, k), gamma, g.reshape(-1, k), float(epsilon), dx.reshape(-1, k),
               dgamma, dbeta)
    return dx, dgamma.astype(x.dtype), dbeta.astype(x.dtype)
