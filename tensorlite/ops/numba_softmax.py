"""Softmax over the last axis of a small float array in one compiled pass (numba, the
`jit` extra). NumPy needs five calls (max, subtract, exp, sum, divide), each with its own
per-call cost, which is most of a small softmax's time: measured beside PyTorch on one
thread (bench/eager_overhead.py, a [4, 10] float32 input) NumPy's form took ~2.8x
PyTorch's time and this kernel ~0.6x.

Larger inputs (attention scores: [batch, heads, seq, seq]) take three calls instead: a
compiled pass subtracting each row's maximum, NumPy's exp in place (its SIMD exp is ~10x
numba's scalar one without SVML) and a compiled pass scaling each row by its inverse sum,
the row hot in cache between the last two (1.2 ms against NumPy's 1.9 ms for
[16, 4, 128, 128] float32 on one core). The gradient y * (g - sum(g * y)) is one compiled
pass per row (0.17 ms against NumPy's 0.9 ms there).

Example:
    >>> rows(np.zeros((2, 3), np.float32))   # None without numba: use NumPy
    array([[0.333..., ...]], dtype=float32)
"""
import numpy as np

from tensorlite.framework import blas_threads, intra_op_pool
from tensorlite.ops.numba_backend import available, compiled

# Above this many elements NumPy's vectorised passes are as fast and need no compilation.
MAX_SIZE = 1 << 14
_KERNEL = [None]
# Large inputs are split over the intra-op threads in runs of rows from this many elements
# (blas_threads counts cost in multiply-adds: ~4 per element here, as ops/fused_ops.py)
SPLIT_MIN_SIZE = 1 << 16
_COST_PER_ELEMENT = 4
_RUN_ROWS = 1024
# reassociation only (sums and maxima vectorise); NaN and inf keep NumPy's propagation
_FAST = {"reassoc", "contract", "nsz", "arcp"}


def _build(numba):
    @numba.njit(cache=True, nogil=True)
    def softmax_rows(x, out):
        n, k = x.shape
        for i in range(n):
            m = x[i, 0]
            for j in range(1, k):
                if x[i, j] > m:
                    m = x[i, j]
            s = 0.0
            for j in range(k):
                e = np.exp(x[i, j] - m)
                out[i, j] = e
                s += e
            for j in range(k):
                out[i, j] /= s
    return softmax_rows


def rows(x):
    """Softmax of x along its last axis, or None where this kernel does not apply."""
    kernel = _KERNEL[0]
    if kernel is None:
        if not available():
            return None
        kernel = _KERNEL[0] = compiled("softmax_rows", _build)
    if x.size == 0 or x.size > MAX_SIZE or x.dtype.char not in "fd" or \
            not x.flags.c_contiguous:
        return None
    k = x.shape[-1]
    out = np.empty(x.shape, x.dtype)
    kernel(x.reshape(-1, k), out.reshape(-1, k))
    return out


def _build_large(numba):
    @numba.njit(cache=True, nogil=True, fastmath=_FAST)
    def shift_rows(x, out):
        n, k = x.shape
        for i in range(n):
            m = x[i, 0]
            for j in range(1, k):
                m = max(m, x[i, j])
            for j in range(k):
                out[i, j] = x[i, j] - m

    @numba.njit(cache=True, nogil=True, fastmath=_FAST)
    def scale_rows(e):
        n, k = e.shape
        for i in range(n):
            s = 0.0
            for j in range(k):
                s += e[i, j]
            r = 1.0 / s
            for j in range(k):
                e[i, j] *= r

    @numba.njit(cache=True, nogil=True, fastmath=_FAST)
    def grad_rows(y, g, out):
        n, k = y.shape
        for i in range(n):
            s = 0.0
            for j in range(k):
                s += y[i, j] * g[i, j]
            for j in range(k):
                out[i, j] = y[i, j] * (g[i, j] - s)
    return shift_rows, scale_rows, grad_rows


def _large_kernels(*arrays):
    """The three row kernels when they apply to these same-shaped arrays, else None."""
    if not available():
        return None
    first = arrays[0]
    if first.size == 0 or first.ndim == 0 or first.dtype.char not in "fd" or any(
            a.shape != first.shape or a.dtype != first.dtype or not a.flags.c_contiguous
            for a in arrays):
        return None
    return compiled("softmax_rows_large", _build_large)


def large_rows(x):
    """Softmax of x along its last axis in three passes (see module), or None where the
    kernels do not apply."""
    kernels = _large_kernels(x)
    if kernels is None:
        return None
    shift_rows, scale_rows, _ = kernels
    k = x.shape[-1]
    out = np.empty(x.shape, x.dtype)
    flat, xs = out.reshape(-1, k), x.reshape(-1, k)

    def part(s, e):
        shift_rows(xs[s:e], flat[s:e])
        np.exp(flat[s:e], out=flat[s:e])
        scale_rows(flat[s:e])
    _over_rows(len(xs), k, part)
    return out


def grad_rows(y, g):
    """y * (g - sum(g * y, axis=-1, keepdims=True)) in one pass, or None where the kernel
    does not apply (different shapes: a jacobian's batched cotangent)."""
    kernels = _large_kernels(y, g)
    if kernels is None:
        return None
    k = y.shape[-1]
    out = np.empty(y.shape, y.dtype)
    ys, gs, os_ = y.reshape(-1, k), g.reshape(-1, k), out.reshape(-1, k)
    _over_rows(len(ys), k, lambda s, e: kernels[2](ys[s:e], gs[s:e], os_[s:e]))
    return out


def _over_rows(n, k, part):
    """part(start, end) over runs of rows: on the intra-op threads blas_threads.run grants
    (two when two cores are free, one when a neighbour holds one) where the array is large
    enough; each row's arithmetic is the same however the rows are shared out."""
    def split():
        def worker(pull):
            for s, e in pull:
                part(s, e)
        intra_op_pool.map_runs(intra_op_pool.split_runs(n, _RUN_ROWS), worker)
    if n * k < SPLIT_MIN_SIZE:
        part(0, n)
    else:
        blas_threads.run(n * k * _COST_PER_ELEMENT, split, split=True)
