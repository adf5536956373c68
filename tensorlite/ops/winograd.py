"""Winograd convolutions F(2x2, 3x3) and F(4x4, 3x3): a 3x3 stride-1 convolution in NHWC
with (m+2)^2 [tiles, C] @ [C, O] matmuls over m x m output tiles instead of one
[pixels, 9C] @ [9C, O]: 2.25x (m=2) or 4x (m=4) fewer multiplications.

Each (m+2)x(m+2) input tile d (stride m) becomes V = Bt d B, each 3x3 filter U = G g Gt,
and each m x m output tile Y = At (U * V) A. For m=2,
    Bt = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
    G  = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
    At = [[1, 1, 1, 0], [0, 1, -1, -1]]
and for m=4 (interpolation points 0, +-1, +-2 and infinity),
    Bt = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
          [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
    G  = [[1/4, 0, 0], [-1/6, -1/6, -1/6], [-1/6, 1/6, -1/6],
          [1/24, 1/12, 1/6], [1/24, -1/12, 1/6], [0, 0, 1]]
    At = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]
(Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2015). F(4x4)'s
larger constants cost accuracy: float32 results differ from a direct sum by about 5e-6 of
the output's scale (F(2x2): 3e-7), as in cuDNN's and NNPACK's. Its transforms are compiled
(numba_winograd) only; F(2x2)'s also exist in NumPy, as additions of strided views of the
padded image, so no tile is copied twice.

Example:
    >>> x = np.ones((1, 4, 4, 1), np.float32); w = np.ones((3, 3, 1, 1), np.float32)
    >>> conv3x3(x, w, (1, 1, 1, 1))[0, :, :, 0]
    array([[4., 6., 6., 4.], [6., 9., 9., 6.], [6., 9., 9., 6.], [4., 6., 6., 4.]], ...)
"""
import numpy as np

from tensorlite.framework import intra_op_pool
from tensorlite.ops import numba_winograd

# G of F(m x m, 3x3), by m
_G = {2: np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]]),
      4: np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                   [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])}
# Scratch per run of images (transformed tiles, products): what a core's L2 keeps hot. The
# CIFAR CNN step took 11-14% less time with runs of one image (the 32x32x32 layer's tiles
# are 460 KB) than with 4 MB runs, on 1 thread and on 2 (/work/prof-style A/B, t18).
CHUNK_BYTES = 512 << 10


def filter_transform(w, m=2):
    """[3, 3, C, O] -> U [(m+2)^2, C, O] (row-major over the transformed tap)."""
    g = _G[m].astype(w.dtype)
    a = m + 2
    c, o = w.shape[2:]
    rows = (g @ w.reshape(3, 3 * c * o)).reshape(a, 3, c * o)  # G along the filter rows
    u = np.matmul(g, rows)  # and along its columns: [a, a, C*O]
    return u.reshape(a * a, c, o)


def _compiled(m, x, jit=True):
    """F(m x m)'s compiled transforms for x's dtype, or None where NumPy's must serve."""
    compiled = numba_winograd.kernels(m) if jit and x.dtype.char in "fd" else None
    if compiled is None and m != 2:
        raise NotImplementedError(
            f"Winograd F({m}x{m}, 3x3) has compiled transforms only (float32/float64, with "
            f"numba: pip install '.[jit]' in a clone of tensorlite); got {x.dtype.name} "
            f"{'with' if numba_winograd.available() else 'without'} numba: use F(2x2, 3x3)")
    return compiled


def _run_images(th, tw, c, o, itemsize, m):
    """Images per run: the run's transformed tiles fit CHUNK_BYTES."""
    return max(1, CHUNK_BYTES // max((m + 2) ** 2 * th * tw * max(c, o) * itemsize, 1))


def _pair_transform(a0, a1, a2, a3):
    """Bt applied along one axis to the four strided rows of every tile."""
    return a0 - a2, a1 + a2, a2 - a1, a1 - a3


def _input_tiles(xp, th, tw, out):
    """Padded [n, 2th+2, 2tw+2, C] -> V [16, n*th*tw, C] written into `out`."""
    n, c = xp.shape[0], xp.shape[-1]
    rows = [xp[:, a:a + 2 * th:2] for a in range(4)]  # each [n, th, Wp, C]
    v = out.reshape(4, 4, n, th, tw, c)
    for a, r in enumerate(_pair_transform(*rows)):
        cols = [r[:, :, b:b + 2 * tw:2] for b in range(4)]
        c0, c1, c2, c3 = cols
        np.subtract(c0, c2, out=v[a, 0])
        np.add(c1, c2, out=v[a, 1])
        np.subtract(c2, c1, out=v[a, 2])
        np.subtract(c1, c3, out=v[a, 3])


def _output_tiles(m, n, th, tw, out):
    """M [16, n*th*tw, O] -> At M A into `out` [n, 2th, 2tw, O]."""
    o = m.shape[-1]
    m = m.reshape(4, 4, n, th, tw, o)
    s0 = m[0] + m[1] + m[2]  # [4, n, th, tw, O]: At along the tile rows
    s1 = m[1] - m[2] - m[3]
    for i, s in enumerate((s0, s1)):
        np.add(s[0] + s[1], s[2], out=out[:, i::2, 0::2])
        np.subtract(s[1] - s[2], s[3], out=out[:, i::2, 1::2])


def conv3x3(x, w, pads, u=None, jit=True, epilogue=None, m=2):
    """3x3 stride-1 cross-correlation of [N, H, W, C] with [3, 3, C, O] under pads
    (top, bottom, left, right) by F(m x m, 3x3) (m: 2 or 4); `u` is filter_transform(w, m)
    when already known. `jit`: use the numba transforms where numba is available (False:
    the NumPy ones, m=2 only). `epilogue(view)` is applied in place to each run of output
    images once computed (conv_select)."""
    n, h, wd, c = x.shape
    o = w.shape[-1]
    pt, pb, pl, pr = pads
    oh, ow = h + pt + pb - 2, wd + pl + pr - 2
    th, tw = -(-oh // m), -(-ow // m)
    compiled = _compiled(m, x, jit)
    u = filter_transform(w, m) if u is None else u
    out = np.empty((n, oh, ow, o), x.dtype)
    if n == 0 or oh <= 0 or ow <= 0:
        return out
    per = _run_images(th, tw, c, o, x.itemsize, m)
    if compiled is not None:
        worker = _jit_worker(compiled, np.ascontiguousarray(x), u, pads, th, tw, out, epilogue)
    else:
        worker = _numpy_worker(x, u, pads, th, tw, out, epilogue)
    intra_op_pool.map_runs(intra_op_pool.split_runs(n, per), worker)
    return out


def _tile_scratch(scratch, taps, rows, c, o, dtype):
    """(scratch, V [taps, rows, c], M [taps, rows, o]): a thread's tile buffers, grown when a
    run needs more. The views are contiguous: the compiled kernels take one memory layout
    only."""
    if scratch is None or len(scratch[0]) < taps * rows * c or \
            len(scratch[1]) < taps * rows * o:
        scratch = np.empty(taps * rows * c, dtype), np.empty(taps * rows * o, dtype)
    v, m = scratch
    return (scratch, v[:taps * rows * c].reshape(taps, rows, c),
            m[:taps * rows * o].reshape(taps, rows, o))


def _jit_worker(compiled, x, u, pads, th, tw, out, epilogue):
    input_tiles, output_tiles, _ = compiled
    c, o = x.shape[-1], u.shape[-1]

    def worker(pull):  # scratch of its own per thread, made on its first run
        scratch = None
        for s, e in pull:
            scratch, vk, mk = _tile_scratch(scratch, len(u), (e - s) * th * tw, c, o, x.dtype)
            input_tiles(x, s, e, pads[0], pads[2], th, tw, vk)
            np.matmul(vk, u, out=mk)
            output_tiles(mk, s, e, th, tw, out)
            if epilogue is not None:
                epilogue(out[s:e], s * out[0].size)
    return worker


def _numpy_worker(x, u, pads, th, tw, out, epilogue):
    n, h, wd, c = x.shape
    oh, ow, o = out.shape[1], out.shape[2], out.shape[3]
    pt, _, pl, _ = pads
    # Every tile row/column needs 4 input pixels: pad the odd remainder with zeros too.
    hp, wp = 2 * th + 2, 2 * tw + 2

    def worker(pull):  # scratch of its own per thread, made on its first run
        padded = None
        for s, e in pull:
            k = e - s
            if padded is None or len(padded) < k:
                padded = np.zeros((k, hp, wp, c), x.dtype)
                v = np.empty((16, k * th * tw, c), x.dtype)
                m = np.empty((16, k * th * tw, o), x.dtype)
                y = np.empty((k, 2 * th, 2 * tw, o), x.dtype)
            padded[:k, pt:pt + h, pl:pl + wd] = x[s:e]
            vk, mk = v[:, :k * th * tw], m[:, :k * th * tw]
            _input_tiles(padded[:k], th, tw, vk)
            np.matmul(vk, u, out=mk)
            _output_tiles(mk, k, th, tw, y[:k])
            out[s:e] = y[:k, :oh, :ow]
            if epilogue is not None:
                epilogue(out[s:e], s * out[0].size)
    return worker


def filter_grad3x3(x, g, pads, m=2):
    """The filter gradient of conv3x3 (x [N, H, W, C], cotangent g [N, OH, OW, O]) by the
    same transforms of F(m x m, 3x3): dU[k] = V[k]^T @ (the output transform's transpose
    of g)[k], summed over runs of images, then dw = G^T dU G. 2.25x (m=2) or 4x (m=4)
    fewer multiply-adds than im2col's. Needs numba (`numba_winograd.kernels(m)`); for m=2
    returns None without it."""
    compiled = _compiled(m, x)
    if compiled is None:
        return None
    input_tiles, _, output_tiles_t = compiled
    n, _, _, c = x.shape
    oh, ow, o = g.shape[1:]
    th, tw = -(-oh // m), -(-ow // m)
    taps = (m + 2) ** 2
    x, g = np.ascontiguousarray(x), np.ascontiguousarray(g, dtype=x.dtype)
    per = _run_images(th, tw, c, o, x.itemsize, m)

    def worker(pull):  # each thread sums its own runs; the partial sums add up
        du = scratch = None
        for s, e in pull:
            scratch, vk, mk = _tile_scratch(scratch, taps, (e - s) * th * tw, c, o, x.dtype)
            input_tiles(x, s, e, pads[0], pads[2], th, tw, vk)
            output_tiles_t(g, s, e, th, tw, mk)
            part = np.matmul(vk.transpose(0, 2, 1), mk)
            if du is None:
                du = part
            else:
                du += part
        return du
    du = intra_op_pool.sum_partials(
        intra_op_pool.map_runs(intra_op_pool.split_runs(n, per), worker),
        lambda: np.zeros((taps, c, o), x.dtype))
    gm = _G[m].astype(x.dtype)
    return np.einsum("pa,pqco,qb->abco", gm, du.reshape(m + 2, m + 2, c, o), gm,
                     optimize=True)
