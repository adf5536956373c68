"""Training-mode batch normalization (and the ReLU6 after it) as compiled loops (numba, the
`jit` extra): statistics in two passes with float64 sums, the normalisation and the
activation in one more; the backward in two (the channel sums, then the input gradient).
The composition of NumPy ops this replaces makes about eight passes each way.

Every function returns None where it does not apply (numba missing or switched off with
TENSORLITE_NUMBA=0, a dtype other than float32/float64); the caller then runs its NumPy form
(ops/batch_norm_ops.py), which computes the same formulas.

Example:
    >>> out = forward(x2, gamma, beta, 1e-3, relu6=False)  # (y, mean, var) or None
"""
import numpy as np

from tensorlite.ops.numba_backend import available, compiled


def _build(numba):
    @numba.njit(cache=True, nogil=True)
    def stats(x, mean, var):
        m, c = x.shape
        acc = np.zeros(c)
        for i in range(m):
            for j in range(c):
                acc[j] += x[i, j]
        for j in range(c):
            mean[j] = acc[j] / m
            acc[j] = 0.0
        for i in range(m):
            for j in range(c):
                d = x[i, j] - mean[j]
                acc[j] += d * d
        for j in range(c):
            var[j] = acc[j] / m

    @numba.njit(cache=True, nogil=True)
    def apply(x, scale, shift, relu6, out):
        m, c = x.shape
        for i in range(m):
            for j in range(c):
                v = x[i, j] * scale[j] + shift[j]
                if relu6:  # NaN stays NaN, as np.clip keeps it
                    if v < 0.0:
                        v = 0.0
                    elif v > 6.0:
                        v = 6.0
                out[i, j] = v

    @numba.njit(cache=True, nogil=True)
    def grad_sums(g, x, y, mean, rstd, relu6, sg, sgx):
        m, c = x.shape
        for i in range(m):
            for j in range(c):
                gij = g[i, j]
                if relu6 and not (0.0 < y[i, j] < 6.0):
                    gij = 0.0
                sg[j] += gij
                sgx[j] += gij * (x[i, j] - mean[j]) * rstd[j]

    @numba.njit(cache=True, nogil=True)
    def grad_input(g, x, y, mean, rstd, relu6, a, b, k, dx):
        m, c = x.shape
        for i in range(m):
            for j in range(c):
                gij = g[i, j]
                if relu6 and not (0.0 < y[i, j] < 6.0):
                    gij = 0.0
                dx[i, j] = a[j] * gij - b[j] - k[j] * (x[i, j] - mean[j])
    return stats, apply, grad_sums, grad_input


def _kernels():
    return compiled("batch_norm", _build)


def _applies(*arrays):
    return available() and len({a.dtype for a in arrays}) == 1 and \
        arrays[0].dtype.char in "fd"


def forward(x2, gamma, beta, epsilon, relu6):
    """(y, mean, variance) of [M, C] rows normalised per column, or None."""
    if not _applies(x2, gamma, beta):
        return None
    stats, apply, _, _ = _kernels()
    x2 = np.ascontiguousarray(x2)
    mean, var = np.empty(x2.shape[1], np.float64), np.empty(x2.shape[1], np.float64)
    stats(x2, mean, var)
    scale = gamma.astype(np.float64) / np.sqrt(var + epsilon)
    shift = beta - mean * scale
    out = np.empty_like(x2)
    apply(x2, scale.astype(x2.dtype), shift.astype(x2.dtype), relu6, out)
    return out, mean.astype(x2.dtype), var.astype(x2.dtype)


def backward(g2, x2, y2, gamma, mean, var, epsilon, relu6):
    """(dx, dgamma, dbeta) of [M, C] rows, or None; `y2` (the activation's output) masks
    `g2` when relu6."""
    if not _applies(g2, x2, gamma, mean, var):
        return None
    _, _, grad_sums, grad_input = _kernels()
    g2, x2 = np.ascontiguousarray(g2), np.ascontiguousarray(x2)
    y2 = np.ascontiguousarray(y2) if relu6 else x2
    m = x2.shape[0]
    mean64 = mean.astype(np.float64)
    rstd = 1.0 / np.sqrt(var.astype(np.float64) + epsilon)
    sg, sgx = np.zeros(x2.shape[1]), np.zeros(x2.shape[1])
    grad_sums(g2, x2, y2, mean64, rstd, relu6, sg, sgx)
    a = gamma.astype(np.float64) * rstd  # dx = a g - a (sg + xhat sgx) / m
    b, k = a * sg / m, a * sgx * rstd / m
    dx = np.empty_like(x2)
    grad_input(g2, x2, y2, mean64, rstd, relu6, a.astype(x2.dtype), b.astype(x2.dtype),
               k.astype(x2.dtype), dx)
    return dx, sgx.astype(x2.dtype), sg.astype(x2.dtype)


__all__ = ["backward", "forward"]
