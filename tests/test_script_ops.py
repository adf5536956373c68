"""tf.py_function / tf.numpy_function (one stateful callback node that runs Python on every
call of a graph) and tf.print inside tf.function, which is built on the same node."""
import sys

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework.registry import Spec, get
from tests.op_check import check_batched_jacobian, rand


def _recorder(kind):
    """A func that notes what it received, and doubles it plus one."""
    seen = []

    def func(x):
        seen.append(x)
        return x * 2 + 1
    return seen, func


# -- eager ---------------------------------------------------------------------------------------
def test_py_function_eager_passes_tensors():
    seen, func = _recorder("py")
    y = tf.py_function(func, [tf.constant([1.0, 2.0])], tf.float32)
    assert isinstance(seen[0], tf.Tensor) and seen[0].dtype == tf.float32
    assert isinstance(y, tf.Tensor) and y.dtype == tf.float32
    np.testing.assert_array_equal(y.numpy(), [3.0, 5.0])


def test_numpy_function_eager_passes_ndarrays():
    seen, func = _recorder("np")
    y = tf.numpy_function(func, [tf.constant([1, 2])], tf.int32)
    assert type(seen[0]) is np.ndarray and seen[0].dtype == np.int32
    np.testing.assert_array_equal(y.numpy(), [3, 5])
    assert tf.numpy_function(np.sinh, [tf.constant(1.0)], tf.float32).numpy() == \
        np.sinh(np.float32(1.0))


def test_tout_list_gives_list_and_decorator_form():
    out = tf.py_function(lambda a, b: (a + b, a * b), [2.0, 3.0], [tf.float32, tf.float32])
    assert isinstance(out, list) and [o.numpy() for o in out] == [5.0, 6.0]
    assert tf.py_function(lambda: None, [], []) == []
    [one] = tf.numpy_function(lambda x: x, [tf.constant(1.0)], [tf.float32])
    assert one.numpy() == 1.0

    @tf.py_function(Tout=tf.float32)
    def mul(x, m):
        return x * m
    assert mul(tf.constant(2.0), tf.constant(3.0)).numpy() == 6.0

    @tf.numpy_function(Tout=tf.float64)
    def sinh(x):
        return np.sinh(x)
    assert sinh(tf.constant(0.5, tf.float64)).numpy() == np.sinh(0.5)


def test_dtype_conversion_of_results():
    # Python values convert to Tout (as tf.convert_to_tensor does)
    assert tf.py_function(lambda x: 2, [1.0], tf.float32).dtype == tf.float32
    assert tf.numpy_function(lambda x: [1, 2], [1.0], tf.int64).numpy().tolist() == [1, 2]
    assert tf.py_function(lambda x: "abc", [1.0], tf.string).numpy() == b"abc"
    # py_function converts arrays like convert_to_tensor: float64 -> float32 is fine ...
    y = tf.py_function(lambda x: np.array([1.5, 2.5]), [1.0], tf.float32)
    assert y.dtype == tf.float32 and y.numpy().tolist() == [1.5, 2.5]
    # ... float -> int is not
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        tf.py_function(lambda x: np.array([1.5]), [1.0], tf.int32)
    # a Tensor of another dtype is an error naming both dtypes and the fix
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"output 0 has dtype float32 but Tout says int32.*tf.cast"):
        tf.py_function(lambda x: x, [1.0], tf.int32)
    # numpy_function checks array dtypes exactly, as TF's PyFunc kernel does
    with pytest.raises(tf.errors.InvalidArgumentError, match="float64 but Tout says float32"):
        tf.numpy_function(lambda x: x.astype(np.float64), [tf.constant(1.0)], tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="returned 2 values but Tout"):
        tf.numpy_function(lambda x: [x, x], [tf.constant(1.0)], [tf.float32])
    with pytest.raises(tf.errors.InvalidArgumentError, match="returned None"):
        tf.py_function(lambda x: None, [1.0], tf.float32)


@pytest.mark.parametrize("exc, cls", [
    (ValueError("bad value"), tf.errors.InvalidArgumentError),
    (TypeError("bad type"), tf.errors.InvalidArgumentError),
    (StopIteration("done"), tf.errors.OutOfRangeError),
    (NotImplementedError("later"), tf.errors.UnimplementedError),
    (ZeroDivisionError("division by zero"), tf.errors.UnknownError),
    (tf.errors.NotFoundError(None, None, "no file"), tf.errors.NotFoundError),
])
@pytest.mark.parametrize("public", ["py_function", "numpy_function"])
def test_errors_of_func_become_tf_classes(exc, cls, public):
    def failing_func(x):
        raise exc
    with pytest.raises(cls, match=rf"(?s){type(exc).__name__}: .*{exc}.*failing_func") as info:
        getattr(tf, public)(failing_func, [1.0], tf.float32)
    causes, e = [], info.value
    while e is not None:
        causes.append(e)
        e = e.__cause__
    assert exc in causes  # the Python traceback stays reachable

    @tf.function
    def f(x):
        return getattr(tf, public)(lambda a: a if a > 0 else failing_func(a), [x], tf.float32)
    assert f(tf.constant(1.0)).numpy() == 1.0
    with pytest.raises(cls, match=rf"(?s){type(exc).__name__}: .*f.<locals>.<lambda>.*"
                                  rf"in tf.function 'f', node \w*PyFunc created at "
                                  rf".*test_script_ops.py"):
        f(tf.constant(-1.0))  # the compiled graph's run, not the trace


def test_a_failing_run_repeats_no_callback(capsys):
    sizes, calls = [2], []

    def ones(x):
        calls.append(1)
        return np.ones(sizes[0], np.int32)

    @tf.function
    def f(x):
        y = tf.numpy_function(ones, [x], tf.int32)
        tf.print("y", y, output_stream=sys.stdout)
        return y + x  # fails when ones() returns another length

    f(tf.constant([1, 2]))
    sizes[0] = 3
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"AddV2 failed .*\[\[3\], \[2\]\]"):
        f(tf.constant([1, 2]))
    assert len(calls) == 2 and capsys.readouterr().out == "y [1 1]\ny [1 1 1]\n"


def test_bad_arguments():
    with pytest.raises(TypeError, match="callable"):
        tf.py_function(3, [1.0], tf.float32)
    with pytest.raises(TypeError, match="Tout"):
        tf.numpy_function(np.sinh, [1.0], "not a dtype")


# -- inside tf.function --------------------------------------------------------------------------
@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("public", ["py_function", "numpy_function"])
def test_runs_on_every_call_with_that_calls_values(public, jit):
    seen, func = _recorder(public)

    @tf.function(jit_compile=jit)
    def f(x):
        return getattr(tf, public)(func, [x * 3], tf.float32) - 1

    for v in (1.0, 2.0, 5.0):
        np.testing.assert_allclose(f(tf.constant([v, -v])).numpy(), [6 * v, -6 * v])
    assert [np.asarray(s).tolist() for s in seen] == [[3, -3], [6, -6], [15, -15]]
    assert f.experimental_get_tracing_count() == 1
    kind = "EagerPyFunc" if public == "py_function" else "PyFunc"
    graph = f.get_concrete_function(tf.constant([1.0, 1.0])).graph
    assert graph.op_counts() == {"Mul": 1, kind: 1, "Sub": 1}  # func's own ops: not recorded


def test_interpreted_under_a_tape_and_in_compat_v1_session():
    seen, func = _recorder("np")
    f = tf.function(lambda x: tf.numpy_function(func, [x], tf.float32))
    f(tf.constant(1.0))
    x = tf.constant(4.0)
    with tf.GradientTape() as tape:  # a recording tape: the graph runs op by op
        tape.watch(x)
        assert f(x).numpy() == 9.0
    assert float(seen[-1]) == 4.0
    v1 = tf.compat.v1
    with v1.Graph().as_default():
        p = v1.placeholder(tf.float32, shape=[2])
        y = tf.numpy_function(func, [p], tf.float32) + 1
        with v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {p: [1.0, 2.0]}), [4.0, 6.0])
            np.testing.assert_array_equal(sess.run(y, {p: [0.0, 5.0]}), [2.0, 12.0])
    assert np.asarray(seen[-1]).tolist() == [0.0, 5.0]


def test_passes_never_fold_merge_or_remove_the_node():
    calls = []

    def func(x):
        calls.append(float(x))
        return x + 1

    @tf.function
    def f(x):
        c = tf.constant(2.0)
        a = tf.numpy_function(func, [c], tf.float32)  # constant input: not folded
        b = tf.numpy_function(func, [c], tf.float32)  # a duplicate: not merged
        tf.py_function(func, [x], tf.float32)  # unused: not removed
        s1 = tf.numpy_function(func, [c], tf.float32, stateful=False)  # these may be
        s2 = tf.numpy_function(func, [c], tf.float32, stateful=False)
        return a * 1 + b + s1 + s2

    f(tf.constant(1.0))
    cf = f.get_concrete_function(tf.constant(1.0))
    assert cf.graph.op_counts()["PyFuncStateless"] == 2
    calls.clear()
    assert f(tf.constant(7.0)).numpy() == 12.0
    opt = cf.optimized_graph.op_counts()
    assert opt["PyFunc"] == 2 and opt["EagerPyFunc"] == 1 and "PyFuncStateless" not in opt
    assert sorted(calls[-3:]) == [2.0, 2.0, 7.0]  # three callbacks ran in this call


def test_shape_rule_is_unknown_shape_known_dtype():
    op = get("EagerPyFunc")
    assert op.infer(Spec((2,), tf.float32), func=None, Tout=(tf.int32, tf.float64)) == \
        [Spec(None, tf.int32), Spec(None, tf.float64)]

    @tf.function
    def f(n):  # the output's shape changes from call to call: nothing may assume it
        y = tf.numpy_function(lambda k: np.ones(int(k), np.float32), [n], tf.float32)
        return y * 1 + 0
    assert [f(tf.constant(k)).shape for k in (2, 3, 1)] == [(2,), (3,), (1,)]


def test_outputs_are_not_python_values_in_a_trace():
    @tf.function
    def f(x):
        y = tf.py_function(lambda: 1.0, [], tf.float32)  # no inputs, still varies per call
        return float(y) * x
    with pytest.raises(tf.errors.InvalidArgumentError, match="used as a Python value"):
        f(tf.constant(1.0))


def test_in_dataset_map():
    calls = []

    def f(x):
        calls.append(int(x))
        return x.numpy() * 10 + 1
    ds = tf.data.Dataset.range(5).map(lambda x: tf.py_function(f, [x], tf.int64))
    assert [int(v) for v in ds] == [1, 11, 21, 31, 41]
    ranges = tf.data.Dataset.range(4).map(
        lambda x: tf.numpy_function(lambda a: np.arange(a), [x], tf.int64),
        num_parallel_calls=2)
    assert [v.numpy().tolist() for v in ranges] == [[], [0], [0, 1], [0, 1, 2]]


# -- gradients -----------------------------------------------------------------------------------
def _log_huber(x, m):
    if tf.abs(x) <= m:
        return x ** 2
    return m ** 2 * (1 - 2 * tf.math.log(m) + tf.math.log(x ** 2))


def test_gradient_seed_log_huber():
    x, m = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([x, m])
        y = tf.py_function(func=_log_huber, inp=[x, m], Tout=tf.float32)
    dx, dm = t.gradient(y, [x, m])
    assert y.numpy() == 1.0 and dx.numpy() == 2.0 and dm.numpy() == 0.0


@pytest.mark.parametrize("x", [rand(3, seed=1), rand(2, 2, seed=2) + 3.0])
def test_gradients_match_finite_differences(x):
    m = np.array(2.0)

    def f(x, m):  # Python control flow inside: another branch for other values
        return tf.py_function(lambda a, b: tf.where(tf.abs(a) <= b, a * a, b * tf.sin(a)),
                              [x, m], tf.float64)
    tf.test.check_grads(f, [x, m], order=2)
    check_batched_jacobian(f, [x, m])


def test_gradient_inside_tf_function_and_through_it():
    @tf.function
    def grad_of_cube(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.py_function(lambda a: a * a * a, [x], tf.float64)
        return t.gradient(y, x)
    assert [grad_of_cube(tf.constant(v, tf.float64)).numpy() for v in (1.0, 2.0, 3.0)] == \
        [3.0, 12.0, 27.0]
    ops = grad_of_cube.get_concrete_function(tf.constant(1.0, tf.float64)).graph.op_counts()
    assert ops == {"EagerPyFunc": 2}  # forward and gradient: both callbacks

    square = tf.function(lambda x: tf.py_function(lambda a: a * a, [x], tf.float64) + 1)
    for v in (1.0, 4.0):
        x = tf.constant(v, tf.float64)
        with tf.GradientTape() as t:
            t.watch(x)
            y = square(x)
        assert t.gradient(y, x).numpy() == 2 * v


def test_numpy_function_and_integer_inputs_have_no_gradient():
    x = tf.constant(2.0, tf.float64)
    n = tf.constant(3)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.numpy_function(lambda a: a * a, [x], tf.float64)
        z = tf.py_function(lambda a, k: a * tf.cast(k, tf.float64), [x, n], tf.float64)
    assert t.gradient(y, x) is None
    assert t.gradient(z, x).numpy() == 3.0


# -- tf.print ------------------------------------------------------------------------------------
def test_print_in_tf_function_prints_on_every_call(capsys):
    v = tf.Variable(10)

    @tf.function
    def f(x):
        tf.print("x:", x, {"twice": x * 2}, v)  # default stream: stderr
        v.assign_add(1)
        return x + 1

    f.get_concrete_function(tf.constant([0, 0]))  # a trace, not a call: prints nothing
    assert capsys.readouterr().err == ""
    for i in range(3):
        f(tf.constant([i, i + 1]))
    assert capsys.readouterr().err.splitlines() == [
        "x: [0 1] {'twice': [0 2]} 10", "x: [1 2] {'twice': [2 4]} 11",
        "x: [2 3] {'twice': [4 6]} 12"]
    graph = f.get_concrete_function(tf.constant([0, 0])).optimized_graph
    assert graph.op_counts()["PrintV2"] == 1


def test_print_in_branches_and_loops_prints_what_runs(capsys):
    @tf.function
    def f(x):
        tf.cond(x > 0, lambda: tf.print("pos", x, output_stream=sys.stdout) or x,
                lambda: tf.print("neg", x, output_stream=sys.stdout) or x)

        def body(i):
            tf.print(" step", i, output_stream="stdout")
            return i + 1
        return tf.while_loop(lambda i: i < x, body, [tf.constant(0)])

    f(tf.constant(2))
    f(tf.constant(-1))
    f(tf.constant(1))
    assert capsys.readouterr().out.splitlines() == [
        "pos 2", " step 0", " step 1", "neg -1", "pos 1", " step 0"]


def test_print_inside_py_function_runs_eagerly(capsys):
    def inner(a):
        tf.print("inner", a, tf.executing_eagerly(), output_stream=sys.stdout)
        return a

    f = tf.function(lambda x: tf.py_function(inner, [x], tf.int32))
    f(tf.constant(1))
    f(tf.constant(2))
    assert capsys.readouterr().out.splitlines() == ["inner 1 True", "inner 2 True"]


def test_print_in_dataset_map_once_per_element(capsys):
    # the element_spec probe (which runs the map on one element) prints nothing
    ds = tf.data.Dataset.range(3).map(lambda x: (tf.print("elem", x), x)[1])
    assert ds.element_spec.dtype == tf.int64
    assert [int(v) for v in ds] == [0, 1, 2]
    assert capsys.readouterr().err.splitlines() == ["elem 0", "elem 1", "elem 2"]
