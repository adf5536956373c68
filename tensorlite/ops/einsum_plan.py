"""Two-operand einsums as one (batched) matrix product over views of the operands.

`np.einsum(..., optimize=True)` contracts through `tensordot`, which transposes each
operand into a fresh contiguous copy and reshapes the product back, and its path search
costs ~0.1 ms a call. MultiHeadAttention's equations (and their gradients) need neither:

  * a projection `abc,cde->abde` is x [B*T, d] @ W [d, heads*dim], every reshape a view;
  * the scores `aecd,abcd->acbe` and the weighted sum `acbe,aecd->abcd` are matmuls over
    the batch and head axes of strided views ([batch, seq, heads, dim] seen as
    [batch, heads, seq, dim]), which BLAS reads through its leading dimension, the product
    written straight into the output's own layout.

`plan(equation, a, b)` sorts the letters into batch (in both operands and the output),
left free, right free and contracted ones, orders each group as the output (or the left
operand) has it, and swaps the operands where the output puts the right operand's letters
first (C^T = B^T A^T). It declines (None) what it does not cover: letters summed within one
operand, repeated letters, size mismatches that would broadcast, empty operands, dtypes
other than float32/64 and complex.

Which form runs is chosen by measurement per equation, shapes and layout (`choose`): each
is timed a few times on the real operands, alternately, and the faster kept. The fastest
time of each decides: other programs' load only ever adds time, and on this project's shared
2-core machine a median still picked the slower form now and then (the planned form
measured 0.6-0.9 ms against NumPy's 0.7-1.7 ms for MultiHeadAttention's equations at
[16, 128, 4, 32] float32 on one core; never slower). With op determinism the planned form
always runs (no choice that depends on timing). The product runs through blas_threads, so
it gets two threads when two cores are free and one when a neighbour holds a core, as the
CNN's GEMMs do.

`MODE[0]`: "auto" (measure), "matmul" (the plan wherever it applies) or "einsum" (NumPy's
einsum always); tests force both.

Example:
    >>> run("abc,cde->abde", x, w)   # x [16, 128, 128], w [128, 4, 32] -> [16, 128, 4, 32]
"""
import time

import numpy as np

from tensorlite.framework import blas_threads, determinism, intra_op_pool

MODE = ["auto"]
SAMPLES = 3  # timings per form before the choice is made
MAX_KEYS = 512  # remembered choices (cleared when full: shapes rarely vary that much)
_DTYPES = "fdFD"
_PLANS = {}  # (equation, shapes, dtype) -> Plan or None
_CHOICES = {}  # (equation, shapes, strides, dtype) -> {"matmul": [s], "einsum": [s]} or str


class Plan:
    """How one equation on operands of given shapes runs as np.matmul over views."""
    __slots__ = ("swap", "perm_a", "shape_a", "perm_b", "shape_b", "out_shape", "perm_out",
                 "shape_out", "split_out", "macs")

    def __call__(self, a, b):
        if self.swap:
            a, b = b, a
        av = _view(a, self.perm_a, self.shape_a)
        bv = _view(b, self.perm_b, self.shape_b)
        if len(self.shape_out) == 2 and self.perm_out == sorted(self.perm_out):
            # one GEMM into the output's own order: blas_threads' 2-D product (its threads,
            # its split of a large operand)
            return blas_threads.matmul(av, bv).reshape(self.out_shape)
        out = np.empty(self.out_shape, np.result_type(a, b))
        ov = _view(out, self.perm_out, self.shape_out, exact=True)
        if ov is None:  # the output's layout cannot take the product: copy it in
            prod = _run(self.macs, av, bv, None)
            np.copyto(out.transpose(self.perm_out), prod.reshape(self.split_out))
            return out
        _run(self.macs, av, bv, ov)
        return out


def _run(macs, av, bv, ov):
    """av @ bv (into ov where given) on blas_threads' choice; a batch of products is split
    over the intra-op threads by its first batch axis, each part single-threaded BLAS
    (attention's [batch, heads] of 128x32 products are too small to share one GEMM)."""
    if av.ndim > 2 and av.shape[0] > 1:
        return blas_threads.run(macs, _batched, av, bv, ov, split=True)
    if ov is None:
        return blas_threads.run(macs, np.matmul, av, bv)
    return blas_threads.run(macs, np.matmul, av, bv, ov)


def batched_matmul(a, b):
    """np.matmul(a, b) of two batches of one batch shape (attention's q @ k^T written with
    tf.matmul): split by the first batch axis as the planned einsums are."""
    a, b = (x if _blasable(x) else np.ascontiguousarray(x) for x in (a, b))
    macs = int(np.prod(a.shape[:-1], dtype=np.int64)) * a.shape[-1] * b.shape[-1]
    return _run(macs, a, b, None)


def _batched(av, bv, ov):
    out = np.empty(np.broadcast_shapes(av.shape[:-2], bv.shape[:-2]) +
                   (av.shape[-2], bv.shape[-1]), np.result_type(av, bv)) if ov is None else ov
    n = av.shape[0]

    def worker(pull):
        for s, e in pull:
            np.matmul(av[s:e], bv[s:e], out=out[s:e])
    intra_op_pool.map_runs(intra_op_pool.split_runs(n, -(-n // max(1, intra_op_pool.ways()))),
                           worker)
    return out


def _blasable(v):
    """True when BLAS can read v's trailing matrices through a leading dimension (NumPy's
    matmul falls back to a slow loop without BLAS otherwise)."""
    if v.ndim < 2:
        return False
    s0, s1 = v.strides[-2:]
    n0, n1 = v.shape[-2:]
    item = v.itemsize
    return (s1 == item and s0 % item == 0 and s0 // item >= n1) or \
        (s0 == item and s1 % item == 0 and s1 // item >= n0)


def _view(x, perm, shape, exact=False):
    """x transposed and reshaped to `shape`: a view where the layout allows one. Else a
    contiguous copy for an operand, None for the output (`exact`)."""
    t = x.transpose(perm)
    try:
        v = t.reshape(shape, copy=False)
    except ValueError:
        return None if exact else np.ascontiguousarray(t).reshape(shape)
    if _blasable(v):
        return v
    return None if exact else np.ascontiguousarray(v)


def _parse(equation):
    eq = equation.replace(" ", "")
    if "->" not in eq or "..." in eq:
        return None
    ins, out = eq.split("->")
    ins = ins.split(",")
    if len(ins) != 2 or any(len(set(s)) != len(s) for s in (*ins, out)):
        return None
    return ins[0], ins[1], out


def plan(equation, a_shape, b_shape, dtype):
    """The Plan for `equation` on operands of these shapes, or None where it does not apply."""
    key = (equation, a_shape, b_shape, dtype)
    if key not in _PLANS:
        if len(_PLANS) >= MAX_KEYS:
            _PLANS.clear()
        _PLANS[key] = _make_plan(equation, a_shape, b_shape, dtype)
    return _PLANS[key]


def _make_plan(equation, a_shape, b_shape, dtype):
    parsed = _parse(equation)
    if parsed is None or np.dtype(dtype).char not in _DTYPES:
        return None
    sa, sb, out = parsed
    if len(sa) != len(a_shape) or len(sb) != len(b_shape):
        return None
    size = dict(zip(sa, a_shape))
    for c, d in zip(sb, b_shape):
        if size.setdefault(c, d) != d:
            return None  # a size-1 axis that would broadcast: NumPy's einsum does it
    if 0 in size.values() or any(c not in size for c in out) or \
            any(c not in out and c not in (sb if c in sa else sa) for c in size):
        return None  # empty, an unknown output letter, or a letter summed in one operand
    batch = [c for c in out if c in sa and c in sb]
    rest = [c for c in out if c not in batch]
    m = [c for c in rest if c in sa]
    n = [c for c in rest if c in sb]
    k = [c for c in sa if c in sb and c not in out]
    p = Plan()
    p.swap = bool(m and n and rest.index(n[0]) < rest.index(m[0]))
    if p.swap:
        sa, sb, m, n = sb, sa, n, m
    bshape = tuple(size[c] for c in batch)
    M, N, K = (int(np.prod([size[c] for c in g], dtype=np.int64)) for g in (m, n, k))
    p.perm_a = [sa.index(c) for c in batch + m + k]
    p.shape_a = bshape + (M, K)
    p.perm_b = [sb.index(c) for c in batch + k + n]
    p.shape_b = bshape + (K, N)
    p.out_shape = tuple(size[c] for c in out)
    p.perm_out = [out.index(c) for c in batch + m + n]
    p.shape_out = bshape + (M, N)
    p.split_out = tuple(size[c] for c in batch + m + n)
    p.macs = int(np.prod(bshape, dtype=np.int64)) * M * N * K
    return p


def _einsum(equation, a, b):
    # contiguous, as the planned form's: the consumers' compiled kernels expect it
    return np.ascontiguousarray(np.einsum(equation, a, b, optimize=True))


def choose(equation, a, b, p):
    """"matmul" or "einsum" for these operands: the faster by measurement (see module)."""
    if MODE[0] != "auto":
        return MODE[0]
    if determinism.enabled():
        return "matmul"
    key = (equation, a.shape, b.shape, a.strides, b.strides, a.dtype)
    entry = _CHOICES.get(key)
    if isinstance(entry, str):
        return entry
    if entry is None:
        if len(_CHOICES) >= MAX_KEYS:
            _CHOICES.clear()
        entry = _CHOICES[key] = {"matmul": [], "einsum": []}
    form = "matmul" if len(entry["matmul"]) <= len(entry["einsum"]) else "einsum"
    if len(entry[form]) >= SAMPLES:  # both timed enough: decide
        best = min(entry, key=lambda f: min(entry[f]))
        _CHOICES[key] = best
        return best
    return (form, entry[form])


def run(equation, a, b):
    """np.einsum(equation, a, b) by the faster of the planned matmul and NumPy's einsum;
    None where the plan does not apply (the caller runs NumPy's einsum)."""
    p = plan(equation, a.shape, b.shape, np.result_type(a, b).str) \
        if a.dtype == b.dtype else None
    if p is None:
        return None
    form = choose(equation, a, b, p)
    if isinstance(form, str):
        return p(a, b) if form == "matmul" else _einsum(equation, a, b)
    form, samples = form
    start = time.perf_counter()
    out = p(a, b) if form == "matmul" else _einsum(equation, a, b)
    samples.append(time.perf_counter() - start)
    return out
