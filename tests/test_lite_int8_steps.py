"""The bound int8 steps against TFLite's reference arithmetic (tensorlite/lite/kernels/
fixed_point.py, itself checked bit for bit against LiteRT in test_lite_interpreter.py):
exact blocked float32 products at the extremes of int8, and the one-pass requantization,
compiled (numba) and NumPy, both rounding forms, at ties and at the int32 edges."""
import numpy as np
import pytest

from tensorlite.lite.kernels import int8_steps
from tensorlite.lite.kernels.fixed_point import (activation_range,
                                                 multiply_by_quantized_multiplier,
                                                 multiply_by_quantized_multiplier_double_rounding,
                                                 quantize_multipliers)
from tensorlite.ops import numba_backend


@pytest.fixture(params=["numba", "numpy"])
def backend(request, monkeypatch):
    if request.param == "numba" and not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    if request.param == "numpy":
        monkeypatch.setitem(numba_backend._STATE, "on", False)
        monkeypatch.setattr(numba_backend, "_KERNELS", {})
    return request.param


@pytest.mark.parametrize("dtype, k", [(np.int8, 1024), (np.int8, 3000), (np.uint8, 515),
                                      (np.uint8, 1500)])
def test_integer_product_exact_at_the_extremes(dtype, k):
    rng = np.random.default_rng(k)
    info = np.iinfo(dtype)
    x = rng.choice([info.min, info.max], size=(7, k)).astype(dtype)
    x[0] = info.min  # the largest sums a block can hold
    w = rng.choice([-128, 127], size=(k, 5)).astype(np.int8)
    w[:, 0] = -128
    product = int8_steps.IntegerProduct(w, len(x), dtype)
    got = product(x.astype(np.float32))
    want = x.astype(np.int64) @ w.astype(np.int64)
    np.testing.assert_array_equal(got.astype(np.int64), want)
    assert len(product.blocks) == -(-k // int8_steps.block_size(dtype))
    np.testing.assert_array_equal(product.weight_sums, w.astype(np.int64).sum(0))


def _accumulators(rng, rows, channels):
    acc = rng.integers(-(1 << 22), 1 << 22, size=(rows, channels)).astype(np.float64)
    acc[0, :] = -(1 << 24)
    acc[1, :] = (1 << 24) - 1
    acc[2, :] = 0
    return acc


@pytest.mark.parametrize("double", [True, False], ids=["double_rounding", "single_rounding"])
@pytest.mark.parametrize("out_dtype, activation", [(np.int8, 0), (np.int8, 3), (np.uint8, 1)])
def test_requantizer_matches_the_reference_arithmetic(backend, double, out_dtype,
                                                      activation):
    rng = np.random.default_rng(3)
    channels = 6
    # multipliers well below one (the usual case) and one above it (a left shift)
    reals = np.array([1e-6, 3.1e-4, 0.0123, 0.5, 0.75, 1.6 if double else 0.999])
    mult, shift = quantize_multipliers(reals)
    bias = rng.integers(-(1 << 20), 1 << 20, size=channels)
    zp = -3 if out_dtype == np.int8 else 120
    clamp = activation_range(activation, 0.05, zp, out_dtype)
    acc = _accumulators(rng, 50, channels)
    # exact ties of the first (2**31) rounding for the 0.5 multiplier's channel
    acc[3:9, 3] = np.array([1, -1, 3, -3, 5, -5]) - bias[3]
    requant = int8_steps.Requantizer(mult, shift, bias, zp, clamp, len(acc), double)
    out = np.empty(acc.shape, out_dtype)
    requant(acc, out)
    total = acc.astype(np.int64) + bias
    rounding = multiply_by_quantized_multiplier_double_rounding if double else \
        multiply_by_quantized_multiplier
    want = np.clip(rounding(total, mult, shift) + zp, *clamp).astype(out_dtype)
    np.testing.assert_array_equal(out, want)


def test_float32_accumulators_requantize_alike(backend):
    rng = np.random.default_rng(9)
    mult, shift = quantize_multipliers(np.array([2.3e-3, 4.1e-2]))
    acc = rng.integers(-(1 << 23), 1 << 23, size=(40, 2)).astype(np.float32)  # exact
    requant = int8_steps.Requantizer(mult, shift, np.array([7, -7]), 0, (-128, 127), 40, True)
    out = np.empty((40, 2), np.int8)
    requant(acc, out)
    want = multiply_by_quantized_multiplier_double_rounding(
        acc.astype(np.int64) + np.array([7, -7]), mult, shift)
    np.testing.assert_array_equal(out, np.clip(want, -128, 127))
