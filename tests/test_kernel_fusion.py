"""The kernel-fusion pass (graph/passes/kernel_fusion.py) and its fused ops (ops/fused_ops.py):
which patterns fuse and which must not, and that the fused kernels give the unfused ops'
results, forward and backward, for every convolution algorithm, with numba and without."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import conv_select, fused_ops, numba_backend, numba_fused
from tests.test_graph_passes import default_options  # noqa: F401 - autouse: passes at defaults

rng = np.random.default_rng(7)


@pytest.fixture(params=["numba", "numpy"])
def backend(request, monkeypatch):
    if request.param == "numba" and not numba_backend.available():
        pytest.skip("numba is not installed")
    if request.param == "numpy":
        monkeypatch.setattr(numba_fused, "kernels", lambda: None)
    return request.param


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def run_twice(f, *args):
    """(optimised graph, result of the optimised runner, result of the unoptimised graph)."""
    f(*args)
    got = f(*args)
    cf = f.get_concrete_function(*args)
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    try:
        want = tf.function(f.python_function)(*args)
    finally:
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": False})
    return cf.optimized_graph, got, want


def assert_close(got, want, rtol=1e-5):
    for a, b in zip(tf.nest.flatten(got), tf.nest.flatten(want)):
        a, b = np.asarray(a), np.asarray(b)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * (np.abs(b).max() + 1))


@pytest.mark.parametrize("algo", [None, "im2col", "winograd", "winograd4", "numba"])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_bias_relu_fuses_and_matches(algo, padding, backend):
    if algo in ("numba", "winograd4") and not numba_backend.available():
        pytest.skip("numba is not installed")
    x, w, b = tf.constant(rand(4, 9, 10, 8)), tf.constant(rand(3, 3, 8, 6)), rand(6)

    @tf.function
    def f(x, w):
        return tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, 1, padding), b))
    with conv_select.forced(algo):
        graph, got, want = run_twice(f, x, w)
    assert graph.op_counts() == {"_FusedConv2D": 1}
    assert_close(got, want)
    ref = np.maximum(tf.nn.conv2d(x, w, 1, padding).numpy() + b, 0)
    assert_close(got, ref)


def test_dense_layers_fuse_matmul_bias_and_activation(backend):
    x = tf.constant(rand(5, 7))
    relu = tf.keras.layers.Dense(4, activation="relu")
    linear = tf.keras.layers.Dense(3)

    @tf.function
    def f(x):
        return linear(relu(x))
    graph, got, want = run_twice(f, x)
    assert graph.op_counts().get("_FusedMatMul") == 2
    assert [n.attrs["activation"] for n in graph.nodes if n.op.name == "_FusedMatMul"] == \
        ["Relu", None]
    assert_close(got, want)


def test_dense_layers_on_sequences_fuse_too(backend):
    """A Dense layer on [batch, seq, features] (a Transformer's feed-forward block) is a
    [batch, seq, k] by [k, n] MatMul: fused, as one GEMM over all rows; a transposed
    3-D operand is left alone."""
    x = tf.constant(rand(3, 5, 7))
    relu = tf.keras.layers.Dense(4, activation="relu")
    linear = tf.keras.layers.Dense(3)
    w, b = tf.constant(rand(5, 5)), rand(5)

    @tf.function
    def f(x):
        kept = tf.nn.bias_add(tf.matmul(x, w, transpose_a=True), b)
        return linear(relu(x)), kept
    graph, got, want = run_twice(f, x)
    assert [n.attrs["activation"] for n in graph.nodes if n.op.name == "_FusedMatMul"] == \
        ["Relu", None]
    assert_close(got, want)
    h = np.maximum(x.numpy() @ relu.kernel.numpy() + relu.bias.numpy(), 0)
    assert_close(got[0], h @ linear.kernel.numpy() + linear.bias.numpy())


def test_nothing_fuses_when_an_intermediate_is_used_elsewhere():
    x, w, b = tf.constant(rand(2, 6, 6, 4)), tf.constant(rand(3, 3, 4, 4)), rand(4)

    @tf.function
    def f(x, w):
        c = tf.nn.conv2d(x, w, 1, "SAME")
        pre = c + b
        return tf.nn.relu(pre), c * 2.0   # the convolution's output is needed as it is

    graph, got, want = run_twice(f, x, w)
    assert "_FusedConv2D" not in graph.op_counts()
    assert_close(got, want)

    @tf.function
    def g(x, w):
        pre = tf.nn.conv2d(x, w, 1, "SAME") + b
        return tf.nn.relu(pre), pre       # the pre-activation is an output: no ReLU fused

    graph, got, want = run_twice(g, x, w)
    fused = [n for n in graph.nodes if n.op.name == "_FusedConv2D"]
    assert len(fused) == 1 and fused[0].attrs["activation"] is None
    assert_close(got, want)


def test_a_bias_of_the_wrong_shape_is_not_fused():
    x, w = tf.constant(rand(2, 5, 5, 3)), tf.constant(rand(3, 3, 3, 4))
    full = rand(2, 5, 5, 4)   # not a per-channel vector

    @tf.function
    def f(x, w):
        return tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME") + full)
    graph, got, want = run_twice(f, x, w)
    assert "_FusedConv2D" not in graph.op_counts()
    assert_close(got, want)


def cnn_grads(x, y, params):
    w1, b1, w2, b2 = params
    with tf.GradientTape() as tape:
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w1, 1, "SAME"), b1))
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w2, 1, "VALID"), b2))
        loss = tf.reduce_sum(h * y)
    return loss, tape.gradient(loss, params)


@pytest.mark.parametrize("hw", [(8, 8), (9, 11)])   # odd sizes: rows no pool window covers
def test_backward_fusions_match_the_unfused_gradients(hw, backend):
    x = tf.constant(rand(3, hw[0], hw[1], 4))
    params = [tf.Variable(rand(3, 3, 4, 8)), tf.Variable(rand(8) * 0.1),
              tf.Variable(rand(3, 3, 8, 5)), tf.Variable(rand(5) * 0.1)]
    oh, ow = hw[0] // 2 - 2, hw[1] // 2 - 2
    y = tf.constant(rand(3, oh, ow, 5))
    f = tf.function(lambda x, y: cnn_grads(x, y, params))
    graph, got, want = run_twice(f, x, y)
    counts = graph.op_counts()
    assert counts.get("_FusedMaxPoolGradReluGrad") == 1
    assert counts.get("_FusedReluGradBiasAddGrad") == 1
    assert counts.get("_FusedConv2D") == 2
    assert "ReluGrad" not in counts and "MaxPoolGrad" not in counts
    assert_close(got, want, rtol=1e-4)
    eager = cnn_grads(x, y, params)
    assert_close(got, eager, rtol=1e-4)


def test_fused_backward_kernels_keep_numpys_arithmetic(backend):
    """Masks multiply (an inf cotangent where the mask is 0 gives NaN, as g * (y > 0)),
    the first maximum of a window takes the gradient, bias sums cover every element."""
    g = rand(2, 4, 4, 3)
    y = np.maximum(rand(2, 4, 4, 3), 0)
    g[0, 0, 0, 0] = np.inf
    y[0, 0, 0, 0] = 0.0
    r, s = fused_ops.FUSED_RELU_GRAD_BIAS_GRAD.forward(g, y)
    want = g * (y > 0)
    np.testing.assert_array_equal(r, want)
    np.testing.assert_allclose(s[1:], want.reshape(-1, 3).sum(0)[1:], rtol=1e-5)
    assert np.isnan(s[0])

    x = np.maximum(rand(2, 5, 4, 3), 0)
    x[1, 0, 0, :] = x[1, 0, 1, :] = 10.0  # tied maxima: the first tap takes the gradient
    pooled = x[:, :4].reshape(2, 2, 2, 2, 2, 3).max(axis=(2, 4))
    d = rand(2, 2, 2, 3)
    dx, db = fused_ops.FUSED_MAX_POOL_GRAD_RELU_GRAD.forward(
        x, pooled, d, ksize=(2, 2), strides=(2, 2), pads=(0, 0, 0, 0))
    from tensorlite.ops import pooling_ops
    ref = pooling_ops.MAX_POOL_GRAD.forward(x, pooled, d, ksize=(2, 2), strides=(2, 2),
                                         pads=(0, 0, 0, 0)) * (x > 0)
    np.testing.assert_array_equal(dx, ref)
    assert dx[1, 0, 0, 0] == d[1, 0, 0, 0] and dx[1, 0, 1, 0] == 0
    np.testing.assert_allclose(db, ref.reshape(-1, 3).sum(0), rtol=1e-5)


@pytest.mark.parametrize("rows", [8, 5000])  # one run; several runs of rows
def test_relu_bias_gradient_on_one_thread_has_the_unfused_ops_bits(backend, rows):
    # A tf.function's first call runs its ops one by one (the trace); later calls run the
    # fused graph. The two must agree to the bit, or a reloaded model's training drifts
    # from the original's (test_keras_saving_formats' "continues exactly").
    from tensorlite.framework import intra_op_pool
    g, y = rand(rows, 37), rand(rows, 37)
    with intra_op_pool.splitting(1):
        r, s = fused_ops.FUSED_RELU_GRAD_BIAS_GRAD.forward(g, y)
    want = g * (y > 0)
    np.testing.assert_array_equal(r, want)
    np.testing.assert_array_equal(s, np.sum(want, axis=0))
    assert s.dtype == np.float32


def test_fused_ops_refuse_an_activation_they_do_not_fuse():
    x, w, b = rand(1, 4, 4, 2), rand(3, 3, 2, 2), rand(2)
    with pytest.raises(NotImplementedError, match="Tanh"):
        fused_ops.FUSED_CONV2D.forward(x, w, b, strides=(1, 1), dilations=(1, 1),
                                       pads=(1, 1, 1, 1), activation="Tanh")


@pytest.mark.parametrize("shape", [(2, 6, 8, 3), (3, 7, 9, 5)])
def test_non_overlapping_max_pool_matches_the_tap_reduction(shape, backend):
    from tensorlite.ops import pooling_ops
    x = rand(*shape)
    x[0, 0, 0, 0] = np.nan   # NaN wins, as np.maximum's
    got = pooling_ops.MAX_POOL.forward(x, ksize=(2, 2), strides=(2, 2), pads=(0, 0, 0, 0))
    want = pooling_ops._reduce_taps(x, (2, 2), (2, 2), np.maximum)[0]
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[0, 0, 0, 0])


@pytest.mark.parametrize("algo", [None, "im2col", "numba"])
def test_conv_bias_relu6_fuses_and_matches(algo, backend):
    """MobileNetV2's expansion convolutions: Conv2D + bias + ReLU6 in one kernel (values
    beyond 6, below 0 and NaN as tf.nn.relu6 gives them)."""
    if algo == "numba" and not numba_backend.available():
        pytest.skip("numba is not installed")
    x, w, b = tf.constant(rand(4, 9, 10, 8) * 3), tf.constant(rand(1, 1, 8, 6)), rand(6)
    x = tf.tensor_scatter_nd_update(x, [[0, 0, 0, 0]], [np.nan])

    @tf.function
    def f(x, w):
        return tf.nn.relu6(tf.nn.bias_add(tf.nn.conv2d(x, w, 1, "SAME"), b))
    with conv_select.forced(algo):
        graph, got, want = run_twice(f, x, w)
    assert graph.op_counts() == {"_FusedConv2D": 1}
    assert [n.attrs["activation"] for n in graph.nodes] == ["Relu6"]
    assert np.isnan(got.numpy()[0, 0, 0]).all() and np.nanmax(got.numpy()) == 6.0
    np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(want.numpy()))
    assert_close(np.nan_to_num(got.numpy()), np.nan_to_num(want.numpy()))


@pytest.mark.parametrize("multiplier", [1, 2])
@pytest.mark.parametrize("relu6", [False, True])
def test_depthwise_bias_activation_fuses_and_matches(multiplier, relu6, backend,
                                                    monkeypatch):
    """MobileNetV2's depthwise blocks after BatchNorm folding: DepthwiseConv2dNative + bias
    (+ ReLU6) in one kernel, with the compiled depthwise kernel and with NumPy's."""
    if backend == "numpy":
        monkeypatch.setitem(numba_backend._STATE, "on", False)
    x = tf.constant(rand(3, 9, 8, 4) * 3)
    w, b = tf.constant(rand(3, 3, 4, multiplier)), rand(4 * multiplier)

    @tf.function
    def f(x, w):
        y = tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME") + b
        return tf.nn.relu6(y) if relu6 else y
    graph, got, want = run_twice(f, x, w)
    assert graph.op_counts() == {"_FusedDepthwiseConv2dNative": 1}
    assert [n.attrs["activation"] for n in graph.nodes] == ["Relu6" if relu6 else None]
    assert_close(got, want)


@pytest.mark.parametrize("algo", [None, "im2col", "gemm1x1", "winograd"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_residual_sum_and_second_bias_fuse_and_match(algo, dtype, backend, monkeypatch):
    """ResNet's block end after BatchNorm folding, relu((conv(x, w) + b) + shift + shortcut):
    one _FusedConv2D whose bias is b + shift (one vector add) and whose epilogue adds the
    shortcut before the ReLU, for each algorithm, against the plain composition in float64.
    Runs of one image (tiny scratch budgets): each run must add its own part of the
    shortcut."""
    from tensorlite.ops import conv_kernels, winograd
    monkeypatch.setattr(conv_kernels, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(conv_kernels, "_SMALL_PATCH_BYTES", 0)
    monkeypatch.setattr(winograd, "CHUNK_BYTES", 1)
    k, s = (3, 1) if algo in (None, "winograd", "im2col") else (1, 2)
    x = tf.constant(rand(5, 12, 10, 8).astype(dtype))
    w = tf.constant(rand(k, k, 8, 16).astype(dtype))
    b, shift = rand(16).astype(dtype), rand(16).astype(dtype)
    oh, ow = -(-12 // s), -(-10 // s)
    shortcut = tf.constant(rand(5, oh, ow, 16).astype(dtype))

    @tf.function
    def f(x, w, r):
        return tf.nn.relu(r + (tf.nn.bias_add(tf.nn.conv2d(x, w, s, "SAME"), b) + shift))
    with conv_select.forced(algo):
        graph, got, want = run_twice(f, x, w, shortcut)
    assert graph.op_counts() == {"AddV2": 1, "_FusedConv2D": 1}
    (fused,) = [n for n in graph.nodes if n.op.name == "_FusedConv2D"]
    assert len(fused.inputs) == 4 and fused.attrs["activation"] == "Relu"
    x64, w64 = x.numpy().astype(np.float64), w.numpy().astype(np.float64)
    ref = np.maximum(tf.nn.conv2d(x64, w64, s, "SAME").numpy() + b + shift +
                     shortcut.numpy(), 0)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert_close(got, ref, rtol=rtol)
    assert_close(got, want, rtol=rtol)


def test_resnet_blocks_fuse_every_sum_into_a_convolution(backend):
    """A projection block and an identity block of Keras layers (Conv2D with bias,
    BatchNormalization, Add, ReLU) become three _FusedConv2D nodes: no elementwise pass
    is left over the activations; values as the Keras model's."""
    inp = tf.keras.Input((8, 8, 4))
    layers = tf.keras.layers
    a = layers.BatchNormalization()(layers.Conv2D(6, 1)(inp))
    b = layers.BatchNormalization()(layers.Conv2D(6, 3, padding="same")(inp))
    x = layers.Activation("relu")(layers.Add()([a, b]))
    c = layers.BatchNormalization()(layers.Conv2D(6, 3, padding="same")(x))
    model = tf.keras.Model(inp, layers.Activation("relu")(layers.Add()([x, c])))
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            layer.set_weights([rng.uniform(0.5, 1.5, v.shape).astype(np.float32)
                               for v in layer.get_weights()])
    x = rand(3, 8, 8, 4)
    f = tf.function(lambda t: model(t, training=False))
    f(x)
    got = f(x)
    counts = f.get_concrete_function(x).optimized_graph.op_counts()
    assert counts["_FusedConv2D"] == 3
    assert "Relu" not in counts and "FusedElementwise" not in counts
    assert_close(got, model(x, training=False), rtol=1e-5)


def test_a_residual_of_another_shape_or_used_elsewhere_is_not_fused():
    x, w, b = tf.constant(rand(2, 6, 6, 4)), tf.constant(rand(3, 3, 4, 4)), rand(4)
    row = tf.constant(rand(1, 6, 6, 4))  # broadcasts over the batch: not a residual

    @tf.function
    def f(x, w):
        return tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME") + b + row)
    graph, got, want = run_twice(f, x, w)
    (fused,) = [n for n in graph.nodes if n.op.name == "_FusedConv2D"]
    assert len(fused.inputs) == 3 and fused.attrs["activation"] is None
    assert_close(got, want)

    @tf.function
    def g(x, w):
        pre = tf.nn.conv2d(x, w, 1, "SAME") + b
        total = pre + x
        return tf.nn.relu(total), total  # the sum is an output: the ReLU stays apart
    graph, got, want = run_twice(g, x, w)
    (fused,) = [n for n in graph.nodes if n.op.name == "_FusedConv2D"]
    assert len(fused.inputs) == 4 and fused.attrs["activation"] is None
    assert graph.op_counts().get("Relu") == 1
    assert_close(got, want)


@pytest.mark.parametrize("geo", [((3, 3), (2, 2), "SAME"), ((3, 3), (2, 2), "VALID"),
                                 ((3, 3), (1, 1), "SAME"), ((2, 3), (1, 2), "SAME")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_overlapping_and_padded_max_pool_matches_the_tap_reduction(geo, dtype, backend):
    """ResNet's stem pool (3x3, stride 2) and others: the compiled pass over any windows
    gives the padded tap reduction's values, NaN winning as np.maximum's."""
    from tensorlite.ops import pooling_ops
    ksize, strides, padding = geo
    x = rand(3, 9, 8, 5).astype(dtype)
    x[0, 0, 0, 0] = np.nan
    x[1, :, :, 1] = -np.inf
    got = tf.nn.max_pool2d(x, ksize, strides, padding).numpy()
    from tensorlite.ops.conv_kernels import same_pads
    pads = (0, 0, 0, 0) if padding == "VALID" else \
        same_pads(9, ksize[0], strides[0], 1) + same_pads(8, ksize[1], strides[1], 1)
    want = pooling_ops._reduce_taps(pooling_ops.pad_hw(x, pads, -np.inf), ksize, strides,
                                    np.maximum)[0]
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[0, 0, 0, 0]) and got.dtype == dtype


@pytest.mark.parametrize("algo", [None, "im2col", "winograd"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_folded_batch_norm_scale_runs_in_the_epilogue(algo, dtype, backend):
    """On variable weights a folded BatchNormalization's scale would be a filter-sized Mul on
    every call; the fused convolution takes the unscaled filter and the scale and applies
    it to its output in the epilogue: relu(conv(x, w) * s + (b * s + shift) + shortcut)."""
    tf.keras.backend.set_floatx(dtype)
    try:
        _check_scaled_block(algo, dtype)
    finally:
        tf.keras.backend.set_floatx("float32")


def _check_scaled_block(algo, dtype):
    inp = tf.keras.Input((7, 6, 5), dtype=dtype)
    conv = tf.keras.layers.Conv2D(5, 3, padding="same", bias_initializer="normal")
    bn = tf.keras.layers.BatchNormalization()
    out = tf.keras.layers.ReLU()(tf.keras.layers.Add()([bn(conv(inp)), inp]))
    model = tf.keras.Model(inp, out)
    bn.set_weights([rng.uniform(0.5, 1.5, 5).astype(dtype) for _ in range(4)])
    x = rand(3, 7, 6, 5).astype(dtype)
    f = tf.function(lambda t: model(t, training=False))
    with conv_select.forced(algo):
        f(x)
        got = f(x).numpy()
    graph = f.get_concrete_function(x).optimized_graph
    (fused,) = [n for n in graph.nodes if n.op.name == "_FusedConv2D"]
    assert fused.attrs["scaled"] and len(fused.inputs) == 5
    spec = graph.slot_specs
    assert all(np.prod(spec[n.outputs[0]].shape) <= 5 for n in graph.nodes
               if n.op.name == "Mul"), "a filter-sized Mul is left"
    gamma, beta, mean, var = (v.astype(np.float64) for v in bn.get_weights())
    scale = gamma / np.sqrt(var + bn.epsilon)
    w64, b64 = (v.astype(np.float64) for v in conv.get_weights())
    pre = tf.nn.conv2d(x.astype(np.float64), w64, 1, "SAME").numpy() + b64
    ref = np.maximum((pre - mean) * scale + beta + x, 0)
    assert got.dtype == dtype
    assert_close(got, ref, rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("algo", ["im2col", "winograd", "winograd4"])
def test_epilogue_runs_split_over_threads_add_their_own_residual(algo, backend, monkeypatch):
    """Each thread's run of images scales, biases and adds its own part of the residual
    (runs of one image, two threads), as the plain composition in float64."""
    if algo == "winograd4" and not numba_backend.available():
        pytest.skip("numba is not installed")
    from tensorlite.framework import intra_op_pool
    from tensorlite.ops import conv_kernels, winograd
    monkeypatch.setattr(conv_kernels, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(winograd, "CHUNK_BYTES", 1)
    x, w = rand(6, 9, 8, 8).astype(np.float64), rand(3, 3, 8, 12).astype(np.float64)
    b, s, r = rand(12).astype(np.float64), rand(12).astype(np.float64), \
        rand(6, 9, 8, 12).astype(np.float64)
    with intra_op_pool.splitting(2):
        got = conv_select.ALGORITHMS[algo][1](x, w, (1, 1), (1, 1), (1, 1, 1, 1),
                                              fused_ops.Epilogue(b, 2, r, s))
    ref = np.clip(tf.nn.conv2d(x, w, 1, "SAME").numpy() * s + b + r, 0, 6)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fill", [0.0, -2.5])
def test_zero_padding_before_a_max_pool_is_the_pools_own(fill, backend):
    """ResNet's stem: tf.pad (ZeroPadding2D) then a 3x3 stride-2 VALID max pool is one
    _FusedPadMaxPool whose padding has the pad's value: same values as the padded copy,
    also where the padding wins a window (all-negative inputs) and for NaN."""
    x = rand(3, 10, 9, 4) - 3.0   # mostly negative: the fill wins on the border
    x[0, 0, 0, 0] = np.nan

    @tf.function
    def f(x):
        padded = tf.pad(x, [[0, 0], [1, 2], [1, 1], [0, 0]], constant_values=fill)
        return tf.nn.max_pool2d(padded, 3, 2, "VALID")
    graph, got, want = run_twice(f, tf.constant(x))
    assert graph.op_counts() == {"_FusedPadMaxPool": 1}
    padded = np.pad(x, [[0, 0], [1, 2], [1, 1], [0, 0]], constant_values=fill)
    from tensorlite.ops import pooling_ops
    ref = pooling_ops._reduce_taps(padded, (3, 3), (2, 2), np.maximum)[0]
    np.testing.assert_array_equal(got.numpy(), ref)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert np.isnan(got.numpy()[0, 0, 0, 0]) and (got.numpy() == fill).any()


def test_a_pad_of_the_batch_or_channels_or_used_elsewhere_is_not_fused():
    x = tf.constant(rand(2, 6, 6, 3))

    @tf.function
    def f(x):
        channels = tf.nn.max_pool2d(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 1]]), 3, 2, "VALID")
        p = tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
        return channels, tf.nn.max_pool2d(p, 3, 2, "VALID"), p
    graph, got, want = run_twice(f, x)
    assert "_FusedPadMaxPool" not in graph.op_counts()
    assert_close(got, want)
