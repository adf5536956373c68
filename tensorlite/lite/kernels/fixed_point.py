"""TensorFlow Lite's fixed-point requantization arithmetic, vectorised over NumPy int64 arrays.

A real multiplier M (e.g. input_scale * filter_scale / output_scale) is stored as a 31-bit
significand and a power-of-two shift (`quantize_multiplier`); an int32 accumulator is scaled
by it, so int8 results match LiteRT's bit for bit. Two forms: the reference kernels'
(CONV_2D, DEPTHWISE_CONV_2D, ADD, SUB, MUL) rounding doubling high multiply then rounding
right shift (`multiply_by_quantized_multiplier_double_rounding`), and the single 64-bit
product rounded by the final shift that LiteRT's per-channel FULLY_CONNECTED (through its
GEMM library) uses (`multiply_by_quantized_multiplier`); the tests compare with LiteRT
at ties, where the two differ by one.

Example:
    >>> m, s = quantize_multiplier(0.25)
    >>> int(multiply_by_quantized_multiplier(np.int64(1000), m, s))
    250
"""
import math

import numpy as np

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


def round_half_away(x):
    """C's std::round: halves round away from zero (NumPy's round goes to even)."""
    x = np.asarray(x, np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def quantize_multiplier(real):
    """(significand int32, shift) with real == significand * 2**(shift - 31)."""
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(float(real))
    q_fixed = int(round_half_away(q * (1 << 31)))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if shift > 30:  # single rounding shifts by at most 31 - (-30)... and left by 30
        return (1 << 31) - 1, 30
    return q_fixed, shift


def quantize_multipliers(reals):
    """Per-channel significands and shifts as int64 arrays."""
    pairs = [quantize_multiplier(r) for r in np.atleast_1d(reals)]
    return (np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs],
                                                                 np.int64))


def _doubling_high_mul(a, b):
    """SaturatingRoundingDoublingHighMul for int32 values held in int64 arrays."""
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    total = ab + nudge
    high = np.where(total >= 0, total >> 31, -((-total) >> 31))  # C division truncates
    return np.where((a == _INT32_MIN) & (b == _INT32_MIN), _INT32_MAX, high)


def rounding_divide_by_pot(x, exponent):
    """RoundingDivideByPOT: x / 2**exponent rounded to nearest, halves away from zero."""
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(x, multiplier, shift):
    """TFLite's MultiplyByQuantizedMultiplier as LiteRT is built (single rounding: one
    64-bit product, rounded half up by the final shift); `multiplier` and `shift` may be
    per-channel arrays broadcasting against x."""
    x = np.asarray(x, np.int64)
    total = 31 - np.asarray(shift, np.int64)
    rounding = np.int64(1) << (total - 1)
    return (x * np.asarray(multiplier, np.int64) + rounding) >> total


def multiply_by_quantized_multiplier_double_rounding(x, multiplier, shift):
    """The older double-rounding form (gemmlowp's rounding doubling high multiply, then a
    rounding right shift), kept for builds without single rounding."""
    x = np.asarray(x, np.int64)
    shift = np.asarray(shift, np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    scaled = np.clip(x * (np.int64(1) << left), _INT32_MIN, _INT32_MAX)
    return rounding_divide_by_pot(_doubling_high_mul(scaled, np.asarray(multiplier, np.int64)),
                                  right)


def saturating_rounding_multiply_by_pot(x, exponent):
    """gemmlowp's SaturatingRoundingMultiplyByPOT<exponent> on int32 values: a saturating
    left shift, or a rounding right shift for a negative exponent."""
    x = np.asarray(x, np.int64)
    if exponent <= 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, _INT32_MAX, np.where(x < -threshold, _INT32_MIN,
                                                         x << exponent))


def inv_sqrt_quantized_multiplier(value, reverse_shift=-1):
    """TFLite's GetInvSqrtQuantizedMultiplierExp for one int32 `value` >= 0: (significand,
    shift) of 1/sqrt(value) by five Newton-Raphson steps in gemmlowp's 3-integer-bit fixed
    point; `reverse_shift` -1 (kReverseShift) makes the shift a left shift.

    Example:
        >>> inv_sqrt_quantized_multiplier(4)  # 0.5 * 2**31, within the iteration's error
        (1073741828, 0)
    """
    value = int(value)
    if value <= 1:  # 0 and 1 as TFLite treats them: the largest multiplier
        return _INT32_MAX, 0
    shift = 11
    while value >= 1 << 29:
        value //= 4
        shift += 1
    pairs = ((32 - value.bit_length()) - 1) // 2 - 1  # CountLeadingZeros - 1, in bit pairs
    shift -= pairs
    value <<= 2 * pairs
    half_input = rounding_divide_by_pot(np.int64(value >> 1), 1)
    half_three = np.int64((1 << 28) + (1 << 27))
    x = np.int64(1 << 28)  # one, with 3 integer bits
    for _ in range(5):
        cube = saturating_rounding_multiply_by_pot(
            _doubling_high_mul(_doubling_high_mul(x, x), x), 6)
        x = saturating_rounding_multiply_by_pot(
            _doubling_high_mul(half_three, x) - _doubling_high_mul(half_input, cube), 3)
    x = int(_doubling_high_mul(x, np.int64(1518500250)))  # times sqrt(2)/2
    if shift < 0:
        x = ((x << -shift) + (1 << 31)) % (1 << 32) - (1 << 31)  # C's int32 left shift
        shift = 0
    return x, shift * reverse_shift


def activation_range(activation, scale, zero_point, dtype):
    """CalculateActivationRangeQuantized: the clamp of a fused activation in the output's
    quantized domain."""
    info = np.iinfo(dtype)
    lo, hi = info.min, info.max

    def q(v):
        return zero_point + int(round_half_away(np.float32(v) / np.float32(scale)))
    if activation == 1:  # RELU
        lo = max(lo, q(0.0))
    elif activation == 2:  # RELU_N1_TO_1
        lo, hi = max(lo, q(-1.0)), min(hi, q(1.0))
    elif activation == 3:  # RELU6
        lo, hi = max(lo, q(0.0)), min(hi, q(6.0))
    elif activation != 0:
        raise ValueError(f"fused activation {activation} has no quantized form")
    return lo, hi
