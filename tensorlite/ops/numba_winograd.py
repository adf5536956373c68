"""Winograd input and output transforms compiled with numba (the `jit` extra), for
F(2x2, 3x3) and F(4x4, 3x3) (winograd.py has the matrices).

NumPy does each transform as a dozen passes over strided views with temporaries, which
cost more than the 16 GEMMs they save (conv 32x32x32 -> 32: 11-12 ms against im2col's
7.5-8.5 ms on one thread). These kernels read each 4x4 tile once, with the padding as
bounds checks (no padded copy), and release the GIL, so intra-op threads run them side
by side. `winograd.conv3x3` uses them when numba is available, else its NumPy transforms
(F(2x2, 3x3) only); both give the same sums (tests force each). Compiled on first use,
cached on disk.

F(4x4, 3x3) reads a 6x6 tile per 4x4 output: 36 products per 16 outputs against F(2x2)'s
16 per 4, so its GEMMs do 0.56x the work, for transforms about twice as costly per output.
Its constants (2, 4, 5, 8) are read from an array of the data's dtype: a literal would make
numba compute float32 tiles in float64. Its kernels may fuse a multiply and an add into one
rounding (LLVM's `contract` flag: the input transform 7% faster); nothing else is relaxed,
so infinities and NaNs propagate as in NumPy.

Example:
    >>> kernels(4)   # (input_tiles, output_tiles, output_tiles_transposed), or None
"""
import numpy as np

from tensorlite.ops.numba_backend import available, compiled

__all__ = ["available", "kernels"]


def _build(numba):
    @numba.njit(cache=True, nogil=True)
    def input_tiles(x, s, e, pt, pl, th, tw, v):
        """Images s..e of x [N, H, W, C] -> v [16, (e-s)*th*tw, C]: Bt d B for each 4x4
        tile d (stride 2) of the image padded by pt rows on top and pl columns on the left
        (pixels outside the image read as zero)."""
        _, h, w, c = x.shape
        d = np.zeros((4, 4, c), x.dtype)
        t = 0
        for b in range(s, e):
            for ti in range(th):
                r0 = 2 * ti - pt
                for tj in range(tw):
                    c0 = 2 * tj - pl
                    for i in range(4):  # the tile, zero outside the image
                        r = r0 + i
                        for j in range(4):
                            q = c0 + j
                            if 0 <= r < h and 0 <= q < w:
                                for k in range(c):
                                    d[i, j, k] = x[b, r, q, k]
                            else:
                                for k in range(c):
                                    d[i, j, k] = 0
                    for j in range(4):  # Bt along the rows, in place
                        for k in range(c):
                            a0, a1, a2, a3 = d[0, j, k], d[1, j, k], d[2, j, k], d[3, j, k]
                            d[0, j, k] = a0 - a2
                            d[1, j, k] = a1 + a2
                            d[2, j, k] = a2 - a1
                            d[3, j, k] = a1 - a3
                    for i in range(4):  # and B along the columns, into v
                        for k in range(c):
                            a0, a1, a2, a3 = d[i, 0, k], d[i, 1, k], d[i, 2, k], d[i, 3, k]
                            v[4 * i, t, k] = a0 - a2
                            v[4 * i + 1, t, k] = a1 + a2
                            v[4 * i + 2, t, k] = a2 - a1
                            v[4 * i + 3, t, k] = a1 - a3
                    t += 1

    @numba.njit(cache=True, nogil=True)
    def output_tiles(m, s, e, th, tw, out):
        """m [16, (e-s)*th*tw, O] -> At m A, each 2x2 output tile written into images s..e
        of out [N, OH, OW, O] (the part inside it)."""
        _, oh, ow, o = out.shape
        r = np.empty((2, 4, o), m.dtype)
        t = 0
        for b in range(s, e):
            for ti in range(th):
                for tj in range(tw):
                    for j in range(4):  # At along the tile rows
                        for k in range(o):
                            a0, a1 = m[j, t, k], m[4 + j, t, k]
                            a2, a3 = m[8 + j, t, k], m[12 + j, t, k]
                            r[0, j, k] = a0 + a1 + a2
                            r[1, j, k] = a1 - a2 - a3
                    for i in range(2):
                        y = 2 * ti + i
                        if y >= oh:
                            continue
                        for k in range(o):  # and A along the columns
                            out[b, y, 2 * tj, k] = r[i, 0, k] + r[i, 1, k] + r[i, 2, k]
                        if 2 * tj + 1 < ow:
                            for k in range(o):
                                out[b, y, 2 * tj + 1, k] = r[i, 1, k] - r[i, 2, k] - r[i, 3, k]
                    t += 1

    @numba.njit(cache=True, nogil=True)
    def output_tiles_transposed(g, s, e, th, tw, m):
        """The output transform's transpose, for the filter gradient: images s..e of the
        cotangent g [N, OH, OW, O] -> m [16, (e-s)*th*tw, O], A y At for each 2x2 tile y
        (zero past the edge of g)."""
        _, oh, ow, o = g.shape
        r = np.empty((4, 2, o), g.dtype)
        t = 0
        for b in range(s, e):
            for ti in range(th):
                for tj in range(tw):
                    for q in range(2):  # A along the tile rows: y0, y0+y1, y0-y1, -y1
                        x = 2 * tj + q
                        for k in range(o):
                            y0 = g[b, 2 * ti, x, k] if x < ow else 0
                            y1 = g[b, 2 * ti + 1, x, k] if x < ow and 2 * ti + 1 < oh else 0
                            r[0, q, k] = y0
                            r[1, q, k] = y0 + y1
                            r[2, q, k] = y0 - y1
                            r[3, q, k] = -y1
                    for i in range(4):  # and At along the columns, into m
                        for k in range(o):
                            a0, a1 = r[i, 0, k], r[i, 1, k]
                            m[4 * i, t, k] = a0
                            m[4 * i + 1, t, k] = a0 + a1
                            m[4 * i + 2, t, k] = a0 - a1
                            m[4 * i + 3, t, k] = -a1
                    t += 1
    return input_tiles, output_tiles, output_tiles_transposed


_CONTRACT = {"contract"}


def _build4(numba):
    @numba.njit(cache=True, nogil=True, fastmath=_CONTRACT)
    def input_tiles(x, s, e, pt, pl, th, tw, v):
        """Images s..e of x [N, H, W, C] -> v [36, (e-s)*th*tw, C]: Bt d B for each 6x6
        tile d (stride 4) of the image padded by pt rows on top and pl columns on the left
        (pixels outside the image read as zero)."""
        _, h, w, c = x.shape
        k4 = np.array([2, 4, 5, 8]).astype(x.dtype)  # (see the module's docstring)
        c2, c4, c5 = k4[0], k4[1], k4[2]
        d = np.zeros((6, 6, c), x.dtype)
        t = 0
        for b in range(s, e):
            for ti in range(th):
                r0 = 4 * ti - pt
                for tj in range(tw):
                    c0 = 4 * tj - pl
                    for i in range(6):  # the tile, zero outside the image
                        r = r0 + i
                        for j in range(6):
                            q = c0 + j
                            if 0 <= r < h and 0 <= q < w:
                                for k in range(c):
                                    d[i, j, k] = x[b, r, q, k]
                            else:
                                for k in range(c):
                                    d[i, j, k] = 0
                    for j in range(6):  # Bt along the rows, in place
                        for k in range(c):
                            a0, a1, a2 = d[0, j, k], d[1, j, k], d[2, j, k]
                            a3, a4, a5 = d[3, j, k], d[4, j, k], d[5, j, k]
                            p, q = a4 - a2, a3 - a1
                            d[0, j, k] = c4 * a0 - c5 * a2 + a4
                            d[1, j, k] = (a3 + a4) - c4 * (a1 + a2)
                            d[2, j, k] = (a4 - a3) + c4 * (a1 - a2)
                            d[3, j, k] = p + c2 * q
                            d[4, j, k] = p - c2 * q
                            d[5, j, k] = c4 * a1 - c5 * a3 + a5
                    for i in range(6):  # and B along the columns, into v
                        for k in range(c):
                            a0, a1, a2 = d[i, 0, k], d[i, 1, k], d[i, 2, k]
                            a3, a4, a5 = d[i, 3, k], d[i, 4, k], d[i, 5, k]
                            p, q = a4 - a2, a3 - a1
                            v[6 * i, t, k] = c4 * a0 - c5 * a2 + a4
                            v[6 * i + 1, t, k] = (a3 + a4) - c4 * (a1 + a2)
                            v[6 * i + 2, t, k] = (a4 - a3) + c4 * (a1 - a2)
                            v[6 * i + 3, t, k] = p + c2 * q
                            v[6 * i + 4, t, k] = p - c2 * q
                            v[6 * i + 5, t, k] = c4 * a1 - c5 * a3 + a5
                    t += 1

    @numba.njit(cache=True, nogil=True, fastmath=_CONTRACT)
    def output_tiles(m, s, e, th, tw, out):
        """m [36, (e-s)*th*tw, O] -> At m A, each 4x4 output tile written into images s..e
        of out [N, OH, OW, O] (the part inside it)."""
        _, oh, ow, o = out.shape
        k4 = np.array([2, 4, 5, 8]).astype(m.dtype)
        c2, c4, c8 = k4[0], k4[1], k4[3]
        r = np.empty((4, 6, o), m.dtype)
        y4 = np.empty((4, o), m.dtype)
        t = 0
        for b in range(s, e):
            for ti in range(th):
                for tj in range(tw):
                    for j in range(6):  # At along the tile rows
                        for k in range(o):
                            a0, a1, a2 = m[j, t, k], m[6 + j, t, k], m[12 + j, t, k]
                            a3, a4, a5 = m[18 + j, t, k], m[24 + j, t, k], m[30 + j, t, k]
                            sp, sm, tp, tm = a1 + a2, a1 - a2, a3 + a4, a3 - a4
                            r[0, j, k] = a0 + sp + tp
                            r[1, j, k] = sm + c2 * tm
                            r[2, j, k] = sp + c4 * tp
                            r[3, j, k] = sm + c8 * tm + a5
                    x0 = 4 * tj
                    cols = min(4, ow - x0)
                    for i in range(min(4, oh - 4 * ti)):
                        y = 4 * ti + i
                        for k in range(o):  # and A along the columns
                            a0, a1, a2 = r[i, 0, k], r[i, 1, k], r[i, 2, k]
                            a3, a4, a5 = r[i, 3, k], r[i, 4, k], r[i, 5, k]
                            sp, sm, tp, tm = a1 + a2, a1 - a2, a3 + a4, a3 - a4
                            y4[0, k] = a0 + sp + tp
                            y4[1, k] = sm + c2 * tm
                            y4[2, k] = sp + c4 * tp
                            y4[3, k] = sm + c8 * tm + a5
                        for q in range(cols):
                            for k in range(o):
                                out[b, y, x0 + q, k] = y4[q, k]
                    t += 1

    @numba.njit(cache=True, nogil=True, fastmath=_CONTRACT)
    def output_tiles_transposed(g, s, e, th, tw, m):
        """The output transform's transpose, for the filter gradient: images s..e of the
        cotangent g [N, OH, OW, O] -> m [36, (e-s)*th*tw, O], A y At for each 4x4 tile y
        (zero past the edge of g)."""
        _, oh, ow, o = g.shape
        k4 = np.array([2, 4, 5, 8]).astype(g.dtype)
        c2, c4, c8 = k4[0], k4[1], k4[3]
        r = np.zeros((6, 4, o), g.dtype)
        t = 0
        for b in range(s, e):
            for ti in range(th):
                for tj in range(tw):
                    for q in range(4):  # A along the tile rows
                        x = 4 * tj + q
                        for k in range(o):
                            y0 = g[b, 4 * ti, x, k] if x < ow else 0
                            y1 = g[b, 4 * ti + 1, x, k] if x < ow and 4 * ti + 1 < oh else 0
                            y2 = g[b, 4 * ti + 2, x, k] if x < ow and 4 * ti + 2 < oh else 0
                            y3 = g[b, 4 * ti + 3, x, k] if x < ow and 4 * ti + 3 < oh else 0
                            ev, od = y0 + y2, y1 + y3
                            ev4, od4 = y0 + c4 * y2, c2 * y1 + c8 * y3
                            r[0, q, k] = y0
                            r[1, q, k] = ev + od
                            r[2, q, k] = ev - od
                            r[3, q, k] = ev4 + od4
                            r[4, q, k] = ev4 - od4
                            r[5, q, k] = y3
                    for i in range(6):  # and At along the columns, into m
                        for k in range(o):
                            y0, y1, y2, y3 = r[i, 0, k], r[i, 1, k], r[i, 2, k], r[i, 3, k]
                            ev, od = y0 + y2, y1 + y3
                            ev4, od4 = y0 + c4 * y2, c2 * y1 + c8 * y3
                            m[6 * i, t, k] = y0
                            m[6 * i + 1, t, k] = ev + od
                            m[6 * i + 2, t, k] = ev - od
                            m[6 * i + 3, t, k] = ev4 + od4
                            m[6 * i + 4, t, k] = ev4 - od4
                            m[6 * i + 5, t, k] = y3
                    t += 1
    return input_tiles, output_tiles, output_tiles_transposed


_BUILDERS = {2: ("winograd_transforms", _build), 4: ("winograd4_transforms", _build4)}


def kernels(m=2):
    """(input_tiles, output_tiles, output_tiles_transposed) of F(m x m, 3x3) compiled, or
    None where numba is unavailable."""
    return compiled(*_BUILDERS[m]) if available() else None
