"""Winograd F(2x2, 3x3): a 3x3 stride-1 convolution in NHWC with 16 [tiles, C] @ [C, O]
matmuls instead of one [pixels, 9C] @ [9C, O], so 2.25x fewer multiplications and a
transformed input 4x (not im2col's 9x) the size of the image.

Each 4x4 input tile d (stride 2) becomes V = Bt d B, each 3x3 filter U = G g Gt, and each
2x2 output tile Y = At (U * V) A, with
    Bt = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
    G  = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
    At = [[1, 1, 1, 0], [0, 1, -1, -1]]
(Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2015). The
transforms are additions of strided views of the padded image, so no tile is copied twice.

Example:
    >>> x = np.ones((1, 4, 4, 1), np.float32); w = np.ones((3, 3, 1, 1), np.float32)
    >>> conv3x3(x, w, (1, 1, 1, 1))[0, :, :, 0]
    array([[4., 6., 6., 4.], [6., 9., 9., 6.], [6., 9., 9., 6.], [4., 6., 6., 4.]], ...)
"""
import numpy as np

from tensorlite.framework import intra_op_pool
from tensorlite.ops import numba_winograd

_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
# Scratch per run of images (transformed tiles, products): what a core's L2 keeps hot. The
# CIFAR CNN step took 11-14% less time with runs of one image (the 32x32x32 layer's tiles
# are 460 KB) than with 4 MB runs, on 1 thread and on 2 (/work/prof-style A/B, t18).
CHUNK_BYTES = 512 << 10


def filter_transform(w):
    """[3, 3, C, O] -> U [16, C, O] (row-major over the 4x4 transformed tap)."""
    g = _G.astype(w.dtype)
    c, o = w.shape[2:]
    rows = (g @ w.reshape(3, 3 * c * o)).reshape(4, 3, c * o)  # G along the filter rows
    u = np.matmul(g, rows)  # and along its columns: [4, 4, C*O]
    return u.reshape(16, c, o)


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


def conv3x3(x, w, pads, u=None, jit=True, epilogue=None):
    """3x3 stride-1 cross-correlation of [N, H, W, C] with [3, 3, C, O] under pads
    (top, bottom, left, right); `u` is filter_transform(w) when already known. `jit`: use
    the numba transforms where numba is available (False: the NumPy ones). `epilogue(view)`
    is applied in place to each run of output images once computed (conv_select)."""
    n, h, wd, c = x.shape
    o = w.shape[-1]
    pt, pb, pl, pr = pads
    oh, ow = h + pt + pb - 2, wd + pl + pr - 2
    th, tw = -(-oh // 2), -(-ow // 2)
    u = filter_transform(w) if u is None else u
    out = np.empty((n, oh, ow, o), x.dtype)
    if n == 0 or oh <= 0 or ow <= 0:
        return out
    per = max(1, CHUNK_BYTES // max(16 * th * tw * max(c, o) * x.itemsize, 1))
    compiled = numba_winograd.kernels() if jit and x.dtype.char in "fd" else None
    if compiled is not None:
        worker = _jit_worker(compiled, np.ascontiguousarray(x), u, pads, th, tw, out, epilogue)
    else:
        worker = _numpy_worker(x, u, pads, th, tw, out, epilogue)
    intra_op_pool.map_runs(intra_op_pool.split_runs(n, per), worker)
    return out


def _tile_scratch(scratch, rows, c, o, dtype):
    """(scratch, V [16, rows, c], M [16, rows, o]): a thread's tile buffers, grown when a run
    needs more. The views are contiguous: the compiled kernels take one memory layout only."""
    if scratch is None or len(scratch[0]) < 16 * rows * c:
        scratch = np.empty(16 * rows * c, dtype), np.empty(16 * rows * o, dtype)
    v, m = scratch
    return scratch, v[:16 * rows * c].reshape(16, rows, c), m[:16 * rows * o].reshape(16, rows, o)


def _jit_worker(compiled, x, u, pads, th, tw, out, epilogue):
    input_tiles, output_tiles, _ = compiled
    c, o = x.shape[-1], u.shape[-1]

    def worker(pull):  # scratch of its own per thread, made on its first run
        scratch = None
        for s, e in pull:
            scratch, vk, mk = _tile_scratch(scratch, (e - s) * th * tw, c, o, x.dtype)
            input_tiles(x, s, e, pads[0], pads[2], th, tw, vk)
            np.matmul(vk, u, out=mk)
            output_tiles(mk, s, e, th, tw, out)
            if epilogue is not None:
                epilogue(out[s:e])
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
                epilogue(out[s:e])
    return worker


def filter_grad3x3(x, g, pads):
    """The filter gradient of conv3x3 (x [N, H, W, C], cotangent g [N, OH, OW, O]) by the
    same transforms: dU[k] = V[k]^T @ (the output transform's transpose of g)[k], summed
    over runs of images, then dw = G^T dU G. 2.25x fewer multiply-adds than im2col's.
    Needs numba (`numba_winograd.kernels()`); returns None without it."""
    compiled = numba_winograd.kernels() if x.dtype.char in "fd" else None
    if compiled is None:
        return None
    input_tiles, _, output_tiles_t = compiled
    n, _, _, c = x.shape
    oh, ow, o = g.shape[1:]
    th, tw = -(-oh // 2), -(-ow // 2)
    x, g = np.ascontiguousarray(x), np.ascontiguousarray(g, dtype=x.dtype)
    per = max(1, CHUNK_BYTES // max(16 * th * tw * max(c, o) * x.itemsize, 1))

    def worker(pull):  # each thread sums its own runs; the partial sums add up
        du = scratch = None
        for s, e in pull:
            scratch, vk, mk = _tile_scratch(scratch, (e - s) * th * tw, c, o, x.dtype)
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
        lambda: np.zeros((16, c, o), x.dtype))
    gm = _G.astype(x.dtype)
    return np.einsum("pa,pqco,qb->abco", gm, du.reshape(4, 4, c, o), gm, optimize=True)
