"""Keras optimizers and metrics inside `tf.function` train steps (the TF 2 quickstart's
custom training loop): every optimizer, schedule and clipping option, and seed 001's
subclassing API, give the same weights as the same steps run eagerly, and trace into real
graph ops (no host callback): the fused update op, variable assignments, the schedule on
the traced `iterations`."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras.optimizers import schedules
from tests.test_graph_function import _my_optimizer_class

RNG = np.random.default_rng(1)
X = RNG.standard_normal((32, 5)).astype("float32")
Y = RNG.integers(0, 3, 32)
W0 = [RNG.standard_normal((5, 3)).astype("float32"), np.zeros(3, "float32")]


def _train(make_opt, graph, steps=5):
    ws = [tf.Variable(w) for w in W0]
    opt = make_opt()

    def step(x, y):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, ws[0]) + ws[1]
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, ws)
        opt.apply_gradients(zip(grads, ws))
        return loss

    fn = tf.function(step) if graph else step
    for i in range(steps):
        sl = slice(8 * (i % 4), 8 * (i % 4) + 8)
        fn(tf.constant(X[sl]), tf.constant(Y[sl]))
    return [w.numpy() for w in ws], opt


OPTIMIZERS = {
    "sgd": lambda: tf.keras.optimizers.SGD(0.1),
    "sgd_momentum_nesterov": lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: tf.keras.optimizers.Adam(0.05),
    "adam_amsgrad": lambda: tf.keras.optimizers.Adam(0.05, amsgrad=True),
    "adamw": lambda: tf.keras.optimizers.AdamW(0.05, weight_decay=0.1),
    "rmsprop_centered_momentum": lambda: tf.keras.optimizers.RMSprop(0.01, momentum=0.5,
                                                                     centered=True),
    "adagrad": lambda: tf.keras.optimizers.Adagrad(0.1),
    "legacy_decay": lambda: tf.keras.optimizers.RMSprop(lr=0.01, decay=0.5),
    "clipnorm": lambda: tf.keras.optimizers.SGD(1.0, clipnorm=0.01),
    "clipvalue": lambda: tf.keras.optimizers.Adam(0.1, clipvalue=0.001),
    "global_clipnorm": lambda: tf.keras.optimizers.SGD(1.0, global_clipnorm=0.01),
    "exponential_decay": lambda: tf.keras.optimizers.SGD(
        schedules.ExponentialDecay(0.5, decay_steps=1, decay_rate=0.5)),
    "piecewise": lambda: tf.keras.optimizers.Adam(
        schedules.PiecewiseConstantDecay([1, 3], [0.1, 0.01, 0.001])),
    "polynomial": lambda: tf.keras.optimizers.SGD(schedules.PolynomialDecay(0.5, 4, 0.01)),
    "inverse_time": lambda: tf.keras.optimizers.SGD(schedules.InverseTimeDecay(0.5, 1, 2.0)),
    "cosine": lambda: tf.keras.optimizers.SGD(schedules.CosineDecay(0.5, 4)),
    "cosine_restarts": lambda: tf.keras.optimizers.SGD(schedules.CosineDecayRestarts(0.5, 2)),
    "callable_lr": lambda: tf.keras.optimizers.SGD(lambda: 0.05),
    "sgd_momentum": lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9),
    "rmsprop": lambda: tf.keras.optimizers.RMSprop(0.01),
    "rmsprop_centered": lambda: tf.keras.optimizers.RMSprop(0.01, centered=True),
    "adadelta": lambda: tf.keras.optimizers.Adadelta(1.0),
    "adamax": lambda: tf.keras.optimizers.Adamax(0.05),
    "nadam": lambda: tf.keras.optimizers.Nadam(0.05),
    "ftrl": lambda: tf.keras.optimizers.Ftrl(0.5, l1_regularization_strength=0.001,
                                             l2_shrinkage_regularization_strength=0.01),
    "lion": lambda: tf.keras.optimizers.Lion(0.01),
    "adamw_cosine_warmup_clip": lambda: tf.keras.optimizers.AdamW(
        schedules.CosineDecay(0.01, 4, warmup_target=0.05, warmup_steps=2),
        global_clipnorm=0.5),
}

FUSED = {"sgd": "ApplyGradientDescent", "sgd_momentum_nesterov": "ApplyKerasMomentum",
         "adam": "ApplyAdam", "adamw": "ApplyAdam", "adagrad": "ApplyAdagradV2",
         "rmsprop_centered_momentum": "ApplyRMSProp", "adadelta": "ApplyAdadelta",
         "adamax": "ApplyAdaMax", "nadam": "KerasNadamUpdate", "ftrl": "ApplyFtrlV2",
         "lion": "KerasLionUpdate"}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_graph_step_matches_eager(name):
    eager, opt_e = _train(OPTIMIZERS[name], graph=False)
    graph, opt_g = _train(OPTIMIZERS[name], graph=True)
    assert int(opt_g.iterations) == int(opt_e.iterations) == 5
    for a, b in zip(eager, graph):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert not np.allclose(graph[0], W0[0])  # it trained


def _train_graph(make):
    ws = [tf.Variable(w) for w in W0]
    opt = make()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, ws[0]) + ws[1]
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
        return loss

    x, y = tf.constant(X[:8]), tf.constant(Y[:8])
    step(x, y)
    return step, step.get_concrete_function(x, y).graph, ws, opt, (x, y)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_update_is_real_graph_ops(name):
    from tensorlite.graph.ir import CALLBACKS
    _, graph, _, _, _ = _train_graph(OPTIMIZERS[name])
    counts = graph.op_counts()
    assert not set(counts) & CALLBACKS, counts  # no host callback runs the update
    assert counts["AssignVariableOp"] >= 3  # both weights and iterations
    if name in FUSED:
        assert counts[FUSED[name]] == 2  # one fused update op per variable


def test_schedule_and_learning_rate_are_graph_values():
    """The schedule is evaluated on the traced `iterations` and the learning rate variable
    is read on each run: a callback's change after tracing reaches the graph."""
    step, graph, ws, opt, args = _train_graph(
        lambda: tf.keras.optimizers.SGD(schedules.PiecewiseConstantDecay([2], [0.1, 0.0])))
    assert "Select" in graph.op_counts() or "SelectV2" in graph.op_counts()
    step(*args)
    before = ws[0].numpy()
    step(*args)  # iterations == 2: still 0.1
    assert not np.allclose(ws[0].numpy(), before)
    before = ws[0].numpy()
    step(*args)  # iterations == 3: learning rate 0
    np.testing.assert_array_equal(ws[0].numpy(), before)
    assert step.experimental_get_tracing_count() == 1

    step, _, ws, opt, args = _train_graph(lambda: tf.keras.optimizers.Adam(0.1))
    opt.learning_rate = 0.0
    before = [w.numpy() for w in ws]
    step(*args)
    for a, b in zip(before, ws):
        np.testing.assert_array_equal(b.numpy(), a)
    assert int(opt.iterations) == 2 and step.experimental_get_tracing_count() == 1


# Seed 001's MyOptimizer, as written there (with the compiled update): one copy, shared
PowerOptimizer = _my_optimizer_class()


class LrStateOptimizer(tf.keras.optimizers.Optimizer):
    """The OptimizerV2 subclass API with apply_state's lr_t and a hyperparameter."""

    def __init__(self, learning_rate=0.1, name="LrState", **kwargs):
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", learning_rate)

    def _resource_apply_dense(self, grad, var, apply_state=None):
        coefficients = self._fallback_apply_state(var.device, var.dtype) \
            if apply_state is None else apply_state[(var.device, var.dtype)]
        return var.assign_sub(coefficients["lr_t"] * grad)


@pytest.mark.parametrize("make", [lambda: PowerOptimizer(0.01, 2, 0.5),
                                  lambda: LrStateOptimizer(0.1),
                                  lambda: LrStateOptimizer(
                                      schedules.ExponentialDecay(0.3, 1, 0.5))])
def test_subclassed_optimizer_in_graph(make):
    eager, _ = _train(make, graph=False)
    graph, opt = _train(make, graph=True)
    for a, b in zip(eager, graph):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert not np.allclose(graph[0], W0[0])
    assert int(opt.iterations) == 5


def test_reads_after_the_update_see_the_new_value():
    v = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.SGD(0.5)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v * v)
        before = v * 1.0
        opt.apply_gradients([(tape.gradient(loss, v), v)])
        return before, v * 1.0

    for expect in ([1.0, 2.0], [0.0, 0.0]):
        before, after = step()
        np.testing.assert_allclose(before.numpy(), expect)
        np.testing.assert_allclose(after.numpy(), [0.0, 0.0])


def test_minimize_in_graph():
    v = tf.Variable(3.0)
    opt = tf.keras.optimizers.SGD(0.1)
    step = tf.function(lambda: opt.minimize(lambda: v ** 2, [v]))
    for _ in range(3):
        step()
    assert float(v) == pytest.approx(3.0 * 0.8 ** 3, rel=1e-6)


def test_quickstart_custom_training_loop(capsys):
    """The TF 2 quickstart's advanced loop, as written there, on small data."""
    x = np.random.RandomState(0).rand(64, 8, 8).astype("float32")
    y = np.random.RandomState(1).randint(0, 10, 64)
    train_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    model = tf.keras.Sequential([tf.keras.layers.Flatten(input_shape=(8, 8)),
                                 tf.keras.layers.Dense(32, activation="relu"),
                                 tf.keras.layers.Dense(10)])
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()
    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)

    losses = []
    for epoch in range(3):
        train_loss.reset_states()
        train_accuracy.reset_states()
        for images, labels in train_ds:
            train_step(images, labels)
        print(f"Epoch {epoch + 1}, Loss: {train_loss.result():2.5f}, "
              f"Accuracy: {train_accuracy.result() * 100}")
        losses.append(float(train_loss.result()))
    out = capsys.readouterr().out
    assert out.startswith("Epoch 1, Loss: 2.") and "Epoch 3" in out
    assert losses[2] < losses[0]
    assert int(optimizer.iterations) == 12
    assert train_step.experimental_get_tracing_count() == 1


def test_metric_state_in_graph_each_call():
    m = tf.keras.metrics.Mean()
    acc = tf.keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def f(x, y, p):
        acc.update_state(y, p)
        return m(x), acc.result()

    assert float(f(tf.constant(1.0), tf.constant([1]), tf.constant([[0.0, 1.0]]))[0]) == 1.0
    mean, a = f(tf.constant(3.0), tf.constant([1]), tf.constant([[1.0, 0.0]]))
    assert (float(mean), float(a)) == (2.0, 0.5)
    m.reset_state()
    assert float(f(tf.constant(5.0), tf.constant([0]), tf.constant([[1.0, 0.0]]))[0]) == 5.0


@pytest.mark.parametrize("make", [lambda: PowerOptimizer(0.01, 2, 0.5),
                                  lambda: LrStateOptimizer(
                                      schedules.ExponentialDecay(0.3, 1, 0.5))],
                         ids=["seed001_compiled", "apply_state_schedule"])
def test_subclassed_optimizer_traces_into_graph_ops(make):
    from tensorlite.graph.ir import CALLBACKS
    _, graph, _, opt, _ = _train_graph(make)
    counts = graph.op_counts()
    assert not set(counts) & CALLBACKS, counts
    assert counts["AssignVariableOp"] >= 3


class TransformerSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
    """The TF Transformer tutorial's custom schedule, as written there."""

    def __init__(self, d_model, warmup_steps=4000):
        super().__init__()
        self.d_model = tf.cast(d_model, tf.float32)
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = tf.cast(step, dtype=tf.float32)
        arg1 = tf.math.rsqrt(step)
        arg2 = step * (self.warmup_steps ** -1.5)
        return tf.math.rsqrt(self.d_model) * tf.math.minimum(arg1, arg2)


def test_user_schedule_of_the_transformer_tutorial_in_graph():
    make = lambda: tf.keras.optimizers.Adam(TransformerSchedule(16, warmup_steps=3),  # noqa: E731
                                            beta_1=0.9, beta_2=0.98, epsilon=1e-9)
    eager, _ = _train(make, graph=False)
    graph, opt = _train(make, graph=True)
    for a, b in zip(eager, graph):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    _, g, _, _, _ = _train_graph(make)
    assert "Rsqrt" in g.op_counts() and "Minimum" in g.op_counts()  # evaluated in the graph


def test_assignments_adopt_the_update_only_when_nothing_else_reads_it():
    """The executor lets an assignment take the fused update's fresh output without a copy
    (bench/optimizer_step.py) only when the assignment is its sole reader: a value the
    function also returns keeps its own memory, whatever later updates the variable."""
    from tensorlite.graph.executor import adoptable_assigns
    from tensorlite.ops import optimizer_ops
    w, vel = tf.Variable(np.ones(3, "float32")), tf.Variable(np.zeros(3, "float32"))

    @tf.function
    def step(g):
        new_w, new_vel = optimizer_ops.MOMENTUM(w.read_value(), vel.read_value(), g,
                                                tf.constant(0.5), tf.constant(0.9),
                                                n_slots=1)
        w.assign(new_w)
        vel.assign(new_vel)
        return new_vel  # read by the caller too

    g = tf.constant(np.full(3, 2.0, "float32"))
    graph = step.get_concrete_function(g).graph
    adopted = [graph.nodes[k].attrs["variable"] for k in adoptable_assigns(graph)]
    assert len(adopted) == 1 and adopted[0] is w
    outs = [step(g) for _ in range(3)]  # the later calls run the compiled graph
    np.testing.assert_allclose([o.numpy()[0] for o in outs], [-1.0, -1.9, -2.71])
    np.testing.assert_allclose(w.numpy(), 1 - 1 - 1.9 - 2.71, rtol=1e-6)
    assert not np.shares_memory(outs[-1].numpy(), vel.numpy())
    vel.assign(np.zeros(3, "float32"))
    np.testing.assert_allclose(outs[-1].numpy(), -2.71, rtol=1e-6)


def test_adam_in_graph_adopts_its_updates():
    _, graph, _, _, _ = _train_graph(lambda: tf.keras.optimizers.Adam(1e-3))
    from tensorlite.graph.executor import adoptable_assigns
    # each weight and its two moments: the fused op's outputs, read only by assignments
    assert len(adoptable_assigns(graph)) == 6
