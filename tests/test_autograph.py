"""AutoGraph: every construct converted inside tf.function gives what eager Python gives,
for inputs that take every path, with ONE trace (so the decision is made in the graph, not
baked in at trace time)."""
import sys
import traceback

import numpy as np
import pytest

import tensorlite as tf


def check(fn, inputs, **kwargs):
    """fn run eagerly on each input == tf.function(fn) on it, one trace per shape."""
    graph_fn = tf.function(fn, **kwargs)
    for x in inputs:
        want = fn(tf.constant(x))
        got = graph_fn(tf.constant(x))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6,
                                   err_msg=f"input {x}")
    shapes = {np.shape(x) for x in inputs}  # one trace per input shape, whatever the values
    assert graph_fn.experimental_get_tracing_count() == len(shapes)
    return graph_fn


# -- if ------------------------------------------------------------------------------------
def if_else(x):
    if x > 0:
        y = x * 2
    else:
        y = -x
    return y


def if_elif_else(x):
    if x > 10:
        y = x - 10
    elif x > 0:
        y = x * 3
    elif x > -5:
        y = x + 100
    else:
        y = tf.constant(0)
    return y


def if_without_else(x):
    y = x
    if x < 0:
        y = y * y
    return y + 1


def if_python_number_outputs(x):
    if x > 0:
        sign = 1
    else:
        sign = -1
    return sign * x


def early_return_in_if(x):
    if x > 0:
        return x
    return 0


def temporary_in_one_branch(x):
    if x > 0:
        t = x * 2
        y = t + 1
    else:
        y = x
    return y


def bool_ops(x):
    return tf.cast(x > 0 and x < 10 or x == -3, tf.int32) + (1 if not x > 5 else 2)


def nested_if(x):
    y = 0
    if x > 0:
        if x > 5:
            y = 2
        else:
            y = 1
    return y


@pytest.mark.parametrize("fn", [if_else, if_elif_else, if_without_else,
                                if_python_number_outputs, early_return_in_if,
                                temporary_in_one_branch, bool_ops, nested_if])
def test_if_matches_eager(fn):
    f = check(fn, [-7, -3, 0, 3, 7, 12])
    ops = f.last_concrete_function.graph.op_counts()
    assert any(k.endswith("If") for k in ops), ops  # the branch is decided in the graph


def test_python_condition_on_python_value_stays_python():
    def f(x, training):
        if training:
            x = x * 2
        for _ in range(3):
            x = x + 1
        return x
    g = tf.function(f)
    assert float(g(tf.constant(1.0), True)) == 5.0
    assert float(g(tf.constant(1.0), False)) == 4.0
    ops = g.last_concrete_function.graph.op_counts()
    assert not any("If" in k or "While" in k for k in ops), ops
    assert ops.get("AddV2", ops.get("Add", 0)) == 3  # the Python loop unrolled


# -- while ---------------------------------------------------------------------------------
def while_sum(n):
    s = 0
    i = 0
    while i < n:
        s += i
        i += 1
    return s


def while_break_continue(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        if s > 20:
            break
        s += i
    return s * 100 + i


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@pytest.mark.parametrize("fn,inputs", [(while_sum, [0, 1, 5, 10]),
                                       (while_break_continue, [0, 3, 8, 30]),
                                       (collatz, [1, 6, 27])])
def test_while_matches_eager(fn, inputs):
    f = check(fn, inputs)
    assert any("While" in k for k in f.last_concrete_function.graph.op_counts())


# -- for -----------------------------------------------------------------------------------
def for_over_tensor(x):
    total = tf.constant(0.0)
    for v in x:
        if v < 0:
            continue
        if v > 10:
            break
        total += v
    return total


def for_over_range(n):
    s = tf.constant(0)
    for i in tf.range(n):
        s += i * i
    return s


def early_return_in_loop(x):
    for i in tf.range(10):
        if i * i > x:
            return i
    return -1


def nested_loops(n):
    s = 0
    for i in tf.range(n):
        j = 0
        while j < i:
            s += j
            j += 1
    return s


def for_over_rows(m):
    acc = tf.zeros([2])
    for row in m:
        acc = acc + row
    return acc


@pytest.mark.parametrize("fn,inputs", [
    (for_over_tensor, [[1., -2., 3., 20., 5.], [4., 5.], [-1., -1.]]),
    (for_over_range, [0, 1, 7]), (early_return_in_loop, [20, 200, -1]),
    (nested_loops, [0, 4]), (for_over_rows, [[[1., 2.], [3., 4.]], [[0., 1.]] * 3])])
def test_for_matches_eager(fn, inputs):
    check(fn, inputs)


def test_for_over_dataset_runs_in_graph_on_each_call():
    def total(ds):
        s = tf.constant(0)
        n = 0
        for x in ds:
            s += x
            n += 1
        return s, n
    ds = tf.data.Dataset.range(5).map(lambda x: tf.cast(x, tf.int32))
    f = tf.function(total)
    for _ in range(2):  # the dataset is iterated afresh on every call
        s, n = f(ds)
        assert (int(s), int(n)) == (10, 5)
    assert f.experimental_get_tracing_count() == 1


def test_for_over_dataset_with_break_and_tuples():
    def first_big(ds):
        out = tf.constant(-1.0)
        for x, y in ds:
            if x * y > 10.0:
                out = x * y
                break
        return out
    ds = tf.data.Dataset.from_tensor_slices(([1., 2., 3., 4.], [1., 4., 5., 6.]))
    assert float(tf.function(first_big)(ds)) == 15.0


def test_for_over_a_generator_dataset_of_unknown_shapes():
    """The tf.function guide: Dataset.from_generator given only output types."""
    @tf.function
    def train(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)
        return loss
    for n in (3, 10):
        data = [(1, 4)] * n
        ds = tf.data.Dataset.from_generator(lambda d=data: d, (tf.int32, tf.int32))
        assert int(train(ds)) == 3 * n
        assert len(train.get_concrete_function(ds).graph.nodes) < 40  # one loop, not n


def test_python_loop_with_tensor_break_is_conditional():
    def f(x):
        s = tf.constant(0.0)
        for k in [1.0, 2.0, 3.0, 4.0]:
            if s > x:
                break
            s += k
        return s
    check(f, [0.5, 2.5, 100.0])


# -- effects run every iteration -------------------------------------------------------------
def test_tf_print_and_assert_inside_loops_run_every_iteration(capsys):
    @tf.function
    def f(n):
        for i in tf.range(n):
            tf.print("step", i, output_stream=sys.stdout)
            tf.debugging.Assert(i < 3, [i])
        return n
    f(tf.constant(2))
    f(tf.constant(3))
    assert capsys.readouterr().out.split("\n")[:-1] == [
        "step 0", "step 1", "step 0", "step 1", "step 2"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
        f(tf.constant(5))
    assert capsys.readouterr().out.count("step") == 4  # it failed at i == 3


# -- helpers are converted ---------------------------------------------------------------------
def _helper_abs(x):
    if x < 0:
        return -x
    return x


def test_called_helpers_are_converted():
    def f(x):
        return _helper_abs(x) + 1
    check(f, [-3.0, 4.0])


def test_do_not_convert_helper_with_tensor_bool_names_the_line():
    @tf.autograph.experimental.do_not_convert
    def helper(x):
        if x > 0:  # stays Python: a graph tensor used as a bool
            return x
        return -x

    @tf.function
    def f(x):
        return helper(x)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        f(tf.constant(1.0))
    line = helper.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in str(e.value)
    assert "tf.cond" in str(e.value)


def test_methods_and_modules():
    class Counter(tf.Module):
        def __init__(self):
            self.v = tf.Variable(0)

        @tf.function
        def __call__(self, n):
            for _ in tf.range(n):
                if self.v < 100:
                    self.v.assign_add(1)
            return self.v.read_value()
    c = Counter()
    assert int(c(tf.constant(3))) == 3
    assert int(c(tf.constant(5))) == 8


# -- to_code, do_not_convert ----------------------------------------------------------------------
def test_to_code_shows_the_converted_source():
    code = tf.autograph.to_code(if_else)
    assert "ag__.if_stmt" in code and "def if_else(x):" in code
    assert "ag__.for_stmt" in tf.autograph.to_code(for_over_range)
    assert "ag__.while_stmt" in tf.autograph.to_code(tf.function(while_sum))


def test_autograph_false_and_do_not_convert_leave_python():
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(tf.errors.InvalidArgumentError, match="tf.cond"):
        tf.function(f, autograph=False)(tf.constant(1.0))
    g = tf.function(tf.autograph.experimental.do_not_convert(f))
    with pytest.raises(tf.errors.InvalidArgumentError, match="tf.cond"):
        g(tf.constant(1.0))


# -- TensorFlow's rules and messages ---------------------------------------------------------------
def test_undefined_in_else_branch():
    def f(x):
        if x > 0:
            y = x
        return y
    with pytest.raises(ValueError, match="'y' must also be initialized in the else branch"):
        tf.function(f)(tf.constant(1.0))


def test_undefined_in_main_branch():
    def f(x):
        if x > 0:
            pass
        else:
            y = x
        return y
    with pytest.raises(ValueError, match="'y' must also be initialized in the main branch"):
        tf.function(f)(tf.constant(1.0))


def test_branch_dtype_mismatch():
    def f(x):
        if x > 0:
            y = tf.constant(1)
        else:
            y = tf.constant(1.0)
        return y
    with pytest.raises(TypeError, match="'y' has dtype int32 in the main branch, but dtype "
                                        "float32 in the else branch"):
        tf.function(f)(tf.constant(1.0))


def test_loop_variable_must_be_defined_before_loop():
    def f(n):
        for i in tf.range(n):
            last = i
        return last
    with pytest.raises(ValueError, match="'last' must be defined before the loop"):
        tf.function(f)(tf.constant(3))


def test_loop_variable_changing_dtype_names_the_line():
    def f(n):
        x = tf.constant(0)
        for i in tf.range(n):
            x = tf.cast(x, tf.float32) + 0.5
        return x
    with pytest.raises(TypeError) as e:
        tf.function(f)(tf.constant(3))
    msg = str(e.value)
    assert "'x' has dtype int32 before the loop, but dtype float32 after one iteration" in msg
    assert f"{__file__}:{f.__code__.co_firstlineno + 2}" in msg and "tf.cast" in msg


def test_loop_variable_changing_shape_and_set_loop_options():
    def grow(n):
        x = tf.constant([0])
        for i in tf.range(n):
            x = tf.concat([x, [i]], 0)
        return x
    with pytest.raises(ValueError, match=r"'x' has shape \(1,\) before the loop, but shape "
                                         r"\(2,\) after one iteration.*set_loop_options"):
        tf.function(grow)(tf.constant(3))

    def grow_ok(n):
        x = tf.constant([0])
        for i in tf.range(n):
            tf.autograph.experimental.set_loop_options(
                shape_invariants=[(x, tf.TensorShape([None]))])
            x = tf.concat([x, [i]], 0)
        return x
    g = tf.function(grow_ok)
    assert g(tf.constant(3)).numpy().tolist() == [0, 0, 1, 2]
    assert g(tf.constant(1)).numpy().tolist() == [0, 0]


def test_python_while_whose_condition_becomes_a_tensor():
    def f(x):
        done = False
        while not done:
            x = x - 1
            done = x < 0
        return x
    with pytest.raises(ValueError, match="became a tensor"):
        tf.function(f)(tf.constant(3.0))


def test_undefined_use_is_a_clear_error():
    def f(x, flag):
        if flag:
            y = x
        return y
    with pytest.raises(UnboundLocalError):
        f(tf.constant(1.0), False)  # eagerly: Python's own error


# -- errors keep the user's file and line -------------------------------------------------------
def test_tracebacks_point_at_the_users_source():
    def f(x):
        if x > 0:
            raise RuntimeError("boom")
        return x
    with pytest.raises(RuntimeError) as e:
        tf.function(f)(tf.constant(1.0))
    frames = [fr for fr in traceback.extract_tb(e.value.__traceback__)
              if fr.filename == __file__]
    assert frames[-1].lineno == f.__code__.co_firstlineno + 2
    assert frames[-1].line == 'raise RuntimeError("boom")'


def test_op_errors_in_converted_code_name_the_users_line():
    def f(x):
        for i in tf.range(2):
            x = tf.matmul(x, tf.ones([3, 3]))
        return x
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.function(f)(tf.ones([2, 2]))
    assert f"{__file__}:{f.__code__.co_firstlineno + 2}" in str(e.value)


def test_nested_functions_keep_their_own_returns():
    def f(x):
        def inner(y):
            if y > 0:
                return y * 2
            return -y
        return inner(x) + 1
    check(f, [-2.0, 3.0])


def test_first_call_creating_optimizer_variables_in_a_dataset_loop_steps_once_per_batch():
    """Hands-On ML ch. 13's `@tf.function train_one_epoch` loops over a dataset and builds
    the optimizer in its first call: each epoch is one step per batch (TF: iterations 4,
    then 8), with the same weights as the same loop run eagerly."""
    X = np.random.default_rng(0).random((64, 8)).astype(np.float32)
    y = X[:, :1] * 2.0
    train_set = tf.data.Dataset.from_tensor_slices((X, y)).batch(16)

    def make():
        tf.keras.utils.set_random_seed(1)
        return tf.keras.Sequential([tf.keras.layers.Dense(
            1, kernel_regularizer=tf.keras.regularizers.l2(0.01), input_shape=[8])])

    def train_one_epoch(model, optimizer, loss_fn, train_set):
        for X_batch, y_batch in train_set:
            with tf.GradientTape() as tape:
                y_pred = model(X_batch)
                main_loss = tf.reduce_mean(loss_fn(y_batch, y_pred))
                loss = tf.add_n([main_loss] + model.losses)
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))

    results = []
    for step in (tf.function(train_one_epoch), train_one_epoch):
        model, optimizer = make(), tf.keras.optimizers.SGD(learning_rate=0.01)
        loss_fn = tf.keras.losses.MeanSquaredError()
        counts = []
        for epoch in range(2):
            step(model, optimizer, loss_fn, train_set)
            counts.append(int(optimizer.iterations.numpy()))
        assert counts == [4, 8]
        results.append(model.get_weights())
    for graph_w, eager_w in zip(*results):
        np.testing.assert_allclose(graph_w, eager_w, rtol=1e-5, atol=1e-6)
