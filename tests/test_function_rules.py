"""tf.function's rules as TensorFlow enforces them: input_signature, concrete functions'
dtypes, variables created only on the first call, and shape-polymorphic graphs."""
import numpy as np
import pytest

import tensorlite as tf


def test_input_signature_mismatch_is_type_error():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return x * 2
    assert f(tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match="input_signature"):
        f(tf.constant([1, 2]))
    with pytest.raises(TypeError):
        f(tf.constant([[1.0]]))
    with pytest.raises(TypeError):
        f(tf.constant([1.0]), tf.constant([1.0]))


def test_concrete_function_with_wrong_dtype_is_invalid_argument():
    @tf.function
    def f(x):
        return x + 1
    cf = f.get_concrete_function(tf.constant(1.0))
    assert float(cf(tf.constant(2.0))) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"input #0\(zero-based\) was expected to be a float32 tensor but "
                             r"is a int32 tensor"):
        cf(tf.constant(2))


def test_variable_created_on_every_call_is_value_error():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v + x
    with pytest.raises(ValueError, match="tf.function only supports singleton tf.Variables "
                                         "created on the first call"):
        f(tf.constant(1.0))


def test_variable_created_on_a_retrace_is_value_error():
    made = []

    @tf.function
    def f(x):
        if len(made) < 1 or x.dtype == tf.int32:
            made.append(tf.Variable(1.0))
        return x
    f(tf.constant(1.0))  # first trace creates once; the check trace creates none
    with pytest.raises(ValueError, match="singleton tf.Variables"):
        f(tf.constant(1))


def test_variable_created_once_is_fine():
    class Count(tf.Module):
        def __init__(self):
            self.count = None

        @tf.function
        def __call__(self, x):
            if self.count is None:
                self.count = tf.Variable(0.0)
            return self.count.assign_add(x)
    c = Count()
    assert float(c(tf.constant(1.0))) == 1.0
    assert float(c(tf.constant(2.0))) == 3.0
    assert float(c(tf.constant([1.0, 1.0])[0])) == 4.0


@pytest.mark.parametrize("kwargs", [{"reduce_retracing": True},
                                    {"input_signature": [tf.TensorSpec([None, 3],
                                                                       tf.float32)]}])
def test_one_polymorphic_graph_for_all_sizes(kwargs):
    def f(x):
        n = tf.cast(tf.shape(x)[0], tf.float32)
        return tf.reduce_sum(tf.nn.relu(x), axis=0) / n + tf.zeros_like(x[0])
    g = tf.function(f, **kwargs)
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 17):
        x = rng.normal(size=(n, 3)).astype(np.float32)
        np.testing.assert_allclose(g(tf.constant(x)).numpy(), np.maximum(x, 0).mean(0),
                                   rtol=1e-5)
    assert g.experimental_get_tracing_count() == 1
    assert len(g._cache) == 1  # one graph serves every size
    assert g.shape_specialised is None


def test_inside_a_polymorphic_graph_varying_dims_are_none():
    seen = []

    @tf.function(reduce_retracing=True)
    def f(x):
        y = x * 2
        seen.append(y.shape.as_list())
        return tf.reduce_sum(y) / tf.cast(tf.shape(y)[0], tf.float32)
    assert float(f(tf.constant([1.0, 3.0]))) == 4.0
    assert float(f(tf.constant([1.0, 3.0, 5.0]))) == 6.0
    assert seen and all(s == [None] for s in seen)  # TF: y.shape[0] is None here too
    assert len(f._cache) == 1


def test_a_graph_that_bakes_a_size_is_specialised_per_shape_and_says_where():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return x + tf.cast(tf.range(len(x)), tf.float32)  # len(): a Python int, baked
    for n in (1, 4, 9):
        np.testing.assert_allclose(f(tf.zeros([n])).numpy(), np.arange(n))
    assert f.shape_specialised is not None and "test_function_rules.py" in \
        f.shape_specialised
    assert len(f._cache) == 3 and f.experimental_get_tracing_count() == 1


# -- an op fails in a graph only when it runs ---------------------------------------------
def test_an_unused_failing_op_is_dropped_from_the_graph():
    """(tests/test_guide_graphs.py has the guide's own lines.) The trace records the op,
    its failure waits, and the graph drops it: the compiled graph and a tape's op-by-op
    run of it never run it."""
    @tf.function
    def f(x):
        tf.gather(x, [1])  # unused
        return x
    for _ in range(2):  # the trace's call, then the compiled graph
        assert f(tf.constant([0.0])).numpy().tolist() == [0.0]
    graph = f.get_concrete_function(tf.constant([0.0])).graph
    assert "GatherV2" not in {n.op.name for n in graph.nodes}
    with tf.GradientTape() as tape:  # a tape runs the graph op by op: still not run
        x = tf.constant([3.0])
        tape.watch(x)
        y = f(x) * 2.0
    assert tape.gradient(y, x).numpy().tolist() == [2.0]


def test_a_used_failing_op_raises_its_own_error_at_the_users_line():
    @tf.function
    def used(x):
        picked = tf.gather(x, [1])
        return x + tf.reduce_sum(picked)

    @tf.function
    def returned(x):
        return tf.gather(x, [1])

    @tf.function
    def to_python(x):
        return float(tf.gather(tf.constant([1.0]), [2])) + x
    for f in (used, returned, to_python):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"(indices\[0\] = 1|indices\[0\] = 2).*test_function_rules"):
            f(tf.constant([0.0]))
    assert used(tf.constant([1.0, 2.0])).numpy().tolist() == [3.0, 4.0]


def test_an_untaken_branch_may_fail_on_the_values_it_was_traced_with():
    @tf.function
    def second_or_first(x):
        return tf.cond(tf.size(x) > 1, lambda: tf.gather(x, [1]) * 2.0, lambda: x[:1])
    assert second_or_first(tf.constant([4.0])).numpy().tolist() == [4.0]
    assert second_or_first(tf.constant([4.0, 5.0])).numpy().tolist() == [10.0]
    assert second_or_first(tf.constant([7.0])).numpy().tolist() == [7.0]

    @tf.function
    def always_second(x):  # the taken branch fails when it runs, naming the gather
        return tf.cond(tf.size(x) > 0, lambda: tf.gather(x, [1]), lambda: x)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 1"):
        always_second(tf.constant([4.0]))


def test_shape_errors_still_raise_while_tracing():
    """A shape rule that refuses the inputs' shapes is a graph-construction error in TF
    (ValueError / InvalidArgumentError at trace time), whether or not the result is used."""
    @tf.function
    def f(x):
        tf.matmul(x, tf.ones([3, 2]))  # unused, but [1, 2] @ [3, 2] has no shape
        return x
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        f(tf.ones([1, 2]))


def test_concrete_functions_take_arguments_by_name():
    """The tf.function guide: `double_strings(a=tf.constant("b"))`."""
    @tf.function
    def double(a):
        return a + a
    concrete = double.get_concrete_function(tf.TensorSpec([], tf.string))
    assert concrete(a=tf.constant("b")).numpy() == b"bb"

    @tf.function
    def minus(x, y):
        return x - y
    c = minus.get_concrete_function(tf.constant(1.0), tf.constant(2.0))
    assert float(c(tf.constant(5.0), y=tf.constant(1.0))) == 4.0
    assert float(c(y=tf.constant(1.0), x=tf.constant(3.0))) == 2.0
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['z'\]"):
        c(z=1.0)
    with pytest.raises(TypeError, match=r"missing required argument\(s\) \['y'\]"):
        c(x=1.0)


def test_a_concrete_function_of_unknown_rank_takes_any_shape():
    """The tf.function guide's `pow.get_concrete_function(a=tf.TensorSpec(None), b=2)`."""
    @tf.function
    def power(a, b):
        return a ** b
    square = power.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    assert float(square(tf.constant(10.0))) == 100.0
    assert square(tf.constant([1.0, 3.0])).numpy().tolist() == [1.0, 9.0]
    assert square(a=tf.constant([[2.0]])).numpy().tolist() == [[4.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="float32"):
        square(tf.constant(10))


def test_tracing_types_decide_which_graph_an_argument_uses():
    """The tf.function guide's FruitTraceType: fruits of one class share a graph."""
    class FruitTraceType(tf.types.experimental.TraceType):
        def __init__(self, fruit):
            self.fruit_type = type(fruit)

        def is_subtype_of(self, other):
            return type(other) is FruitTraceType and self.fruit_type is other.fruit_type

        def most_specific_common_supertype(self, others):
            return self if all(self == other for other in others) else None

        def __eq__(self, other):
            return type(other) is FruitTraceType and self.fruit_type == other.fruit_type

        def __hash__(self):
            return hash(self.fruit_type)

    class Fruit:
        def __tf_tracing_type__(self, context):
            return FruitTraceType(self)

    class Apple(Fruit):
        flavor = tf.constant([1, 2])

    class Mango(Fruit):
        flavor = tf.constant([3, 4])

    class Plain:
        flavor = tf.constant([0, 0])

    traces = []

    @tf.function
    def mixed(a, b):
        traces.append(1)
        return a.flavor + b.flavor
    for _ in range(2):
        assert mixed(Apple(), Mango()).numpy().tolist() == [4, 6]
    assert len(traces) == 1
    mixed(Mango(), Apple())
    assert len(traces) == 2
    mixed(Plain(), Plain())
    mixed(Plain(), Plain())  # no tracing type: each new object traces again
    assert len(traces) == 4


def test_function_type_prints_arguments_and_outputs():
    @tf.function
    def power(a, b):
        return a ** b
    text = str(power.get_concrete_function(tf.TensorSpec([None], tf.float32), 2).function_type)
    assert text.startswith("(a: TensorSpec(shape=(None,), dtype=tf.float32")
    assert "b: Literal[2]" in text and text.endswith(
        "-> TensorSpec(shape=(None,), dtype=tf.float32, name=None)")
