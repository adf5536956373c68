"""tf.einsum's two-operand contractions as one batched matmul over views
(ops/einsum_plan.py): values against NumPy's einsum for MultiHeadAttention's equations and
their gradients' equations, strided and transposed operands, and through tests/op_check.py
(float64 gradients of orders 1 and 2) with the planned form forced on, forced off and
chosen by measurement; what the plan does not cover falls back to NumPy's einsum."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import blas_threads, determinism, intra_op_pool
from tensorlite.ops import einsum_plan
from tests.op_check import check_op, rand

# MultiHeadAttention's forward equations ([batch, seq, heads, dim]) and those of their
# gradients (tensorlite.ops.math_ops._einsum_grad), then general ones
CASES = [
    ("abc,cde->abde", (3, 5, 6), (6, 2, 4)),        # query/key/value projections
    ("aecd,abcd->acbe", (2, 5, 3, 4), (2, 6, 3, 4)),  # scores
    ("acbe,aecd->abcd", (2, 3, 6, 5), (2, 5, 3, 4)),  # weighted sum
    ("abcd,cde->abe", (2, 5, 3, 4), (3, 4, 6)),       # output projection
    ("abde,abc->cde", (2, 5, 3, 4), (2, 5, 6)),       # a projection's kernel gradient
    ("abe,cde->abcd", (2, 5, 6), (3, 4, 6)),
    ("abcd,aecd->acbe", (2, 5, 3, 4), (2, 6, 3, 4)),
    ("acbe,abcd->aecd", (2, 3, 5, 6), (2, 5, 3, 4)),
    ("ij,jk->ik", (3, 4), (4, 5)), ("ij,kj->ki", (3, 4), (5, 4)), ("ij,j->i", (3, 4), (4,)),
    ("i,i->", (4,), (4,)), ("i,j->ij", (3,), (4,)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("ij,jk->ki", (3, 4), (4, 5)), ("abc,bd->dac", (2, 3, 4), (3, 5)),
    ("ibj,jk->kbi", (3, 2, 4), (4, 5)), ("ab,cd->acbd", (2, 3), (4, 5)),
]


@pytest.fixture(params=["matmul", "einsum", "auto"])
def mode(request, monkeypatch):
    monkeypatch.setattr(einsum_plan, "MODE", [request.param])
    monkeypatch.setattr(einsum_plan, "_CHOICES", {})
    return request.param


@pytest.mark.parametrize("eq, sa, sb", CASES)
def test_values_match_numpy_einsum(mode, eq, sa, sb):
    a, b = rand(*sa, seed=1), rand(*sb, seed=2)
    for _ in range(2 * einsum_plan.SAMPLES + 1):  # "auto" times both forms, then decides
        got = einsum_plan.run(eq, a, b)
        np.testing.assert_allclose(got, np.einsum(eq, a, b), rtol=1e-12, atol=1e-12)
    if mode == "auto":
        assert einsum_plan._CHOICES[(eq, a.shape, b.shape, a.strides, b.strides, a.dtype)] \
            in ("matmul", "einsum")


def test_strided_and_transposed_operands(mode):
    a = rand(4, 5, 6, seed=3).transpose(2, 0, 1)
    b = rand(12, 7, seed=4)[::2]
    for eq in ("abc,ad->bcd", "abc,ad->dcb", "abc,ad->dbc"):
        np.testing.assert_allclose(einsum_plan.run(eq, a, b), np.einsum(eq, a, b),
                                   rtol=1e-12)
    x = rand(2, 3, 4, 5, seed=5).astype(np.float32)
    got = einsum_plan.run("abcd,aecd->acbe", x, x[:, ::-1])
    assert got.dtype == np.float32 and (mode != "matmul" or got.flags.c_contiguous)
    np.testing.assert_allclose(got, np.einsum("abcd,aecd->acbe", x, x[:, ::-1]), rtol=1e-5)


@pytest.mark.parametrize("eq, sa, sb", [
    ("ii,i->i", (3, 3), (3,)),       # a repeated letter
    ("ij,jk->i", (3, 4), (4, 5)),    # k summed within one operand
    ("ij,j->i", (2, 3), (1,)),       # a size-1 axis that broadcasts
    ("ij,jk->ik", (0, 4), (4, 5)),   # empty
])
def test_declines_what_it_does_not_cover(eq, sa, sb):
    a, b = np.ones(sa), np.ones(sb)
    assert einsum_plan.run(eq, a, b) is None
    assert np.allclose(tf.einsum(eq, a, b).numpy(), np.einsum(eq, a, b))
    ints = np.ones((2, 3), np.int32)
    assert einsum_plan.run("ij,jk->ik", ints, ints.T) is None
    assert tf.einsum("ij,jk->ik", ints, ints.T).numpy().tolist() == [[3, 3], [3, 3]]


def test_determinism_always_runs_the_planned_form(monkeypatch):
    monkeypatch.setattr(einsum_plan, "_CHOICES", {})
    monkeypatch.setattr(determinism, "enabled", lambda: True)
    a, b = rand(3, 4), rand(4, 5)
    assert einsum_plan.choose("ij,jk->ik", a, b, None) == "matmul"


@pytest.mark.parametrize("eq, sa, sb", CASES[:8])
def test_op_check_orders_1_and_2(mode, eq, sa, sb):
    check_op(lambda a, b: tf.einsum(eq, a, b), lambda a, b: np.einsum(eq, a, b),
             [rand(*sa, seed=6), rand(*sb, seed=7)], rtol=1e-10, atol=1e-10)


def test_multi_head_attention_layer_under_tape_and_function(mode):
    """The layer the plan is for: values and weight gradients agree with NumPy's einsum,
    eagerly and in a tf.function."""
    layer = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
    x = tf.constant(rand(2, 5, 4, seed=8).astype(np.float32))

    def loss():
        with tf.GradientTape() as tape:
            out = tf.reduce_sum(layer(x, x) ** 2)
        return out, tape.gradient(out, layer.trainable_variables)
    out, grads = loss()
    out_fn, grads_fn = tf.function(loss)()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(einsum_plan, "MODE", ["einsum"])
        want, want_grads = loss()
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5)
    np.testing.assert_allclose(out_fn.numpy(), want.numpy(), rtol=1e-5)
    for g, gf, w in zip(grads, grads_fn, want_grads):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(gf.numpy(), w.numpy(), rtol=1e-4, atol=1e-6)


def test_batched_products_split_over_threads_give_the_same_values(monkeypatch):
    """Attention's batched products split by their first batch axis over the intra-op
    threads (as blas_threads.run grants them) equal the one-thread products bit for bit."""
    monkeypatch.setattr(einsum_plan, "MODE", ["matmul"])
    x, y = rand(5, 6, 3, 4, seed=9), rand(5, 7, 3, 4, seed=10)
    s = rand(5, 3, 6, 7, seed=11)
    one = [einsum_plan.run("abcd,aecd->acbe", x, y), einsum_plan.run("acbe,aecd->abcd", s, y)]
    with intra_op_pool.splitting(2):
        assert intra_op_pool.ways() == 2
        two = [einsum_plan.run("abcd,aecd->acbe", x, y),
               einsum_plan.run("acbe,aecd->abcd", s, y)]
        av = np.ascontiguousarray(x.transpose(0, 2, 1, 3))
        split = einsum_plan._batched(av, np.ascontiguousarray(y.transpose(0, 2, 3, 1)), None)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(split, one[0], rtol=1e-12)


@pytest.mark.parametrize("eq, sa, sb", [
    ("abc,cde->abde", (2, 6, 8), (8, 2, 4)), ("aecd,abcd->acbe", (2, 6, 2, 4), (2, 6, 2, 4)),
    ("acbe,aecd->abcd", (2, 2, 6, 6), (2, 6, 2, 4)), ("abcd,cde->abe", (2, 6, 2, 4), (2, 4, 8)),
    ("abde,abc->cde", (2, 6, 2, 4), (2, 6, 8)), ("abde,cde->abc", (2, 6, 2, 4), (8, 2, 4))])
def test_attention_equations_read_their_operands_in_place(eq, sa, sb):
    """MultiHeadAttention's equations on contiguous [batch, seq, heads, dim] operands: every
    operand the product reads is a view (no transposed copy), and where there are batch
    axes the product is written straight into the output's layout."""
    a, b = rand(*sa, seed=12), rand(*sb, seed=13)
    p = einsum_plan.plan(eq, a.shape, b.shape, a.dtype.str)
    left, right = (b, a) if p.swap else (a, b)
    assert np.shares_memory(einsum_plan._view(left, p.perm_a, p.shape_a), left)
    assert np.shares_memory(einsum_plan._view(right, p.perm_b, p.shape_b), right)
    out = np.empty(p.out_shape)
    assert einsum_plan._view(out, p.perm_out, p.shape_out, exact=True) is not None


def test_products_run_on_blas_threads_choice(monkeypatch):
    """The planned products go through blas_threads (which gives 2 threads when 2 cores
    are free and 1 when a neighbour holds one): batched ones split by their batch axis,
    with their multiply-adds counted."""
    monkeypatch.setattr(einsum_plan, "MODE", ["matmul"])
    calls = []
    real = blas_threads.run

    def spy(macs, fn, *args, split=False):
        calls.append((macs, fn.__name__, split))
        return real(macs, fn, *args, split=split)
    monkeypatch.setattr(blas_threads, "run", spy)
    x = rand(2, 6, 3, 4, seed=14)
    einsum_plan.run("abcd,aecd->acbe", x, x)
    assert calls == [(2 * 3 * 6 * 6 * 4, "_batched", True)]
    calls.clear()
    mats = []
    monkeypatch.setattr(blas_threads, "matmul", lambda a, b: mats.append(a.shape) or a @ b)
    einsum_plan.run("abc,cde->abde", rand(2, 6, 8), rand(8, 3, 4))
    assert mats == [(12, 8)] and calls == []  # one [B*T, d] @ [d, heads*dim] GEMM


@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False)])
def test_batched_tf_matmul_splits_like_the_plan(ta, tb):
    """tf.matmul of two [batch, heads, n, k] batches (attention written with matmul) runs
    split by its batch axis: the same values on one thread and two, and op_check's
    gradients of orders 1 and 2."""
    a = rand(3, 2, 4, 5, seed=15)
    b = rand(3, 2, 5, 6, seed=16)
    a = np.swapaxes(a, -1, -2).copy() if ta else a
    b = np.swapaxes(b, -1, -2).copy() if tb else b

    def f(x, y):
        return tf.matmul(x, y, transpose_a=ta, transpose_b=tb)

    def ref(x, y):
        return np.matmul(np.swapaxes(x, -1, -2) if ta else x, np.swapaxes(y, -1, -2) if tb else y)
    one = f(a, b).numpy()
    with intra_op_pool.splitting(2):
        two = f(a, b).numpy()
    np.testing.assert_array_equal(one, two)
    check_op(f, ref, [a, b], rtol=1e-10, atol=1e-10)
