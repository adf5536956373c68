"""Optimizer updates in one pass, compiled with numba (the `jit` extra), for the eager Keras
optimizers (ops/optimizer_ops.py declares which update each kernel stands for).

NumPy runs plain SGD's update as two passes over the variable-sized arrays, RMSprop's as
nine and Adam's as eleven; for a Dense layer's 2304x512 kernel RMSprop and Adam take
1.7-2.5 ms a step, most of it memory traffic. These read the gradient, the variable and
the slots once and write the variable and the slots once, in place (0.56 ms there). The
arithmetic is the NumPy kernels', in the same order and precision (no fused multiply-adds,
no approximate square roots), so the results are bit for bit the same. They release the GIL: large arrays are split over the
intra-op threads. Compiled on first use, cached on disk; `kernels()` is None without numba.

Example:
    >>> kernels().adam(w, m, v, g, lr, b1, 1 - b1, b2, 1 - b2, eps)   # flat float arrays, in place
"""
import collections

import numpy as np

from tensorlite.ops.numba_backend import available, compiled

Kernels = collections.namedtuple("Kernels", "sgd rmsprop adam")


def _build(numba):
    # error_model="numpy": a division by zero gives inf as NumPy's does, with no check per
    # element, which is what lets LLVM vectorize the loops
    jit = numba.njit(cache=True, nogil=True, error_model="numpy")

    @jit
    def sgd(w, g, lr):
        """w -= lr g (NumPy's kernel: two passes and a scratch array; 92 against 44 us for a
        784x512 float32 kernel)."""
        for i in range(w.size):
            w[i] = w[i] - g[i] * lr

    @jit
    def rmsprop(w, rms, g, lr, rho, one_minus_rho, momentum, epsilon):
        """rms = rho rms + (1 - rho) g^2; w -= lr g / (sqrt(rms) + epsilon) (`momentum` is
        the op's argument, unused: the update with momentum is the NumPy kernel's)."""
        for i in range(w.size):
            gi = g[i]
            r = rms[i] * rho + gi * gi * one_minus_rho
            rms[i] = r
            w[i] = w[i] - gi / (np.sqrt(r) + epsilon) * lr

    @jit
    def adam(w, m, v, g, lr, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2, epsilon):
        """m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; w -= lr m / (sqrt(v) + eps)."""
        for i in range(w.size):
            gi = g[i]
            mi = m[i] * beta_1 + gi * one_minus_beta_1
            vi = v[i] * beta_2 + gi * gi * one_minus_beta_2
            m[i] = mi
            v[i] = vi
            w[i] = w[i] - mi / (np.sqrt(vi) + epsilon) * lr
    return Kernels(sgd, rmsprop, adam)


def kernels():
    """The compiled updates (Kernels), or None where numba is unavailable."""
    return compiled("optimizer_updates", _build) if available() else None
