"""Every convolution algorithm the selector can choose, forced in turn: values against the
loop reference, gradients against finite differences (orders 1 and 2) through op_check,
and the selector's own bookkeeping."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import conv_kernels, conv_ops, conv_select, numba_backend, numba_conv, \
    numba_winograd, winograd
from tests.op_check import check_op, rand
from tests.test_conv_ops import ref_conv2d

# (input shape, filter shape, strides, padding, the algorithms eligible for it)
SHAPES = [
    ((2, 5, 6, 8), (3, 3, 8, 3), (1, 1), "SAME", {"im2col", "winograd"}),
    ((1, 6, 5, 9), (3, 3, 9, 2), (1, 1), "VALID", {"im2col", "winograd"}),
    ((1, 7, 7, 8), (3, 3, 8, 2), (1, 1), [[0, 0], [2, 0], [1, 2], [0, 0]],
     {"im2col", "winograd"}),
    ((2, 5, 7, 4), (1, 1, 4, 3), (2, 2), "VALID", {"im2col", "gemm1x1"}),
    ((1, 6, 6, 3), (1, 1, 3, 5), (1, 3), "SAME", {"im2col", "gemm1x1"}),
    ((2, 5, 5, 3), (3, 3, 3, 2), (2, 1), "SAME", {"im2col"}),
]
# The compiled direct kernel joins every small float shape when numba is installed, and
# Winograd F(4x4, 3x3) (compiled transforms only) every Winograd one.
NUMBA = {"numba"} if numba_conv.available() else set()
W4 = numba_winograd.available()
NEEDS_NUMBA = pytest.mark.skipif(not W4, reason="needs numba (the jit extra)")


def compiled_too(names):
    """`names` and the compiled algorithms that join them where numba is installed."""
    return names | NUMBA | ({"winograd4"} if W4 and "winograd" in names else set())


CASES = [(algo, s) for s in SHAPES for algo in sorted(compiled_too(s[4]))]


@pytest.fixture
def calls(monkeypatch):
    """Counts the calls each algorithm gets."""
    counts = {}
    for name, (ok, run) in list(conv_select.ALGORITHMS.items()):
        def counted(*a, _run=run, _name=name):
            counts[_name] = counts.get(_name, 0) + 1
            return _run(*a)
        monkeypatch.setitem(conv_select.ALGORITHMS, name, (ok, counted))
    return counts


def _geometry(xs, ws, strides, padding):
    x, w = tf.zeros(xs), tf.zeros(ws)
    _, _, geo = conv_ops._conv_prep("Conv2D", x, w, list(strides), padding, "NHWC", None,
                                    False)
    return geo


@pytest.mark.parametrize("xs,ws,strides,padding,names", SHAPES)
def test_eligibility(xs, ws, strides, padding, names):
    geo = _geometry(xs, ws, strides, padding)
    assert set(conv_select.eligible(xs, ws, geo["strides"], geo["dilations"],
                                    geo["pads"], "d")) == compiled_too(names)
    half = conv_select.eligible(xs, ws, geo["strides"], geo["dilations"], geo["pads"], "e")
    assert not {"numba", "winograd4"} & set(half)  # float16: NumPy only


@pytest.mark.parametrize("algo,shape", CASES, ids=[f"{a}-{i}" for i, (a, _) in
                                                   enumerate(CASES)])
def test_forced_algorithm_matches_reference_and_gradients(algo, shape, calls):
    xs, ws, strides, padding, _ = shape
    x, w = rand(*xs, seed=31), rand(*ws, seed=32)
    with conv_select.forced(algo):
        check_op(lambda a, b: tf.nn.conv2d(a, b, list(strides), padding),
                 lambda a, b: ref_conv2d(a, b, strides, padding), [x, w])
    assert calls.get(algo, 0) > 0, f"{algo} never ran: {calls}"
    if algo != "im2col":
        assert "im2col" not in calls or calls[algo] >= 1


@pytest.mark.parametrize("algo", ["im2col", "winograd",
                                  pytest.param("winograd4", marks=NEEDS_NUMBA)])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-4), (np.float64, 1e-10)])
def test_forced_algorithm_larger_shapes(algo, dtype, tol, calls):
    """Several chunks of images (a tiny chunk budget) and odd output sizes."""
    x = rand(5, 9, 11, 16, seed=33).astype(dtype)
    w = rand(3, 3, 16, 12, seed=34).astype(dtype)
    saved = winograd.CHUNK_BYTES
    winograd.CHUNK_BYTES = 1  # one image per chunk
    try:
        with conv_select.forced(algo):
            for padding in ("SAME", "VALID"):
                got = tf.nn.conv2d(tf.constant(x), tf.constant(w), 1, padding)
                want = ref_conv2d(x, w, (1, 1), padding)
                np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol * 10)
    finally:
        winograd.CHUNK_BYTES = saved
    assert calls[algo] == 2


@pytest.mark.parametrize("algo", ["winograd", pytest.param("winograd4", marks=NEEDS_NUMBA)])
def test_input_gradient_of_stride1_runs_through_winograd(algo, calls):
    x, w = tf.constant(rand(2, 6, 6, 16, seed=35)), tf.constant(rand(3, 3, 16, 16, seed=36))
    with conv_select.forced(algo), tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.conv2d(x, w, 1, "SAME")
    g = tf.constant(rand(*y.shape, seed=37))
    with conv_select.forced(algo):
        dx = tape.gradient(y, x, output_gradients=g)
    calls_forward = calls[algo]
    assert calls_forward == 2  # the forward and the input gradient
    with conv_select.forced("im2col"):
        want = tf.nn.conv2d_transpose(g, w, x.shape, 1, "SAME")
    np.testing.assert_allclose(dx.numpy(), want.numpy(), rtol=1e-10, atol=1e-10)


def test_selector_measures_once_per_shape(monkeypatch, calls):
    monkeypatch.setattr(conv_select, "_CHOICE", {})
    monkeypatch.setattr(conv_select, "SMALL_REPEATS", 1)
    x, w = tf.constant(rand(2, 8, 8, 8, seed=38)), tf.constant(rand(3, 3, 8, 8, seed=39))
    before = conv_select.STATS["measured"]
    first = tf.nn.conv2d(x, w, 1, "SAME")
    assert conv_select.STATS["measured"] == before + 1
    names = compiled_too({"im2col", "winograd"})
    assert calls == {n: 1 for n in names}  # each candidate timed once
    chosen = conv_select.choice((2, 8, 8, 8), (3, 3, 8, 8), (1, 1), (1, 1), (1, 1, 1, 1), "d")
    assert chosen in names
    second = tf.nn.conv2d(x, w, 1, "SAME")
    assert conv_select.STATS["measured"] == before + 1
    assert calls[chosen] == 2
    np.testing.assert_allclose(first.numpy(), second.numpy(), rtol=1e-12)


def test_large_batches_are_timed_on_a_sample(monkeypatch, calls):
    monkeypatch.setattr(conv_select, "_CHOICE", {})
    monkeypatch.setattr(conv_select, "MEASURE_MIN_MACS", 0)
    monkeypatch.setattr(conv_select, "SAMPLE_IMAGES", 1)
    x, w = rand(5, 6, 6, 8, seed=42), rand(3, 3, 8, 4, seed=43)
    got = tf.nn.conv2d(tf.constant(x), tf.constant(w), 1, "SAME")
    np.testing.assert_allclose(got.numpy(), ref_conv2d(x, w), rtol=1e-10, atol=1e-10)
    names = compiled_too({"im2col", "winograd"})
    chosen = conv_select.choice(x.shape, w.shape, (1, 1), (1, 1), (1, 1, 1, 1), "d")
    # two timed runs each on one image, then the winner on all five
    assert calls == {n: 2 + (n == chosen) for n in names}


def test_small_convolutions_are_timed_several_times(monkeypatch, calls):
    monkeypatch.setattr(conv_select, "_CHOICE", {})
    tf.nn.conv2d(tf.ones([1, 4, 4, 8]), tf.ones([3, 3, 8, 2]), 1, "SAME")
    reps = conv_select.SMALL_REPEATS
    assert calls == {n: reps for n in compiled_too({"im2col", "winograd"})}
    calls.clear()
    tf.nn.conv2d(tf.ones([1, 4, 4, 8]), tf.ones([3, 3, 8, 2]), 1, "SAME")
    assert sum(calls.values()) == 1


def test_unknown_algorithm_in_the_environment_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(conv_select, "_FORCED", ["fft"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="TENSORLITE_CONV_ALGO"):
        tf.nn.conv2d(tf.ones([1, 4, 4, 1]), tf.ones([3, 3, 1, 1]), 1, "SAME")


def test_numba_switched_off_is_never_eligible(monkeypatch):
    monkeypatch.setattr(numba_backend, "_STATE", {})
    monkeypatch.setenv("TENSORLITE_NUMBA", "0")
    assert not numba_conv.available()
    assert "numba" not in conv_select.eligible((1, 4, 4, 8), (3, 3, 8, 2), (1, 1), (1, 1),
                                               (1, 1, 1, 1), "d")


def test_forcing_an_unknown_algorithm_names_the_choices():
    with pytest.raises(ValueError, match="winograd"):
        with conv_select.forced("fft"):
            pass


def test_winograd_filter_transform_is_exact_on_a_delta():
    """A filter that is 1 at its centre tap copies the input through (SAME)."""
    w = np.zeros((3, 3, 2, 2))
    w[1, 1] = np.eye(2)
    x = rand(1, 5, 4, 2, seed=40)
    np.testing.assert_allclose(winograd.conv3x3(x, w, (1, 1, 1, 1)), x, atol=1e-14)


def test_numba_conv_without_a_kernel_falls_back_to_numpy(monkeypatch):
    """A numba that fails to build: the same convolution from NumPy, one matmul per tap."""
    monkeypatch.setattr(numba_conv, "compiled", lambda name, build: None)
    x, w = rand(2, 7, 6, 3, seed=45), rand(3, 2, 3, 4, seed=46)
    for s, d, pad in [((1, 1), (1, 1), "SAME"), ((2, 1), (1, 2), "VALID")]:
        got = numba_conv.conv(x, w, s, d, _geometry(x.shape, w.shape, s, pad)["pads"]
                              if d == (1, 1) else (0, 0, 0, 0), conv_kernels.pad_hw)
        np.testing.assert_allclose(got, ref_conv2d(x, w, s, pad, d), rtol=1e-12, atol=1e-12)


WINOGRAD_GEOMETRIES = [((3, 9, 11, 16), (1, 1, 1, 1)), ((2, 8, 8, 8), (0, 0, 0, 0)),
                       ((2, 7, 6, 12), (2, 0, 1, 2)), ((1, 4, 5, 8), (2, 2, 2, 2))]


@NEEDS_NUMBA
@pytest.mark.parametrize("xs,pads", WINOGRAD_GEOMETRIES + [((2, 13, 13, 8), (2, 2, 2, 2)),
                                                      ((1, 3, 3, 8), (0, 0, 0, 0))])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-4), (np.float64, 1e-11)])
def test_winograd_compiled_and_numpy_transforms_agree_with_im2col(xs, pads, dtype, tol):
    """Odd output sizes (part of a tile: F(4x4)'s 13x13 leaves a 1-pixel strip), explicit
    pads and pads wider than 1 (the compiled input transform reads the padding as bounds
    checks); F(2x2) by both transform paths, F(4x4) by its compiled one."""
    x = rand(*xs, seed=47).astype(dtype)
    w = rand(3, 3, xs[-1], 5, seed=48).astype(dtype)
    want = conv_kernels._conv_im2col(x, w, (1, 1), (1, 1), pads)
    for m, jit in ((2, True), (2, False), (4, True)):
        got = winograd.conv3x3(x, w, pads, jit=jit, m=m)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_winograd4_without_compiled_transforms_says_what_is_missing(dtype):
    x, w = np.ones((1, 6, 6, 8), dtype), np.ones((3, 3, 8, 2), dtype)
    with pytest.raises(NotImplementedError, match=r"F\(4x4, 3x3\).*numba"):
        winograd.conv3x3(x, w, (1, 1, 1, 1), m=4)


@pytest.mark.parametrize("numba_on", [True, False])
def test_forced_winograd_passes_op_check_with_and_without_numba(numba_on, monkeypatch):
    """Both transform paths of the one algorithm, gradients included."""
    if numba_on and not numba_winograd.available():
        pytest.skip("needs numba (the jit extra)")
    monkeypatch.setitem(numba_backend._STATE, "on", numba_on)
    used = []
    real = numba_winograd.kernels
    monkeypatch.setattr(numba_winograd, "kernels", lambda *m: used.append(1) or real(*m))
    x, w = rand(2, 5, 7, 8, seed=49), rand(3, 3, 8, 3, seed=50)
    with conv_select.forced("winograd"):
        check_op(lambda a, b: tf.nn.conv2d(a, b, 1, "SAME"),
                 lambda a, b: ref_conv2d(a, b, (1, 1), "SAME"), [x, w])
    assert used and (real() is not None) == numba_on


@NEEDS_NUMBA
@pytest.mark.parametrize("algo,m", [("winograd", 2), ("winograd4", 4)])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_winograd_filter_gradient_passes_op_check(algo, m, padding, monkeypatch):
    """Forcing Winograd also takes the filter gradient through its transforms (checked
    against finite differences and the im2col gradient)."""
    used = []
    real = winograd.filter_grad3x3
    monkeypatch.setattr(winograd, "filter_grad3x3",
                        lambda *a, **k: used.append(k.get("m", 2)) or real(*a, **k))
    x, w = rand(3, 7, 6, 8, seed=51), rand(3, 3, 8, 4, seed=52)
    with conv_select.forced(algo):
        check_op(lambda a, b: tf.nn.conv2d(a, b, 1, padding),
                 lambda a, b: ref_conv2d(a, b, (1, 1), padding), [x, w])
    assert used and set(used) == {m}
    g = rand(3, *ref_conv2d(x, w, (1, 1), padding).shape[1:], seed=53)
    pads = _geometry(x.shape, w.shape, (1, 1), padding)["pads"]
    np.testing.assert_allclose(real(x, g, pads, m=m),
                               conv_kernels._conv_bf_fwd(x, g, (3, 3), (1, 1), (1, 1), pads),
                               rtol=1e-12, atol=1e-12)


def test_filter_gradient_algorithm_is_measured_once_per_shape(monkeypatch):
    monkeypatch.setattr(conv_select, "_FILTER_CHOICE", {})
    x, w = tf.constant(rand(12, 6, 6, 8, seed=54)), tf.constant(rand(3, 3, 8, 4, seed=55))
    before = conv_select.STATS["measured"]
    for _ in range(3):
        with tf.GradientTape() as tape:
            tape.watch(w)
            y = tf.nn.conv2d(x, w, 1, "SAME")
        tape.gradient(y, w)
    geo = ((3, 3), (1, 1), (1, 1), (1, 1, 1, 1))
    chosen = conv_select.filter_choice((12, 6, 6, 8), (12, 6, 6, 4), geo, "d")
    want = {"im2col", "winograd", "winograd4"} if W4 else {"im2col"}
    assert chosen in want
    # one measurement for the filter gradient (the forwards' are counted on their own)
    assert conv_select.STATS["measured"] - before <= (1 if len(want) > 1 else 0) + 2
