"""tf.keras.optimizers: every built-in against a NumPy implementation of its update rule,
legacy lr/decay, schedules, clipping, slots, config, and seed 001's subclassing API."""
import importlib.util
import math
import warnings

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.keras.optimizers  # noqa: F401 - makes tf.keras.optimizers available
from tensorlite.keras import optimizers
from tensorlite.keras.optimizers import schedules

RNG = np.random.default_rng(0)
INIT = [RNG.standard_normal((4, 3)), RNG.standard_normal(3)]
GRADS = [[RNG.standard_normal((4, 3)), RNG.standard_normal(3)] for _ in range(6)]


def run(opt, grads=GRADS, init=INIT, dtype=np.float32):
    vs = [tf.Variable(x.astype(dtype)) for x in init]
    for gs in grads:
        opt.apply_gradients(zip([tf.constant(g.astype(dtype)) for g in gs], vs))
    return [v.numpy() for v in vs], opt


# -- NumPy references (float64), one function per update rule ------------------------------
def ref_sgd(lr=0.01, momentum=0.0, nesterov=False, decay=0.0):
    ws, vel = [x.copy() for x in INIT], [np.zeros_like(x) for x in INIT]
    for t, gs in enumerate(GRADS):
        lr_t = lr / (1 + decay * t)
        for i, g in enumerate(gs):
            if momentum == 0:
                ws[i] -= lr_t * g
                continue
            vel[i] = momentum * vel[i] - lr_t * g
            ws[i] += momentum * vel[i] - lr_t * g if nesterov else vel[i]
    return ws


def ref_adam(lr=0.001, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False, wd=0.0):
    ws = [x.copy() for x in INIT]
    m, v, vhat = ([np.zeros_like(x) for x in INIT] for _ in range(3))
    for step, gs in enumerate(GRADS, start=1):
        alpha = lr * math.sqrt(1 - b2 ** step) / (1 - b1 ** step)
        for i, g in enumerate(gs):
            ws[i] -= ws[i] * wd * lr
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            vhat[i] = np.maximum(vhat[i], v[i])
            ws[i] -= alpha * m[i] / (np.sqrt(vhat[i] if amsgrad else v[i]) + eps)
    return ws


def ref_rmsprop(lr=0.001, rho=0.9, momentum=0.0, eps=1e-7, centered=False, decay=0.0):
    ws = [x.copy() for x in INIT]
    rms, mg, mom = ([np.zeros_like(x) for x in INIT] for _ in range(3))
    for t, gs in enumerate(GRADS):
        lr_t = lr / (1 + decay * t)
        for i, g in enumerate(gs):
            rms[i] = rho * rms[i] + (1 - rho) * g * g
            denom = rms[i]
            if centered:
                mg[i] = rho * mg[i] + (1 - rho) * g
                denom = rms[i] - mg[i] ** 2
            if momentum > 0:
                mom[i] = momentum * mom[i] + lr_t * g / np.sqrt(denom + eps)
                ws[i] -= mom[i]
            else:
                ws[i] -= lr_t * g / (np.sqrt(denom) + eps)
    return ws


def ref_adagrad(lr=0.001, init_acc=0.1, eps=1e-7):
    ws = [x.copy() for x in INIT]
    acc = [np.full_like(x, init_acc) for x in INIT]
    for gs in GRADS:
        for i, g in enumerate(gs):
            acc[i] += g * g
            ws[i] -= lr * g / (np.sqrt(acc[i]) + eps)
    return ws


CASES = [
    ("sgd", lambda: optimizers.SGD(0.1), lambda: ref_sgd(0.1)),
    ("sgd-momentum", lambda: optimizers.SGD(0.1, momentum=0.9),
     lambda: ref_sgd(0.1, 0.9)),
    ("sgd-nesterov", lambda: optimizers.SGD(0.1, momentum=0.9, nesterov=True),
     lambda: ref_sgd(0.1, 0.9, True)),
    ("adam", lambda: optimizers.Adam(0.01), lambda: ref_adam(0.01)),
    ("adam-amsgrad", lambda: optimizers.Adam(0.01, beta_1=0.5, amsgrad=True),
     lambda: ref_adam(0.01, b1=0.5, amsgrad=True)),
    ("adamw", lambda: optimizers.AdamW(0.01, weight_decay=0.1),
     lambda: ref_adam(0.01, wd=0.1)),
    ("rmsprop", lambda: optimizers.RMSprop(0.01), lambda: ref_rmsprop(0.01)),
    ("rmsprop-momentum", lambda: optimizers.RMSprop(0.01, momentum=0.5),
     lambda: ref_rmsprop(0.01, momentum=0.5)),
    ("rmsprop-centered", lambda: optimizers.RMSprop(0.01, centered=True),
     lambda: ref_rmsprop(0.01, centered=True)),
    ("rmsprop-centered-momentum",
     lambda: optimizers.RMSprop(0.01, rho=0.8, momentum=0.5, centered=True),
     lambda: ref_rmsprop(0.01, rho=0.8, momentum=0.5, centered=True)),
    ("adagrad", lambda: optimizers.Adagrad(0.1), lambda: ref_adagrad(0.1)),
]


@pytest.mark.parametrize("name,make,ref", CASES, ids=[c[0] for c in CASES])
def test_builtin_matches_numpy_rule(name, make, ref):
    got, opt = run(make())
    for g, r in zip(got, ref()):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-6)
    assert opt.iterations.dtype == tf.int64 and int(opt.iterations) == len(GRADS)


@pytest.mark.parametrize("name,make,ref", CASES[:7], ids=[c[0] for c in CASES[:7]])
def test_builtin_float64_variables(name, make, ref):
    got, _ = run(make(), dtype=np.float64)
    for g, r in zip(got, ref()):
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-7)


def test_slots_and_variables():
    _, opt = run(optimizers.Adam(amsgrad=True))
    assert opt.get_slot_names() == ["m", "v", "vhat"]
    assert len(opt.variables()) == 1 + 3 * 2 and len(opt.variables) == 7
    assert opt.variables()[0] is opt.iterations
    weights = opt.get_weights()
    assert weights[0] == len(GRADS)
    opt.set_weights([np.zeros_like(w) for w in weights])
    assert int(opt.iterations) == 0
    with pytest.raises(ValueError, match="expecting 7 weights"):
        opt.set_weights(weights[:2])
    v = tf.Variable([1.0, 2.0], name="w")
    opt2 = optimizers.SGD(momentum=0.5)
    opt2.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    slot = opt2.get_slot(v, "momentum")
    assert slot.name == "SGD/w/momentum:0" and not slot.trainable
    np.testing.assert_allclose(slot.numpy(), [-0.01, -0.01], rtol=1e-6)
    with pytest.raises(KeyError, match="no slot 'nope'"):
        opt2.get_slot(v, "nope")


# -- legacy arguments (seed 002) and learning rates ---------------------------------------------
def test_seed002_rmsprop_lr_decay():
    opt = tf.keras.optimizers.RMSprop(lr=0.0001, decay=1e-6)
    assert float(opt.learning_rate) == pytest.approx(1e-4)
    assert float(opt.lr) == pytest.approx(1e-4)
    assert opt.get_config()["decay"] == 1e-6
    got, _ = run(optimizers.RMSprop(lr=0.01, decay=0.5))
    for g, r in zip(got, ref_rmsprop(0.01, decay=0.5)):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-6)
    got, _ = run(optimizers.SGD(lr=0.1, decay=0.3, momentum=0.9))
    for g, r in zip(got, ref_sgd(0.1, 0.9, decay=0.3)):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-6)


def test_bad_constructor_arguments():
    with pytest.raises(TypeError, match="Unexpected keyword argument passed to optimizer: foo"):
        optimizers.Adam(foo=1)
    with pytest.raises(ValueError, match="decay >= 0"):
        optimizers.SGD(decay=-1.0)
    with pytest.raises(ValueError, match="both `clipnorm` and `global_clipnorm`"):
        optimizers.SGD(clipnorm=1.0, global_clipnorm=1.0)
    with pytest.raises(ValueError, match="momentum"):
        optimizers.SGD(momentum=1.5)
    with pytest.raises(ValueError, match="non-negative"):
        optimizers.Adagrad(initial_accumulator_value=-1.0)


def test_learning_rate_is_readable_and_assignable():
    opt = optimizers.SGD(learning_rate=0.5)
    assert isinstance(opt.learning_rate, tf.Variable) and opt.lr is opt.learning_rate
    assert opt.learning_rate.dtype == tf.float32
    v = tf.Variable(1.0)
    opt.apply_gradients([(tf.constant(1.0), v)])
    assert v.numpy() == pytest.approx(0.5)
    opt.learning_rate = 0.25
    opt.apply_gradients([(tf.constant(1.0), v)])
    assert v.numpy() == pytest.approx(0.25)
    opt.lr = 0.125
    assert float(opt.learning_rate) == 0.125
    opt.lr.assign(1.0)
    opt.apply_gradients([(tf.constant(1.0), v)])
    assert v.numpy() == pytest.approx(-0.75)
    assert "lr" in dir(opt) and "learning_rate" in dir(opt)


def test_callable_and_schedule_learning_rates():
    box = {"lr": 0.5}
    opt = optimizers.SGD(learning_rate=lambda: box["lr"])
    v = tf.Variable(0.0)
    opt.apply_gradients([(tf.constant(1.0), v)])
    box["lr"] = 2.0
    opt.apply_gradients([(tf.constant(1.0), v)])
    assert v.numpy() == pytest.approx(-2.5)

    sched = schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.5, 0.1])
    opt = optimizers.SGD(learning_rate=sched)
    assert opt.learning_rate is sched
    v = tf.Variable(0.0)
    for _ in range(4):  # steps 0, 1, 2, 3 -> lr 1, 1, 0.5, 0.1
        opt.apply_gradients([(tf.constant(1.0), v)])
    assert v.numpy() == pytest.approx(-2.6)
    opt.learning_rate = 0.01  # a float replaces the schedule
    assert float(opt.learning_rate) == pytest.approx(0.01)


# -- apply_gradients and minimize -------------------------------------------------------------
def test_none_gradients():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    opt = optimizers.SGD(1.0)
    with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \['b:0'\]"):
        opt.apply_gradients([(tf.constant(1.0), a), (None, b)])
    assert a.numpy() == 0.0 and b.numpy() == 2.0
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, a), (None, b)])
    step = int(opt.iterations.numpy())
    opt.apply_gradients([])  # no variables at all (a model without weights): no step, as
    assert int(opt.iterations.numpy()) == step  # tf.keras 2 does


def test_gradient_shape_and_dtype_mismatch():
    v = tf.Variable(tf.zeros([2, 3]), name="kernel")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"kernel:0 has shape \[3, 2\]"):
        optimizers.Adam().apply_gradients([(tf.zeros([3, 2]), v)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="float64"):
        optimizers.Adam().apply_gradients([(tf.zeros([2, 3], tf.float64), v)])


def test_minimize_callable_and_tape():
    x = tf.Variable([3.0, -2.0])
    opt = optimizers.SGD(learning_rate=0.1)
    for _ in range(50):
        opt.minimize(lambda: tf.reduce_sum(x * x), [x])
    np.testing.assert_allclose(x.numpy(), [3.0 * 0.8 ** 50, -2.0 * 0.8 ** 50], rtol=1e-4)
    y = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        loss = y * y
    optimizers.SGD(0.25).minimize(loss, [y], tape=tape)
    assert y.numpy() == pytest.approx(0.5)
    with pytest.raises(ValueError, match="`tape` is required"):
        optimizers.SGD().minimize(loss, [y])
    z = tf.Variable(2.0)
    optimizers.SGD(0.25).minimize(lambda: z * z, lambda: [z])
    assert z.numpy() == pytest.approx(1.0)


def test_clipping():
    def step(**kw):
        v = tf.Variable([0.0, 0.0])
        w = tf.Variable([0.0])
        optimizers.SGD(1.0, **kw).apply_gradients(
            [(tf.constant([3.0, -4.0]), v), (tf.constant([12.0]), w)])
        return -v.numpy(), -w.numpy()
    g1, g2 = step(clipvalue=1.0)
    np.testing.assert_allclose(g1, [1.0, -1.0]) and np.testing.assert_allclose(g2, [1.0])
    g1, g2 = step(clipnorm=1.0)  # each gradient to norm <= 1
    np.testing.assert_allclose(g1, [0.6, -0.8], rtol=1e-6)
    np.testing.assert_allclose(g2, [1.0], rtol=1e-6)
    g1, g2 = step(global_clipnorm=6.5)  # global norm 13 -> scale 0.5
    np.testing.assert_allclose(g1, [1.5, -2.0], rtol=1e-6)
    np.testing.assert_allclose(g2, [6.0], rtol=1e-6)
    g1, _ = step(clipnorm=10.0)  # under the limit: unchanged
    np.testing.assert_allclose(g1, [3.0, -4.0])


def test_constraint_applied_after_update():
    v = tf.Variable([0.5, -0.5], constraint=lambda x: tf.clip_by_value(x, 0.0, 1.0))
    optimizers.SGD(1.0).apply_gradients([(tf.constant([-1.0, 1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [1.0, 0.0])


def test_values_read_earlier_never_change():
    v = tf.Variable(np.ones((3, 3), np.float32))
    opt = optimizers.Adam(0.1)
    before = v.read_value()
    arr = v.numpy()
    opt.apply_gradients([(tf.ones([3, 3]), v)])
    np.testing.assert_array_equal(before.numpy(), np.ones((3, 3)))
    np.testing.assert_array_equal(arr, np.ones((3, 3)))
    assert not np.allclose(v.numpy(), 1.0)
    # held by nobody: the update is written in place (no new array per step)
    del before, arr
    first = id(v._t._value)
    opt.apply_gradients([(tf.ones([3, 3]), v)])
    opt.apply_gradients([(tf.ones([3, 3]), v)])
    assert id(v._t._value) == first
    # a slot read by the user keeps its value too
    m = opt.get_slot(v, "m").read_value()
    m_before = m.numpy().copy()
    opt.apply_gradients([(tf.ones([3, 3]), v)])
    np.testing.assert_array_equal(m.numpy(), m_before)


def test_adamw_excluded_variables_do_not_decay():
    a, b = tf.Variable([1.0], name="kernel"), tf.Variable([1.0], name="bias")
    opt = optimizers.AdamW(learning_rate=0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_names=["bias"])
    opt.apply_gradients([(tf.constant([0.0]), a), (tf.constant([0.0]), b)])
    assert a.numpy()[0] == pytest.approx(0.95) and b.numpy()[0] == pytest.approx(1.0)
    assert opt.get_config()["weight_decay"] == 0.5


# -- config and lookup ------------------------------------------------------------------------
def test_get_config_from_config_roundtrip():
    opt = optimizers.Adam(learning_rate=0.02, beta_1=0.8, amsgrad=True, clipnorm=1.0)
    config = opt.get_config()
    assert config["learning_rate"] == pytest.approx(0.02) and config["amsgrad"] is True
    assert config["name"] == "Adam" and config["clipnorm"] == 1.0
    clone = optimizers.Adam.from_config(config)
    assert float(clone.beta_1) == pytest.approx(0.8) and clone.clipnorm == 1.0
    sched = schedules.ExponentialDecay(0.1, 10, 0.5)
    config = optimizers.SGD(learning_rate=sched, momentum=0.9).get_config()
    assert config["learning_rate"]["class_name"] == "ExponentialDecay"
    clone = optimizers.SGD.from_config(config)
    assert isinstance(clone.learning_rate, schedules.ExponentialDecay)
    assert optimizers.SGD.from_config({"lr": 0.3}).get_config()["learning_rate"] == \
        pytest.approx(0.3)


def test_get_serialize_deserialize():
    for name, cls in [("adam", optimizers.Adam), ("sgd", optimizers.SGD),
                      ("rmsprop", optimizers.RMSprop), ("adagrad", optimizers.Adagrad),
                      ("AdamW", optimizers.AdamW)]:
        assert type(optimizers.get(name)) is cls
    opt = optimizers.RMSprop(0.5)
    assert optimizers.get(opt) is opt
    again = optimizers.get(optimizers.serialize(opt))
    assert type(again) is optimizers.RMSprop and float(again.lr) == 0.5
    with pytest.raises(ValueError, match="Unknown optimizer: 'adamax2'.*'adam'"):
        optimizers.get("adamax2")
    assert tf.keras.optimizers.legacy.Adam is optimizers.Adam


# -- schedules -------------------------------------------------------------------------------
@pytest.mark.parametrize("sched,expected", [
    (schedules.ExponentialDecay(0.1, 10, 0.5), lambda s: 0.1 * 0.5 ** (s / 10)),
    (schedules.ExponentialDecay(0.1, 10, 0.5, staircase=True),
     lambda s: 0.1 * 0.5 ** (s // 10)),
    (schedules.InverseTimeDecay(0.1, 5, 2.0), lambda s: 0.1 / (1 + 2.0 * s / 5)),
    (schedules.InverseTimeDecay(0.1, 5, 2.0, staircase=True),
     lambda s: 0.1 / (1 + 2.0 * (s // 5))),
    (schedules.PolynomialDecay(0.1, 20, 0.01, power=2.0),
     lambda s: (0.1 - 0.01) * (1 - min(s, 20) / 20) ** 2 + 0.01),
    (schedules.PolynomialDecay(0.1, 20, 0.01, cycle=True),
     lambda s: (0.1 - 0.01) * (1 - s / (20 * max(math.ceil(s / 20), 1))) + 0.01),
    (schedules.CosineDecay(0.1, 20, alpha=0.1),
     lambda s: 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 20) / 20)) + 0.1)),
    (schedules.CosineDecay(0.0, 20, warmup_target=0.1, warmup_steps=10),
     lambda s: 0.1 * s / 10 if s < 10 else
     0.1 * 0.5 * (1 + math.cos(math.pi * min(s - 10, 20) / 20))),
    (schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1]),
     lambda s: 1.0 if s <= 10 else 0.5 if s <= 20 else 0.1),
    (schedules.CosineDecayRestarts(0.1, 10, t_mul=1.0),
     lambda s: 0.1 * 0.5 * (1 + math.cos(math.pi * (s % 10) / 10))),
], ids=["exp", "exp-stair", "inv", "inv-stair", "poly", "poly-cycle", "cos", "cos-warmup",
        "piecewise", "cos-restarts"])
def test_schedule_values(sched, expected):
    for s in [0, 1, 5, 9, 10, 11, 15, 20, 21, 35, 50]:
        out = sched(s)
        assert out.dtype == tf.float32
        assert float(out) == pytest.approx(expected(s), rel=1e-5, abs=1e-7), s
    assert float(sched(tf.constant(5))) == pytest.approx(expected(5), rel=1e-5, abs=1e-7)
    clone = schedules.deserialize(schedules.serialize(sched))
    assert type(clone) is type(sched) and float(clone(7)) == pytest.approx(float(sched(7)))
    steps = [0, 1, 5, 9, 10, 11, 15, 20, 21, 35, 50]
    for vector in (np.array(steps, np.float64), tf.constant(steps)):
        out = sched(vector)  # elementwise, as TF's schedules are
        assert out.dtype == tf.float32 and out.shape == (len(steps),)
        np.testing.assert_allclose(out.numpy(), [expected(s) for s in steps],
                                   rtol=1e-5, atol=1e-7)


def test_schedule_of_a_vector_of_steps():
    """The overfitting tutorial plots the learning rate over a vector of steps."""
    STEPS_PER_EPOCH = 20
    lr_schedule = tf.keras.optimizers.schedules.InverseTimeDecay(
        0.001, decay_steps=STEPS_PER_EPOCH*1000, decay_rate=1, staircase=False)
    step = np.linspace(0, 100000)
    lr = lr_schedule(step)
    np.testing.assert_allclose(lr.numpy(), 0.001 / (1 + step / 20000), rtol=1e-6)


def test_cosine_restarts_geometric_periods():
    s = schedules.CosineDecayRestarts(1.0, 10, t_mul=2.0, m_mul=0.5)
    assert float(s(0)) == pytest.approx(1.0)
    assert float(s(10)) == pytest.approx(0.5)  # second period starts at m_mul
    assert float(s(20)) == pytest.approx(0.5 * 0.5 * (1 + math.cos(math.pi * 0.5)))
    assert float(s(30)) == pytest.approx(0.25)  # third period (length 40) starts


def test_schedule_errors():
    with pytest.raises(ValueError, match="1 less than the length of values"):
        schedules.PiecewiseConstantDecay([1, 2], [1.0])
    with pytest.raises(NotImplementedError):
        schedules.LearningRateSchedule()(0)


# -- seed 001: the subclassing API ----------------------------------------------------------------
class MyOptimizer(tf.keras.optimizers.Optimizer):
    def __init__(self, lr, power, avg):
        super().__init__(name="MyOptimizer")
        self.lrate, self.pow, self.avg = lr, power, avg

    def get_config(self): pass

    def _create_slots(self, var_list):
        for v in var_list: self.add_slot(v, "accum", tf.zeros_like(v))  # noqa: E701

    def _resource_apply_dense(self, grad, var, apply_state=None):
        acc = self.get_slot(var, "accum")
        acc.assign(self.avg * tf.pow(grad, self.pow) + (1-self.avg)*acc)
        return var.assign_sub(self.lrate * grad / tf.pow(acc, self.pow))


def _seed001_check(cls):
    x = tf.Variable([5.0, 4.0])
    opt = cls(0.1, 1.0, 0.5)
    losses, x_ref, acc_ref = [], np.array([5.0, 4.0]), np.zeros(2)
    for _ in range(20):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(x * x)
        losses.append(float(loss))
        grads = tape.gradient(loss, [x])
        opt.apply_gradients(zip(grads, [x]))
        g = 2 * x_ref
        acc_ref = 0.5 * g + 0.5 * acc_ref
        x_ref = x_ref - 0.1 * g / acc_ref
    assert losses[-1] < 0.5 * losses[0]
    assert all(b < a for a, b in zip(losses, losses[1:]))
    np.testing.assert_allclose(x.numpy(), x_ref, rtol=1e-4)
    assert opt.get_slot_names() == ["accum"] and int(opt.iterations) == 20
    assert opt.get_config() is None


def test_seed001_my_optimizer_reduces_quadratic():
    _seed001_check(MyOptimizer)


_NO_FUNCTION = not hasattr(tf, "function")
_NO_COMPILER = _NO_FUNCTION or importlib.util.find_spec("tensorlite.graph.compiler") is None


@pytest.mark.skipif(_NO_FUNCTION, reason="tf.function not available yet: the undecorated "
                    "seed 001 optimizer is tested above")
def test_seed001_my_optimizer_traced():
    class MyTracedOptimizer(MyOptimizer):
        @tf.function
        def _resource_apply_dense(self, grad, var, apply_state=None):
            acc = self.get_slot(var, "accum")
            acc.assign(self.avg * tf.pow(grad, self.pow) + (1-self.avg)*acc)
            return var.assign_sub(self.lrate * grad / tf.pow(acc, self.pow))
    _seed001_check(MyTracedOptimizer)


@pytest.mark.skipif(_NO_COMPILER, reason="experimental_compile needs the compiler "
                    "(tensorlite.graph.compiler), which is not there yet")
def test_seed001_my_optimizer_compiled():
    class MyCompiledOptimizer(MyOptimizer):
        @tf.function(experimental_compile=True)
        def _resource_apply_dense(self, grad, var, apply_state=None):
            acc = self.get_slot(var, "accum")
            acc.assign(self.avg * tf.pow(grad, self.pow) + (1-self.avg)*acc)
            return var.assign_sub(self.lrate * grad / tf.pow(acc, self.pow))
    _seed001_check(MyCompiledOptimizer)


def test_subclass_with_hyper_and_prepare_local():
    class Scaled(tf.keras.optimizers.Optimizer):
        def __init__(self, learning_rate=0.1, scale=2.0, **kwargs):
            super().__init__(name="Scaled", **kwargs)
            self._set_hyper("learning_rate", learning_rate)
            self._set_hyper("scale", scale)

        def _resource_apply_dense(self, grad, var, apply_state=None):
            c = apply_state[(var.device, var.dtype)]
            return var.assign_sub(c["lr_t"] * self._get_hyper("scale", var.dtype) * grad)

    opt = Scaled(learning_rate=0.5, decay=1.0)
    v = tf.Variable(0.0)
    opt.apply_gradients([(tf.constant(1.0), v)])  # lr 0.5 / (1 + 0)
    opt.apply_gradients([(tf.constant(1.0), v)])  # lr 0.5 / (1 + 1)
    assert v.numpy() == pytest.approx(-1.5)
    opt.scale = 4.0
    assert float(opt.scale) == 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(opt.add_slot(v, "extra", "ones"), tf.Variable)
    assert opt.get_slot(v, "extra").numpy() == 1.0


def test_mlp_adam_training_converges():
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((64, 5)).astype(np.float32))
    w_true = rng.standard_normal((5, 1)).astype(np.float32)
    y = x @ tf.constant(w_true)
    w = tf.Variable(tf.zeros([5, 1]))
    opt = optimizers.Adam(0.1)
    for _ in range(200):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x @ w - y))
        grads = tape.gradient(loss, [w])
        opt.apply_gradients(zip(grads, [w]))
    np.testing.assert_allclose(w.numpy(), w_true, atol=1e-2)


def test_custom_optimizer_setting_self_lr_is_its_learning_rate():
    """The tf.function/XLA talk's MyOptimizer filled in naturally: `self.lr = lr` in a
    subclass that passes no learning_rate to the base; `lr` and `learning_rate` are one."""
    class MyOptimizer(tf.keras.optimizers.Optimizer):
        def __init__(self, lr, power, avg):
            super().__init__(name="MyOptimizer")
            self.lr, self.pow, self.avg = lr, power, avg

        def _create_slots(self, var_list):
            for v in var_list:
                self.add_slot(v, "accum", tf.zeros_like(v))

        @tf.function(experimental_compile=True)
        def _resource_apply_dense(self, grad, var, apply_state=None):
            acc = self.get_slot(var, "accum")
            acc.assign(self.avg * tf.pow(grad, self.pow) + (1 - self.avg) * acc)
            return var.assign_sub(self.lr * grad / tf.pow(acc + 1e-3, self.pow))

    opt = MyOptimizer(lr=0.01, power=2.0, avg=0.5)
    assert float(opt.lr) == float(opt.learning_rate) == pytest.approx(0.01)
    opt.learning_rate = 0.02
    assert float(opt.lr) == pytest.approx(0.02)
    var = tf.Variable([1.0, -1.0])
    opt.apply_gradients([(tf.constant([0.5, 0.5]), var)])
    acc = 0.5 * 0.25
    expect = np.array([1.0, -1.0]) - 0.02 * 0.5 / (acc + 1e-3) ** 2
    np.testing.assert_allclose(var.numpy(), expect, rtol=1e-5)
