"""TensorFlow's guides "Introduction to graphs and tf.function" and "Better performance
with tf.function", run as written (with `import tensorlite as tf`), including their
Python control flow on tensors. Outputs the guides show are asserted."""
import timeit

import numpy as np
import pytest

import tensorlite as tf


# -- Introduction to graphs and tf.function -------------------------------------------------------
def test_intro_regular_function_and_graph_agree():
    def a_regular_function(x, y, b):
        x = tf.matmul(x, y)
        x = x + b
        return x

    a_function_that_uses_a_graph = tf.function(a_regular_function)
    x1 = tf.constant([[1.0, 2.0]])
    y1 = tf.constant([[2.0], [3.0]])
    b1 = tf.constant(4.0)
    orig_value = a_regular_function(x1, y1, b1).numpy()
    tf_function_value = a_function_that_uses_a_graph(x1, y1, b1).numpy()
    assert orig_value == tf_function_value


def test_intro_inner_function():
    def inner_function(x, y, b):
        x = tf.matmul(x, y)
        x = x + b
        return x

    @tf.function
    def outer_function(x):
        y = tf.constant([[2.0], [3.0]])
        b = tf.constant(4.0)
        return inner_function(x, y, b)

    assert outer_function(tf.constant([[1.0, 2.0]])).numpy().tolist() == [[12.0]]


def test_intro_simple_relu_python_control_flow():
    def simple_relu(x):
        if tf.greater(x, 0):
            return x
        else:
            return 0

    tf_simple_relu = tf.function(simple_relu)
    assert tf_simple_relu(tf.constant(1)).numpy() == 1
    assert tf_simple_relu(tf.constant(-1)).numpy() == 0
    assert tf_simple_relu.experimental_get_tracing_count() == 1
    code = tf.autograph.to_code(simple_relu)
    assert "ag__.if_stmt" in code and "def simple_relu(x):" in code
    graph = tf_simple_relu.get_concrete_function(tf.constant(1)).graph
    assert "StatelessIf" in [node.op for node in graph.as_graph_def().node]


def test_intro_polymorphism(capsys):
    @tf.function
    def my_relu(x):
        return tf.maximum(0., x)

    assert float(my_relu(tf.constant(5.5))) == 5.5
    assert my_relu([1, -1]).numpy().tolist() == [1.0, 0.0]
    assert my_relu(tf.constant([3., -3.])).numpy().tolist() == [3.0, 0.0]
    assert my_relu.experimental_get_tracing_count() == 3
    my_relu(tf.constant(-2.5))  # same signature: no new trace
    my_relu(tf.constant([-1., 1.]))
    assert my_relu.experimental_get_tracing_count() == 3
    print(my_relu.pretty_printed_concrete_signatures())
    assert capsys.readouterr().out == (
        "my_relu(x)\n  Args:\n    x: float32 Tensor, shape=()\n  Returns:\n"
        "    float32 Tensor, shape=()\n\n"
        "my_relu(x=[1, -1])\n  Returns:\n    float32 Tensor, shape=(2,)\n\n"
        "my_relu(x)\n  Args:\n    x: float32 Tensor, shape=(2,)\n  Returns:\n"
        "    float32 Tensor, shape=(2,)\n")


def test_intro_python_side_effects_once_per_trace(capsys):
    @tf.function
    def get_MSE(y_true, y_pred):  # noqa: N802 - the guide's name
        print("Calculating MSE!")
        sq_diff = tf.pow(y_true - y_pred, 2)
        return tf.reduce_mean(sq_diff)

    y_true = tf.random.uniform([5], maxval=10, dtype=tf.int32)
    y_pred = tf.random.uniform([5], maxval=10, dtype=tf.int32)
    error = get_MSE(y_true, y_pred)
    error = get_MSE(y_true, y_pred)
    error = get_MSE(y_true, y_pred)
    assert capsys.readouterr().out.count("Calculating MSE!") == 1
    want = int(np.mean((y_true.numpy() - y_pred.numpy()) ** 2))
    assert int(error) == want
    tf.config.run_functions_eagerly(True)
    try:
        get_MSE(y_true, y_pred)
        get_MSE(y_true, y_pred)
        get_MSE(y_true, y_pred)
    finally:
        tf.config.run_functions_eagerly(False)
    assert capsys.readouterr().out.count("Calculating MSE!") == 3


def test_intro_unused_op_is_pruned_from_the_graph():
    def unused_return_eager(x):
        tf.gather(x, [1])  # unused
        return x

    with pytest.raises(tf.errors.InvalidArgumentError):
        unused_return_eager(tf.constant([0.0]))

    @tf.function
    def unused_return_graph(x):
        tf.gather(x, [1])  # unused
        return x

    assert unused_return_graph(tf.constant([0.0])).numpy().tolist() == [0.0]


def test_intro_power_graph_equals_eager():
    x = tf.random.uniform(shape=[10, 10], minval=-1, maxval=2, dtype=tf.dtypes.int32)

    def power(x, y):
        result = tf.eye(10, dtype=tf.dtypes.int32)
        for _ in range(y):
            result = tf.matmul(x, result)
        return result

    power_as_graph = tf.function(power)
    np.testing.assert_array_equal(power(x, 10).numpy(), power_as_graph(x, 10).numpy())
    timeit.timeit(lambda: power_as_graph(x, 10), number=2)  # the guide times both


def test_intro_tracing_message(capsys):
    @tf.function
    def a_function_with_python_side_effect(x):
        print("Tracing!")  # An eager-only side effect.
        return x * x + tf.constant(2)

    assert int(a_function_with_python_side_effect(tf.constant(2))) == 6
    assert int(a_function_with_python_side_effect(tf.constant(3))) == 11
    assert capsys.readouterr().out.count("Tracing!") == 1
    assert int(a_function_with_python_side_effect(2)) == 6
    assert int(a_function_with_python_side_effect(3)) == 11
    assert capsys.readouterr().out.count("Tracing!") == 2


# -- Better performance with tf.function ----------------------------------------------------------
def test_perf_basics_and_gradients():
    @tf.function
    def add(a, b):
        return a + b

    assert add(tf.ones([2, 2]), tf.ones([2, 2])).numpy().tolist() == [[2.0, 2.0]] * 2
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        result = add(v, 1.0)
    assert float(tape.gradient(result, v)) == 1.0

    @tf.function
    def dense_layer(x, w, b):
        return add(tf.matmul(x, w), b)

    assert dense_layer(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2])).numpy().tolist() == \
        [[3.0, 3.0]] * 3


def test_perf_tracing_per_dtype(capsys):
    @tf.function
    def double(a):
        print("Tracing with", a)
        return a + a

    assert int(double(tf.constant(1))) == 2
    assert abs(float(double(tf.constant(1.1))) - 2.2) < 1e-6
    assert double(tf.constant("a")).numpy() == b"aa"
    assert capsys.readouterr().out.count("Tracing with") == 3
    double(tf.constant("b"))
    assert "Tracing with" not in capsys.readouterr().out


def test_perf_input_signature():
    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def next_collatz(x):
        return tf.where(x % 2 == 0, x // 2, 3 * x + 1)

    assert next_collatz(tf.constant([1, 2])).numpy().tolist() == [4, 1]
    with pytest.raises(TypeError):
        next_collatz(tf.constant([1.0, 2.0]))  # wrong dtype
    with pytest.raises(TypeError):
        next_collatz(tf.constant([[1, 2], [3, 4]]))  # wrong rank


def test_perf_tensor_arguments_avoid_retracing(capsys):
    def train_one_step():
        pass

    @tf.function
    def train(num_steps):
        print("Tracing with num_steps = ", num_steps)
        tf.print("Executing with num_steps = ", num_steps)
        for _ in tf.range(num_steps):
            train_one_step()

    train(num_steps=10)
    train(num_steps=20)
    assert capsys.readouterr().out.count("Tracing with") == 2
    train(num_steps=tf.constant(10))
    train(num_steps=tf.constant(20))
    assert capsys.readouterr().out.count("Tracing with") == 1


def test_perf_print_vs_tf_print(capfd):
    @tf.function
    def f(x):
        print("Traced with", x)
        tf.print("Executed with", x)

    f(1)
    f(1)
    f(2)
    out = capfd.readouterr()
    assert out.out.count("Traced with") == 2
    assert out.err.split("\n")[:-1] == ["Executed with 1", "Executed with 1",
                                        "Executed with 2"]


def test_perf_python_side_effects_and_iterators(capfd):
    external_list = []

    @tf.function
    def side_effect(x):
        print("Python side effect")
        external_list.append(x)

    side_effect(1)
    side_effect(1)
    side_effect(1)
    assert len(external_list) == 1

    @tf.function
    def buggy_consume_next(iterator):
        tf.print("Value:", next(iterator))

    iterator = iter([1, 2, 3])
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    assert capfd.readouterr().err.split("\n")[:-1] == ["Value: 1"] * 3


def test_perf_variables_created_once():
    class Count(tf.Module):
        def __init__(self):
            self.count = None

        @tf.function
        def __call__(self):
            if self.count is None:
                self.count = tf.Variable(0)
            return self.count.assign_add(1)

    c = Count()
    first = c()  # the call that traces and creates the variable gives its value too
    assert isinstance(first, tf.Tensor) and not isinstance(first, tf.Variable)
    assert int(first) == 1
    assert int(c()) == 2


def test_perf_autograph_while(capfd):
    @tf.function
    def f(x):
        while tf.reduce_sum(x) > 1:
            tf.print(x)
            x = tf.tanh(x)
        return x

    x0 = tf.random.uniform([5])
    got = f(x0)
    want = x0.numpy()
    lines = 0
    while want.sum() > 1:
        want = np.tanh(want)
        lines += 1
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    assert len(capfd.readouterr().err.strip().split("\n")) == lines
    assert "ag__.while_stmt" in tf.autograph.to_code(f.python_function)


def test_perf_fizzbuzz(capfd):
    @tf.function
    def fizzbuzz(n):
        for i in tf.range(1, n + 1):
            print("Tracing for loop")
            if i % 15 == 0:
                print("Tracing fizzbuzz branch")
                tf.print("fizzbuzz")
            elif i % 3 == 0:
                print("Tracing fizz branch")
                tf.print("fizz")
            elif i % 5 == 0:
                print("Tracing buzz branch")
                tf.print("buzz")
            else:
                print("Tracing default branch")
                tf.print(i)

    fizzbuzz(tf.constant(5))
    out = capfd.readouterr()
    assert out.err.split("\n")[:-1] == ["1", "2", "fizz", "4", "buzz"]
    for branch in ("for loop", "fizzbuzz branch", "fizz branch", "buzz branch",
                   "default branch"):
        assert out.out.count(f"Tracing {branch}\n") == 1
    fizzbuzz(tf.constant(20))
    out = capfd.readouterr()
    assert out.out == ""  # no retrace
    want = ["fizzbuzz" if i % 15 == 0 else "fizz" if i % 3 == 0 else "buzz" if i % 5 == 0
            else str(i) for i in range(1, 21)]
    assert out.err.split("\n")[:-1] == want


def test_perf_looping_over_python_data_unrolls():
    @tf.function
    def train(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)  # Some dummy computation.
        return loss

    small_data = [(1, 1)] * 3
    big_data = [(1, 1)] * 10
    small = train.get_concrete_function(small_data).graph
    big = train.get_concrete_function(big_data).graph
    assert len(big.nodes) > len(small.nodes)  # a Python list is unrolled
    ds_small = tf.data.Dataset.from_tensor_slices(([1] * 3, [1] * 3))
    ds_big = tf.data.Dataset.from_tensor_slices(([1] * 10, [3] * 10))
    g_small = train.get_concrete_function(ds_small).graph
    g_big = train.get_concrete_function(ds_big).graph
    assert len(g_small.nodes) == len(g_big.nodes)  # a dataset is a loop in the graph
    assert int(train(ds_big)) == 20


def test_run_functions_eagerly_doc_example(capsys):
    def my_func(a):
        print(f'a: {a}')
        return a + a

    a_fn = tf.function(my_func)
    assert int(a_fn(tf.constant(1))) == 2  # traced: `a` printed with shape and dtype only
    assert int(a_fn(tf.constant(2))) == 4  # the graph runs: no Python print
    tf.config.run_functions_eagerly(True)
    try:
        assert int(a_fn(tf.constant(2))) == 4  # eager: the actual value
    finally:
        tf.config.run_functions_eagerly(False)
    assert capsys.readouterr().out == 'a: Tensor("a:0", shape=(), dtype=int32)\na: 2\n'


def test_perf_obtaining_concrete_functions_and_graphs(capsys):
    @tf.function
    def double(a):
        print("Tracing with", a)
        return a + a

    double(tf.constant(1))
    double_strings = double.get_concrete_function(tf.constant("a"))
    print(double_strings)
    assert double_strings(tf.constant("c")).numpy() == b"cc"
    spec_cf = double.get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.string))
    assert spec_cf(tf.constant("d")).numpy() == b"dd"
    with pytest.raises(tf.errors.InvalidArgumentError):
        double_strings(tf.constant(1))
    out = capsys.readouterr().out
    assert 'Tracing with Tensor("a:0", shape=(), dtype=string)' in out
    assert "ConcreteFunction double(a)\n  Args:\n    a: string Tensor, shape=()\n" \
        "  Returns:\n    string Tensor, shape=()" in out
    graph = double_strings.graph
    lines = [f'{node.input} -> {node.name}' for node in graph.as_graph_def().node]
    assert lines[0] == "[] -> a" and lines[1].startswith("['a', 'a'] -> ")
    assert double.experimental_get_tracing_count() == 2


def test_perf_input_signature_traces_once_with_a_none_dimension(capsys):
    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def next_collatz(x):
        print("Tracing with", x)
        return tf.where(x % 2 == 0, x // 2, 3 * x + 1)

    assert next_collatz(tf.constant([1, 2])).numpy().tolist() == [4, 1]
    assert next_collatz(tf.constant([5, 6, 7])).numpy().tolist() == [16, 3, 22]
    assert capsys.readouterr().out == \
        'Tracing with Tensor("x:0", shape=(None,), dtype=int32)\n'
    assert next_collatz.experimental_get_tracing_count() == 1


def test_perf_reduce_retracing(capsys):
    @tf.function(reduce_retracing=True)
    def g(x):
        print('Tracing with', x)
        return x

    for n in (3, 5, 7, 9):
        assert g(tf.constant(list(range(1, n + 1)))).shape == (n,)
    # TensorFlow traces twice here (first exactly, then generalised); tensorlite's first
    # trace is already the general one: every size of the batch dimension shares it.
    assert capsys.readouterr().out == \
        'Tracing with Tensor("x:0", shape=(None,), dtype=int32)\n'
    assert g.experimental_get_tracing_count() == 1


def test_perf_python_global_and_free_variables(capsys):
    external_list = []

    @tf.function
    def side_effect(x):
        print('Python side effect')
        external_list.append(x)

    side_effect(1)
    side_effect(1)
    side_effect(1)
    assert len(external_list) == 1  # the side effect ran once, while tracing
    assert capsys.readouterr().out == "Python side effect\n"

    scope = {"foo": 1}

    @tf.function
    def buggy_add():
        return 1 + scope["foo"]

    @tf.function
    def recommended_add(foo):
        return 1 + foo

    assert int(buggy_add()) == 2 and int(recommended_add(scope["foo"])) == 2
    scope["foo"] = 100
    assert int(buggy_add()) == 2  # did not change: the graph captured the old value
    assert int(recommended_add(scope["foo"])) == 101


def test_perf_variable_created_on_every_call_is_an_error():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v

    with pytest.raises(ValueError, match="singleton tf.Variables"):
        f(1.0)
