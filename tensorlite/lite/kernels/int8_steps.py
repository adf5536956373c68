"""Bound int8 steps for convolutions and fully-connected layers: exact integer products on
float32 BLAS, and requantization in one pass.

Products: an int8 (or uint8) activation times an int8 weight is at most 255 * 128 in
magnitude, so every partial sum of up to `block_size` such products is an integer below
2**24, which float32 holds exactly whatever order BLAS adds in. Rows longer than a block are
cut into blocks whose float32 results are added in float64 (exact up to 2**53). The
activation's zero point is taken out after the product, sum((x - zp) * w) = sum(x * w) -
zp * sum(w), and folded into the bias, so the im2col matrix is the int8 input converted.

Requantization (TFLite's MultiplyByQuantizedMultiplier and the clamp of the fused
activation) is bit-exact with LiteRT: one compiled loop with numba (the `jit` extra), else
in-place NumPy passes over preallocated int64 buffers. The reference kernels' rounding
doubling high multiply followed by a rounding right shift (CONV_2D) simplifies, for a
positive multiplier, to floor((a * m + 2**30) / 2**31): gemmlowp's nudge of 1 - 2**30 for a
negative product with C's truncating division equals that floor (ceil(a / n) ==
floor((a + n - 1) / n)). FULLY_CONNECTED's single rounding is one product and one shift.

Example:
    >>> requant = Requantizer(mult, shift, bias, zp=-128, clamp=(-128, 127), rows=900,
    ...                       double_rounding=True)
    >>> requant(acc_float32, out_int8)   # out_int8[...] = the requantized accumulators
"""
import numpy as np

from tensorlite.lite.kernels.fixed_point import (multiply_by_quantized_multiplier,
                                                 multiply_by_quantized_multiplier_double_rounding)
from tensorlite.ops.numba_backend import compiled, jitable


def block_size(activation_dtype):
    """How many products float32 sums exactly for int8 or uint8 activations."""
    largest = 255 if np.dtype(activation_dtype) == np.uint8 else 128
    return (1 << 24) // (largest * 128)


class IntegerProduct:
    """rows [R, K] (float32 holding integers) @ the int8 weights [K, O], exactly, into a
    float32 (one block) or float64 (several) accumulator bound at construction."""

    def __init__(self, weights_ko, rows, activation_dtype):
        k = weights_ko.shape[0]
        step = block_size(activation_dtype)
        self.blocks = [(a, min(a + step, k), np.ascontiguousarray(weights_ko[a:a + step],
                                                                  np.float32))
                       for a in range(0, k, step)]
        self.weight_sums = weights_ko.astype(np.int64).sum(axis=0)
        channels = weights_ko.shape[1]
        if len(self.blocks) == 1:
            self.acc = np.empty((rows, channels), np.float32)
            self.part = None
        else:
            self.acc = np.empty((rows, channels), np.float64)
            self.part = np.empty((rows, channels), np.float32)

    def __call__(self, matrix):
        """The accumulator of `matrix` [R, K] times the weights."""
        if self.part is None:
            return np.matmul(matrix, self.blocks[0][2], out=self.acc)
        self.acc[...] = 0
        for a, b, w in self.blocks:
            np.matmul(matrix[:, a:b], w, out=self.part)
            self.acc += self.part
        return self.acc


def requantize_one(a, mult, e, out_zp, lo, hi, double_rounding):
    """One int64 accumulator (bias included) requantized and clamped."""
    # branch-free (comparisons as 0/1 integers), so that LLVM vectorizes the loops
    # that call it; e == 0 needs no case of its own: mask 0, nothing rounds
    if double_rounding:
        h = (a * mult + (1 << 30)) >> 31
        mask = (np.int64(1) << e) - 1
        threshold = (mask >> 1) + np.int64(h < 0)
        h = (h >> e) + np.int64((h & mask) > threshold)
    else:
        h = (a * mult + (np.int64(1) << (e - 1))) >> e
    v = h + out_zp
    v = lo if v < lo else v
    return hi if v > hi else v


def _build(numba):
    jitable(requantize_one)

    @numba.njit(cache=True, nogil=True)
    def requantize(acc, offset, mult, right, out_zp, lo, hi, double_rounding, out):
        rows, channels = acc.shape
        for i in range(rows):
            for j in range(channels):
                a = np.int64(acc[i, j]) + offset[j]
                out[i, j] = requantize_one(a, mult[j], right[j], out_zp, lo, hi,
                                           double_rounding)
    return requantize


def _build_dots(numba):
    jitable(requantize_one)

    @numba.njit(cache=True, nogil=True)
    def dots_requantize(rows, weights, offset, mult, right, out_zp, lo, hi, double_rounding,
                        out):
        """out[i, j] = requantize(rows[i] . weights[j] + offset[j]): each dot product a
        contiguous int16 multiply-add reduction in int32 (LLVM's pmaddwd/vpdpwssd)."""
        n, k = rows.shape
        sums = np.empty(weights.shape[0], np.int32)
        for i in range(n):
            for j in range(weights.shape[0]):  # apart from the requantization, or LLVM
                acc = np.int32(0)  # vectorizes this loop without the multiply-add
                for t in range(k):
                    acc += np.int32(np.int16(rows[i, t]) * np.int16(weights[j, t]))
                sums[j] = acc
            for j in range(weights.shape[0]):
                out[i, j] = requantize_one(np.int64(sums[j]) + offset[j], mult[j], right[j],
                                           out_zp, lo, hi, double_rounding)
    return dots_requantize


def _build_im2col(numba, xor):
    @numba.njit(cache=True, nogil=True)
    def im2col(source, kh, kw, sh, sw, dh, dw, oh, ow, flip, matrix):
        """The im2col matrix [N*OH*OW, >= KH*KW*C] (float32, uint8 or int16) of a padded
        NHWC int8/uint8 array, converted while copied; where `xor` (a constant of the
        build: its branches are compiled away, as the XOR's int64 would slow the plain
        copy) each value XORed with `flip` (0x80 on int8 viewed as uint8 gives the unsigned
        x + 128 that VNNI multiplies). Without dilation a window row's KW*C values are one
        contiguous run of the source row (one vectorized loop each); columns past KH*KW*C
        are left as they are (a GEMM kernel's zero padding)."""
        n, hp, wp, c = source.shape
        flat = source.reshape(n, hp, wp * c)
        r = 0
        for b in range(n):
            for y in range(oh):
                for x in range(ow):
                    col = 0
                    for i in range(kh):
                        seg = flat[b, y * sh + i * dh]
                        if dw == 1:
                            src = seg[x * sw * c:(x * sw + kw) * c]
                            dst = matrix[r, col:col + kw * c]
                            for t in range(kw * c):
                                dst[t] = (src[t] ^ flip) if xor else src[t]
                            col += kw * c
                        else:
                            for j in range(kw):
                                base = (x * sw + j * dw) * c
                                for t in range(c):
                                    matrix[r, col + t] = (seg[base + t] ^ flip) if xor else \
                                        seg[base + t]
                                col += c
                    r += 1
    return im2col


# int8 x int8 (or uint8 x int8) products summed in int32 stay exact up to this depth
DOTS_MAX_DEPTH = ((1 << 31) - 1) // (255 * 128)
# at most this many rows go through the compiled dot products; more are a GEMM for BLAS
DOTS_MAX_ROWS = 4


class DotsRequantizer:
    """Few int8/uint8 rows [R, K] times int8 weights [O, K] (the file's layout, no copy),
    summed in int32 by a compiled loop and requantized in the same loop, bit-exact with
    `IntegerProduct` + `Requantizer`. `make` returns None without numba, for rows beyond
    DOTS_MAX_ROWS, depths beyond DOTS_MAX_DEPTH, or a left-shifting double rounding: the
    float32 BLAS path then serves (it wins on GEMMs, this on matrix-vector products, where
    it reads a quarter of float32's bytes)."""

    @classmethod
    def make(cls, weights_ok, rows, mult, shift, offset, zp, clamp, double_rounding):
        mult, shift = np.asarray(mult, np.int64), np.asarray(shift, np.int64)
        if rows > DOTS_MAX_ROWS or weights_ok.shape[1] > DOTS_MAX_DEPTH or \
                (double_rounding and (shift > 0).any()):
            return None
        kernel = compiled("lite_dots_requantize", _build_dots)
        return None if kernel is None else cls(kernel, weights_ok, mult, shift, offset, zp,
                                               clamp, double_rounding)

    def __init__(self, kernel, weights_ok, mult, shift, offset, zp, clamp, double_rounding):
        self.kernel, self.weights = kernel, np.ascontiguousarray(weights_ok)
        self.mult, self.double = mult, bool(double_rounding)
        self.right = np.maximum(-shift, 0) if double_rounding else 31 - shift
        self.offset = np.asarray(offset, np.int64)
        self.zp, (self.lo, self.hi) = int(zp), (int(clamp[0]), int(clamp[1]))

    def __call__(self, rows, out2d):
        """out2d[...] = the requantized products of `rows` [R, K] (int8/uint8)."""
        self.kernel(rows, self.weights, self.offset, self.mult, self.right, self.zp, self.lo,
                    self.hi, self.double, out2d)


def im2col_step(source, cols, matrix, rows, options, flip=0):
    """A no-argument function writing the im2col `matrix` (float32, uint8 or int16) of the
    padded int8/uint8 `source` (whose strided windows are `cols`; `rows` is the matrix seen
    in their shape; None for a GEMM kernel's padded matrix), the bytes XORed with `flip`:
    compiled in one pass with numba, else (flip 0, `rows` given) NumPy's strided copy."""
    kernel = compiled("lite_im2col_xor", lambda numba: _build_im2col(numba, True)) if flip \
        else compiled("lite_im2col", lambda numba: _build_im2col(numba, False))
    if kernel is None or not source.flags.c_contiguous:
        if flip or rows is None:
            raise NotImplementedError("a flipped or padded (GEMM kernel) im2col is compiled "
                                      "only: it needs numba (the jit extra) and a contiguous "
                                      "source")
        return lambda: np.copyto(rows, cols)
    _, oh, ow, kh, kw, _ = cols.shape
    data = source.view(np.uint8) if flip else source
    args = (kh, kw, options["stride_h"], options["stride_w"],
            options.get("dilation_h_factor", 1), options.get("dilation_w_factor", 1), oh, ow,
            data.dtype.type(flip))
    return lambda: kernel(data, *args, matrix)


class Requantizer:
    """The int8/uint8 outputs of int32 accumulators (given as integer-valued floats) plus a
    per-channel bias, by per-channel multipliers and shifts, bit-exact with LiteRT."""

    def __init__(self, mult, shift, bias, zp, clamp, rows, double_rounding):
        mult, shift = np.asarray(mult, np.int64), np.asarray(shift, np.int64)
        self.generic = bool(double_rounding and (shift > 0).any())  # saturating left shift
        self.mult, self.shift, self.double = mult, shift, double_rounding
        self.bias = np.asarray(bias, np.int64)
        self.zp, (self.lo, self.hi) = int(zp), (int(clamp[0]), int(clamp[1]))
        # numba's right shift per channel: -shift for double rounding, 31 - shift for single
        self.right = np.maximum(-shift, 0) if double_rounding else 31 - shift
        self.kernel = None if self.generic else compiled("lite_requantize", _build)
        if self.kernel is None:
            self.buf = np.empty((rows, len(mult)), np.int64)
            self.rem = np.empty_like(self.buf)
            self.flag = np.empty(self.buf.shape, bool)
            self.mask = (np.int64(1) << self.right) - 1
            self.half = self.mask >> 1
            self.add = self.bias * mult + ((1 << 30) if double_rounding else
                                           (np.int64(1) << (self.right - 1)))

    def __call__(self, acc, out):
        """out[...] = the requantized `acc` [R, O] (out: int8/uint8 of R*O elements)."""
        out2d = out.reshape(acc.shape)
        if self.kernel is not None:
            self.kernel(acc, self.bias, self.mult, self.right, self.zp, self.lo, self.hi,
                        self.double, out2d)
        elif self.generic:
            a = acc.astype(np.int64) + self.bias
            rounding = multiply_by_quantized_multiplier_double_rounding if self.double else \
                multiply_by_quantized_multiplier
            np.clip(rounding(a, self.mult, self.shift) + self.zp, self.lo, self.hi, out=out2d,
                    casting="unsafe")
        else:
            self._numpy(acc, out2d)

    def _numpy(self, acc, out2d):
        h = self.buf
        np.copyto(h, acc, casting="unsafe")  # integer-valued floats: exact
        np.multiply(h, self.mult, out=h)  # (a + bias) * m + rounding = a * m + add
        np.add(h, self.add, out=h)
        if self.double:
            np.right_shift(h, 31, out=h)
            if self.right.any():  # the rounding right shift, halves away from zero
                np.bitwise_and(h, self.mask, out=self.rem)
                np.right_shift(h, self.right, out=h)
                np.less(h, 0, out=self.flag)
                np.subtract(self.rem, self.flag, out=self.rem)
                np.greater(self.rem, self.half, out=self.flag)
                np.add(h, self.flag, out=h)
        else:
            np.right_shift(h, self.right, out=h)
        np.add(h, self.zp, out=h)
        np.clip(h, self.lo, self.hi, out=out2d, casting="unsafe")  # in range: exact
