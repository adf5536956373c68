"""conv and pooling ops against direct loop-based NumPy references; gradients against
finite differences (first and second order) and batched vs looped jacobians."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import conv_kernels
from tests.op_check import check_op, check_shape_rules, rand


# -- loop-based references (slow on purpose: they share no code with the im2col path) ----------
def tf_same(n, k, s, d=1):
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def geometry(x_hw, k_hw, strides, padding, dil=(1, 1)):
    if padding == "SAME":
        return tf_same(x_hw[0], k_hw[0], strides[0], dil[0]) + \
            tf_same(x_hw[1], k_hw[1], strides[1], dil[1])
    if padding == "VALID":
        return (0, 0, 0, 0)
    return tuple(padding[1]) + tuple(padding[2])


def ref_conv2d(x, w, strides=(1, 1), padding="SAME", dil=(1, 1)):
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    pt, pb, pl, pr = geometry((h, wd), (kh, kw), strides, padding, dil)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    oh = (h + pt + pb - (kh - 1) * dil[0] - 1) // strides[0] + 1
    ow = (wd + pl + pr - (kw - 1) * dil[1] - 1) // strides[1] + 1
    out = np.zeros((n, oh, ow, o), dtype=x.dtype)
    for r in range(oh):
        for q in range(ow):
            for i in range(kh):
                for j in range(kw):
                    out[:, r, q, :] += xp[:, r * strides[0] + i * dil[0],
                                          q * strides[1] + j * dil[1], :] @ w[i, j]
    return out


def ref_depthwise(x, w, strides=(1, 1), padding="SAME", dil=(1, 1)):
    n, h, wd, c = x.shape
    kh, kw, _, m = w.shape
    outs = [ref_conv2d(x[..., ci:ci + 1], w[:, :, ci:ci + 1, :], strides, padding, dil)
            for ci in range(c)]
    return np.concatenate(outs, axis=-1)


def ref_conv2d_transpose(g, w, out_shape, strides, padding):
    """Scatter form: every input pixel adds its filter-weighted value into the output."""
    n, oh, ow, _ = out_shape
    kh, kw = w.shape[:2]
    pt, pb, pl, pr = geometry((oh, ow), (kh, kw), strides, padding)
    out = np.zeros((n, oh + pt + pb, ow + pl + pr, w.shape[2]), dtype=g.dtype)
    for r in range(g.shape[1]):
        for q in range(g.shape[2]):
            for i in range(kh):
                for j in range(kw):
                    out[:, r * strides[0] + i, q * strides[1] + j, :] += g[:, r, q, :] @ w[i, j].T
    return out[:, pt:pt + oh, pl:pl + ow, :]


def ref_pool(x, k, s, padding, kind):
    n, h, wd, c = x.shape
    pt, pb, pl, pr = geometry((h, wd), k, s, padding)
    fill = -np.inf if kind == "max" else np.nan
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    oh, ow = (h + pt + pb - k[0]) // s[0] + 1, (wd + pl + pr - k[1]) // s[1] + 1
    out = np.zeros((n, oh, ow, c), dtype=x.dtype)
    for r in range(oh):
        for q in range(ow):
            win = xp[:, r * s[0]:r * s[0] + k[0], q * s[1]:q * s[1] + k[1], :]
            out[:, r, q, :] = win.max((1, 2)) if kind == "max" else np.nanmean(win, (1, 2))
    return out


def nchw(f):
    return lambda x, *a: np.transpose(f(np.transpose(x, (0, 2, 3, 1)), *a), (0, 3, 1, 2))


X = rand(2, 5, 5, 3, seed=1)
W = rand(3, 3, 3, 4, seed=2)
X6 = rand(1, 6, 7, 2, seed=3)
W2 = rand(2, 2, 2, 3, seed=4)
EXPLICIT = [[0, 0], [1, 2], [0, 1], [0, 0]]

CASES = [
    ("conv2d_same", lambda x, w: tf.nn.conv2d(x, w, 1, "SAME"), ref_conv2d, [X, W]),
    ("conv2d_valid", lambda x, w: tf.nn.conv2d(x, w, [1, 1], "VALID"),
     lambda x, w: ref_conv2d(x, w, padding="VALID"), [X, W]),
    ("conv2d_stride2_same", lambda x, w: tf.nn.conv2d(x, w, 2, "SAME"),
     lambda x, w: ref_conv2d(x, w, (2, 2)), [X, W]),
    ("conv2d_stride_hw_valid", lambda x, w: tf.nn.conv2d(x, w, [1, 2, 1, 1], "VALID"),
     lambda x, w: ref_conv2d(x, w, (2, 1), "VALID"), [X, W]),
    ("conv2d_dilated", lambda x, w: tf.nn.conv2d(x, w, 1, "SAME", dilations=2),
     lambda x, w: ref_conv2d(x, w, dil=(2, 2)), [X, W]),
    ("conv2d_even_kernel_same", lambda x, w: tf.nn.conv2d(x, w, 2, "SAME"),
     lambda x, w: ref_conv2d(x, w, (2, 2)), [X6, W2]),
    ("conv2d_explicit", lambda x, w: tf.nn.conv2d(x, w, 1, EXPLICIT),
     lambda x, w: ref_conv2d(x, w, padding=EXPLICIT), [X6, W2]),
    ("conv2d_nchw", lambda x, w: tf.nn.conv2d(x, w, 1, "SAME", data_format="NCHW"),
     nchw(ref_conv2d), [np.transpose(X6, (0, 3, 1, 2)).copy(), W2]),
    ("conv1d", lambda x, w: tf.nn.conv1d(x, w, 2, "SAME"),
     lambda x, w: ref_conv2d(x[:, None], w[None], (1, 2))[:, 0],
     [rand(2, 7, 3, seed=5), rand(3, 3, 2, seed=6)]),
    ("depthwise", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
     ref_depthwise, [X, rand(3, 3, 3, 2, seed=7)]),
    ("depthwise_stride_valid", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "VALID"),
     lambda x, w: ref_depthwise(x, w, (2, 2), "VALID"), [X6, rand(2, 2, 2, 1, seed=8)]),
    ("depthwise_nchw_dilated",
     lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", "NCHW", dilations=[2, 2]),
     nchw(lambda x, w: ref_depthwise(x, w, dil=(2, 2))),
     [np.transpose(X6, (0, 3, 1, 2)).copy(), rand(2, 2, 2, 2, seed=25)]),
    ("separable_conv2d",
     lambda x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "VALID"),
     lambda x, d, p: ref_conv2d(ref_depthwise(x, d, padding="VALID"), p, padding="VALID"),
     [X6, rand(2, 2, 2, 2, seed=26), rand(1, 1, 4, 3, seed=27)]),
    ("atrous_conv2d", lambda x, w: tf.nn.atrous_conv2d(x, w, 2, "VALID"),
     lambda x, w: ref_conv2d(x, w, padding="VALID", dil=(2, 2)), [X6, W2]),
    ("convolution_1d", lambda x, w: tf.nn.convolution(x, w, padding="SAME"),
     lambda x, w: ref_conv2d(x[:, None], w[None])[:, 0],
     [rand(2, 6, 3, seed=28), rand(2, 3, 2, seed=29)]),
    ("conv2d_transpose", lambda g, w: tf.nn.conv2d_transpose(g, w, [1, 6, 7, 2], 2, "SAME"),
     lambda g, w: ref_conv2d_transpose(g, w, (1, 6, 7, 2), (2, 2), "SAME"),
     [rand(1, 3, 4, 3, seed=9), W2]),
    ("max_pool_valid", lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"),
     lambda x: ref_pool(x, (2, 2), (2, 2), "VALID", "max"), [X6]),
    ("max_pool_same_overlap", lambda x: tf.nn.max_pool2d(x, 3, [1, 2, 1, 1], "SAME"),
     lambda x: ref_pool(x, (3, 3), (2, 1), "SAME", "max"), [X6]),
    ("avg_pool_valid", lambda x: tf.nn.avg_pool2d(x, [2, 3], 1, "VALID"),
     lambda x: ref_pool(x, (2, 3), (1, 1), "VALID", "avg"), [X6]),
    ("avg_pool_same", lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME"),
     lambda x: ref_pool(x, (3, 3), (2, 2), "SAME", "avg"), [X6]),
    ("max_pool_nchw", lambda x: tf.nn.max_pool(x, 2, 2, "SAME", data_format="NCHW"),
     nchw(lambda x: ref_pool(x, (2, 2), (2, 2), "SAME", "max")),
     [np.transpose(X6, (0, 3, 1, 2)).copy()]),
    ("max_pool1d", lambda x: tf.nn.max_pool1d(x, 3, 2, "SAME"),
     lambda x: ref_pool(x[:, None], (1, 3), (1, 2), "SAME", "max")[:, 0], [rand(2, 7, 3)]),
    ("avg_pool1d", lambda x: tf.nn.avg_pool(x, 2, 1, "VALID"),
     lambda x: ref_pool(x[:, None], (1, 2), (1, 1), "VALID", "avg")[:, 0], [rand(2, 7, 3)]),
]


@pytest.mark.parametrize("name,tf_fn,np_fn,args", CASES, ids=[c[0] for c in CASES])
def test_op(name, tf_fn, np_fn, args):
    check_op(tf_fn, np_fn, args)


# -- larger shapes: values only, float32 and float64 ------------------------------------------
CONFIGS = [  # (input shape, filter shape, strides, padding, dilations)
    ((3, 11, 9, 5), (3, 3, 5, 7), (1, 1), "SAME", (1, 1)),
    ((2, 12, 12, 4), (5, 5, 4, 6), (2, 2), "SAME", (1, 1)),
    ((2, 13, 10, 3), (4, 2, 3, 8), (3, 2), "VALID", (1, 1)),
    ((2, 9, 9, 20), (3, 3, 20, 5), (1, 1), "SAME", (2, 3)),
    ((1, 8, 8, 32), (1, 1, 32, 16), (1, 1), "VALID", (1, 1)),
    ((2, 10, 11, 17), (3, 2, 17, 3), (2, 3), "SAME", (1, 1)),
]


@pytest.mark.parametrize("xs,ws,s,pad,d", CONFIGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_matches_reference(xs, ws, s, pad, d, dtype):
    x, w = rand(*xs, seed=11).astype(dtype), rand(*ws, seed=12).astype(dtype)
    got = tf.nn.conv2d(tf.constant(x), tf.constant(w), list(s), pad, dilations=list(d))
    assert got.dtype == tf.as_dtype(dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), ref_conv2d(x, w, s, pad, d), rtol=tol, atol=tol)


def ref_conv2d_grads(x, w, g, strides, padding, dil):
    """Input and filter gradients by a direct loop over output pixels and taps."""
    n, h, wd, c = x.shape
    kh, kw = w.shape[:2]
    pt, pb, pl, pr = geometry((h, wd), (kh, kw), strides, padding, dil)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for r in range(g.shape[1]):
        for q in range(g.shape[2]):
            for i in range(kh):
                for j in range(kw):
                    a, b = r * strides[0] + i * dil[0], q * strides[1] + j * dil[1]
                    dxp[:, a, b, :] += g[:, r, q, :] @ w[i, j].T
                    dw[i, j] += xp[:, a, b, :].T @ g[:, r, q, :]
    return dxp[:, pt:pt + h, pl:pl + wd, :], dw


# small_bytes 0 sends every shape through the chunked im2col and the strided input-gradient
# adds; the default sends these small ones through _conv_im2col_small (few-channel stride-1
# input gradients as a convolution too)
@pytest.mark.parametrize("small_bytes", [conv_kernels._SMALL_PATCH_BYTES, 0],
                         ids=["small_path", "chunked_path"])
@pytest.mark.parametrize("chunk_bytes", [4 << 20, 1], ids=["one_chunk", "chunk_per_image"])
@pytest.mark.parametrize("xs,ws,s,pad,d", [
    ((2, 6, 5, 3), (3, 3, 3, 2), (2, 2), "SAME", (1, 1)),
    ((1, 8, 8, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),  # few channels, stride 1
    ((3, 7, 6, 20), (2, 3, 20, 2), (1, 2), "VALID", (2, 1)),  # channels-last col2im path
    ((2, 6, 7, 16), (3, 2, 16, 3), (1, 1), "SAME", (2, 1)),  # input gradient as a conv
    ((2, 5, 4, 16), (2, 2, 16, 3), (1, 1), [[0, 0], [3, 0], [0, 2], [0, 0]], (1, 1)),
])
def test_conv2d_gradients_match_adjoint(xs, ws, s, pad, d, chunk_bytes, small_bytes,
                                       monkeypatch):
    monkeypatch.setattr(conv_kernels, "_CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(conv_kernels, "_SMALL_PATCH_BYTES", small_bytes)
    x, w = rand(*xs, seed=13), rand(*ws, seed=14)
    xt, wt = tf.constant(x), tf.constant(w)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([xt, wt])
        y = tf.nn.conv2d(xt, wt, list(s), pad, dilations=list(d))
    g = rand(*y.shape, seed=15)
    dx, dw = tape.gradient(y, [xt, wt], output_gradients=tf.constant(g))
    want_dx, want_dw = ref_conv2d_grads(x, w, g, s, pad, d)
    np.testing.assert_allclose(dx.numpy(), want_dx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dw.numpy(), want_dw, rtol=1e-10, atol=1e-10)


def test_pool_matches_reference_larger():
    x = rand(3, 17, 14, 6, seed=16).astype(np.float32)
    for k, s, pad in [((3, 3), (2, 2), "SAME"), ((2, 2), (2, 2), "VALID"),
                      ((4, 3), (3, 1), "SAME"), ((3, 2), (1, 2), "VALID")]:
        for kind, fn in (("max", tf.nn.max_pool2d), ("avg", tf.nn.avg_pool2d)):
            got = fn(tf.constant(x), list(k), list(s), pad)
            np.testing.assert_allclose(got.numpy(), ref_pool(x, k, s, pad, kind), rtol=1e-5,
                                       atol=1e-6)


# -- higher order and shape rules of the backward ops --------------------------------------------
def _hessian_both_ways(f, x):
    """Hessian of scalar f by jacobian-of-gradient, batched (pfor) and row by row."""
    out = []
    for pfor in (True, False):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        out.append(outer.jacobian(g, x, experimental_use_pfor=pfor).numpy())
    return out


@pytest.mark.parametrize("fn", [
    lambda x, w: tf.nn.conv2d(x, w, 2, "SAME"),
    lambda x, w: tf.nn.depthwise_conv2d(x, w[..., :1], [1, 1, 1, 1], "VALID"),
], ids=["conv2d", "depthwise"])
def test_hessians_batched_equal_looped(fn):
    x0, w0 = rand(1, 4, 4, 2, seed=17), rand(2, 2, 2, 2, seed=18)
    for which in ("x", "w"):
        def f(v):
            x, w = (v, tf.constant(w0)) if which == "x" else (tf.constant(x0), v)
            return tf.reduce_sum(tf.square(fn(x, w)))
        batched, looped = _hessian_both_ways(f, tf.constant(x0 if which == "x" else w0))
        np.testing.assert_allclose(batched, looped, rtol=1e-10, atol=1e-10)
        assert np.abs(batched).max() > 0


def test_pool_hessians_batched_equal_looped():
    x0 = rand(1, 5, 5, 2, seed=19)
    for fn in (lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"),
               lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME")):
        batched, looped = _hessian_both_ways(
            lambda v: tf.reduce_sum(tf.square(fn(v))), tf.constant(x0))
        np.testing.assert_allclose(batched, looped, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fn", [
    lambda x, w: tf.nn.conv2d(x, w, [2, 1], "SAME"),
    lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
    lambda x, w: tf.nn.max_pool2d(tf.nn.conv2d(x, w, 1, "VALID"), 2, 1, "SAME"),
    lambda x, w: tf.nn.avg_pool2d(tf.nn.conv2d(x, w, 1, "VALID"), 2, 2, "SAME"),
], ids=["conv2d", "depthwise", "max_pool", "avg_pool"])
def test_backward_op_shape_rules(fn):
    """Runs first- and second-order gradients under the shape-rule observer, so every
    backward op (BackpropInput/Filter, MaxPoolGrad, ...) has its rule checked."""
    x, w = tf.constant(rand(2, 5, 4, 2, seed=20)), tf.constant(rand(2, 2, 2, 2, seed=21))

    def grads(x, w):
        with tf.GradientTape() as outer:
            outer.watch([x, w])
            with tf.GradientTape() as inner:
                inner.watch([x, w])
                y = tf.reduce_sum(tf.square(fn(x, w)))
            gx, gw = inner.gradient(y, [x, w])
            z = tf.reduce_sum(gx * gx) + tf.reduce_sum(gw * gw)
        return outer.gradient(z, [x, w])
    check_shape_rules(grads, [x, w])


# -- TensorFlow semantics ------------------------------------------------------------------
def test_same_padding_puts_extra_pad_after():
    # 4 wide, kernel 2, stride 1: one pad column, after the data (pad_before = total // 2).
    x = tf.constant(np.arange(4, dtype=np.float32).reshape(1, 1, 4, 1))
    y = tf.nn.conv2d(x, tf.ones([1, 2, 1, 1]), 1, "SAME")
    np.testing.assert_array_equal(y.numpy().ravel(), [1, 3, 5, 3])


def test_max_pool_gradient_goes_to_first_max_on_ties():
    x = tf.zeros([1, 2, 2, 1])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.max_pool2d(x, 2, 2, "VALID")
    np.testing.assert_array_equal(tape.gradient(y, x).numpy().ravel(), [1, 0, 0, 0])


def test_avg_pool_same_divides_by_real_pixels():
    y = tf.nn.avg_pool2d(tf.ones([1, 3, 3, 1]), 2, 2, "SAME")
    np.testing.assert_array_equal(y.numpy().ravel(), [1, 1, 1, 1])


def test_max_pool_padding_never_wins():
    y = tf.nn.max_pool2d(-tf.ones([1, 3, 3, 1]), 2, 2, "SAME")
    np.testing.assert_array_equal(y.numpy().ravel(), [-1, -1, -1, -1])


def test_max_pool_integers():
    x = np.array([[5, -7], [3, 2]], np.int32).reshape(1, 2, 2, 1)
    y = tf.nn.max_pool2d(tf.constant(x), 2, 1, "SAME")
    assert y.dtype == tf.int32
    np.testing.assert_array_equal(y.numpy().ravel(), [5, 2, 3, 2])


def test_empty_batch():
    y = tf.nn.conv2d(tf.zeros([0, 5, 5, 3]), tf.ones([3, 3, 3, 2]), 1, "SAME")
    assert y.shape == (0, 5, 5, 2)


def test_conv2d_keeps_float32_and_variables():
    w = tf.Variable(tf.ones([3, 3, 3, 8]))
    x = tf.ones([2, 8, 8, 3])
    with tf.GradientTape() as tape:
        y = tf.nn.conv2d(x, w, 1, "SAME")
    assert y.dtype == tf.float32 and y.shape == (2, 8, 8, 8)
    assert tape.gradient(y, w).dtype == tf.float32


def test_conv2d_transpose_is_conv2d_gradient():
    x = tf.constant(rand(2, 7, 6, 3, seed=22))
    w = tf.constant(rand(3, 3, 3, 4, seed=23))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.conv2d(x, w, 2, "SAME")
    g = tf.constant(rand(*y.shape, seed=24))
    want = tape.gradient(y, x, output_gradients=g)
    got = tf.nn.conv2d_transpose(g, w, [2, 7, 6, 3], 2, "SAME")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


# -- bad input ------------------------------------------------------------------------------
def _raises(cls, fn, *words):
    with pytest.raises(cls) as info:
        fn()
    for w in words:
        assert w in str(info.value), str(info.value)


def test_conv2d_channel_mismatch():
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 4, 8]), 1, "SAME"),
            "Conv2D", "[1, 5, 5, 3]", "[3, 3, 4, 8]", "in_channels")


def test_conv2d_bad_rank():
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d(tf.ones([5, 5, 3]), tf.ones([3, 3, 3, 8]), 1, "SAME"),
            "Conv2D", "rank 4", "[5, 5, 3]")
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 3]), 1, "SAME"),
            "Conv2D", "filter", "[3, 3, 3]")


def test_window_larger_than_input_valid():
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d(tf.ones([1, 3, 3, 1]), tf.ones([5, 5, 1, 1]), 1, "VALID"),
            "Conv2D", "negative", "SAME")
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.max_pool2d(tf.ones([1, 3, 3, 1]), 4, 1, "VALID"), "MaxPool",
            "negative")


def test_bad_padding_strides_and_dtypes():
    x, w = tf.ones([1, 5, 5, 1]), tf.ones([3, 3, 1, 1])
    _raises(ValueError, lambda: tf.nn.conv2d(x, w, 1, "same"), "SAME", "VALID")
    _raises(tf.errors.InvalidArgumentError, lambda: tf.nn.conv2d(x, w, [2, 1, 1, 1], "SAME"),
            "batch or depth")
    _raises(tf.errors.InvalidArgumentError, lambda: tf.nn.conv2d(x, w, 0, "SAME"), "positive")
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d(tf.ones([1, 5, 5, 1], tf.int32), tf.ones([3, 3, 1, 1],
                                                                          tf.int32), 1, "SAME"),
            "Conv2D", "int32")
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d(x, tf.ones([3, 3, 1, 1], tf.float64), 1, "SAME"), "float64")
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d(x, w, 1, [[0, 0], [1, 1], [1, 1], [1, 0]]), "channel")


def test_conv2d_transpose_inconsistent_output_shape():
    _raises(tf.errors.InvalidArgumentError,
            lambda: tf.nn.conv2d_transpose(tf.ones([1, 3, 3, 2]), tf.ones([3, 3, 1, 2]),
                                           [1, 9, 9, 1], 2, "SAME"), "output_shape", "[3, 3]")
