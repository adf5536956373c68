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


@pytest.mark.parametrize("double", [True, False], ids=["double_rounding", "single_rounding"])
@pytest.mark.parametrize("act_dtype, rows, k", [(np.int8, 1, 2304), (np.uint8, 3, 515),
                                                (np.int8, 4, int8_steps.DOTS_MAX_DEPTH)])
def test_dots_requantizer_matches_product_and_requantizer(double, act_dtype, rows, k):
    if not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    rng = np.random.default_rng(k)
    info = np.iinfo(act_dtype)
    x = rng.integers(info.min, info.max + 1, size=(rows, k)).astype(act_dtype)
    w = rng.integers(-127, 128, size=(6, k)).astype(np.int8)
    x[0] = info.min if act_dtype == np.int8 else info.max  # the largest int32 sums
    w[0], w[1] = -128, 127
    w[4] = 0  # a channel of small sums, odd and even, for the ties of its 0.5 multiplier
    w[4, :3] = [1, -1, 3]
    total = x.astype(np.int64) @ w.T.astype(np.int64)
    bias = rng.integers(-(1 << 20), 1 << 20, size=6) - 5 * w.astype(np.int64).sum(axis=1)
    bias[4] = 1
    # multipliers bringing each channel's sums into int8's range, so that rounding (not
    # the clamp) decides the outputs; one channel at exactly 0.5 for ties
    reals = 100.0 / (np.abs(total + bias).max(axis=0) + 1)
    reals[4] = 0.5
    mult, shift = quantize_multipliers(reals)
    clamp = activation_range(0, 0.05, -7, np.int8)
    dots = int8_steps.DotsRequantizer.make(w, rows, mult, shift, bias, -7, clamp, double)
    assert dots is not None
    got = np.empty((rows, 6), np.int8)
    dots(x, got)
    rounding = multiply_by_quantized_multiplier_double_rounding if double else \
        multiply_by_quantized_multiplier
    want = np.clip(rounding(total + bias, mult, shift) - 7, *clamp).astype(np.int8)
    np.testing.assert_array_equal(got, want)
    assert np.abs(total).max() > (1 << 24)  # beyond float32's exact integers: int32 sums
    assert np.ptp(got[:, :5].astype(int)) > 100  # outputs spread over the range, not clamped


def test_dots_requantizer_declines_what_it_cannot_do_exactly(backend):
    w = np.ones((3, 8), np.int8)
    args = (np.array([1 << 30] * 3), np.array([-3] * 3), np.zeros(3), 0, (-128, 127))
    made = int8_steps.DotsRequantizer.make(w, 1, *args, double_rounding=True)
    assert (made is None) == (backend == "numpy")
    assert int8_steps.DotsRequantizer.make(w, int8_steps.DOTS_MAX_ROWS + 1, *args,
                                           double_rounding=True) is None  # a GEMM: BLAS
    deep = np.ones((3, int8_steps.DOTS_MAX_DEPTH + 1), np.int8)  # int32 could overflow
    assert int8_steps.DotsRequantizer.make(deep, 1, *args, double_rounding=False) is None
    left = (np.array([1 << 30] * 3), np.array([2, 0, -1]), np.zeros(3), 0, (-128, 127))
    assert int8_steps.DotsRequantizer.make(w, 1, *left, double_rounding=True) is None


@pytest.mark.parametrize("options, shape", [
    ({"stride_h": 1, "stride_w": 1}, (1, 9, 11, 5)),
    ({"stride_h": 2, "stride_w": 3}, (2, 12, 13, 4)),
    ({"stride_h": 1, "stride_w": 2, "dilation_h_factor": 2, "dilation_w_factor": 3},
     (1, 14, 15, 3))])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_im2col_step_writes_numpys_strided_copy(backend, options, shape, dtype):
    from numpy.lib.stride_tricks import as_strided  # noqa: PLC0415
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    source = rng.integers(info.min, info.max + 1, size=shape).astype(dtype)
    kh, kw = 3, 2
    dh, dw = options.get("dilation_h_factor", 1), options.get("dilation_w_factor", 1)
    oh = (shape[1] - (kh - 1) * dh - 1) // options["stride_h"] + 1
    ow = (shape[2] - (kw - 1) * dw - 1) // options["stride_w"] + 1
    s = source.strides
    cols = as_strided(source, (shape[0], oh, ow, kh, kw, shape[3]),
                      (s[0], s[1] * options["stride_h"], s[2] * options["stride_w"],
                       s[1] * dh, s[2] * dw, s[3]))
    matrix = np.full((shape[0] * oh * ow, kh * kw * shape[3]), np.nan, np.float32)
    row, item = matrix.strides
    c = shape[3]
    rows = as_strided(matrix, cols.shape, (oh * ow * row, ow * row, row, kw * c * item,
                                           c * item, item))
    int8_steps.im2col_step(source, cols, matrix, rows, options)()
    want = np.ascontiguousarray(cols, np.float32).reshape(matrix.shape)
    np.testing.assert_array_equal(matrix, want)


def _gemm_kind(kind):
    from tensorlite.lite.kernels import int_gemm  # noqa: PLC0415
    if not int_gemm.available(kind):
        pytest.skip(f"the {kind} kernel needs llvmlite (the jit extra) and "
                    f"{', '.join(int_gemm.KINDS[kind].needs)} on the CPU")
    return int_gemm


def _gemm_rows(int_gemm, a, kind, fill):
    """The rows `a` (int64 values of int8 or uint8) in `kind`'s padded A matrix."""
    k = a.shape[1]
    matrix = np.full((len(a), int_gemm.padded_depth(k, kind)), fill, int_gemm.KINDS[kind].dtype)
    matrix[:, :k] = a
    return matrix


GEMM_KINDS = ["vnni", "madd512", "madd256"]


@pytest.mark.parametrize("kind", GEMM_KINDS)
@pytest.mark.parametrize("m, k, n", [(900, 288, 32), (7, 13, 16), (3, 27, 48), (1, 2304, 512),
                                     (2, 4, 64), (5, 9, 8)])
def test_int_gemm_is_the_exact_integer_product(kind, m, k, n):
    int_gemm = _gemm_kind(kind)
    if not int_gemm.fits(n, k, kind):
        assert n % int_gemm.KINDS[kind].lanes  # only channels beyond whole vectors refused
        return
    rng = np.random.default_rng(m + k + n)
    # VNNI multiplies unsigned bytes (int8 x as x + 128), vpmaddwd widened int8 or uint8
    a = rng.integers(0, 256, size=(m, k)) if kind == "vnni" else \
        rng.integers(-128, 256, size=(m, k))
    w = rng.integers(-128, 128, size=(n, k)).astype(np.int8)
    a[0], w[0] = (255 if kind == "vnni" else -128), -128  # the largest products
    w[1] = 127
    for rows in (None, m):  # wide (int16) and, for few rows, narrow (int8) madd weights
        matrix = _gemm_rows(int_gemm, a, kind, 77)  # padding: any values
        out = np.empty((m, n), np.int32)
        int_gemm.Gemm(w, kind, rows=rows)(matrix, out)
        np.testing.assert_array_equal(out, a @ w.T.astype(np.int64))


@pytest.mark.parametrize("kind", GEMM_KINDS)
def test_int_gemm_sums_beyond_float32_and_int16_exactly(kind):
    int_gemm = _gemm_kind(kind)
    k = int_gemm.DEPTH_MAX - int_gemm.DEPTH_MAX % 4  # the deepest exact int32 sums
    a = np.full((3, k), 255)
    w = np.full((16, k), -128, np.int8)
    w[1] = 127
    for rows in (None, 3):
        out = np.empty((3, 16), np.int32)
        int_gemm.Gemm(w, kind, rows=rows)(_gemm_rows(int_gemm, a, kind, 0), out)
        assert (out[:, 0] == -255 * 128 * k).all() and (out[:, 1] == 255 * 127 * k).all()
    assert int_gemm.fits(16, k, kind) and not int_gemm.fits(16, int_gemm.DEPTH_MAX + 1, kind)
    assert not int_gemm.fits(10, 64, kind)  # channels in whole vectors only
    assert not int_gemm.fits(16, 64, None)


def test_int8_gemm_switch_names_its_values(monkeypatch):
    from tensorlite.lite.kernels import int_gemm  # noqa: PLC0415
    monkeypatch.setenv("TENSORLITE_INT8_GEMM", "blas")
    assert int_gemm.choice() is None
    for kind in GEMM_KINDS:
        monkeypatch.setenv("TENSORLITE_INT8_GEMM", kind)
        assert int_gemm.choice() == (kind if int_gemm.available(kind) else None)
    monkeypatch.setenv("TENSORLITE_INT8_GEMM", "avx")
    with pytest.raises(ValueError, match="not one of auto, blas, vnni"):
        int_gemm.choice()


@pytest.mark.parametrize("dw", [1, 2])
@pytest.mark.parametrize("flip, dtype, out", [(0x80, np.int8, np.uint8), (0, np.uint8, np.uint8),
                                              (0, np.int8, np.int16), (0, np.uint8, np.int16)])
def test_im2col_step_flips_and_widens_for_the_gemm_kernels(backend, flip, dtype, out, dw):
    if backend == "numpy":
        with pytest.raises(NotImplementedError, match="compiled only"):
            int8_steps.im2col_step(np.zeros((1, 2, 2, 1), np.int8), None, None, None, {}, 1)
        return
    from numpy.lib.stride_tricks import as_strided  # noqa: PLC0415
    info = np.iinfo(dtype)
    source = np.random.default_rng(8).integers(info.min, info.max + 1,
                                               size=(2, 9, 10, 3)).astype(dtype)
    options = {"stride_h": 2, "stride_w": 1, "dilation_w_factor": dw}
    kh, kw, oh, ow = 2, 3, 4, 6
    s = source.strides
    cols = as_strided(source, (2, oh, ow, kh, kw, 3),
                      (s[0], s[1] * 2, s[2], s[1], s[2] * dw, s[3]))
    matrix = np.full((2 * oh * ow, kh * kw * 3 + 2), 9, out)
    int8_steps.im2col_step(source, cols, matrix, None, options, flip)()
    want = (np.ascontiguousarray(cols).reshape(len(matrix), -1).astype(np.int64) +
            (128 if flip else 0))  # int8 x XOR 0x80 as a byte is x + 128
    np.testing.assert_array_equal(matrix[:, :-2], want)
    assert (matrix[:, -2:] == 9).all()  # the depth's padding columns are left alone


@pytest.mark.parametrize("dtype, scale, zp", [(np.int8, 1 / 256, -128), (np.uint8, 1 / 256, 0),
                                              (np.int8, 0.0123, -3)])
def test_compiled_quantized_softmax_is_the_numpy_steps(dtype, scale, zp, monkeypatch):
    if not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    from tensorlite.lite.kernels.nn import Softmax  # noqa: PLC0415
    info = np.iinfo(dtype)
    rng = np.random.default_rng(int(scale * 1e4))
    x = rng.integers(info.min, info.max + 1, size=(4, 7, 10)).astype(dtype)
    x[0, 0] = info.max  # one certain class; a row of equal logits; the extremes
    x[0, 1] = x[0, 1, 0]
    x[1, 0, :5], x[1, 0, 5:] = info.min, info.max
    table = np.exp((-np.float32(0.07) * np.arange(256, dtype=np.float32))
                   .astype(np.float64)).astype(np.float32)
    data = {"table": table, "out": (np.float32(scale), zp)}
    got, want = np.empty_like(x), np.empty_like(x)
    Softmax._bind_quantized(x, got, data)()
    monkeypatch.setitem(numba_backend._STATE, "on", False)
    monkeypatch.setattr(numba_backend, "_KERNELS", {})
    Softmax._bind_quantized(x, want, data)()
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 20  # the outputs spread, not one clamped value


@pytest.mark.parametrize("kind", GEMM_KINDS)
def test_int_gemm_refuses_arrays_its_machine_code_would_misread(kind):
    int_gemm = _gemm_kind(kind)
    gemm = int_gemm.Gemm(np.ones((16, 9), np.int8), kind)  # depth padded to 12 or 10
    dtype, other, kp = int_gemm.KINDS[kind].dtype, np.int8, gemm.kp
    out = np.empty((3, 16), np.int32)
    for rows, res in [(np.zeros((3, 9), dtype), out), (np.zeros((3, kp), other), out),
                      (np.zeros((3, kp), dtype), np.empty((4, 16), np.int32)),
                      (np.zeros((3, 2 * kp), dtype)[:, ::2], out)]:
        with pytest.raises(ValueError, match=f"{np.dtype(dtype).name} rows"):
            gemm(rows, res)
