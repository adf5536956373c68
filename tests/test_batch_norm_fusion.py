"""Training-mode BatchNormalization as one op each way (ops/batch_norm_ops.py, compiled in
ops/numba_batch_norm.py), with and without the ReLU6 the graph fusion pass puts into it:
checked against the plain composition in float64 (values, and gradients of orders 1 and 2
through op_check), the compiled kernels on and off."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import batch_norm_ops, numba_backend
from tensorlite.ops.common import execute
from tests.op_check import check_op

RNG = np.random.default_rng(0)
EPS = 1e-3


@pytest.fixture(params=["numba", "numpy"])
def kernels(request, monkeypatch):
    if request.param == "numba":
        if not numba_backend.available():
            pytest.skip("numba (the jit extra) is not installed")
    else:
        monkeypatch.setitem(numba_backend._STATE, "on", False)
    return request.param


def _np_bn(x, gamma, beta, relu6=False):
    axes = tuple(range(x.ndim - 1))
    mean = x.mean(axis=axes)
    var = ((x - mean) ** 2).mean(axis=axes)
    y = gamma * (x - mean) / np.sqrt(var + EPS) + beta
    return np.clip(y, 0, 6) if relu6 else y


def _composite(x, gamma, beta, relu6=False):
    """The plain composition the Keras layer ran before (nn.moments, batch_normalization)."""
    mean, var = tf.nn.moments(x, axes=list(range(x.shape.rank - 1)))
    y = tf.nn.batch_normalization(x, mean, var, beta, gamma, EPS)
    return tf.nn.relu6(y) if relu6 else y


def _fused(x, gamma, beta, relu6=False):
    return execute(batch_norm_ops.BATCH_NORM_TRAIN, (x, gamma, beta),
                   {"epsilon": EPS, "activation": "Relu6" if relu6 else None})


def _args(shape=(3, 4, 5, 6), dtype="float64"):
    c = shape[-1]
    return [RNG.normal(size=shape).astype(dtype), RNG.uniform(0.5, 1.5, c).astype(dtype),
            RNG.normal(size=c).astype(dtype)]


def test_values_and_gradients_orders_1_and_2(kernels):
    check_op(lambda x, g, b: _fused(x, g, b)[0], _np_bn, _args())
    check_op(lambda x, g, b: _fused(x, g, b)[0], _np_bn, _args((7, 3)))


def test_with_relu6_values_and_first_order_gradients(kernels):
    x, g, b = _args()
    x = x * 3 + 2  # both kinks of ReLU6 among the outputs
    check_op(lambda x, g, b: _fused(x, g, b, True)[0], lambda *a: _np_bn(*a, relu6=True),
             [x, g, b], order=1)


@pytest.mark.parametrize("relu6", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_backward_equals_the_composition(kernels, relu6, dtype):
    x, g, b = (tf.constant(a) for a in _args((4, 6, 6, 8), dtype))
    x = x * 3.0 + 2.0
    cot = tf.constant(RNG.normal(size=(4, 6, 6, 8)).astype(dtype))
    got, want = [], []
    for fn, out in ((_fused, got), (_composite, want)):
        with tf.GradientTape() as tape:
            tape.watch([x, g, b])
            y = fn(x, g, b, relu6)
            y = y[0] if isinstance(y, tuple) else y
        out.append(y.numpy())
        out.extend(t.numpy() for t in tape.gradient(y, [x, g, b], output_gradients=cot))
    tol = 2e-4 if dtype == "float32" else 1e-10
    for a, b_ in zip(got, want):
        np.testing.assert_allclose(a, b_, rtol=tol, atol=tol)


def test_first_order_runs_the_fused_gradient_op():
    x, g, b = (tf.constant(a) for a in _args())
    ops = []

    class Seen:
        def record(self, op, *rest):
            ops.append(op.name)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = _fused(x, g, b)[0]
    from tensorlite.framework import dispatch  # noqa: PLC0415
    dispatch.OBSERVERS.append(Seen())
    try:
        tape.gradient(y, x)
    finally:
        dispatch.OBSERVERS.pop()
    assert "_FusedBatchNormTrainGrad" in ops


def test_keras_layer_training_is_one_op_and_matches_the_unfused_layer(kernels):
    x = tf.constant(RNG.normal(size=(4, 5, 5, 3)).astype("float32"))
    outs = []
    for fused in (None, False):
        layer = tf.keras.layers.BatchNormalization(fused=fused)
        layer.build(x.shape)
        layer.gamma.assign(RNG.uniform(0.5, 1.5, 3).astype("float32") * 0 + [0.7, 1.2, 0.9])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=True)
            loss = tf.reduce_sum(y * tf.range(75.0, dtype=tf.float32)[None, :3])
        outs.append([y.numpy()] + [t.numpy() for t in
                                   tape.gradient(loss, [x] + layer.trainable_variables)])
        if fused is None:  # the Bessel-corrected moving variance of TF's fused kernel
            n = 4 * 5 * 5
            want = 0.99 + 0.01 * np.var(x.numpy(), axis=(0, 1, 2)) * n / (n - 1)
            np.testing.assert_allclose(layer.moving_variance.numpy(), want, rtol=1e-5)
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)
    bn = tf.keras.layers.BatchNormalization()
    bn.build([2, 3, 3, 4])
    graph = tf.function(lambda v: bn(v, training=True)) \
        .get_concrete_function(tf.TensorSpec([2, 3, 3, 4])).graph
    assert graph.op_counts().get("_FusedBatchNormTrain") == 1


def test_graph_fusion_puts_relu6_into_the_training_step(kernels, capsys):
    """A Keras model's train step (tf.function): BatchNormalization + ReLU(6.) become one
    node each way in the optimised graph, with the unoptimised graph's results."""
    def model():
        tf.keras.utils.set_random_seed(1)
        inp = tf.keras.Input((6, 6, 3))
        x = tf.keras.layers.Conv2D(8, 1, use_bias=False)(inp)
        x = tf.keras.layers.BatchNormalization()(x)
        x = tf.keras.layers.ReLU(6.0)(x)
        x = tf.keras.layers.GlobalAveragePooling2D()(x)
        return tf.keras.Model(inp, tf.keras.layers.Dense(2)(x))

    x = RNG.normal(size=(4, 6, 6, 3)).astype("float32") * 3
    results = []
    before = tf.config.optimizer.get_experimental_options()
    try:
        for options in ({"report": True}, {"disable_meta_optimizer": True}):
            tf.config.optimizer.set_experimental_options(options)
            m = model()

            @tf.function
            def step(v):  # called only in this iteration: its `m` is this one's
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(m(v, training=True) ** 2)  # noqa: B023
                return loss, tape.gradient(loss, m.trainable_variables)  # noqa: B023
            step(x)
            loss, grads = step(x)
            results.append([loss.numpy()] + [g.numpy() for g in grads] +
                           [w.numpy() for w in m.non_trainable_variables])
    finally:
        tf.config.optimizer.set_experimental_options(before)
    report = capsys.readouterr().out
    assert "_FusedBatchNormTrain+Relu6" in report and \
        "Relu6Grad+_FusedBatchNormTrainGrad" in report
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_compiled_passes_split_over_threads_give_the_same_results():
    if not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    from tensorlite.framework import intra_op_pool  # noqa: PLC0415
    from tensorlite.ops import numba_batch_norm  # noqa: PLC0415
    x, g, b = _args((4, 300, 300, 3))  # several runs of rows
    x2, cot = x.reshape(-1, 3) * 3 + 2, RNG.normal(size=(4 * 300 * 300, 3))
    results = []
    for ways in (1, 2):
        with intra_op_pool.splitting(ways):
            y, mean, var = numba_batch_norm.forward(x2, g, b, EPS, True)
            results.append([y, mean, var, *numba_batch_norm.backward(
                cot, x2, y, g, mean, var, EPS, True)])
    for one, two in zip(*results):
        np.testing.assert_allclose(one, two, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[0][0], _np_bn(x2, g, b, relu6=True), rtol=1e-10,
                               atol=1e-10)
