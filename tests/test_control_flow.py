"""tf.cond / tf.case / tf.switch_case / tf.while_loop: eager behaviour, graph nodes that
decide at run time (never baked at trace time), captures by reference, variable state,
gradients (eager, through graph nodes, second order, jacobians), and TF's errors."""
import types

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.ops import control_flow_ops as cfo

# The public names (tf.cond, ...), which tests call as users do.
T = types.SimpleNamespace(**{n: getattr(tf, n) for n in cfo.__all__})


def test_public_names_are_exported():
    """tf.cond & co. are the control-flow module's functions (or, once Keras has installed
    its symbolic handler, wrappers of them)."""
    for name in cfo.__all__:
        public = getattr(tf, name)
        assert getattr(public, "__wrapped__", public) is getattr(cfo, name), name


def graph_ops(fn, *args):
    return [n.op.name for n in fn.get_concrete_function(*args).graph.nodes]


def call2(fn, *args):
    """Second call: the first returns the values computed while tracing."""
    fn(*args)
    return fn(*args)


# -- cond ----------------------------------------------------------------------------------------
def test_eager_cond_runs_only_the_chosen_branch():
    ran = []
    x = tf.constant(3.0)
    out = T.cond(x > 0, lambda: ran.append("t") or x * 2, lambda: ran.append("f") or -x)
    assert out.numpy() == 6.0 and ran == ["t"]
    assert T.cond(x < 0, lambda: x * 2, lambda: -x).numpy() == -3.0


def test_eager_cond_gradient_is_recorded_directly():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = T.cond(x > 1, lambda: x ** 3, lambda: x * 0)
    assert tape.gradient(y, x).numpy() == pytest.approx(12.0)


def test_cond_argument_errors():
    x = tf.constant(1.0)
    with pytest.raises(TypeError, match="Python bool"):
        T.cond(True, lambda: x, lambda: x)
    with pytest.raises(TypeError, match="callable"):
        T.cond(x > 0, x, lambda: x)
    with pytest.raises(TypeError, match="false_fn"):
        T.cond(x > 0, lambda: x)
    with pytest.raises(ValueError, match="scalar"):
        T.cond(tf.constant([True, False]), lambda: x, lambda: x)


def test_graph_cond_is_a_node_not_a_baked_branch():
    @tf.function
    def f(x):
        y = x * 2
        return T.cond(tf.reduce_sum(x) > 0, lambda: y + 1, lambda: y - 1)
    a, b = tf.constant([1.0, 2.0]), tf.constant([-1.0, -2.0])
    assert f(a).numpy().tolist() == [3.0, 5.0]
    assert f(b).numpy().tolist() == [-3.0, -5.0]
    assert f(a).numpy().tolist() == [3.0, 5.0]
    assert f.experimental_get_tracing_count() == 1
    assert "StatelessIf" in graph_ops(f, a)


def test_both_branches_are_traced_once_python_side_effects_at_trace_time():
    trace = []

    @tf.function
    def f(x):
        return T.cond(x > 0, lambda: trace.append("t") or x + 1, lambda: trace.append("f") or x)
    for v in (1.0, -1.0, 2.0, -2.0):
        f(tf.constant(v))
    assert sorted(trace) == ["f", "t"]


def test_branch_outputs_may_be_structures_and_python_values():
    @tf.function
    def f(x):
        return T.cond(x > 0, lambda: {"a": x, "b": (x * 2, 1.0)},
                      lambda: {"a": -x, "b": (x, 2.0)})
    out = call2(f, tf.constant(3.0))
    assert out["a"].numpy() == 3.0 and out["b"][0].numpy() == 6.0 and \
        out["b"][1].numpy() == 1.0
    out = f(tf.constant(-3.0))
    assert out["a"].numpy() == 3.0 and out["b"][1].numpy() == 2.0


def test_graph_branch_mismatches_are_errors():
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="same nested structure"):
        tf.function(lambda x: T.cond(x > 0, lambda: (x, x), lambda: x))(x)
    with pytest.raises(TypeError, match="dtype"):
        tf.function(lambda x: T.cond(x > 0, lambda: x, lambda: tf.cast(x, tf.int32)))(x)


def test_captured_tensors_are_inputs_not_frozen_constants():
    @tf.function
    def f(x, s):
        scale = s * 10
        return T.cond(x > 0, lambda: x * scale, lambda: x)
    assert call2(f, tf.constant(2.0), tf.constant(1.0)).numpy() == 20.0
    assert f(tf.constant(2.0), tf.constant(3.0)).numpy() == 60.0


def test_variables_read_in_a_branch_see_their_current_value():
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        return T.cond(x > 0, lambda: v * x, lambda: x)
    assert call2(f, tf.constant(2.0)).numpy() == 2.0
    v.assign(5.0)
    assert f(tf.constant(2.0)).numpy() == 10.0


def test_assignments_happen_only_in_the_taken_branch_and_survive_dead_code_elimination():
    v = tf.Variable(0.0)

    @tf.function
    def f(x):
        T.cond(x > 0, lambda: v.assign_add(1.0), lambda: v.assign_sub(10.0))
        return x
    f(tf.constant(1.0))  # trace: runs the true branch once
    assert v.numpy() == 1.0
    f(tf.constant(1.0))
    f(tf.constant(1.0))
    f(tf.constant(-1.0))
    assert v.numpy() == 3.0 - 10.0
    assert "If" in graph_ops(f, tf.constant(1.0))


def test_a_stateful_cond_on_constant_inputs_is_not_folded_away():
    v = tf.Variable(0.0)

    @tf.function
    def f():
        p = tf.logical_not(tf.constant(False))
        return T.cond(p, lambda: v.assign_add(1.0), lambda: v.assign_add(100.0))
    for _ in range(3):
        f()
    assert v.numpy() == 3.0


def test_read_after_assign_inside_a_branch():
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        def yes():
            v.assign(v * 3)
            return v + x
        return T.cond(x > 0, yes, lambda: v + 0)
    assert f(tf.constant(1.0)).numpy() == 4.0  # trace
    assert f(tf.constant(1.0)).numpy() == 10.0
    assert v.numpy() == 9.0


def test_nested_conds():
    @tf.function
    def sign3(x):
        return T.cond(x > 0, lambda: tf.constant(1),
                      lambda: T.cond(x < 0, lambda: tf.constant(-1), lambda: tf.constant(0)))
    sign3(tf.constant(0.0))
    assert [sign3(tf.constant(v)).numpy() for v in (2.0, -2.0, 0.0)] == [1, -1, 0]


def _grad(fn, xs):
    with tf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = fn(*xs)
    return tape.gradient(y, xs)


@pytest.mark.parametrize("value", [1.5, -1.5])
def test_graph_cond_gradients_equal_eager(value):
    def f(x, w):
        h = x * w
        return T.cond(tf.reduce_sum(h) > 0, lambda: tf.reduce_sum(tf.exp(h) * w),
                      lambda: tf.reduce_sum(h * h + x))
    x = tf.constant([value, 0.5], dtype=tf.float64)
    w = tf.constant([0.3, 2.0], dtype=tf.float64)
    g = tf.function(f)
    eager = _grad(f, [x, w])
    first = _grad(g, [x, w])  # traced under the tape
    later = _grad(g, [x, w])  # interpreted under the tape: the If node's rule
    for e, a, b in zip(eager, first, later):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-12)
        np.testing.assert_allclose(b.numpy(), e.numpy(), rtol=1e-12)


def test_graph_cond_gradient_reaches_variables_read_in_the_branch():
    v = tf.Variable(3.0)
    f = tf.function(lambda x: T.cond(x > 0, lambda: v * x * x, lambda: v + x))
    f(tf.constant(2.0))
    with tf.GradientTape() as tape:
        y = f(tf.constant(2.0))
    assert tape.gradient(y, v).numpy() == pytest.approx(4.0)


def test_second_order_gradient_through_graph_cond():
    f = tf.function(lambda x: T.cond(x > 0, lambda: x ** 3, lambda: -x))
    x = tf.constant(2.0, dtype=tf.float64)
    f(x)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x)
    assert dy.numpy() == pytest.approx(12.0)
    assert outer.gradient(dy, x).numpy() == pytest.approx(12.0)


def test_jacobian_through_graph_cond():
    f = tf.function(lambda x: T.cond(tf.reduce_sum(x) > 0, lambda: x * x, lambda: x))
    x = tf.constant([1.0, 2.0, 3.0], dtype=tf.float64)
    f(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), np.diag([2.0, 4.0, 6.0]))


def test_cond_in_a_jit_compiled_function():
    f = tf.function(lambda x: T.cond(tf.reduce_max(x) > 1, lambda: tf.exp(x) + 1,
                                     lambda: tf.nn.relu(x) * 2), jit_compile=True)
    for v in ([0.5, 2.0], [0.5, -0.5]):
        x = tf.constant(v)
        ref = np.exp(v) + 1 if max(v) > 1 else np.maximum(v, 0) * 2
        np.testing.assert_allclose(call2(f, x).numpy(), ref, rtol=1e-6)
    assert hasattr(f.get_concrete_function(tf.constant([0.5, 2.0]))._runner(), "kernels")


# -- Python control flow on tensors --------------------------------------------------------------
def test_python_if_on_a_tensor_inside_tf_function_is_a_clear_error():
    @tf.function(autograph=False)  # with AutoGraph it converts (test_autograph.py)
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(tf.errors.InvalidArgumentError, match="tf.cond"):
        f(tf.constant(1.0))


def test_python_while_on_a_tensor_inside_tf_function_is_a_clear_error():
    @tf.function(autograph=False)  # with AutoGraph it converts (test_autograph.py)
    def f(x):
        while x < 10:
            x = x * 2
        return x
    with pytest.raises(tf.errors.InvalidArgumentError, match="while_loop"):
        f(tf.constant(1.0))


def test_python_if_on_a_tensor_inside_a_branch_is_also_an_error():
    @tf.function(autograph=False)
    def f(x, y):
        def bad():
            if y > 0:
                return x
            return -x
        return T.cond(x > 0, bad, lambda: x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="tf.cond"):
        f(tf.constant(1.0), tf.constant(1.0))


# -- while_loop ----------------------------------------------------------------------------------
def test_eager_while_loop():
    i, s = T.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), [0, 0])
    assert (i.numpy(), s.numpy()) == (5, 10)
    x = T.while_loop(lambda x: x < 100, lambda x: x * 3, tf.constant(1.0))
    assert x.numpy() == 243.0
    n = T.while_loop(lambda i: True, lambda i: i + 1, [0], maximum_iterations=7)
    assert n[0].numpy() == 7


def test_graph_while_loop_runs_a_data_dependent_number_of_times():
    @tf.function
    def tri(n):
        _, s = T.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])
        return s
    assert tri(tf.constant(4)).numpy() == 6
    assert tri(tf.constant(10)).numpy() == 45
    assert tri(tf.constant(0)).numpy() == 0
    assert tri.experimental_get_tracing_count() == 1
    assert "StatelessWhile" in graph_ops(tri, tf.constant(4))


def test_graph_while_loop_maximum_iterations_and_captures():
    @tf.function
    def f(x, step, cap):
        return T.while_loop(lambda v: v < 1000.0, lambda v: v + step, [x],
                            maximum_iterations=cap)[0]
    assert call2(f, tf.constant(0.0), tf.constant(2.0), tf.constant(5)).numpy() == 10.0
    assert f(tf.constant(0.0), tf.constant(3.0), tf.constant(4)).numpy() == 12.0


def test_graph_while_loop_with_a_variable_and_assignment():
    v = tf.Variable(0)

    @tf.function
    def count(n):
        def body(i):
            v.assign_add(i)
            return i + 1
        return T.while_loop(lambda i: i < n, body, [0])
    count(tf.constant(3))  # trace: 0+1 once in the trace run of the body, then the loop
    v.assign(0)
    count(tf.constant(4))
    assert v.numpy() == 0 + 1 + 2 + 3


def test_graph_while_reads_a_variable_it_assigns_afresh_each_iteration():
    v = tf.Variable(1.0)

    @tf.function
    def f(n):
        def body(i):
            v.assign(v * 2.0)
            return i + 1
        return T.while_loop(lambda i: i < n, body, [0])
    f(tf.constant(3))
    assert v.numpy() == 8.0
    v.assign(1.0)
    f(tf.constant(4))
    assert v.numpy() == 16.0

    @tf.function
    def g(limit):  # the condition reads it too
        def body(i):
            v.assign_add(1.0)
            return i + 1
        return T.while_loop(lambda i: v < limit, body, [0])[0]
    v.assign(0.0)
    assert g(tf.constant(5.0)).numpy() == 5
    v.assign(2.0)
    assert g(tf.constant(5.0)).numpy() == 3 and v.numpy() == 5.0


@pytest.mark.parametrize("n", [0, 1, 3])
def test_graph_while_gradients_equal_eager(n):
    def f(x, k):
        _, y = T.while_loop(lambda i, y: i < k, lambda i, y: (i + 1, y * x + 1.0),
                            [tf.constant(0), x])
        return y
    x = tf.constant(1.3, dtype=tf.float64)
    k = tf.constant(n)
    g = tf.function(f)
    g(x, k)
    with tf.GradientTape() as t1:
        t1.watch(x)
        ye = f(x, k)
    with tf.GradientTape() as t2:
        t2.watch(x)
        yg = g(x, k)
    assert yg.numpy() == pytest.approx(ye.numpy())
    de, dg = t1.gradient(ye, x), t2.gradient(yg, x)
    if n == 0:
        assert de.numpy() == dg.numpy() == 1.0
    else:
        np.testing.assert_allclose(dg.numpy(), de.numpy(), rtol=1e-12)


def test_while_loop_errors():
    with pytest.raises(TypeError, match="callable"):
        T.while_loop(None, lambda i: i, [0])
    with pytest.raises(ValueError, match="No loop variables"):
        T.while_loop(lambda: True, lambda: (), [])
    with pytest.raises(ValueError, match="structure"):
        T.while_loop(lambda i, j: i < 2, lambda i, j: i + 1, [0, 0])

    @tf.function
    def grows(x):
        return T.while_loop(lambda v: v[0] < 4, lambda v: tf.concat([v, v], 0), [x])
    with pytest.raises(ValueError, match="shape_invariants"):
        grows(tf.constant([1.0]))

    @tf.function
    def recasts(x):
        return T.while_loop(lambda v: v < 4, lambda v: tf.cast(v, tf.float32), [x])
    with pytest.raises(TypeError, match="dtype"):
        recasts(tf.constant(1))


def test_graph_while_shape_invariants_allow_growth():
    @tf.function
    def grows(x, n):
        return T.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, tf.concat([v, v], 0)),
                            [0, x], shape_invariants=[tf.TensorShape([]),
                                                      tf.TensorShape([None])])[1]
    assert grows(tf.constant([1.0]), tf.constant(3)).numpy().tolist() == [1.0] * 8
    assert grows(tf.constant([2.0]), tf.constant(2)).numpy().tolist() == [2.0] * 4


def test_while_inside_cond_inside_while():
    @tf.function
    def f(n):
        def body(i, acc):
            inner = T.cond(i % 2 == 0,
                           lambda: T.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + 1),
                                                [0, 0])[1],
                           lambda: tf.constant(100))
            return i + 1, acc + inner
        return T.while_loop(lambda i, acc: i < n, body, [0, 0])[1]

    def ref(n):
        return sum(i if i % 2 == 0 else 100 for i in range(n))
    f(tf.constant(1))
    for n in (0, 3, 6):
        assert f(tf.constant(n)).numpy() == ref(n)


# -- case / switch_case --------------------------------------------------------------------------
def _case_fn(x, exclusive=False, default=True):
    pairs = [(x < 0, lambda: tf.constant(-1)), (x > 10, lambda: tf.constant(10)),
             (x > 5, lambda: tf.constant(5))]
    return T.case(pairs, default=(lambda: tf.constant(0)) if default else None,
                  exclusive=exclusive)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_case_picks_the_first_true_predicate_or_the_default(mode):
    fn = _case_fn if mode == "eager" else tf.function(_case_fn)
    got = [fn(tf.constant(v)).numpy() for v in (-3.0, 12.0, 7.0, 1.0)]
    got = [fn(tf.constant(v)).numpy() for v in (-3.0, 12.0, 7.0, 1.0)]
    assert got == [-1, 10, 5, 0]


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_case_exclusive_and_missing_default_errors(mode):
    def wrap(f):
        return f if mode == "eager" else tf.function(f)
    exclusive = wrap(lambda x: _case_fn(x, exclusive=True))
    exclusive(tf.constant(7.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive"):
        exclusive(tf.constant(12.0))
    no_default = wrap(lambda x: _case_fn(x, default=False))
    assert no_default(tf.constant(7.0)).numpy() == 5
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions"):
        no_default(tf.constant(1.0))


def test_case_argument_errors():
    with pytest.raises(TypeError, match="2-tuple"):
        T.case([tf.constant(True)], default=lambda: 1)
    with pytest.raises(TypeError, match="callable"):
        T.case([(tf.constant(True), 3)])


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_switch_case(mode):
    def f(i):
        return T.switch_case(i, [lambda: tf.constant(10.0), lambda: tf.constant(11.0),
                                 lambda: tf.constant(12.0)])

    def g(i):
        return T.switch_case(i, {0: lambda: tf.constant(0.0), 1: lambda: tf.constant(1.0)},
                             default=lambda: tf.constant(-1.0))
    if mode == "graph":
        f, g = tf.function(f), tf.function(g)
        f(tf.constant(0))
        g(tf.constant(0))
    assert [f(tf.constant(i)).numpy() for i in (0, 1, 2, 7, -1)] == [10, 11, 12, 12, 12]
    assert [g(tf.constant(i)).numpy() for i in (0, 1, 2, -3)] == [0, 1, -1, -1]


def test_switch_case_errors():
    with pytest.raises(TypeError, match="int32 or int64"):
        T.switch_case(tf.constant(1.0), [lambda: 1])
    with pytest.raises(ValueError, match="keys"):
        T.switch_case(tf.constant(0), {0: lambda: 1, 2: lambda: 2})


def test_switch_case_gradient_in_a_graph():
    def f(i, x):
        return T.switch_case(i, [lambda: x * x, lambda: x * 3.0, lambda: tf.sin(x)])
    g = tf.function(f)
    x = tf.constant(0.7, dtype=tf.float64)
    for i in range(3):
        idx = tf.constant(i)
        g(idx, x)
        e, c = _grad(lambda x: f(idx, x), [x])[0], _grad(lambda x: g(idx, x), [x])[0]
        assert c.numpy() == pytest.approx(e.numpy())


def test_gradient_through_a_branch_that_assigns_has_no_side_effect():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        def yes():
            v.assign(v * 2.0)
            return tf.reduce_sum(v * x)
        return T.cond(tf.reduce_sum(x) > 0, yes, lambda: tf.reduce_sum(x))
    x = tf.constant([1.0, 1.0])
    f(x)  # v = [2, 4]
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)  # v = [4, 8]
    assert y.numpy() == 12.0
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [4.0, 8.0])
    np.testing.assert_allclose(v.numpy(), [4.0, 8.0])  # the gradient replay assigned nothing
