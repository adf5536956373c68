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
from tensorlite.ops.numba_backend import compiled


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


def _build(numba):
    @numba.njit(cache=True, nogil=True)
    def requantize(acc, offset, mult, right, out_zp, lo, hi, double_rounding, out):
        rows, channels = acc.shape
        for i in range(rows):
            for j in range(channels):
                a = np.int64(acc[i, j]) + offset[j]
                if double_rounding:
                    h = (a * mult[j] + (1 << 30)) >> 31
                    e = right[j]
                    if e > 0:
                        mask = (np.int64(1) << e) - 1
                        rem = h & mask
                        threshold = (mask >> 1) + (1 if h < 0 else 0)
                        h = (h >> e) + (1 if rem > threshold else 0)
                else:
                    e = right[j]
                    h = (a * mult[j] + (np.int64(1) << (e - 1))) >> e
                v = h + out_zp
                out[i, j] = lo if v < lo else (hi if v > hi else v)
    return requantize


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
