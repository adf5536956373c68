"""Finite-difference gradient check for functions of complex (and real) tensors.

TensorFlow's convention: for a real loss L of z = x + iy, `tape.gradient(L, z)` is
dL/dx + i dL/dy. `check_complex_grads(f, args)` builds a real loss from f's output with fixed
random weights (L = sum(a * Re(out) + b * Im(out))), takes central differences over the real
and, for complex arguments, the imaginary part of every entry, and compares them with the
tape's gradient. Keep arguments small: it costs two calls of f per real degree of freedom.
"""
import numpy as np

import tensorlite as tf


def real_loss(out, seed=0):
    """A real scalar from a real or complex tensor, with fixed random weights."""
    rng = np.random.default_rng(seed)
    shape = tuple(out.shape)
    a = tf.constant(rng.standard_normal(shape), dtype=out.dtype.real_dtype)
    loss = tf.reduce_sum(tf.math.real(out) * a) if out.dtype.is_complex else \
        tf.reduce_sum(out * a)
    if out.dtype.is_complex:
        b = tf.constant(rng.standard_normal(shape), dtype=out.dtype.real_dtype)
        loss = loss + tf.reduce_sum(tf.math.imag(out) * b)
    return loss


def _loss_value(f, args, seed):
    return float(real_loss(f(*[tf.constant(a) for a in args]), seed).numpy())


def numeric_grads(f, args, eps=1e-6, seed=0):
    """dL/dRe + i dL/dIm for every argument, by central differences."""
    out = []
    for i, a in enumerate(args):
        g = np.zeros(a.shape, np.complex128 if np.iscomplexobj(a) else np.float64)
        parts = (1.0, 1j) if np.iscomplexobj(a) else (1.0,)
        for idx in np.ndindex(*a.shape):
            for unit in parts:
                plus, minus = [list(args) for _ in range(2)]
                plus[i], minus[i] = a.copy(), a.copy()
                plus[i][idx] += eps * unit
                minus[i][idx] -= eps * unit
                d = (_loss_value(f, plus, seed) - _loss_value(f, minus, seed)) / (2 * eps)
                g[idx] += d * unit
        out.append(g)
    return out


def tape_grads(f, args, seed=0):
    xs = [tf.constant(a) for a in args]
    with tf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        loss = real_loss(f(*xs), seed)
    return [g.numpy() for g in tape.gradient(loss, xs)]


def check_complex_grads(f, args, rtol=1e-6, atol=1e-7, seed=0):
    """Asserts the tape's gradients of f at args (complex128/float64 arrays) match central
    differences over real and imaginary parts."""
    got = tape_grads(f, args, seed)
    want = numeric_grads(f, args, seed=seed)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"argument {i}: gradient shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of argument {i}")
