"""tf.function: the graph snippets of seeds 001 and 002 with the seeds' values, and the
behaviour users rely on — methods and Keras models, retracing rules and messages, Python
side effects at trace time only, variables by reference, gradients through graphs,
run_functions_eagerly — with graph and jit-compiled results equal to eager ones."""
import warnings

import numpy as np
import pytest

import tensorlite as tf
from examples.seed_models import SequentialModel
from tensorlite.graph import function as function_module
from tensorlite.ops import control_flow_ops as cfo

RNG = np.random.default_rng(2020)


def call2(fn, *args, **kwargs):
    """The second call: the first returns the values computed while tracing."""
    fn(*args, **kwargs)
    return fn(*args, **kwargs)


# -- seed 002: "Seeing the speed up" ------------------------------------------------------------
def test_seed002_sequential_model_graph_equals_eager():
    input_data = tf.random.uniform([60, 28, 28])
    eager_model = SequentialModel()
    graph_model = tf.function(eager_model)
    eager = eager_model(input_data)
    graph = call2(graph_model, input_data)
    assert graph.shape == (60, 10) and graph.dtype == tf.float32
    np.testing.assert_allclose(graph.numpy(), eager.numpy(), rtol=1e-6, atol=1e-6)
    jit = call2(tf.function(eager_model, jit_compile=True), input_data)
    np.testing.assert_allclose(jit.numpy(), eager.numpy(), rtol=1e-6, atol=1e-6)
    assert graph_model.experimental_get_tracing_count() == 1


def seed002_tf2_cell():
    """Seed 002's TF2 cell as written; checks its printed results, returns `forward`."""
    W = tf.Variable(tf.ones(shape=(2, 2)), name="W")
    b = tf.Variable(tf.zeros(shape=(2)), name="b")
    regularizer = tf.keras.regularizers.l2(0.04)

    @tf.function
    def forward(x):
        return regularizer(W) * x + b
    out_b = forward([0, 1])
    out_a = forward([1, 0])
    assert str(out_a) == "tf.Tensor([0.16 0.  ], shape=(2,), dtype=float32)"
    assert str(out_b) == "tf.Tensor([0.   0.16], shape=(2,), dtype=float32)"
    return forward, W


def test_seed002_tf2_cell_regularizer_forward():
    forward, _ = seed002_tf2_cell()
    assert str(forward([0, 1])) == "tf.Tensor([0.   0.16], shape=(2,), dtype=float32)"
    assert tf.executing_eagerly()


def test_seed002_xla_model_fn_compiled():
    def model_fn(x, y, z):
        return tf.reduce_sum(x + y * z)
    x, y, z = (tf.constant(RNG.normal(size=(16, 8)).astype(np.float32)) for _ in range(3))
    fn = tf.function(model_fn, jit_compile=True)
    np.testing.assert_allclose(call2(fn, x, y, z).numpy(), model_fn(x, y, z).numpy(),
                               rtol=1e-5)


# -- seed 001: "Compilation" --------------------------------------------------------------------
def test_seed001_compilation_snippet():
    def f(x):
        return tf.math.log(2 * tf.exp(tf.nn.relu(x + 1)))
    eager = f(tf.zeros([100, 100]))
    f = tf.function(f)
    graph = call2(f, tf.zeros([100, 100]))
    c_f = tf.function(f, experimental_compile=True)
    compiled = call2(c_f, tf.zeros([100, 100]))
    for out in (eager, graph, compiled):
        assert out.shape == (100, 100) and out.dtype == tf.float32
        np.testing.assert_allclose(out.numpy(), 1 + np.log(2), rtol=1e-6)
    x = tf.random.normal([100, 100])
    np.testing.assert_array_equal(c_f(x).numpy(), f(x).numpy())


def _my_optimizer_class():
    base = getattr(tf.keras.optimizers, "Optimizer", None)
    if base is None:
        pytest.skip("tf.keras.optimizers has no Optimizer base class yet")

    class MyOptimizer(base):
        def __init__(self, lr, power, avg):
            super().__init__(name="MyOptimizer")
            self.lrate, self.pow, self.avg = lr, power, avg

        def get_config(self):
            pass

        def _create_slots(self, var_list):
            for v in var_list:
                self.add_slot(v, "accum", tf.zeros_like(v))

        @tf.function(experimental_compile=True)
        def _resource_apply_dense(self, grad, var, apply_state=None):
            acc = self.get_slot(var, "accum")
            acc.assign(self.avg * tf.pow(grad, self.pow) + (1 - self.avg) * acc)
            return var.assign_sub(self.lrate * grad / tf.pow(acc, self.pow))
    return MyOptimizer


def test_seed001_my_optimizer_with_compiled_apply():
    opt = _my_optimizer_class()(0.1, 2.0, 0.5)
    w = tf.Variable([1.0, 2.0, 3.0])
    ref_w = np.array([1.0, 2.0, 3.0], np.float32)
    ref_acc = np.zeros(3, np.float32)
    for _ in range(4):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        g = 2 * ref_w
        ref_acc = np.float32(0.5) * g ** 2 + np.float32(0.5) * ref_acc
        ref_w = ref_w - np.float32(0.1) * g / ref_acc ** 2
        np.testing.assert_allclose(w.numpy(), ref_w, rtol=1e-5)
        np.testing.assert_allclose(opt.get_slot(w, "accum").numpy(), ref_acc, rtol=1e-5)
    applied = opt._resource_apply_dense
    assert applied.experimental_get_tracing_count() == 1  # one trace, then the graph


# -- methods and Keras models -------------------------------------------------------------------
def test_tf_function_on_methods_is_per_instance():
    class Scaler(tf.Module):
        def __init__(self, k):
            super().__init__()
            self.k = tf.Variable(k)

        @tf.function
        def __call__(self, x):
            return x * self.k
    a, b = Scaler(2.0), Scaler(3.0)
    x = tf.constant([1.0, 2.0])
    assert call2(a, x).numpy().tolist() == [2.0, 4.0]
    assert call2(b, x).numpy().tolist() == [3.0, 6.0]
    a.k.assign(10.0)
    assert a(x).numpy().tolist() == [10.0, 20.0]


def test_tf_function_on_a_keras_model_and_its_call():
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(3, activation="tanh")

        @tf.function
        def call(self, x):
            return self.d(x) * 2.0
    net = Net()
    x = tf.constant(RNG.normal(size=(4, 5)).astype(np.float32))
    first = net(x)
    again = net(x)
    np.testing.assert_allclose(again.numpy(), first.numpy(), rtol=1e-6)
    np.testing.assert_allclose(again.numpy(),
                               np.tanh(x.numpy() @ net.d.kernel.numpy() +
                                       net.d.bias.numpy()) * 2, rtol=1e-5)
    seq = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    g = tf.function(seq)
    np.testing.assert_allclose(call2(g, x).numpy(), seq(x).numpy(), rtol=1e-6)


# -- retracing ----------------------------------------------------------------------------------
def test_shape_change_retraces_and_says_why():
    @tf.function
    def f(x):
        return x * 2
    f(tf.zeros([2]))
    f(tf.zeros([2]))
    assert f.experimental_get_tracing_count() == 1
    f(tf.zeros([3]))
    assert f.experimental_get_tracing_count() == 2
    reason = f.retrace_log[-1]
    assert "argument" in reason and "[2]" in reason and "[3]" in reason


def test_retrace_reason_names_the_parameter():
    @tf.function
    def f(values):
        return values * 2
    f(tf.zeros([2]))
    f(tf.zeros([3]))
    assert "values" in f.retrace_log[-1]


def test_python_value_change_retraces_and_same_signature_hits_the_cache():
    traces = []

    @tf.function
    def f(x, n):
        traces.append(n)
        return x * n
    x = tf.constant(1.0)
    assert f(x, 2).numpy() == 2.0
    assert f(x, 2).numpy() == 2.0
    assert f(tf.constant(5.0), 2).numpy() == 10.0  # same signature: cached graph
    assert traces == [2]
    assert f(x, 3).numpy() == 3.0
    assert traces == [2, 3]
    assert "value 2 -> 3" in f.retrace_log[-1]


def test_input_signature_with_none_dims_accepts_other_batch_sizes():
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        return tf.reduce_sum(x, axis=1)
    assert f(tf.ones([3, 2])).numpy().tolist() == [2.0] * 3
    assert f(tf.ones([5, 2])).numpy().tolist() == [2.0] * 5
    assert f(tf.ones([3, 2])).numpy().tolist() == [2.0] * 3
    assert f.experimental_get_tracing_count() == 1


def test_incompatible_call_names_function_argument_and_spec():
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def project(points):
        return points
    with pytest.raises(TypeError) as e:
        project(tf.ones([3, 3]))
    msg = str(e.value)
    assert "project" in msg and "points" in msg and "(None, 2)" in msg


def test_too_many_retraces_warn():
    @tf.function
    def f(x):
        return x + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(1, function_module.RETRACE_WARNING_AFTER + 1):
            f(tf.zeros([n]))
    with pytest.warns(UserWarning, match="retracing"):
        f(tf.zeros([99]))


# -- semantics ----------------------------------------------------------------------------------
def test_python_side_effects_run_only_at_trace_time():
    calls = []

    @tf.function
    def f(x):
        calls.append("traced")
        return x + 1
    for _ in range(4):
        f(tf.constant(1.0))
    assert calls == ["traced"]


def test_variables_are_captured_by_reference():
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        return x * v
    assert f(tf.constant(2.0)).numpy() == 2.0
    v.assign(4.0)
    assert f(tf.constant(2.0)).numpy() == 8.0
    v.assign_add(1.0)
    assert f(tf.constant(2.0)).numpy() == 10.0


def test_assignments_inside_a_function_run_every_call():
    counter = tf.Variable(0)

    @tf.function
    def tick():
        counter.assign_add(1)
        return counter.read_value()
    for _ in range(3):
        tick()
    assert counter.numpy() == 3


def test_assignment_in_a_nested_tf_function_runs_once_per_call():
    v = tf.Variable(0.0)

    @tf.function
    def inner(x):
        v.assign_add(x)
        return v.read_value()

    @tf.function
    def outer(x):
        return inner(x) * 1.0
    outer(tf.constant(1.0))
    outer(tf.constant(1.0))
    assert v.numpy() == 2.0


def test_run_functions_eagerly():
    calls = []

    @tf.function
    def f(x):
        calls.append(1)
        return x * 2
    try:
        tf.config.run_functions_eagerly(True)
        assert tf.config.functions_run_eagerly()
        for _ in range(3):
            assert f(tf.constant(1.0)).numpy() == 2.0
        assert len(calls) == 3
    finally:
        tf.config.run_functions_eagerly(False)
    f(tf.constant(1.0))
    f(tf.constant(1.0))
    assert len(calls) == 4


# -- graph and compiled results equal eager ones (values, dtypes, gradients) --------------------
W1 = tf.Variable(RNG.normal(size=(6, 5)) * 0.5)
B1 = tf.Variable(RNG.normal(size=(5,)) * 0.1)


def mlp(x):
    h = tf.nn.relu(tf.matmul(x, W1) + B1)
    return tf.reduce_mean(tf.square(h - 0.5)) + tf.reduce_sum(tf.sigmoid(h) * 0.1)


def gated(x):
    s = tf.reduce_sum(x)
    return cfo.cond(s > 0, lambda: tf.reduce_sum(tf.exp(x * 0.1) * W1[0, 0]),
                    lambda: tf.reduce_sum(tf.tanh(x) * B1[0]))


def looped(x):
    _, y = cfo.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * W1[1, 1] + x),
                          [tf.constant(0), x])
    return tf.reduce_sum(y)


def elementwise(x):
    return tf.reduce_sum(tf.math.log(2 * tf.exp(tf.nn.relu(x + 1))) * tf.tanh(x))


@pytest.mark.parametrize("fn", [mlp, gated, looped, elementwise], ids=lambda f: f.__name__)
@pytest.mark.parametrize("jit", [False, True], ids=["graph", "jit"])
def test_graph_results_and_gradients_equal_eager(fn, jit):
    g = tf.function(fn, jit_compile=jit)
    for trial in range(3):
        x = tf.constant(RNG.normal(size=(4, 6)) * (1 if trial != 1 else -1))
        eager = fn(x)
        out = call2(g, x)
        assert out.dtype == eager.dtype == tf.float64
        np.testing.assert_allclose(out.numpy(), eager.numpy(), rtol=1e-12)
        sources = [x, W1, B1]
        with tf.GradientTape() as t1:
            t1.watch(x)
            ye = fn(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            yg = g(x)
        for a, b in zip(t1.gradient(ye, sources), t2.gradient(yg, sources)):
            if a is None:
                assert b is None
            else:
                np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-10, atol=1e-14)


def test_inference_fn_is_the_atomic_function_without_gradients():
    """ConcreteFunction.inference_fn (the tf.function guide): the same graph, called the
    same way, that a tape does not differentiate."""
    @tf.function
    def double(a):
        return a + a

    concrete = double.get_concrete_function(tf.constant("a"))
    atomic = concrete.inference_fn
    assert isinstance(atomic, tf.types.experimental.AtomicFunction)
    assert atomic(tf.constant("b")).numpy() == b"bb"
    assert "double(a: TensorSpec(shape=(), dtype=tf.string" in repr(atomic)
    v = tf.Variable(2.0)
    scaled = tf.function(lambda x: x * v).get_concrete_function(tf.constant(1.0))
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        plain, through = scaled.inference_fn(x), scaled(x)
    assert float(plain) == float(through) == 6.0
    assert tape.gradient(plain, x) is None and float(tape.gradient(through, x)) == 2.0


def test_tensor_leaked_from_one_trace_is_refused_by_another():
    """The tf.function guide's leaky_function: a tensor kept in a global instead of being
    returned cannot be captured by another function's trace (TypeError, as in TF)."""
    leaked = {}

    @tf.function
    def leaky_function(a):
        leaked["x"] = a + 1  # bad: leaks a tensor of this trace
        return a + 2

    assert leaky_function(tf.constant(1)).numpy() == 3

    @tf.function
    def captures_leaked_tensor(b):
        return b + leaked["x"]

    with pytest.raises(TypeError, match="out of scope.*leaky_function"):
        captures_leaked_tensor(tf.constant(2))

    @tf.function
    def uses_the_returned_value(b):
        return b + kept

    kept = leaky_function(tf.constant(1))  # a return value is fine
    assert uses_the_returned_value(tf.constant(2)).numpy() == 5


def test_numpy_array_arguments_are_tensor_inputs_not_constants():
    """A NumPy array passed to a tf.function is a tensor argument, as in TensorFlow: one
    graph per shape and dtype that computes on each call's values (it was baked into the
    first trace as a constant and reused for other values: silently wrong)."""
    @tf.function
    def double(x):
        return x * 2

    first = double(np.ones(3, np.float32))
    second = double(np.full(3, 5, np.float32))
    assert isinstance(second, tf.Tensor)
    assert first.numpy().tolist() == [2, 2, 2] and second.numpy().tolist() == [10, 10, 10]
    assert double.experimental_get_tracing_count() == 1
    finite = tf.function(lambda x: tf.reduce_all(tf.math.is_finite(x)))
    assert bool(finite(np.ones(2, np.float32)))
    assert not bool(finite(np.array([np.inf, 1.0], np.float32)))


def test_get_concrete_function_on_a_dict_of_tensor_specs():
    """TensorSpecs nested in a structure trace as TensorFlow's do (a dict of features)."""
    def f(features):
        x = features["a"]
        return {"head": x[:, :3], "rows": tf.shape(x)[0]}
    concrete = tf.function(f).get_concrete_function({"a": tf.TensorSpec([None, 7, 4])})
    assert concrete.output_shapes == {"head": tf.TensorShape([None, 3, 4]),
                                      "rows": tf.TensorShape([])}
    out = concrete({"a": tf.ones([2, 7, 4])})
    assert out["head"].shape == (2, 3, 4) and int(out["rows"]) == 2


def test_next_on_a_dataset_iterator_inside_tf_function_takes_an_element_per_call():
    """The tf.function guide's good_consume_next: an iterator of a dataset passed in, and
    next() in the function, gives the next element on every call (a graph node), then
    OutOfRangeError at the end, as TensorFlow's IteratorGetNext."""
    @tf.function
    def consume(iterator):
        return next(iterator) * 10

    @tf.function
    def two(iterator):
        return next(iterator) + next(iterator)
    iterator = iter(tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5]))
    assert [int(consume(iterator)) for _ in range(2)] == [10, 20]
    assert int(two(iterator)) == 7
    with pytest.raises(tf.errors.OutOfRangeError):
        two(iterator)
    other = iter(tf.data.Dataset.from_tensor_slices(({"a": [[1.0, 2.0]] * 4}, [0, 1, 0, 1]))
                 .batch(2))

    @tf.function
    def features(iterator):
        x, y = next(iterator)
        return x["a"] * 2.0, y
    first, second = features(other), features(other)
    assert first[0].shape == (2, 2) and second[1].numpy().tolist() == [0, 1]


def test_get_concrete_function_for_a_ragged_tensor_spec():
    """The ragged-tensors guide: `increment.get_concrete_function(tf.RaggedTensorSpec(...))`
    traces for any ragged batch of that spec."""
    @tf.function
    def increment(x):
        return x + 1
    cf = increment.get_concrete_function(tf.RaggedTensorSpec(shape=[None, None],
                                                             dtype=tf.int32))
    out = cf(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]))
    assert out.to_list() == [[2, 3], [4], [5, 6, 7]]
