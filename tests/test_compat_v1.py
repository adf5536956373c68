"""tf.compat.v1: graph mode, placeholders, Session.run, variable scopes, collections."""
import collections
import re

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.compat.v1  # noqa: F401 - makes tf.compat.v1 reachable
from tensorlite.compat.v1 import graph as graph_mod
from tensorlite.compat.v1 import graph_mode
from tensorlite.framework import dispatch, variables
from tests.test_graph_function import seed002_tf2_cell

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def _isolated_graph():
    """Each test starts eager with a fresh default graph, and graph mode never leaks."""
    v1.enable_eager_execution()
    v1.reset_default_graph()
    err = np.geterr()
    yield
    v1.enable_eager_execution()
    v1.reset_default_graph()
    assert not graph_mode._ON[0] and not graph_mod._STACK
    assert np.geterr() == err


@pytest.fixture
def graph():
    v1.disable_eager_execution()
    return v1.get_default_graph()


def _seed_forward(x):
    with v1.variable_scope("matmul", reuse=v1.AUTO_REUSE):
        W = v1.get_variable("W", initializer=tf.ones(shape=(2, 2)),
                            regularizer=tf.keras.regularizers.L2(0.04))
        b = v1.get_variable("b", initializer=tf.zeros(shape=(2)))
        return W * x + b


# -- seed 002 -------------------------------------------------------------------------------
def test_seed_tf1_cell_values_and_dtypes():
    v1.disable_eager_execution()
    assert v1.executing_eagerly() is False
    in_a = v1.placeholder(dtype=tf.float32, shape=(2))
    in_b = v1.placeholder(dtype=tf.float32, shape=(2))
    out_a = _seed_forward(in_a)
    out_b = _seed_forward(in_b)
    reg_loss = v1.losses.get_regularization_loss(scope="matmul")
    with v1.Session() as sess:
        assert sess.run(v1.global_variables_initializer()) is None
        outs = sess.run([out_a, out_b, reg_loss], feed_dict={in_a: [1, 0], in_b: [0, 1]})
    assert isinstance(outs, list) and len(outs) == 3
    np.testing.assert_array_equal(outs[0], [[1., 0.], [1., 0.]])
    np.testing.assert_array_equal(outs[1], [[0., 1.], [0., 1.]])
    assert outs[0].dtype == np.float32 and outs[1].dtype == np.float32
    assert type(outs[2]) is np.float32 and str(outs[2]) == "0.16"
    assert [v.name for v in v1.global_variables()] == ["matmul/W:0", "matmul/b:0"]
    assert len(v1.get_collection(v1.GraphKeys.REGULARIZATION_LOSSES)) == 1  # not per call


def test_seed_tf2_cell_after_enable_eager_execution():
    v1.disable_eager_execution()
    x = v1.placeholder(tf.float32, shape=(2,))
    _seed_forward(x)
    v1.enable_eager_execution()
    assert v1.executing_eagerly() is True
    _, W = seed002_tf2_cell()
    assert W.name == "W:0"  # eager names are not made unique


def test_top_level_executing_eagerly_follows_graph_mode():
    assert tf.executing_eagerly() is True
    v1.disable_eager_execution()
    assert tf.executing_eagerly() is False
    v1.enable_eager_execution()
    assert tf.executing_eagerly() is True
    with v1.Graph().as_default():
        assert tf.executing_eagerly() is False
    assert tf.executing_eagerly() is True


# -- running --------------------------------------------------------------------------------
def test_feeding_different_values_reruns(graph):
    x = v1.placeholder(tf.float32, shape=(None, 3), name="x")
    w = v1.get_variable("w", initializer=tf.constant([1.0, 2.0, 3.0]))
    y = tf.reduce_sum(x * w, axis=1)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y, {x: [[1, 1, 1]]}), [6.0])
        np.testing.assert_allclose(sess.run(y, {x: [[1, 0, 0], [0, 0, 2], [1, 1, 1]]}),
                                   [1.0, 6.0, 6.0])
        np.testing.assert_allclose(sess.run(y, {x: np.zeros((5, 3))}), np.zeros(5))


def test_fetch_structures(graph):
    Pair = collections.namedtuple("Pair", "a b")
    x = v1.placeholder(tf.float32, shape=(2,), name="x")
    v = v1.get_variable("v", initializer=tf.constant(3.0))
    y, z = x * 2.0, tf.reduce_sum(x) + v
    init = v1.global_variables_initializer()
    with v1.Session() as sess:
        assert sess.run(init) is None
        feed = {x: [1.0, 2.0]}
        np.testing.assert_array_equal(sess.run(y, feed), [2.0, 4.0])
        assert sess.run(z, feed) == np.float32(6.0) and type(sess.run(z, feed)) is np.float32
        t = sess.run((y, z), feed)
        assert isinstance(t, tuple) and t[1] == 6.0
        d = sess.run({"y": y, "nested": [z, Pair(v, (x,))]}, feed)
        assert set(d) == {"y", "nested"}
        assert isinstance(d["nested"][1], Pair) and d["nested"][1].a == 3.0
        np.testing.assert_array_equal(d["nested"][1].b[0], [1.0, 2.0])  # a fed tensor
        assert sess.run(v) == 3.0 and sess.run("v:0") == 3.0
        np.testing.assert_array_equal(sess.run("x:0", {"x:0": [5, 6]}), [5.0, 6.0])
        assert sess.run([init, z], feed)[0] is None
        assert sess.run(tf.constant(7)) == 7  # a constant made outside any op
        with pytest.raises(TypeError, match="Fetch argument None has invalid type"):
            sess.run([y, None], feed)
        with pytest.raises(TypeError, match="Fetch argument 3 has invalid type"):
            sess.run(3)


def test_results_do_not_alias_session_state(graph):
    v = v1.get_variable("v", initializer=tf.constant([1.0, 2.0]))
    with v1.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(v)
        got[0] = 100.0
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


# -- errors ---------------------------------------------------------------------------------
def test_unfed_placeholder_is_invalid_argument(graph):
    x = v1.placeholder(dtype=tf.float32, shape=(2))
    y = x * 2.0
    with v1.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=re.escape("You must feed a value for placeholder tensor "
                                           "'Placeholder' with dtype float and shape [2]")):
            sess.run(y)
    z = v1.placeholder(tf.int32, shape=(None, 3), name="z")
    with v1.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=re.escape("'z' with dtype int32 and shape [?,3]")):
            sess.run(z + 1)


def test_wrong_fed_shape_names_placeholder_and_both_shapes(graph):
    x = v1.placeholder(tf.float32, shape=(None, 2), name="inputs")
    y = x + 1.0
    with v1.Session() as sess:
        msg = "Cannot feed value of shape (3,) for Tensor inputs:0, which has shape (None, 2)"
        with pytest.raises(ValueError, match=re.escape(msg)):
            sess.run(y, {x: [1.0, 2.0, 3.0]})
        with pytest.raises(ValueError, match=re.escape("shape (4, 3) for Tensor inputs:0")):
            sess.run(y, {x: np.ones((4, 3))})
        with pytest.raises(ValueError, match="Cannot feed value 'abc' to Tensor inputs:0"):
            sess.run(y, {x: "abc"})
        out = sess.run(y, {x: np.ones((4, 2), dtype=np.int64)})  # cast to the placeholder's
        assert out.dtype == np.float32 and out.shape == (4, 2)
        with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor"):
            sess.run(y, {x: y})


def test_uninitialized_variable_is_failed_precondition(graph):
    x = v1.placeholder(tf.float32, shape=(2,))
    out = _seed_forward(x)
    with v1.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value matmul/W"):
            sess.run(out, {x: [1, 0]})
        sess.run(v1.global_variables_initializer())
        sess.run(out, {x: [1, 0]})
    with v1.Session() as sess:  # values live in a session: a new one starts uninitialized
        with pytest.raises(tf.errors.FailedPreconditionError, match="matmul/W"):
            sess.run(v1.global_variables()[0])


def test_reuse_errors_and_semantics(graph):
    with v1.variable_scope("matmul"):
        W = v1.get_variable("W", shape=(2, 2))
    with v1.variable_scope("matmul"):
        with pytest.raises(ValueError, match=re.escape(
                "Variable matmul/W already exists, disallowed. Did you mean to set "
                "reuse=True or reuse=tf.AUTO_REUSE in VarScope?")):
            v1.get_variable("W", shape=(2, 2))
    with v1.variable_scope("matmul", reuse=True):
        assert v1.get_variable("W") is W
        with v1.variable_scope("inner"):  # reuse is inherited
            with pytest.raises(ValueError, match=re.escape(
                    "Variable matmul/inner/u does not exist, or was not created with "
                    "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")):
                v1.get_variable("u", shape=())
        with pytest.raises(ValueError, match=re.escape(
                "Trying to share variable matmul/W, but specified shape (3, 3) and found "
                "shape (2, 2).")):
            v1.get_variable("W", shape=(3, 3))
    with v1.variable_scope("matmul", reuse=v1.AUTO_REUSE):
        assert v1.get_variable("W") is W
        fresh = v1.get_variable("fresh", shape=(1,))
        assert v1.get_variable("fresh") is fresh
    with v1.variable_scope("matmul") as scope:
        scope.reuse_variables()
        assert v1.get_variable("W") is W
    with pytest.raises(ValueError, match="The reuse parameter must be True or False or None"):
        v1.variable_scope("x", reuse="yes")


def test_get_variable_initializers_and_shapes(graph):
    a = v1.get_variable("a", shape=(2, 3), initializer=tf.keras.initializers.Ones())
    b = v1.get_variable("b", shape=[2], initializer=tf.keras.initializers.Zeros)  # a class
    c = v1.get_variable("c", initializer=[1.0, 2.0])  # a Python value
    d = v1.get_variable("d", shape=(3,), dtype=tf.int32)  # ints default to zeros
    e = v1.get_variable("e", shape=(4, 5))  # floats default to Glorot-uniform
    f = v1.get_variable("f", shape=(2,), initializer=lambda shape, dtype=None:
                        tf.fill(shape, 7.0))
    g = v1.get_variable("g", shape=(2,), initializer=v1.constant_initializer(5.0))
    with pytest.raises(ValueError, match=re.escape("Shape of a new variable (h) must be fully "
                                                   "defined, but instead was <unknown>.")):
        v1.get_variable("h")
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape"):
        v1.get_variable("i", shape=(2,), initializer=tf.ones((2,)))
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        va, vb, vc, vd, ve, vf, vg = sess.run([a, b, c, d, e, f, g])
    np.testing.assert_array_equal(va, np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(vb, [0.0, 0.0])
    np.testing.assert_array_equal(vc, [1.0, 2.0])
    assert vd.dtype == np.int32 and not vd.any()
    limit = np.sqrt(6.0 / 9.0)
    assert ve.shape == (4, 5) and np.all(np.abs(ve) <= limit) and np.any(ve != 0)
    np.testing.assert_array_equal(vf, [7.0, 7.0])
    np.testing.assert_array_equal(vg, [5.0, 5.0])


def test_random_initializer_ops_rerun_on_each_initialization(graph):
    v = v1.get_variable("v", initializer=tf.random.normal((50,)))
    with v1.Session() as sess:
        sess.run(v.initializer)
        first = sess.run(v)
        sess.run(v.initializer)
        assert not np.array_equal(first, sess.run(v))


def test_regularization_loss_sums_by_scope(graph):
    l2 = tf.keras.regularizers.L2(0.5)
    with v1.variable_scope("a"):
        v1.get_variable("w", initializer=tf.ones((2,)), regularizer=l2)
        v1.get_variable("u", initializer=tf.ones((3,)))  # no regularizer
    with v1.variable_scope("b", regularizer=tf.keras.regularizers.L1(0.1)):  # scope default
        v1.get_variable("w", initializer=tf.constant([-2.0, 2.0]))
    only_a = v1.losses.get_regularization_loss(scope="a")
    total = v1.losses.get_regularization_loss()
    none = v1.losses.get_regularization_loss(scope="nothing")
    assert len(v1.losses.get_regularization_losses()) == 2
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        ra, rt, rn = sess.run([only_a, total, none])
    assert ra == pytest.approx(1.0) and rt == pytest.approx(1.4) and rn == 0.0
    assert type(ra) is np.float32


def test_regularization_loss_follows_variable_value(graph):
    w = v1.get_variable("w", initializer=tf.ones((2,)),
                        regularizer=tf.keras.regularizers.L2(1.0))
    loss = v1.losses.get_regularization_loss()
    step = v1.assign(w, [3.0, 0.0])
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        assert sess.run(loss) == 2.0
        sess.run(step)
        assert sess.run(loss) == 9.0


def test_collections_and_tf_variable_in_graph_mode(graph):
    with v1.variable_scope("s"):
        a = tf.Variable(1.0, name="v")
        b = tf.Variable(2.0, name="v", trainable=False)
        c = v1.get_variable("local", shape=(), collections=[v1.GraphKeys.LOCAL_VARIABLES],
                            trainable=False, initializer=v1.zeros_initializer())
    assert (a.name, b.name) == ("s/v:0", "s/v_1:0")  # TF 1.x makes graph names unique
    assert [x.name for x in v1.global_variables()] == ["s/v:0", "s/v_1:0"]
    assert [x.name for x in v1.trainable_variables()] == ["s/v:0"]
    assert [x.name for x in v1.local_variables()] == ["s/local:0"]
    assert v1.global_variables(scope="t") == []
    with v1.variable_scope("s"):  # the second entry opens name scope s_1 for tf.Variables
        d = tf.Variable(3.0, name="v")
    assert d.name == "s_1/v:0"
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        assert sess.run([a, b, d]) == [1.0, 2.0, 3.0]
        with pytest.raises(tf.errors.FailedPreconditionError, match="s/local"):
            sess.run(c)
        sess.run(v1.local_variables_initializer())
        assert sess.run(c) == 0.0


def test_variable_scope_names(graph):
    with v1.variable_scope("outer"):
        with v1.variable_scope("inner") as inner:
            v = v1.get_variable("v", shape=())
        assert inner.name == "outer/inner" and v1.get_variable_scope().name == "outer"
    with v1.variable_scope(None, default_name="layer"):
        p = v1.get_variable("p", shape=())
    with v1.variable_scope(None, default_name="layer"):
        q = v1.get_variable("p", shape=())
    with v1.variable_scope(inner, reuse=True):  # re-entering a scope object
        assert v1.get_variable("v") is v
    assert (v.name, p.name, q.name) == ("outer/inner/v:0", "layer/p:0", "layer_1/p:0")
    assert v1.get_variable_scope().name == ""


def test_assign_ops_run_when_fetched(graph):
    counter = v1.get_variable("counter", initializer=tf.constant(0), trainable=False)
    inc = v1.assign_add(counter, 1)
    dec = v1.assign_sub(counter, 5)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        assert sess.run(inc) == 1 and sess.run(inc) == 2
        assert sess.run([inc, inc]) == [3, 3]  # one fetch runs once per step
        assert sess.run(dec) == -2 and sess.run(counter) == -2


def test_placeholder_with_default(graph):
    d = v1.placeholder_with_default(tf.constant([1.0, 2.0]), shape=[2])
    y = d * 10.0
    with v1.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [10.0, 20.0])
        np.testing.assert_array_equal(sess.run(y, {d: [3.0, 4.0]}), [30.0, 40.0])
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(y, {d: [1.0, 2.0, 3.0]})


def test_runtime_failure_names_op_and_user_line(graph):
    p = v1.placeholder(tf.float32, (None,))
    q = v1.placeholder(tf.float32, (None,))
    bad = p * q
    with v1.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(bad, {p: np.ones(2), q: np.ones(3)})
    assert "Mul" in str(info.value) and "test_compat_v1.py" in str(info.value)


def test_closed_session_and_default_session(graph):
    v = v1.get_variable("v", initializer=tf.constant(1.0))
    sess = v1.Session()
    with pytest.raises(ValueError, match="No default session"):
        v.initializer.run()
    with sess.as_default():
        v.initializer.run()
        assert v1.get_default_session() is sess
    assert sess.run(v) == 1.0
    sess.close()
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session"):
        sess.run(v)


def test_placeholders_names_shapes_and_hashing(graph):
    a = v1.placeholder(tf.float32)
    b = v1.placeholder(tf.float32, shape=[None, 4])
    with tf.name_scope("block"):
        c = v1.placeholder(tf.int64, shape=3, name="ids")
    assert (a.name, b.name, c.name) == ("Placeholder:0", "Placeholder_1:0", "block/ids:0")
    assert b.shape.as_list() == [None, 4] and a.shape.rank is None and c.shape == (3,)
    assert str(b) == 'Tensor("Placeholder_1:0", shape=(None, 4), dtype=float32)'
    assert len({a: 1, b: 2, c: 3}) == 3
    with v1.Session() as sess:
        np.testing.assert_array_equal(sess.run(a * 2.0, {a: [[1.0], [2.0]]}), [[2.0], [4.0]])
        assert sess.run(c + 1, {c: [1, 2, 3]}).dtype == np.int64


def test_placeholder_needs_graph_mode():
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        v1.placeholder(tf.float32, shape=(2,))


def test_python_value_of_graph_tensor_is_a_clear_error(graph):
    x = v1.placeholder(tf.float32, shape=())
    with pytest.raises(TypeError, match="has no value while the graph is being built"):
        bool(x > 0)
    with pytest.raises(TypeError, match="Session.run"):
        (x + 1).numpy()


def test_graph_mode_off_restores_eager():
    v1.disable_eager_execution()
    assert graph_mode._RECORDER in dispatch.OBSERVERS
    v1.placeholder(tf.float32, shape=(2,))
    v1.enable_eager_execution()
    assert graph_mode._RECORDER not in dispatch.OBSERVERS
    assert graph_mode._read_hook not in variables.READ_HOOKS
    assert graph_mode._creator not in variables._creator_stack()
    assert v1.executing_eagerly()
    n = len(v1.get_default_graph()._ir.nodes)
    y = tf.constant([1.0, 2.0]) * 3.0  # eager again: a value, nothing recorded
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])
    assert len(v1.get_default_graph()._ir.nodes) == n
    v = tf.Variable(1.0, name="v")
    assert v.name == "v:0" and v1.global_variables() == []


def test_graph_as_default_in_eager_mode():
    g = v1.Graph()
    with g.as_default():
        assert not v1.executing_eagerly() and v1.get_default_graph() is g
        x = v1.placeholder(tf.float32, shape=(2,))
        y = x + 1.0
    assert v1.executing_eagerly() and v1.get_default_graph() is not g
    with v1.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [2.0, 3.0])


def test_reset_default_graph_isolates(graph):
    x = v1.placeholder(tf.float32, shape=(2,))
    y = x * 2.0
    v1.get_variable("w", shape=(2,))
    v1.reset_default_graph()
    assert v1.global_variables() == []
    with v1.Session() as sess:
        with pytest.raises(ValueError, match="not an element of this graph"):
            sess.run(y, {})
        with pytest.raises(ValueError, match="not an element of this graph"):
            sess.run(tf.constant(1.0), {x: [1.0, 2.0]})
    v1.get_variable("w", shape=(2,))  # the name is free again
    with v1.Graph().as_default():
        with pytest.raises(AssertionError, match="nested graphs"):
            v1.reset_default_graph()


def test_tf_function_and_gradient_tape_in_graph_mode(graph):
    x = v1.placeholder(tf.float32, shape=(None, 2))

    @tf.function
    def f(a):
        return a * 2.0 + 1.0
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(f(x) * x)
    gx = tape.gradient(loss, x)
    with v1.Session() as sess:
        got_f, got_g = sess.run([f(x), gx], {x: [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_allclose(got_f, [[3.0, 5.0], [7.0, 9.0]])
    np.testing.assert_allclose(got_g, [[5.0, 9.0], [13.0, 17.0]])  # 4x + 1


def test_keras_layer_in_graph_mode(graph):
    x = v1.placeholder(tf.float32, shape=(None, 2))
    out = tf.keras.layers.Dense(3, kernel_initializer="ones", bias_initializer="ones")(x)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        np.testing.assert_allclose(sess.run(out, {x: [[1.0, 2.0]]}), [[4.0, 4.0, 4.0]])


def test_numpy_warnings_silenced_while_building_only(graph):
    x = v1.placeholder(tf.float32, shape=(2,))
    y = 1.0 / x  # the stand-in zeros would warn
    with v1.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [2.0, 4.0]}), [0.5, 0.25])


def test_get_variable_in_eager_mode_creates_new_variables():
    with v1.variable_scope("eager"):
        a = v1.get_variable("w", initializer=tf.ones((2,)))
        b = v1.get_variable("w", initializer=tf.ones((2,)))
    assert a is not b and a.name == "eager/w:0"
    np.testing.assert_array_equal(a.numpy(), [1.0, 1.0])


def test_namespace_falls_back_to_top_level_and_compat_helpers():
    assert v1.float32 is tf.float32 and v1.constant is tf.constant
    assert isinstance(v1.initializers.zeros(), tf.keras.initializers.Zeros)
    assert v1.random_normal_initializer().stddev == 1.0  # TF 1.x default, not Keras's
    assert tf.compat.as_bytes("a b").split(b" ") == [b"a", b"b"]
    assert tf.compat.as_text(b"caf\xc3\xa9") == "café"
    with pytest.raises(AttributeError):
        v1.no_such_name  # noqa: B018
