"""Graph optimisation passes: each pass shrinks graphs exactly as expected, keeps results and
state updates, leaves stateful nodes alone, and has a working switch and report line."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import blas_threads, registry
from tensorlite.framework.dispatch import execute
from tensorlite.graph import options
from tensorlite.graph.passes import (arithmetic, constant_folding, cse, dce, fusion, optimize,
                                     overlap_outputs, parallel)

PASS_KEYS = ["constant_folding", "common_subexpression_elimination", "arithmetic_optimization",
             "dependency_optimization", "remapping", "parallel_branches"]
rng = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def default_options():
    saved = dict(options._options)
    options._options.clear()
    options._options.update(options.DEFAULTS)
    yield
    options._options.clear()
    options._options.update(saved)


def only(*keys):
    tf.config.optimizer.set_experimental_options({k: k in keys for k in PASS_KEYS})


def rand(*shape, dtype=np.float32):
    return tf.constant(rng.normal(size=shape).astype(dtype))


def optimized(f, *args):
    """Calls f twice (the second call builds the optimised runner); (cf, results)."""
    f(*args)
    out = f(*args)
    return f.get_concrete_function(*args), out


def assert_same(a, b, exact=False, atol=1e-6):
    for x, y in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        assert x.dtype == y.dtype and x.shape == y.shape
        if exact:
            np.testing.assert_array_equal(x.numpy(), y.numpy())
        else:
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6, atol=atol)


def check_against_eager(fn, *args, exact=False, atol=1e-6):
    """Compiled graph (optimised) vs the Python function run eagerly; returns cf."""
    cf, out = optimized(tf.function(fn), *args)
    assert_same(out, fn(*args), exact, atol)
    return cf


def graph_of(fn, *args):
    return tf.function(fn).get_concrete_function(*args).graph


# -- constant folding ---------------------------------------------------------------------------
def test_constant_folding_folds_constant_subexpressions():
    def fn(x):
        return x + tf.exp(tf.constant(2.0) * tf.constant(0.5)) - tf.sqrt(tf.constant(4.0))
    g = graph_of(fn, rand(3))
    new, lines = constant_folding.run(g)
    assert g.op_counts() == {"Mul": 1, "Exp": 1, "AddV2": 1, "Sqrt": 1, "Sub": 1}
    assert new.op_counts() == {"AddV2": 1, "Sub": 1}
    assert lines == ["folded Mul", "folded Exp", "folded Sqrt"]
    only("constant_folding")
    cf = check_against_eager(fn, rand(3))
    assert cf.optimized_graph.op_counts() == {"AddV2": 1, "Sub": 1}


def test_constant_folding_multi_output_ops_and_constant_graph_outputs():
    def fn(x):
        a, b = tf.split(tf.constant([1.0, 2.0, 3.0, 4.0]), 2)
        return x + a * b, tf.exp(tf.constant([0.0, 1.0]))
    g = graph_of(fn, rand(2))
    new, lines = constant_folding.run(g)
    assert lines == ["folded SplitV", "folded Mul", "folded Exp"]
    assert new.op_counts() == {"AddV2": 1}
    only("constant_folding")
    check_against_eager(fn, rand(2))


def test_constant_folding_leaves_random_ops_and_their_consumers():
    def fn(x):
        return x + tf.random.uniform([3]) * 2.0
    g = graph_of(fn, rand(3))
    new, lines = constant_folding.run(g)
    assert lines == [] and new.op_counts() == g.op_counts()
    f = tf.function(fn)
    x = tf.zeros([3])
    f(x)
    a, b = f(x).numpy(), f(x).numpy()
    assert not np.array_equal(a, b) and ((a >= 0) & (a < 2)).all()


def test_constant_folding_skips_huge_results():
    big = tf.zeros([1001, 1000])

    def fn(x):
        return x + (big + 1.0)
    new, lines = constant_folding.run(graph_of(fn, rand(1000)))
    assert lines == [] and new.op_counts() == {"AddV2": 2}


def test_constant_folding_keeps_a_failing_node_for_run_time():
    def fn(x):
        return x + tf.reshape(tf.constant([1.0, 2.0]), [2])
    g = graph_of(fn, rand(2))
    g.nodes[0].attrs["shape"] = (3,)  # cannot be evaluated: stays to fail with a message
    new, lines = constant_folding.run(g)
    assert lines == [] and new.op_counts() == {"Reshape": 1, "AddV2": 1}


# -- common subexpression elimination ------------------------------------------------------------
def test_cse_merges_duplicates_and_equal_constants():
    def fn(x, y):
        a = tf.exp(x * 2.0) + tf.exp(x * 2.0)
        b = x * y + y * x  # commutative: one Mul
        return a + b + tf.reduce_sum(x, axis=0) + tf.reduce_sum(x, axis=0)
    args = rand(3), rand(3)
    g = graph_of(fn, *args)
    new, lines = cse.run(g)
    assert g.op_counts() == {"Mul": 4, "Exp": 2, "AddV2": 5, "Sum": 2}
    assert new.op_counts() == {"Mul": 2, "Exp": 1, "AddV2": 5, "Sum": 1}
    assert sorted(lines) == sorted(["merged Const", "merged Mul", "merged Exp", "merged Mul",
                                    "merged Sum"])
    only("common_subexpression_elimination")
    check_against_eager(fn, *args)


def test_cse_merges_multi_output_nodes():
    def fn(x):
        a, b = tf.unstack(x)
        c, d = tf.unstack(x)
        return a * d + c * b
    g = graph_of(fn, rand(2, 3))
    new, lines = cse.run(g)
    assert lines == ["merged Unpack", "merged Mul"]  # c*b reads as a*d once c, d are a, b
    assert new.op_counts() == {"Unpack": 1, "Mul": 1, "AddV2": 1}
    only("common_subexpression_elimination")
    check_against_eager(fn, rand(2, 3))


def test_cse_compares_attributes():
    def fn(x):
        return (tf.reduce_sum(x, axis=0) + tf.reduce_sum(x, axis=1),
                tf.reduce_sum(x, axis=0, keepdims=True), tf.transpose(x, [1, 0]),
                tf.transpose(x, [1, 0]), x[0:1], x[1:2], x[0:1])
    new, lines = cse.run(graph_of(fn, rand(2, 2)))
    assert new.op_counts() == {"Sum": 3, "AddV2": 1, "Transpose": 1, "StridedSlice": 2}
    assert sorted(lines) == ["merged StridedSlice", "merged Transpose"]


def test_cse_never_merges_random_draws_or_variable_reads():
    v = tf.Variable([1.0, 2.0])

    def fn(x):
        return tf.random.uniform([2]) + tf.random.uniform([2]) + v * x + v * x
    g = graph_of(fn, rand(2))
    new, _ = cse.run(g)
    assert new.op_counts()["RandomUniform"] == 2
    assert new.op_counts()["GraphReadVariableOp"] == 2


def test_cse_freeze_distinguishes_what_matters():
    f = cse.freeze
    assert f(0.0) != f(-0.0) and f(float("nan")) == f(float("nan"))
    assert f(True) != f(1) and f(1) == f(1) and f((1, 2)) != f([1, 2])
    assert f(np.array([1, 2], np.int32)) == f(np.array([1, 2], np.int32))
    assert f(np.array([1, 2], np.int32)) != f(np.array([1, 2], np.int64))
    assert f(np.array([1, 2])) != f(np.array([[1, 2]]))
    assert f(tf.float32) == f(tf.float32) and f(tf.float32) != f(tf.float64)
    assert f(slice(0, 2)) == f(slice(0, 2)) and f(slice(0, 2)) != f(slice(0, 2, 1))
    assert f({"a": 1, "b": 2}) == f({"b": 2, "a": 1})
    obj = object()
    assert f(obj) == f(obj) and f(obj) != f(object())


# -- arithmetic simplification -------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda x: x * 1.0, lambda x: 1.0 * x, lambda x: x + 0.0, lambda x: 0.0 + x,
    lambda x: x - 0.0, lambda x: x / 1.0, lambda x: -(-x), lambda x: tf.identity(x),
    lambda x: tf.transpose(tf.transpose(x, [1, 2, 0]), [2, 0, 1]),
    lambda x: tf.transpose(x, [0, 1, 2]),
    lambda x: tf.reshape(tf.reshape(x, [-1]), [2, 3, 4]),
    lambda x: execute(registry.get("Cast"), (x,), {"dtype": tf.float32}),
], ids=["x*1", "1*x", "x+0", "0+x", "x-0", "x/1", "neg-neg", "identity", "transpose-inverse",
        "transpose-identity", "reshape-back", "cast-same"])
def test_arithmetic_removes_neutral_operations(fn):
    x = rand(2, 3, 4)
    only("arithmetic_optimization", "dependency_optimization")
    cf = check_against_eager(lambda x: fn(x) * 3.0, x)
    assert cf.optimized_graph.op_counts() == {"Mul": 1}


def test_arithmetic_composes_transposes_and_reshapes():
    def fn(x):
        return (tf.transpose(tf.transpose(x, [1, 0, 2]), [0, 2, 1]),
                tf.reshape(tf.reshape(x, [6, 4]), [4, 6]))
    g = graph_of(fn, rand(2, 3, 4))
    new, lines = arithmetic.run(g)
    assert lines == ["simplified Transpose(Transpose)", "simplified Reshape(Reshape)"]
    new, _ = dce.run(new)
    assert new.op_counts() == {"Transpose": 1, "Reshape": 1}
    assert [n.attrs.get("perm") for n in new.nodes][0] == (1, 2, 0)
    only("arithmetic_optimization", "dependency_optimization")
    check_against_eager(fn, rand(2, 3, 4), exact=True)


@pytest.mark.parametrize("fn", [
    lambda x: x * tf.ones([2, 3]),  # broadcasts x to a bigger shape
    lambda x: x + tf.zeros([1, 3], tf.float32),  # adds a dimension
    lambda x: 0.0 - x,  # not neutral on the left
    lambda x: x * 2.0,
    lambda x: x - x,
], ids=["broadcast-mul", "broadcast-add", "zero-minus", "times-two", "x-minus-x"])
def test_arithmetic_keeps_operations_that_change_something(fn):
    g = graph_of(fn, rand(3))
    new, lines = arithmetic.run(g)
    assert lines == [] and new.op_counts() == g.op_counts()
    only("arithmetic_optimization")
    check_against_eager(fn, rand(3))


def test_arithmetic_forwards_graph_outputs():
    def fn(x):
        return {"a": tf.identity(x) * 1.0, "b": -(-x)}
    only("arithmetic_optimization", "dependency_optimization")
    cf = check_against_eager(fn, rand(4))
    assert cf.optimized_graph.op_counts() == {}


# -- dead code elimination -----------------------------------------------------------------------
def test_dce_removes_unused_nodes_but_keeps_state_and_random_draws():
    v = tf.Variable(0.0)

    def fn(x):
        unused = tf.exp(x) * 2.0  # noqa: F841
        tf.random.uniform([2])  # an unused draw still advances the generator
        v.assign_add(tf.reduce_sum(x))
        return x + 1.0
    g = graph_of(fn, rand(3))
    new, lines = dce.run(g)
    assert sorted(lines) == ["removed Const", "removed Exp", "removed Mul"]
    counts = new.op_counts()
    assert counts == {"RandomUniform": 1, "Sum": 1, "AssignVariableOp": 1, "AddV2": 1}
    only("dependency_optimization")
    f = tf.function(fn)
    x = rand(3)
    v.assign(0.0)
    f(x)
    f(x)
    np.testing.assert_allclose(v.numpy(), 2 * np.sum(x.numpy()), rtol=1e-6)


# -- fusion ------------------------------------------------------------------------------------
def test_fusion_replaces_an_elementwise_tree_by_one_node():
    def fn(x, y, z):
        return tf.tanh(x * y + z) - tf.exp(z) * 0.5
    args = rand(64, 65), rand(64, 65), rand(64, 65)
    g = graph_of(fn, *args)
    new, lines = fusion.run(g)
    assert new.op_counts() == {"FusedElementwise": 1}
    assert lines == ["fused Mul+AddV2+Tanh+Exp+Mul+Sub"]
    only("remapping")
    cf = check_against_eager(fn, *args)
    assert cf.optimized_graph.op_counts() == {"FusedElementwise": 1}
    node = cf.optimized_graph.nodes[0]
    assert node.attrs["program"].kernel.source.count("out=") == 4  # AddV2, Tanh, Mul, Sub
    small, lines = fusion.run(graph_of(fn, rand(4, 5), rand(4, 5), rand(4, 5)))
    assert lines == [] and "FusedElementwise" not in small.op_counts()  # not worth it


def test_fusion_stops_at_values_used_outside_the_chain():
    def fn(x, y):
        h = x * y
        return tf.exp(h + 1.0), tf.reduce_sum(h), tf.sqrt(tf.abs(y))
    args = rand(64, 64), rand(64, 64)
    new, lines = fusion.run(graph_of(fn, *args))
    assert new.op_counts() == {"Mul": 1, "FusedElementwise": 2, "Sum": 1}
    assert sorted(lines) == ["fused Abs+Sqrt", "fused AddV2+Exp"]
    only("remapping")
    check_against_eager(fn, *args)


def test_fusion_with_broadcasting_and_integers_keeps_values_and_dtypes():
    def fn(a, b, c, i):
        return tf.exp(a * b) * c + 1.0, (i * 3 + 1) * i - 2
    ints = np.arange(5000, dtype=np.int32)
    args = rand(64, 1), rand(1, 80), rand(80), tf.constant(ints)
    only("remapping")
    cf = check_against_eager(fn, *args)
    assert cf.optimized_graph.op_counts() == {"FusedElementwise": 2}
    programs = [n.attrs["program"] for n in cf.optimized_graph.nodes]
    assert [step[2] for step in programs[0]] == [-1, 4, 5, 6]  # a*b fresh, then reused
    np.testing.assert_array_equal(args[3].numpy(), ints)  # inputs are never written into


def test_fusion_does_not_cross_stateful_nodes():
    v = tf.Variable(1.0)

    def fn(x):
        r = tf.random.uniform([64, 64])
        a = x * 2.0
        v.assign_add(1.0)
        return tf.exp(a) + r * 0.0
    new, lines = fusion.run(graph_of(fn, rand(64, 64)))
    counts = new.op_counts()
    assert counts["Mul"] == 1 and counts["RandomUniform"] == 1 and "Exp" not in counts
    assert lines == ["fused Exp+Mul+AddV2"]


def test_fused_op_is_registered_once_without_gradient_and_taped_calls_use_the_original():
    op = registry.get("FusedElementwise")
    assert op is fusion.FUSED and op.grad is None
    f = tf.function(lambda x: tf.reduce_sum(tf.exp(x * 2.0) + x))
    x0 = rng.uniform(size=(64, 64))
    x = tf.Variable(x0)
    f(x.read_value())
    f(x.read_value())
    assert f.get_concrete_function(x.read_value()).optimized_graph.op_counts()[
        "FusedElementwise"] == 1
    with tf.GradientTape() as tape:
        y = f(x.read_value())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * np.exp(2 * x0) + 1, rtol=1e-6)


# -- parallel branches -------------------------------------------------------------------------
def two_matmuls(a, b, c, d):
    return tf.matmul(a, b), tf.tanh(tf.matmul(c, d))


def test_parallel_is_off_by_default():
    args = [rand(256, 256) for _ in range(4)]
    cf, _ = optimized(tf.function(two_matmuls), *args)
    assert "ParallelBranches" not in cf.optimized_graph.op_counts()


def test_parallel_wraps_two_big_independent_matmuls():
    args = [rand(256, 256) for _ in range(4)]
    g = graph_of(two_matmuls, *args)
    new, lines = parallel.run(g)
    assert new.op_counts() == {"ParallelBranches": 1}
    assert sorted(lines) == ["wrapped BatchMatMulV2", "wrapped BatchMatMulV2+Tanh"]
    tf.config.optimizer.set_experimental_options({"parallel_branches": True})
    # not bit-exact: a branch's matmul may run on another BLAS thread count than eager's,
    # summing its 256 float32 products in another order
    cf = check_against_eager(two_matmuls, *args, atol=1e-4)
    assert cf.optimized_graph.op_counts() == {"ParallelBranches": 1}


def test_parallel_branches_with_a_shared_input_and_a_join():
    w1, w2 = tf.Variable(rand(128, 256)), tf.Variable(rand(128, 256))

    def fn(x):
        h = tf.nn.relu(x)
        return tf.matmul(h, w1) + tf.matmul(h, w2) * 2.0
    x = rand(128, 128)
    g = graph_of(fn, x)
    new, lines = parallel.run(g)  # reads are no barrier: w2 is read between the matmuls
    assert new.op_counts() == {"GraphReadVariableOp": 2, "Relu": 1, "ParallelBranches": 1,
                               "AddV2": 1}
    assert sorted(lines) == ["wrapped BatchMatMulV2", "wrapped BatchMatMulV2+Mul"]
    tf.config.optimizer.set_experimental_options({"parallel_branches": True,
                                                  "remapping": False})
    cf = check_against_eager(fn, x, atol=1e-4)  # BLAS thread counts may differ from eager's
    assert cf.optimized_graph.op_counts()["ParallelBranches"] == 1


def test_parallel_leaves_small_or_dependent_work_alone():
    def small(a, b, c, d):
        return tf.matmul(a, b), tf.matmul(c, d)

    def chain(a, b, c, d):
        return tf.matmul(tf.matmul(a, b), c)
    new, lines = parallel.run(graph_of(small, *[rand(8, 8) for _ in range(4)]))
    assert lines == [] and "ParallelBranches" not in new.op_counts()
    new, lines = parallel.run(graph_of(chain, *[rand(256, 256) for _ in range(4)]))
    assert lines == [] and new.op_counts() == {"BatchMatMulV2": 2}


def test_parallel_does_not_cross_assignments():
    v = tf.Variable(tf.zeros([256, 256]))

    def fn(a, b):
        p = tf.matmul(a, b)
        v.assign(p)
        q = tf.matmul(b, a)
        return p, q, v.read_value()
    args = rand(256, 256), rand(256, 256)
    new, lines = parallel.run(graph_of(fn, *args))
    assert lines == [] and new.op_counts()["BatchMatMulV2"] == 2


# -- the pipeline ------------------------------------------------------------------------------
def test_pipeline_with_state_and_randomness_matches_eager():
    v0 = rng.normal(size=64).astype(np.float32)
    v_graph, v_eager = tf.Variable(v0), tf.Variable(v0)

    def make(v):
        def fn(x, y):
            s = tf.transpose(tf.transpose(x * 1.0))
            v.assign_add(tf.reduce_sum(s * y, axis=0) * tf.exp(tf.constant(0.0)))
            noise = tf.random.uniform([64])
            out = tf.tanh(s * y + 1.0) + tf.tanh(s * y + 1.0) - -(-tf.identity(v))
            return out, noise
        return fn
    x, y = rand(64, 64), rand(64, 64)
    f = tf.function(make(v_graph))
    f(x, y)
    out, noise = f(x, y)
    eager = make(v_eager)
    eager(x, y)
    out_e, _ = eager(x, y)
    assert_same(out, out_e)
    np.testing.assert_allclose(v_graph.numpy(), v_eager.numpy(), rtol=1e-6)
    counts = f.get_concrete_function(x, y).optimized_graph.op_counts()
    assert counts == {"GraphReadVariableOp": 1, "Mul": 1, "Sum": 1, "AssignVariableOp": 1,
                      "RandomUniform": 1, "FusedElementwise": 1}
    _, noise2 = f(x, y)
    assert not np.array_equal(noise.numpy(), noise2.numpy())


def test_optimize_leaves_its_input_unchanged():
    def fn(x):
        return tf.exp(x * 1.0) + tf.exp(x * 1.0) + tf.constant(2.0) * 3.0
    g = graph_of(fn, rand(64, 64))
    before = g.pretty_printed()
    new = optimize(g)
    assert g.pretty_printed() == before
    assert new.op_counts() == {"FusedElementwise": 1}


@pytest.mark.parametrize("key,fn,kept", [
    ("constant_folding", lambda x: x + tf.exp(tf.constant(1.0)), "Exp"),
    ("common_subexpression_elimination", lambda x: tf.exp(x) + tf.exp(x), ("Exp", 2)),
    ("arithmetic_optimization", lambda x: tf.identity(x) + 1.0, "Identity"),
    ("dependency_optimization", lambda x: (tf.exp(x), x + 1.0)[1], "Exp"),
    ("remapping", lambda x: tf.exp(x) + 1.0, "Exp"),
])
def test_each_switch_turns_its_pass_off(key, fn, kept):
    name, count = kept if isinstance(kept, tuple) else (kept, 1)
    if key != "remapping":  # fusion would hide the op counted
        tf.config.optimizer.set_experimental_options({"remapping": False})
    on, _ = optimized(tf.function(fn), rand(64, 64))
    assert on.optimized_graph.op_counts().get(name, 0) < count
    tf.config.optimizer.set_experimental_options({key: False})
    off = tf.function(fn)
    cf, out = optimized(off, rand(64, 64))
    assert cf.optimized_graph.op_counts().get(name, 0) == count


def test_disable_meta_optimizer_keeps_the_graph():
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    g = graph_of(lambda x: tf.identity(x) * 1.0 + tf.exp(tf.constant(1.0)), rand(2))
    assert optimize(g).op_counts() == g.op_counts()


def test_report_prints_one_line_per_pass(capsys):
    tf.config.optimizer.set_experimental_options({"report": True})

    @tf.function
    def fn(x):
        return tf.identity(x) * tf.exp(tf.constant(2.0) * tf.constant(0.5)) + tf.exp(
            tf.constant(1.0))
    x = rand(64, 64)
    fn(x)
    fn(x)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("graph fn: 6 -> 1 nodes")
    assert "  arithmetic: simplified 1 node (Identity)" in out
    assert "  constant_folding: folded 3 nodes (Mul, Exp x2)" in out
    assert "  cse: merged 2 nodes (Const x2)" in out  # 2*0.5 == 1.0, exp(1.0) twice
    assert "  dce: removed 3 nodes (Const x3)" in out
    assert "  fusion: fused 1 chain (Mul+AddV2)" in out
    assert "  parallel: off (parallel_branches=False)" in out
    tf.config.optimizer.set_experimental_options({"report": False})
    fn(rand(4))
    fn(rand(4))
    assert capsys.readouterr().out == ""


# -- overlapped outputs ------------------------------------------------------------------------
def dense_grads(x, w1, w2):
    with tf.GradientTape() as tape:
        tape.watch([w1, w2])
        loss = tf.reduce_sum(tf.matmul(tf.tanh(tf.matmul(x, w1)), w2))
    return tape.gradient(loss, [w1, w2])


def test_overlap_moves_weight_gradients_off_the_calling_thread():
    args = [rand(64, 256), rand(256, 256), rand(256, 256)]
    new, lines = overlap_outputs.run(graph_of(dense_grads, *args))
    # w2's gradient (h^T @ g) feeds nothing but an output, and the input gradient g @ w2^T
    # follows it; w1's gradient is the last heavy node: nothing is left to overlap with
    assert lines == ["overlapped BatchMatMulV2"]
    counts = new.op_counts()
    assert counts["_AsyncStart"] == counts["_AsyncResult"] == 1
    assert new.nodes[-1].op.name == "_AsyncResult"  # awaited at the end
    cf = check_against_eager(dense_grads, *args, atol=1e-3)  # BLAS thread counts may differ
    assert cf.optimized_graph.op_counts()["_AsyncStart"] == 1


@pytest.mark.parametrize("intra,inter,free", [(2, 0, 2), (1, 0, 2), (2, 1, 2), (2, 0, 1)])
def test_overlapped_graph_gives_the_eager_answer_on_any_thread_setting(intra, inter, free,
                                                                        monkeypatch):
    saved = blas_threads.get_setting("intra"), blas_threads.get_setting("inter")
    tf.config.threading.set_intra_op_parallelism_threads(intra)
    tf.config.threading.set_inter_op_parallelism_threads(inter)
    # free: the cores other programs leave (1: they hold all but ours)
    monkeypatch.setattr(blas_threads, "free_cores", lambda most: min(most, free))
    try:
        # a neighbour holding the other cores does not stop it (the caller claims ops no
        # helper started, so nothing waits on a thread the scheduler holds back)
        assert overlap_outputs.overlapping() == (intra > 1 and inter != 1)
        args = [rand(64, 256), rand(256, 256), rand(256, 256)]
        f = tf.function(dense_grads)
        for _ in range(3):
            assert_same(f(*args), dense_grads(*args), atol=1e-3)
    finally:
        tf.config.threading.set_intra_op_parallelism_threads(saved[0])
        tf.config.threading.set_inter_op_parallelism_threads(saved[1])


def test_overlap_never_moves_a_node_an_assignment_follows():
    v = tf.Variable(tf.zeros([256, 256]))

    def fn(a, b):
        p = tf.matmul(a, b)  # an output only, but the assignment after it might change
        v.assign(tf.matmul(b, a))  # what it reads (in-place updates): it stays in place
        return p
    new, lines = overlap_outputs.run(graph_of(fn, rand(256, 256), rand(256, 256)))
    assert lines == [] and "_AsyncStart" not in new.op_counts()


def test_overlap_leaves_small_or_last_work_and_yields_to_parallel_branches():
    small = [rand(8, 8) for _ in range(4)]
    assert overlap_outputs.run(graph_of(two_matmuls, *small))[1] == []
    big = [rand(256, 256) for _ in range(4)]

    def one(a, b, c, d):
        return tf.matmul(a, b) + c
    assert overlap_outputs.run(graph_of(one, *big))[1] == []  # no heavy node after it
    assert overlap_outputs.run(graph_of(two_matmuls, *big))[1] == ["overlapped BatchMatMulV2"]
    tf.config.optimizer.set_experimental_options({"parallel_branches": True})
    assert overlap_outputs.run(graph_of(two_matmuls, *big))[1] == []


def test_an_overlapped_op_that_fails_names_itself():
    def boom(a):
        raise ValueError("broken kernel")
    op = registry.REGISTRY.get("TestBoom") or registry.register(
        "TestBoom", boom, shape=lambda a: a)
    with pytest.raises(tf.errors.InvalidArgumentError, match="TestBoom failed on the op "
                       "created at here.py:1: broken kernel"):  # raised by either, as the
        overlap_outputs.ASYNC_RESULT.forward(  # thread setting runs it here or on a helper
            overlap_outputs.ASYNC_START.forward(np.ones(3), op=op, attrs={}, where="here.py:1"))
