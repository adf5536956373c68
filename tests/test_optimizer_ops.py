"""The optimizers' updates against NumPy references of TensorFlow's update formulas (its
docs and `ResourceApply*` kernels), written here independently in float64, step by step;
and the fused update ops themselves (functional: their inputs never change)."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import optimizer_ops

RNG = np.random.default_rng(7)
W0 = RNG.standard_normal((3, 4))
GRADS = [RNG.standard_normal((3, 4)) for _ in range(5)]
LR = 0.05


def f32(x):
    """Keras keeps hyperparameters in float32 variables: the references use their values."""
    return float(np.float32(x))


# -- references: (w, grads) -> w after each step -------------------------------------------
# (LR, momentum, rho, betas and Ftrl's strengths are hyperparameters: rounded through f32.)
def ref_sgd(w, grads, momentum=0.0, nesterov=False, wd=0.0):
    vel = np.zeros_like(w)
    momentum, lr = f32(momentum), f32(LR)
    for g in grads:
        w = w - w * wd * lr
        vel = momentum * vel - lr * g
        w = w + (momentum * vel - lr * g if nesterov else vel)
    return w


def ref_adam(w, grads, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False, wd=0.0):
    m = v = vhat = np.zeros_like(w)
    b1, b2, lr0 = f32(b1), f32(b2), f32(LR)
    for t, g in enumerate(grads, 1):
        w = w - w * wd * lr0
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vhat = np.maximum(vhat, v)
        lr = lr0 * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - lr * m / (np.sqrt(vhat if amsgrad else v) + eps)
    return w


def ref_rmsprop(w, grads, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    ms = mom = mg = np.zeros_like(w)
    rho, momentum, lr = f32(rho), f32(momentum), f32(LR)
    for g in grads:
        ms = rho * ms + (1 - rho) * g * g
        denom = ms
        if centered:
            mg = rho * mg + (1 - rho) * g
            denom = ms - mg * mg
        if momentum:
            mom = momentum * mom + lr * g / np.sqrt(denom + eps)
            w = w - mom
        else:
            w = w - lr * g / (np.sqrt(denom) + eps)
    return w


def ref_adagrad(w, grads, init=0.1, eps=1e-7):
    acc = np.full_like(w, init)
    for g in grads:
        acc = acc + g * g
        w = w - f32(LR) * g / (np.sqrt(acc) + eps)
    return w


def ref_adadelta(w, grads, rho=0.95, eps=1e-7):
    acc = acc_up = np.zeros_like(w)
    rho = f32(rho)
    for g in grads:
        acc = rho * acc + (1 - rho) * g * g
        up = np.sqrt(acc_up + eps) / np.sqrt(acc + eps) * g
        acc_up = rho * acc_up + (1 - rho) * up * up
        w = w - f32(LR) * up
    return w


def ref_adamax(w, grads, b1=0.9, b2=0.999, eps=1e-7):
    m = u = np.zeros_like(w)
    b1, b2 = f32(b1), f32(b2)
    for t, g in enumerate(grads, 1):
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g))
        w = w - f32(LR) / (1 - b1 ** t) * m / (u + eps)
    return w


def ref_nadam(w, grads, b1=0.9, b2=0.999, eps=1e-7):
    m = v = np.zeros_like(w)
    prod = 1.0
    b1, b2 = f32(b1), f32(b2)
    for t, g in enumerate(grads, 1):
        mu = b1 * (1 - 0.5 * 0.96 ** (0.004 * t))
        mu_next = b1 * (1 - 0.5 * 0.96 ** (0.004 * (t + 1)))
        prod = prod * mu
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_bar = (1 - mu) * g / (1 - prod) + mu_next * m / (1 - prod * mu_next)
        w = w - f32(LR) * m_bar / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return w


def ref_ftrl(w, grads, power=-0.5, init=0.1, l1=0.0, l2=0.0, shrink=0.0, beta=0.0):
    acc = np.full_like(w, init)
    lin = np.zeros_like(w)
    lr, power, l1 = f32(LR), f32(power), f32(l1)
    l2 = f32(l2) + f32(beta) / (2 * lr)
    for g in grads:
        new = acc + g * g
        lin = lin + g + 2 * shrink * w - (new ** -power - acc ** -power) / lr * w
        quad = new ** -power / lr + 2 * l2
        w = np.where(np.abs(lin) > l1, (np.sign(lin) * l1 - lin) / quad, 0.0)
        acc = new
    return w


def ref_lion(w, grads, b1=0.9, b2=0.99):
    m = np.zeros_like(w)
    b1, b2 = f32(b1), f32(b2)
    for g in grads:
        w = w - f32(LR) * np.sign(b1 * m + (1 - b1) * g)
        m = b2 * m + (1 - b2) * g
    return w


def ref_ema(update, ema_momentum, every):
    """`update`'s steps followed by TF 2.11+'s use_ema with ema_overwrite_frequency."""
    def ref(w, grads):
        average = w
        for t in range(1, len(grads) + 1):
            w_new = update(w, grads[t - 1:t])  # one step from this w
            w = w_new
            average = ema_momentum * average + (1 - ema_momentum) * w
            if t % every == 0:
                w = average
        return w
    return ref


O = tf.keras.optimizers
CASES = {
    "sgd": (lambda: O.SGD(LR), ref_sgd),
    "sgd_momentum": (lambda: O.SGD(LR, momentum=0.9), lambda w, g: ref_sgd(w, g, 0.9)),
    "sgd_nesterov": (lambda: O.SGD(LR, momentum=0.9, nesterov=True),
                     lambda w, g: ref_sgd(w, g, 0.9, True)),
    "adam": (lambda: O.Adam(LR), ref_adam),
    "adam_amsgrad": (lambda: O.Adam(LR, amsgrad=True), lambda w, g: ref_adam(w, g, amsgrad=True)),
    "adamw": (lambda: O.AdamW(LR, weight_decay=0.1), lambda w, g: ref_adam(w, g, wd=0.1)),
    "rmsprop": (lambda: O.RMSprop(LR), ref_rmsprop),
    "rmsprop_momentum": (lambda: O.RMSprop(LR, momentum=0.5),
                         lambda w, g: ref_rmsprop(w, g, momentum=0.5)),
    "rmsprop_centered": (lambda: O.RMSprop(LR, centered=True),
                         lambda w, g: ref_rmsprop(w, g, centered=True)),
    "rmsprop_centered_momentum": (lambda: O.RMSprop(LR, momentum=0.5, centered=True),
                                  lambda w, g: ref_rmsprop(w, g, momentum=0.5, centered=True)),
    "adagrad": (lambda: O.Adagrad(LR), ref_adagrad),
    "adadelta": (lambda: O.Adadelta(LR), ref_adadelta),
    "adamax": (lambda: O.Adamax(LR), ref_adamax),
    "nadam": (lambda: O.Nadam(LR), ref_nadam),
    "ftrl": (lambda: O.Ftrl(LR), ref_ftrl),
    "ftrl_l1_l2_shrinkage_beta": (
        lambda: O.Ftrl(LR, l1_regularization_strength=0.05, l2_regularization_strength=0.1,
                       l2_shrinkage_regularization_strength=0.02, beta=0.3),
        lambda w, g: ref_ftrl(w, g, l1=0.05, l2=0.1, shrink=0.02, beta=0.3)),
    "ftrl_power": (lambda: O.Ftrl(LR, learning_rate_power=-0.3),
                   lambda w, g: ref_ftrl(w, g, power=-0.3)),
    "lion": (lambda: O.Lion(LR), ref_lion),
    "sgd_weight_decay": (lambda: O.SGD(LR, weight_decay=0.05),
                         lambda w, g: ref_sgd(w, g, wd=0.05)),
    "sgd_ema_overwrite": (lambda: O.SGD(LR, use_ema=True, ema_momentum=0.7,
                                        ema_overwrite_frequency=2),
                          ref_ema(ref_sgd, 0.7, 2)),
}


def _run(make, graph, dtype="float64"):
    var = tf.Variable(W0.astype(dtype))
    opt = make()
    step = (lambda g: opt.apply_gradients([(g, var)]))
    step = tf.function(step) if graph else step
    for g in GRADS:
        step(tf.constant(g.astype(dtype)))
    return var.numpy(), opt


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
def test_update_matches_tensorflow_formula(name, graph):
    make, ref = CASES[name]
    got, opt = _run(make, graph)
    np.testing.assert_allclose(got, ref(W0, GRADS), rtol=1e-8, atol=1e-10)
    assert int(opt.iterations) == len(GRADS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_graph_equals_eager(name):
    make, ref = CASES[name]
    eager, _ = _run(make, False, "float32")
    graph, _ = _run(make, True, "float32")
    np.testing.assert_allclose(graph, eager, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(eager, ref(W0, GRADS), rtol=1e-4, atol=1e-5)


def test_fused_ops_are_functional_and_shape_checked():
    w, m, v = (np.ones(3, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32))
    g = np.full(3, 2.0, np.float32)
    new_w, new_m, new_v = optimizer_ops.ADAM.forward(w, m, v, g, 0.1, 0.9, 0.1, 0.999, 0.001,
                                                     1e-7, n_slots=2)
    assert (w == 1).all() and (m == 0).all() and (v == 0).all()  # inputs untouched
    np.testing.assert_allclose(new_m, 0.2)
    np.testing.assert_allclose(new_v, 0.004)
    np.testing.assert_allclose(new_w, 1 - 0.1 * 0.2 / (np.sqrt(0.004) + 1e-7), rtol=1e-6)
    assert new_w.dtype == np.float32
    from tensorlite.framework.registry import Spec
    specs = optimizer_ops.ADAM.infer(*[Spec((None, 3), tf.float32)] * 4,
                                     *[Spec((), tf.float32)] * 6, n_slots=2)
    assert [s.shape for s in specs] == [(None, 3)] * 3


def test_tensorflow_op_names_declared():
    from tensorlite.summary.graph_def import tf_rule
    assert tf_rule(optimizer_ops.ADAM, {"n_slots": 2}, [])[0] == "ResourceApplyAdam"
    assert tf_rule(optimizer_ops.ADAM, {"n_slots": 3}, [])[0] == "ResourceApplyAdamWithAmsgrad"
    assert tf_rule(optimizer_ops.MOMENTUM, {"n_slots": 1, "nesterov": True}, []) == \
        ("ResourceApplyKerasMomentum", {"use_nesterov": True})
    assert tf_rule(optimizer_ops.RMSPROP, {"n_slots": 3, "centered": True}, [])[0] == \
        "ResourceApplyCenteredRMSProp"


@pytest.mark.parametrize("name", ["adadelta", "adamax", "nadam", "ftrl", "lion"])
def test_new_optimizers_by_name_and_config(name):
    opt = tf.keras.optimizers.get(name)
    assert type(opt).__name__.lower() == name
    clone = tf.keras.optimizers.deserialize(tf.keras.optimizers.serialize(opt))
    assert clone.get_config() == opt.get_config()


def test_nadam_refuses_a_schedule_and_ftrl_checks_arguments():
    with pytest.raises(ValueError, match="LearningRateSchedules"):
        tf.keras.optimizers.Nadam(tf.keras.optimizers.schedules.ExponentialDecay(0.1, 1, 0.5))
    with pytest.raises(ValueError, match="learning_rate_power"):
        tf.keras.optimizers.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength"):
        tf.keras.optimizers.Ftrl(l1_regularization_strength=-1.0)


def test_fit_with_use_ema_ends_on_the_averages():
    x = RNG.standard_normal((32, 3)).astype("float32")
    y = x @ np.ones((3, 1), "float32")
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    opt = tf.keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5)
    model.compile(opt, "mse")
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    for v in model.trainable_variables:
        np.testing.assert_array_equal(v.numpy(), opt.get_slot(v, "average").numpy())
    assert opt.get_config()["use_ema"] is True
    clone = tf.keras.optimizers.deserialize(tf.keras.optimizers.serialize(opt))
    assert clone.use_ema and clone.ema_momentum == 0.5


def test_weight_decay_exclusions():
    kept, decayed = tf.Variable([1.0]), tf.Variable([1.0], name="kernel")
    bias = tf.Variable([1.0], name="dense/bias")
    opt = tf.keras.optimizers.Adam(0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_list=[kept], var_names=["bias"])
    zero = tf.constant([0.0])
    opt.apply_gradients([(zero, kept), (zero, decayed), (zero, bias)])
    assert float(kept[0]) == 1.0 and float(bias[0]) == 1.0
    assert float(decayed[0]) == pytest.approx(1.0 - 0.5 * 0.1)


KERNEL_CASES = [  # (op, number of slots, coefficients, attrs)
    (optimizer_ops.SGD, 0, (0.1,), {}),
    (optimizer_ops.MOMENTUM, 1, (0.1, 0.9), {"nesterov": True}),
    (optimizer_ops.MOMENTUM, 1, (0.1, 0.9), {}),   # its result is the velocity slot
    (optimizer_ops.ADAM, 2, (0.1, 0.9, 0.1, 0.999, 0.001, 1e-7), {}),
    (optimizer_ops.RMSPROP, 3, (0.1, 0.9, 0.1, 0.5, 1e-7),
     {"centered": True, "use_momentum": True}),
    (optimizer_ops.FTRL, 2, (0.1, 0.05, 0.1, -0.5, 0.02), {}),
]


@pytest.mark.parametrize("op,n_slots,args,attrs", KERNEL_CASES,
                         ids=[f"{c[0].name}-{i}" for i, c in enumerate(KERNEL_CASES)])
def test_split_update_equals_the_whole_kernel(op, n_slots, args, attrs):
    """Run on parts of the arrays over 3 threads, an update gives the same numbers, slots
    and mode as on the whole arrays."""
    from tensorlite.framework import intra_op_pool
    w = RNG.standard_normal((7, 5)).astype(np.float32)
    g = RNG.standard_normal((7, 5)).astype(np.float32)
    slots0 = [np.abs(RNG.standard_normal((7, 5))).astype(np.float32) for _ in range(n_slots)]
    want_slots = [s.copy() for s in slots0]
    want, want_mode = op.kernel(w, want_slots, g, np.empty_like(g), *args, **attrs)
    got_slots = [s.copy() for s in slots0]
    with intra_op_pool.splitting(3):
        got, mode = optimizer_ops.split_update(op.kernel, w, got_slots, g, np.empty_like(g),
                                               args, attrs)
    assert mode == want_mode and got.shape == w.shape
    np.testing.assert_array_equal(got, want)
    for a, b in zip(got_slots, want_slots):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["adam", "rmsprop_centered_momentum", "ftrl", "lion"])
def test_large_variables_update_in_parts(name, monkeypatch):
    """The eager path splits a large variable's update over the intra-op threads (here every
    variable counts as large): the answers stay TensorFlow's."""
    from tensorlite.keras.optimizers import optimizer as optimizer_module
    monkeypatch.setattr(optimizer_module, "UPDATE_COST", 1 << 30)
    calls = []
    real = optimizer_module.split_update
    monkeypatch.setattr(optimizer_module, "split_update",
                        lambda *a: calls.append(1) or real(*a))
    for op in (optimizer_ops.SGD, optimizer_ops.ADAM, optimizer_ops.RMSPROP):  # compiled aside
        monkeypatch.setattr(op.kernel, "in_place", None)
    make, ref = CASES[name]
    got, _ = _run(make, False)
    assert len(calls) == len(GRADS)
    np.testing.assert_allclose(got, ref(W0, GRADS), rtol=1e-8, atol=1e-10)


COMPILED_CASES = [  # (op, number of slots, coefficients)
    (optimizer_ops.SGD, 0, (0.1,)),
    (optimizer_ops.ADAM, 2, (0.1, 0.9, 0.1, 0.999, 0.001, 1e-7)),
    (optimizer_ops.RMSPROP, 1, (0.1, 0.9, 0.1, 0.0, 1e-7)),
]


@pytest.mark.parametrize("op,n_slots,args", COMPILED_CASES, ids=["sgd", "adam", "rmsprop"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 400_000])  # the larger is split over the intra-op threads
def test_compiled_updates_equal_the_numpy_kernels_bit_for_bit(op, n_slots, args, dtype, n):
    pytest.importorskip("numba")
    from tensorlite.framework import intra_op_pool
    rng = np.random.default_rng(n)
    w = rng.standard_normal(n).astype(dtype)
    g = rng.standard_normal(n).astype(dtype)
    g[:3] = [0.0, np.inf, -1e-30]  # a zero, an inf and a tiny gradient too
    slots0 = [np.abs(rng.standard_normal(n)).astype(dtype) for _ in range(n_slots)]
    coefficients = [np.array(a, dtype) for a in args]
    want_w, want_slots = w.copy(), [s.copy() for s in slots0]
    with np.errstate(all="ignore"):
        out, mode = op.kernel(want_w, want_slots, g, np.empty_like(g), *coefficients)
        want_w -= out
        got_w, got_slots = w.copy(), [s.copy() for s in slots0]
        with intra_op_pool.splitting(2):
            assert op.kernel.in_place(got_w, got_slots, g, coefficients, {})
    np.testing.assert_array_equal(got_w, want_w)
    for a, b in zip(got_slots, want_slots):
        np.testing.assert_array_equal(a, b)


def test_compiled_updates_decline_what_they_do_not_cover():
    pytest.importorskip("numba")
    f32 = np.ones(4, np.float32)
    args = [np.float32(0.1)] * 5
    rms, adam = optimizer_ops.RMSPROP.kernel.in_place, optimizer_ops.ADAM.kernel.in_place
    declined = [
        rms(f32.copy(), [f32.copy()] * 3, f32, args, {"centered": True, "use_momentum": True}),
        rms(f32.copy(), [f32.copy()] * 2, f32, args, {"use_momentum": True}),
        adam(f32.copy(), [f32.copy()] * 3, f32, args + [args[0]], {}),  # amsgrad
        adam(f32.astype(np.float16), [f32.astype(np.float16)] * 2, f32.astype(np.float16),
             args, {}),
        rms(f32.copy(), [f32.copy()], f32.astype(np.float64), args, {}),  # mixed dtypes
        rms(np.ones((4, 4), np.float32).T.copy().T, [np.ones((4, 4), np.float32)],
            np.ones((4, 4), np.float32), args, {})]  # a transposed (non-C) variable
    assert declined == [False] * len(declined)


def test_eager_keras_optimizers_take_the_compiled_update_with_the_same_answers(monkeypatch):
    pytest.importorskip("numba")
    for name, op in (("sgd", optimizer_ops.SGD), ("adam", optimizer_ops.ADAM),
                     ("rmsprop", optimizer_ops.RMSPROP)):
        make, ref = CASES[name]
        taken, real = [], op.kernel.in_place
        monkeypatch.setattr(op.kernel, "in_place", lambda *a: taken.append(real(*a)) or
                            taken[-1])
        fast, _ = _run(make, False, "float32")
        # the first step makes the slots and the variable's own array
        assert taken.count(True) == len(GRADS) - 1
        for compiled in (optimizer_ops.SGD, optimizer_ops.ADAM, optimizer_ops.RMSPROP):
            monkeypatch.setattr(compiled.kernel, "in_place", None)
        slow, _ = _run(make, False, "float32")
        monkeypatch.undo()
        np.testing.assert_array_equal(fast, slow)
        np.testing.assert_allclose(fast, ref(W0, GRADS), rtol=1e-4, atol=1e-5)
