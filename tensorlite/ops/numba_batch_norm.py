"""Training-mode batch normalization (and the ReLU6 after it) as compiled loops (numba, the
`jit` extra): statistics in two passes with float64 sums, the normalisation and the
activation in one more; the backward in two (the channel sums, then the input gradient).
Each pass runs over runs of rows on the intra-op threads when blas_threads measures that
faster (the sums per thread in float64, then added).
The composition of NumPy ops this replaces makes about eight passes each way.

Every function returns None where it does not apply (numba missing or switched off with
TENSORLITE_NUMBA=0, a dtype other than float32/float64); the caller then runs its NumPy form
(ops/batch_norm_ops.py), which computes the same formulas.

Example:
    >>> out = forward(x2, gamma, beta, 1e-3, relu6=False)  # (y, mean, var) or None
"""
import numpy as np

from tensorlite.framework import blas_threads, intra_op_pool
from tensorlite.ops.numba_backend import available, compiled


def _build(numba):
    @numba.njit(cache=True, nogil=True)
    def col_sums(x, shift, s, e, acc):
        """acc [C] += column sums of (x - shift) over rows s..e, in float64."""
        c = x.shape[1]
        for i in range(s, e):
            for j in range(c):
                acc[j] += x[i, j] - shift[j]

    @numba.njit(cache=True, nogil=True)
    def col_squares(x, mean, s, e, acc):
        c = x.shape[1]
        for i in range(s, e):
            for j in range(c):
                d = x[i, j] - mean[j]
                acc[j] += d * d

    @numba.njit(cache=True, nogil=True)
    def apply(x, scale, shift, relu6, out, s, e):
        c = x.shape[1]
        for i in range(s, e):
            for j in range(c):
                v = x[i, j] * scale[j] + shift[j]
                if relu6:  # NaN stays NaN, as np.clip keeps it
                    if v < 0.0:
                        v = 0.0
                    elif v > 6.0:
                        v = 6.0
                out[i, j] = v

    @numba.njit(cache=True, nogil=True)
    def grad_sums(g, x, y, mean, rstd, relu6, s, e, acc):
        """acc [2, C] += (sum of g, sum of g * xhat) over rows s..e (g masked by ReLU6)."""
        c = x.shape[1]
        for i in range(s, e):
            for j in range(c):
                gij = g[i, j] if not relu6 or 0.0 < y[i, j] < 6.0 else 0.0  # ReLU6's mask
                acc[0, j] += gij
                acc[1, j] += gij * (x[i, j] - mean[j]) * rstd[j]

    @numba.njit(cache=True, nogil=True)
    def grad_input(g, x, y, mean, relu6, a, b, k, dx, s, e):
        c = x.shape[1]
        for i in range(s, e):
            for j in range(c):
                gij = g[i, j] if not relu6 or 0.0 < y[i, j] < 6.0 else 0.0  # ReLU6's mask
                dx[i, j] = a[j] * gij - b[j] - k[j] * (x[i, j] - mean[j])
    return col_sums, col_squares, apply, grad_sums, grad_input


def _kernels():
    return compiled("batch_norm_rows", _build)


def _applies(*arrays):
    return available() and len({a.dtype for a in arrays}) == 1 and \
        arrays[0].dtype.char in "fd"


def _runs(m, c):
    """Runs of about a megabyte of rows (split over the intra-op threads when splitting)."""
    return intra_op_pool.split_runs(m, max(1, (1 << 18) // max(c, 1)))


def _passes(name, m, c, part, shape=None):
    """part(s, e, acc) over runs of the m rows, on the threads blas_threads measures best
    for this size; returns the sum of the threads' float64 `acc` (of `shape`, default
    [c]), or None when `shape` is () (a pass without sums)."""
    shape = (c,) if shape is None else shape
    out = []

    def split():
        def worker(pull):
            acc = None
            for s, e in pull:
                if acc is None:
                    acc = np.zeros(shape)
                part(s, e, acc)
            return acc
        out.append(intra_op_pool.sum_partials(intra_op_pool.map_runs(_runs(m, c), worker),
                                              lambda: np.zeros(shape)))
    split.__qualname__ = name
    blas_threads.run(m * c, split, split=True)
    return out[0] if shape != () else None


def forward(x2, gamma, beta, epsilon, relu6):
    """(y, mean, variance) of [M, C] rows normalised per column, or None."""
    if not _applies(x2, gamma, beta):
        return None
    col_sums, col_squares, apply, _, _ = _kernels()
    x2 = np.ascontiguousarray(x2)
    m, c = x2.shape
    first = x2[0].astype(np.float64)  # a shift: the sums stay small whatever the offset
    mean = first + _passes("batch_norm_sums", m, c,
                           lambda s, e, acc: col_sums(x2, first, s, e, acc)) / m
    var = _passes("batch_norm_squares", m, c,
                  lambda s, e, acc: col_squares(x2, mean, s, e, acc)) / m
    scale = gamma.astype(np.float64) / np.sqrt(var + epsilon)
    shift = (beta - mean * scale).astype(x2.dtype)
    scale = scale.astype(x2.dtype)
    out = np.empty_like(x2)
    _passes("batch_norm_apply", m, c,
            lambda s, e, acc: apply(x2, scale, shift, relu6, out, s, e), ())
    return out, mean.astype(x2.dtype), var.astype(x2.dtype)


def backward(g2, x2, y2, gamma, mean, var, epsilon, relu6):
    """(dx, dgamma, dbeta) of [M, C] rows, or None; `y2` (the activation's output) masks
    `g2` when relu6."""
    if not _applies(g2, x2, gamma, mean, var):
        return None
    _, _, _, grad_sums, grad_input = _kernels()
    g2, x2 = np.ascontiguousarray(g2), np.ascontiguousarray(x2)
    y2 = np.ascontiguousarray(y2) if relu6 else x2
    m, c = x2.shape
    mean64 = mean.astype(np.float64)
    rstd = 1.0 / np.sqrt(var.astype(np.float64) + epsilon)
    sg, sgx = _passes("batch_norm_grad_sums", m, c, lambda s, e, acc: grad_sums(
        g2, x2, y2, mean64, rstd, relu6, s, e, acc), (2, c))
    a = gamma.astype(np.float64) * rstd  # dx = a g - a (sg + xhat sgx) / m
    b, k = a * sg / m, a * sgx * rstd / m
    dx = np.empty_like(x2)
    dt = x2.dtype
    _passes("batch_norm_grad_input", m, c, lambda s, e, acc: grad_input(
        g2, x2, y2, mean64, relu6, a.astype(dt), b.astype(dt), k.astype(dt), dx, s, e), ())
    return dx, sgx.astype(dt), sg.astype(dt)


__all__ = ["backward", "forward"]
