"""array and slicing ops against NumPy, gradients against finite differences (one table row
per op), then bad-input errors and TF semantics the table cannot express."""
import numpy as np
import pytest

import tensorlite as tf
from tests.op_check import check_op, check_shape_rules, rand

X = rand(3, 4, seed=1)
Y = rand(3, 4, seed=2)
T3 = rand(2, 3, 4, seed=3)
V = rand(5, seed=4)
S = np.array(1.5)  # a differentiable float64 scalar
I32 = np.int32
RNG = np.random.default_rng(7)
MANY = RNG.integers(0, 5, size=300)  # enough duplicates to take the sorted scatter path


def _np_gather_batched(p, idx):  # gather with batch_dims=1, axis=1
    return np.stack([p[b][idx[b]] for b in range(p.shape[0])])


def _np_gather_nd(p, idx):
    return np.stack([p[tuple(v)] for v in idx.reshape(-1, idx.shape[-1])]).reshape(
        idx.shape[:-1] + p.shape[idx.shape[-1]:])


def _np_extreme(ufunc, t, where, u):
    out = t.copy()
    for w, v in zip(where, u):
        out[w] = ufunc(out[w], v)
    return out


def _np_scatter_nd(idx, upd, shape):
    out = np.zeros(shape, upd.dtype)
    k = idx.shape[-1]
    for v, u in zip(idx.reshape(-1, k), upd.reshape((-1,) + tuple(shape[k:]))):
        out[tuple(v)] += u
    return out


def _np_update(t, positions, u):
    out = t.copy()
    for p, v in zip(positions, u):
        out[p] = v
    return out


def _np_unique(x):
    y, first, inv = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first)
    pos = np.empty_like(order)
    pos[order] = np.arange(order.size)
    return y[order], pos[inv].astype(np.int32)


def _weighted_parts(parts):
    return [p * (i + 1) for i, p in enumerate(parts)]


CASES = [
    # -- existing shape ops
    ("reshape", lambda x: tf.reshape(x, [4, -1]), lambda x: x.reshape(4, -1), [T3]),
    ("reshape_tuple", lambda x: tf.reshape(x, (6, 4)), lambda x: x.reshape(6, 4), [T3]),
    ("reshape_scalar", lambda x: tf.reshape(x, [1, 1]), lambda x: x.reshape(1, 1), [S]),
    ("transpose", tf.transpose, np.transpose, [T3]),
    ("transpose_perm", lambda x: tf.transpose(x, [1, 2, 0]),
     lambda x: np.transpose(x, [1, 2, 0]), [T3]),
    ("expand_dims", lambda x: tf.expand_dims(x, 1), lambda x: np.expand_dims(x, 1), [X]),
    ("expand_dims_neg", lambda x: tf.expand_dims(x, -1), lambda x: x[..., None], [X]),
    ("squeeze", tf.squeeze, np.squeeze, [rand(1, 3, 1, 2)]),
    ("squeeze_axis", lambda x: tf.squeeze(x, [-2]), lambda x: np.squeeze(x, -2),
     [rand(1, 3, 1, 2)]),
    ("identity", tf.identity, lambda x: x, [X]),
    ("ensure_shape", lambda x: tf.ensure_shape(x, [None, 4]) * 2.0, lambda x: x * 2.0, [X]),
    ("ensure_shape_exact", lambda x: tf.ensure_shape(x, tf.TensorShape([2, 3, 4])),
     lambda x: x, [T3]),
    ("ensure_shape_unknown_rank", lambda x: tf.ensure_shape(x, None), lambda x: x, [S]),
    ("broadcast_to", lambda x: tf.broadcast_to(x, [2, 3, 4]),
     lambda x: np.broadcast_to(x, (2, 3, 4)), [rand(3, 1)]),
    ("concat", lambda a, b: tf.concat([a, b, a], axis=1), lambda a, b: np.concatenate([a, b, a], 1),
     [X, Y]),
    ("concat_neg_axis", lambda a, b: tf.concat([a, b], -2),
     lambda a, b: np.concatenate([a, b], -2), [X, Y]),
    ("stack", lambda a, b: tf.stack([a, b], axis=1), lambda a, b: np.stack([a, b], 1), [X, Y]),
    ("stack_last", lambda a, b: tf.stack([a, b], axis=-1), lambda a, b: np.stack([a, b], -1),
     [X, Y]),
    ("unstack", lambda x: tf.stack(_weighted_parts(tf.unstack(x, axis=1))),
     lambda x: np.stack(_weighted_parts(list(np.moveaxis(x, 1, 0)))), [X]),
    ("split_num", lambda x: tf.concat(_weighted_parts(tf.split(x, 2, axis=1)), 1),
     lambda x: np.concatenate(_weighted_parts(np.split(x, 2, 1)), 1), [X]),
    ("split_sizes_minus1", lambda x: tf.concat(_weighted_parts(tf.split(x, [1, -1, 1], 1)), 1),
     lambda x: np.concatenate(_weighted_parts(np.split(x, [1, 3], 1)), 1), [X]),
    ("shape", tf.shape, lambda x: np.array(x.shape, np.int32), [T3]),
    ("shape_int64", lambda x: tf.shape(x, out_type=tf.int64), lambda x: np.array(x.shape), [T3]),
    ("size", tf.size, lambda x: np.int32(x.size), [T3]),
    ("rank", tf.rank, lambda x: np.int32(x.ndim), [T3]),
    ("zeros", lambda: tf.zeros([2, 3]), lambda: np.zeros((2, 3), np.float32), []),
    ("zeros_int", lambda: tf.zeros(3, tf.int64), lambda: np.zeros(3, np.int64), []),
    ("ones", lambda: tf.ones((2, 1), dtype=tf.int32), lambda: np.ones((2, 1), np.int32), []),
    ("fill", lambda: tf.fill([2, 2], 7.0), lambda: np.full((2, 2), 7.0, np.float32), []),
    ("zeros_like", tf.zeros_like, np.zeros_like, [X]),
    ("ones_like", lambda x: tf.ones_like(x, dtype=tf.int32), lambda x: np.ones(x.shape, I32),
     [X]),
    # -- slicing (slice_ops)
    ("getitem_int", lambda x: x[1], lambda x: x[1], [X]),
    ("getitem_neg", lambda x: x[-1, -2], lambda x: x[-1, -2], [X]),
    ("getitem_range", lambda x: x[1:3], lambda x: x[1:3], [X]),
    ("getitem_strided", lambda x: x[::2, 1::2], lambda x: x[::2, 1::2], [X]),
    ("getitem_reversed", lambda x: x[::-1, 3:0:-2], lambda x: x[::-1, 3:0:-2], [X]),
    ("getitem_ellipsis", lambda x: x[..., 1], lambda x: x[..., 1], [T3]),
    ("getitem_newaxis", lambda x: x[:, tf.newaxis, 1:], lambda x: x[:, None, 1:], [X]),
    ("getitem_tensor_index", lambda x: x[tf.constant(2), 1:tf.constant(3)],
     lambda x: x[2, 1:3], [X]),
    ("getitem_out_of_range_slice", lambda x: x[1:10], lambda x: x[1:10], [X]),
    ("slice", lambda x: tf.slice(x, [1, 0], [1, -1]), lambda x: x[1:2, 0:], [X]),
    ("slice_3d", lambda x: tf.slice(x, [0, 1, 1], [2, 2, 3]), lambda x: x[0:2, 1:3, 1:4], [T3]),
    ("strided_slice", lambda x: tf.strided_slice(x, [0, 1], [3, 4], [2, 2]),
     lambda x: x[0:3:2, 1:4:2], [X]),
    ("strided_slice_masks", lambda x: tf.strided_slice(x, [1, 1], [2, 3], begin_mask=1,
                                                       end_mask=2),
     lambda x: x[:2, 1:], [X]),
    ("strided_slice_shrink_newaxis",
     lambda x: tf.strided_slice(x, [1, 0, 0], [2, 0, 4], [1, 1, -1], new_axis_mask=2,
                                shrink_axis_mask=1, begin_mask=4, end_mask=4),
     lambda x: x[1, None, ::-1], [X]),
    ("strided_slice_ellipsis", lambda x: tf.strided_slice(x, [0, 1], [0, 3], ellipsis_mask=1),
     lambda x: x[..., 1:3], [T3]),
    # -- gather / scatter
    ("gather", lambda p: tf.gather(p, [2, 0, 2]), lambda p: p[[2, 0, 2]], [X]),
    ("gather_axis1_2d", lambda p: tf.gather(p, [[2, 1], [0, 0]], axis=1),
     lambda p: np.take(p, [[2, 1], [0, 0]], axis=1), [T3]),
    ("gather_neg_axis_scalar", lambda p: tf.gather(p, 2, axis=-1), lambda p: p[..., 2], [T3]),
    ("gather_int64_indices", lambda p, i: tf.gather(p, i), lambda p, i: p[i],
     [V, np.array([4, 1, 1], np.int64)]),
    ("gather_many_duplicates", lambda p: tf.gather(p, MANY), lambda p: p[MANY],
     [rand(5, 3, seed=5)]),
    ("gather_batch_dims", lambda p: tf.gather(p, [[0, 2], [1, 1], [3, 0]], batch_dims=1),
     lambda p: _np_gather_batched(p, np.array([[0, 2], [1, 1], [3, 0]])), [X]),
    ("gather_batch_dims_axis2",
     lambda p: tf.gather(p, [[1, 0, 2], [2, 2, 0]], axis=2, batch_dims=1),
     lambda p: np.stack([np.take(p[b], i, axis=1) for b, i in
                         enumerate(np.array([[1, 0, 2], [2, 2, 0]]))]), [T3]),
    ("gather_nd", lambda p: tf.gather_nd(p, [[1, 2], [0, 3], [1, 2]]),
     lambda p: p[[1, 0, 1], [2, 3, 2]], [X]),
    ("gather_nd_slices", lambda p: tf.gather_nd(p, [[[1], [0]]]),
     lambda p: p[np.array([[1, 0]])], [T3]),
    ("gather_nd_batch_dims", lambda p: tf.gather_nd(p, [[[1], [2]], [[0], [0]]], batch_dims=1),
     lambda p: np.stack([p[0][[1, 2]], p[1][[0, 0]]]), [T3]),
    ("scatter_nd", lambda u: tf.scatter_nd([[1], [3], [1]], u, [5]),
     lambda u: _np_scatter_nd(np.array([[1], [3], [1]]), u, (5,)), [rand(3, seed=6)]),
    ("scatter_nd_slices", lambda u: tf.scatter_nd([[0, 1], [2, 0]], u, [3, 2, 4]),
     lambda u: _np_scatter_nd(np.array([[0, 1], [2, 0]]), u, (3, 2, 4)), [rand(2, 4, seed=7)]),
    ("scatter_nd_int", lambda u: tf.scatter_nd([[0], [0]], u, [2]),
     lambda u: np.array([u.sum(), 0], np.int32), [np.array([3, 4], np.int32)]),
    ("tensor_scatter_nd_update", lambda t, u: tf.tensor_scatter_nd_update(t, [[0, 1], [2, 3]], u),
     lambda t, u: _np_update(t, [(0, 1), (2, 3)], u), [X, rand(2, seed=8)]),
    ("tensor_scatter_nd_update_rows", lambda t, u: tf.tensor_scatter_nd_update(t, [[2], [0]], u),
     lambda t, u: np.concatenate([u[1:], t[1:2], u[:1]]), [X, rand(2, 4, seed=9)]),
    ("tensor_scatter_nd_add", lambda t, u: tf.tensor_scatter_nd_add(t, [[1], [1], [2]], u),
     lambda t, u: t + _np_scatter_nd(np.array([[1], [1], [2]]), u, t.shape),
     [X, rand(3, 4, seed=10)]),
    ("tensor_scatter_nd_sub", lambda t, u: tf.tensor_scatter_nd_sub(t, [[1], [1], [2]], u),
     lambda t, u: t - _np_scatter_nd(np.array([[1], [1], [2]]), u, t.shape),
     [X, rand(3, 4, seed=10)]),
    ("tensor_scatter_nd_min", lambda t, u: tf.tensor_scatter_nd_min(t, [[0, 1], [2, 3]], u),
     lambda t, u: _np_extreme(np.minimum, t, [(0, 1), (2, 3)], u), [X, rand(2, seed=11)]),
    ("tensor_scatter_nd_max_rows", lambda t, u: tf.tensor_scatter_nd_max(t, [[2], [0]], u),
     lambda t, u: _np_extreme(np.maximum, t, [(2,), (0,)], u), [X, rand(2, 4, seed=12)]),
    # -- tile / pad / reverse / roll
    ("tile", lambda x: tf.tile(x, [2, 3]), lambda x: np.tile(x, (2, 3)), [X]),
    ("tile_3d_ones", lambda x: tf.tile(x, [1, 2, 1]), lambda x: np.tile(x, (1, 2, 1)), [T3]),
    ("pad", lambda x: tf.pad(x, [[1, 0], [2, 3]]), lambda x: np.pad(x, [(1, 0), (2, 3)]), [X]),
    ("pad_constant_value", lambda x, c: tf.pad(x, [[0, 2], [1, 1]], constant_values=c),
     lambda x, c: np.pad(x, [(0, 2), (1, 1)], constant_values=c), [X, S]),
    ("pad_reflect", lambda x: tf.pad(x, [[2, 1], [3, 2]], "REFLECT"),
     lambda x: np.pad(x, [(2, 1), (3, 2)], mode="reflect"), [X]),
    ("pad_symmetric", lambda x: tf.pad(x, [[3, 2], [0, 4]], mode="symmetric"),
     lambda x: np.pad(x, [(3, 2), (0, 4)], mode="symmetric"), [X]),
    ("reverse", lambda x: tf.reverse(x, [0]), lambda x: x[::-1], [X]),
    ("reverse_multi_neg", lambda x: tf.reverse(x, [-1, 0]), lambda x: x[::-1, :, ::-1], [T3]),
    ("roll", lambda x: tf.roll(x, 1, 0), lambda x: np.roll(x, 1, 0), [X]),
    ("roll_multi", lambda x: tf.roll(x, [2, -1, 1], [2, 0, -1]),
     lambda x: np.roll(x, [2, -1, 1], [2, 0, -1]), [T3]),
    # -- masks, repeats, grids
    ("boolean_mask", lambda x: tf.boolean_mask(x, [True, False, True]),
     lambda x: x[[True, False, True]], [X]),
    ("boolean_mask_axis", lambda x: tf.boolean_mask(x, [False, True, True, False], axis=-1),
     lambda x: x[..., [False, True, True, False]], [T3]),
    ("boolean_mask_2d", lambda x, m: tf.boolean_mask(x, m), lambda x, m: x[m],
     [T3, np.array([[True, False, True], [False, False, True]])]),
    ("repeat", lambda x: tf.repeat(x, [1, 0, 3], axis=0), lambda x: np.repeat(x, [1, 0, 3], 0),
     [X]),
    ("repeat_scalar_flat", lambda x: tf.repeat(x, 2), lambda x: np.repeat(x, 2), [X]),
    ("repeat_axis_neg", lambda x: tf.repeat(x, 2, axis=-1), lambda x: np.repeat(x, 2, -1), [X]),
    ("meshgrid_xy", lambda a, b: tf.stack(tf.meshgrid(a, b)) * 1.0,
     lambda a, b: np.stack(np.meshgrid(a, b)), [V, rand(3, seed=11)]),
    ("meshgrid_ij", lambda a, b, c: tf.stack(tf.meshgrid(a, b, c, indexing="ij")),
     lambda a, b, c: np.stack(np.meshgrid(a, b, c, indexing="ij")),
     [V, rand(3, seed=12), rand(2, seed=13)]),
    ("linspace", lambda a, b: tf.linspace(a, b, 5), lambda a, b: np.linspace(a, b, 5), [S, V[0]]),
    ("linspace_batched", lambda a, b: tf.linspace(a, b, 4, axis=-1),
     lambda a, b: np.linspace(a, b, 4, axis=-1), [rand(2, 3), rand(2, 3, seed=14)]),
    ("linspace_float32", lambda: tf.linspace(0.0, 1.0, 11),
     lambda: np.linspace(0, 1, 11, dtype=np.float32), []),
    ("linspace_one", lambda a, b: tf.linspace(a, b, 1), lambda a, b: np.linspace(a, b, 1),
     [S, V[1]]),
    # -- integer-valued / creation ops (not differentiable)
    ("one_hot", lambda i: tf.one_hot(i, 4), lambda i: np.eye(4, dtype=np.float32)[i],
     [np.array([0, 3, 1], I32)]),
    ("one_hot_out_of_range", lambda i: tf.one_hot(i, 3),
     lambda i: np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]], np.float32),
     [np.array([-1, 1, 3], np.int64)]),
    ("one_hot_axis0_onoff", lambda i: tf.one_hot(i, 3, on_value=5, off_value=-1, axis=0),
     lambda i: np.where(np.eye(3, dtype=bool)[i], 5, -1).astype(I32).T,
     [np.array([2, 0], I32)]),
    ("one_hot_2d_axis1", lambda i: tf.one_hot(i, 3, axis=1, dtype=tf.float64),
     lambda i: np.moveaxis(np.eye(3)[i], -1, 1), [np.array([[0, 2], [1, 1]], I32)]),
    ("range", lambda: tf.range(5), lambda: np.arange(5, dtype=I32), []),
    ("range_start_delta", lambda: tf.range(10, 1, -3), lambda: np.arange(10, 1, -3, dtype=I32),
     []),
    ("range_float", lambda: tf.range(0, 1, 0.25), lambda: np.arange(0, 1, 0.25, np.float32), []),
    ("range_dtype", lambda: tf.range(3, dtype=tf.float64), lambda: np.arange(3.0), []),
    ("range_int64", lambda: tf.range(np.int64(2), 5), lambda: np.arange(2, 5), []),
    ("sequence_mask", lambda n: tf.sequence_mask(n, 4), lambda n: np.arange(4) < n[:, None],
     [np.array([1, 3, 0], I32)]),
    ("sequence_mask_default_len_dtype", lambda n: tf.sequence_mask(n, dtype=tf.float32),
     lambda n: (np.arange(3) < n[..., None]).astype(np.float32), [np.array([[1, 3], [2, 0]])]),
    ("unique", tf.unique, _np_unique, [np.array([4, 1, 4, 2, 1, 9], I32)]),
    ("unique_float_int64", lambda x: tf.unique(x, out_idx=tf.int64),
     lambda x: (lambda y, i: (y, i.astype(np.int64)))(*_np_unique(x)),
     [np.array([0.5, -1.0, 0.5])]),
]
NO_GRAD = {"shape", "shape_int64", "size", "rank", "zeros", "zeros_int", "ones", "fill",
           "zeros_like", "ones_like", "one_hot", "one_hot_out_of_range", "one_hot_axis0_onoff",
           "one_hot_2d_axis1", "range", "range_start_delta", "range_float", "range_dtype",
           "range_int64", "sequence_mask", "sequence_mask_default_len_dtype", "unique",
           "unique_float_int64", "scatter_nd_int", "linspace_float32"}


@pytest.mark.parametrize("name,tf_fn,np_fn,args", CASES, ids=[c[0] for c in CASES])
def test_op(name, tf_fn, np_fn, args):
    check_op(tf_fn, np_fn, args, grad=name not in NO_GRAD)


SECOND_ORDER = [c for c in CASES if c[0] not in NO_GRAD and c[3]]


@pytest.mark.parametrize("name,tf_fn,np_fn,args", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_op_cubed(name, tf_fn, np_fn, args):
    """Linear ops have constant gradients, so the table's order-2 check never runs their
    gradient's gradient; cubing the output makes the first gradient depend on the input."""
    check_op(lambda *a: tf_fn(*a) ** 3, lambda *a: np.asarray(np_fn(*a)) ** 3, args)


@pytest.mark.parametrize("name,tf_fn,np_fn,args", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_gradient_ops_shape_rules(name, tf_fn, np_fn, args):
    """The ops that gradient rules run (scatter-adds, pad folds, ...) see cotangents with
    leading batch dimensions inside a jacobian; their shape rules must still hold."""
    def hessian(*xs):
        watched = [x for x in xs if x.dtype == tf.float64]
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(watched)
            with tf.GradientTape() as inner:
                inner.watch(watched)
                y = tf_fn(*xs) ** 3
            grads = inner.gradient(y, watched, unconnected_gradients="zero")
        return [outer.jacobian(g, watched, unconnected_gradients="zero") for g in grads]
    check_shape_rules(hessian, [tf.constant(a) for a in args])


def test_every_public_array_op_has_a_row():
    from tensorlite.ops import array_ops, slice_ops
    names = [c[0] for c in CASES]
    for fn in array_ops.__all__ + slice_ops.__all__:
        assert any(n == fn or n.startswith(fn + "_") for n in names), \
            f"tf.{fn} has no row in CASES"


# -- bad input ---------------------------------------------------------------------------------
def _raises(fn, cls, *fragments):
    with pytest.raises(cls) as info:
        fn()
    for f in fragments:
        assert f in str(info.value), f"{f!r} not in {str(info.value)!r}"
    return info.value


def test_gather_index_out_of_range():
    p = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    _raises(lambda: tf.gather(p, [0, 7]), tf.errors.InvalidArgumentError,
            "indices[1] = 7 is not in [0, 5)", "GatherV2")
    _raises(lambda: tf.gather(p, [[0, 1], [-1, 2]]), tf.errors.InvalidArgumentError,
            "indices[1,0] = -1 is not in [0, 5)")
    _raises(lambda: tf.gather(tf.ones([2, 3]), [3], axis=1), tf.errors.InvalidArgumentError,
            "indices[0] = 3 is not in [0, 3)")


@pytest.mark.parametrize("size", [3, 40], ids=["few_indices", "many_indices"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_gather_tensor_indices_fast_path_values_and_errors(size, dtype):
    """Tensor indices take the untaped fast path (few are checked as a list, many by
    ndarray.min): same values as NumPy, and the same errors as the general path."""
    p = tf.constant(np.arange(10.0).reshape(5, 2))
    idx = RNG.integers(0, 5, size=size).astype(dtype)
    np.testing.assert_array_equal(tf.gather(p, tf.constant(idx)).numpy(), p.numpy()[idx])
    bad = idx.copy()
    bad[1] = -1
    _raises(lambda: tf.gather(p, tf.constant(bad)), tf.errors.InvalidArgumentError,
            "indices[1] = -1 is not in [0, 5)", "GatherV2")
    bad[1] = 5
    _raises(lambda: tf.gather(p, tf.constant(bad)), tf.errors.InvalidArgumentError,
            "indices[1] = 5 is not in [0, 5)", "GatherV2")


def test_gather_bad_arguments():
    p = tf.ones([2, 3])
    _raises(lambda: tf.gather(p, [0], axis=2), tf.errors.InvalidArgumentError, "axis", "GatherV2")
    _raises(lambda: tf.gather(p, [0.5]), tf.errors.InvalidArgumentError, "integer", "float32")
    _raises(lambda: tf.gather(p, [[0], [1], [1]], batch_dims=1), tf.errors.InvalidArgumentError,
            "batch_dims")
    _raises(lambda: tf.gather(p, [[0]], axis=0, batch_dims=1), tf.errors.InvalidArgumentError,
            "batch_dims (1) must be less than or equal to axis (0)")


def test_gather_nd_and_scatter_errors():
    p = tf.ones([2, 2])
    _raises(lambda: tf.gather_nd(p, [[0, 0], [2, 0]]), tf.errors.InvalidArgumentError,
            "indices[1] = [2, 0] does not index into param shape [2,2]", "GatherNd")
    _raises(lambda: tf.gather_nd(p, [[0, 0, 0]]), tf.errors.InvalidArgumentError,
            "innermost dimension")
    _raises(lambda: tf.scatter_nd([[1], [4]], [1.0, 2.0], [4]), tf.errors.InvalidArgumentError,
            "indices[1] = [4] does not index into shape [4]", "ScatterNd")
    _raises(lambda: tf.scatter_nd([[1], [2]], [1.0, 2.0, 3.0], [4]),
            tf.errors.InvalidArgumentError, "updates must have shape", "[2]", "ScatterNd")
    _raises(lambda: tf.tensor_scatter_nd_update(tf.zeros([3]), [[3]], [1.0]),
            tf.errors.InvalidArgumentError, "does not index into shape [3]",
            "TensorScatterUpdate")
    _raises(lambda: tf.tensor_scatter_nd_add(tf.zeros([3]), [[0]], tf.constant([1], tf.int32)),
            tf.errors.InvalidArgumentError, "TensorScatterAdd", "int32")


def test_tensor_scatter_min_max_share_the_gradient_among_ties():
    """TensorFlow's rule: equal candidates (the tensor's element and updates reaching it)
    share the gradient evenly."""
    t, u = tf.constant([1.0, 5.0, 2.0]), tf.constant([1.0, 1.0, 7.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([t, u])
        lo = tf.tensor_scatter_nd_min(t, [[0], [0], [2]], u)
        hi = tf.tensor_scatter_nd_max(t, [[0], [0], [2]], u)
    assert lo.numpy().tolist() == [1.0, 5.0, 2.0] and hi.numpy().tolist() == [1.0, 5.0, 7.0]
    dt, du = tape.gradient(lo, [t, u])
    np.testing.assert_allclose(dt.numpy(), [1 / 3, 1, 1])
    np.testing.assert_allclose(du.numpy(), [1 / 3, 1 / 3, 0])
    dt, du = tape.gradient(hi, [t, u])
    np.testing.assert_allclose(dt.numpy(), [1 / 3, 1, 0])
    np.testing.assert_allclose(du.numpy(), [1 / 3, 1 / 3, 1])


def test_reshape_count_mismatch():
    _raises(lambda: tf.reshape(tf.ones([2, 3]), [4, 2]), tf.errors.InvalidArgumentError,
            "6 values", "[4, 2]", "Reshape")
    _raises(lambda: tf.reshape(tf.ones([2, 3]), [4, -1]), tf.errors.InvalidArgumentError,
            "Reshape")


def test_concat_errors():
    _raises(lambda: tf.concat([tf.ones([2, 3]), tf.ones([3])], 0),
            tf.errors.InvalidArgumentError, "same rank", "ConcatV2")
    _raises(lambda: tf.concat([tf.ones([2, 3]), tf.ones([2, 4])], 0),
            tf.errors.InvalidArgumentError, "ConcatV2", "[2, 3]", "[2, 4]")
    _raises(lambda: tf.concat([tf.ones([2]), tf.ones([2], tf.int32)], 0),
            tf.errors.InvalidArgumentError, "ConcatV2")


def test_getitem_errors():
    x = tf.ones([2, 3])
    _raises(lambda: x[2], tf.errors.InvalidArgumentError, "StridedSlice", "out of bounds")
    _raises(lambda: x[0, -4], tf.errors.InvalidArgumentError, "StridedSlice")
    _raises(lambda: x[0, 0, 0], tf.errors.InvalidArgumentError, "StridedSlice")
    _raises(lambda: x[::0], tf.errors.InvalidArgumentError, "StridedSlice")
    _raises(lambda: x[tf.constant(1.0)], TypeError, "integers")
    _raises(lambda: tf.slice(x, [1, 0], [2, 1]), tf.errors.InvalidArgumentError, "Slice")


def test_split_and_shape_op_errors():
    _raises(lambda: tf.split(tf.ones([5]), 2), tf.errors.InvalidArgumentError, "Split",
            "evenly divide")
    _raises(lambda: tf.split(tf.ones([5]), [2, 2]), tf.errors.InvalidArgumentError, "SplitV")
    _raises(lambda: tf.squeeze(tf.ones([2, 1]), 0), tf.errors.InvalidArgumentError, "Squeeze")
    _raises(lambda: tf.expand_dims(tf.ones([2]), 3), tf.errors.InvalidArgumentError,
            "ExpandDims")
    _raises(lambda: tf.transpose(tf.ones([2, 3]), [0, 0]), tf.errors.InvalidArgumentError,
            "Transpose")
    _raises(lambda: tf.broadcast_to(tf.ones([3]), [2, 4]), tf.errors.InvalidArgumentError,
            "BroadcastTo")
    _raises(lambda: tf.stack([tf.ones([2]), tf.ones([3])]), tf.errors.InvalidArgumentError,
            "Pack")
    _raises(lambda: tf.unstack(tf.constant(1.0)), ValueError, "scalar")


def test_tile_pad_errors():
    _raises(lambda: tf.tile(tf.ones([2, 3]), [2]), tf.errors.InvalidArgumentError, "Tile",
            "length 2")
    _raises(lambda: tf.pad(tf.ones([3]), [[3, 0]], "REFLECT"), tf.errors.InvalidArgumentError,
            "MirrorPad", "less than the dimension size")
    _raises(lambda: tf.pad(tf.ones([3]), [[0, 4]], "SYMMETRIC"),
            tf.errors.InvalidArgumentError, "MirrorPad")
    _raises(lambda: tf.pad(tf.ones([3]), [[1, 1]], "WRAP"), ValueError, "mode")
    _raises(lambda: tf.pad(tf.ones([3, 2]), [[1, 1]]), tf.errors.InvalidArgumentError, "Pad",
            "[2, 2]")
    _raises(lambda: tf.pad(tf.ones([3]), [[-1, 1]]), tf.errors.InvalidArgumentError,
            "non-negative")


def test_range_errors_and_dtypes():
    _raises(lambda: tf.range(0, 5, 0), tf.errors.InvalidArgumentError, "delta != 0", "Range")
    _raises(lambda: tf.range(5, 1), tf.errors.InvalidArgumentError, "start <= limit")
    _raises(lambda: tf.range(1, 5, -1), tf.errors.InvalidArgumentError, "start >= limit")
    assert tf.range(5).dtype == tf.int32
    assert tf.range(5.0).dtype == tf.float32
    assert tf.range(0, 5, 0.5).dtype == tf.float32
    assert tf.range(tf.constant(3, tf.int64)).dtype == tf.int64
    assert tf.range(tf.constant(3.0, tf.float64), 4).dtype == tf.float64
    assert tf.range(0, 2.5, dtype=tf.int32).numpy().tolist() == [0, 1]
    assert tf.range(1.0, 2.0, 0.3).numpy().tolist() == pytest.approx([1.0, 1.3, 1.6, 1.9])
    assert tf.range(0).shape == (0,)


def test_one_hot_dtype_rules():
    assert tf.one_hot([1], 2).dtype == tf.float32
    assert tf.one_hot([1], 2, on_value=3).dtype == tf.int32
    assert tf.one_hot([1], 2, off_value=0.5).dtype == tf.float32
    assert tf.one_hot([1], 2, on_value=1.0, dtype=tf.float64).dtype == tf.float64
    _raises(lambda: tf.one_hot([1], 2, on_value=1.0, off_value=0), TypeError, "off_value")
    _raises(lambda: tf.one_hot([1], 2, on_value=tf.constant(1.0), dtype=tf.int32), TypeError,
            "on_value")
    _raises(lambda: tf.one_hot([1.0], 2), tf.errors.InvalidArgumentError, "OneHot")
    _raises(lambda: tf.one_hot([1], 2, axis=3), tf.errors.InvalidArgumentError, "OneHot")
    np.testing.assert_array_equal(tf.one_hot(1, 3).numpy(), [0, 1, 0])


def test_one_hot_of_numpy_float_labels_truncates_as_tensorflow():
    # the training guide's tf.one_hot(y_train, depth=10) of labels cast to float32; values
    # from real TF 2.21 (a float tensor or list is refused there, as here)
    got = tf.one_hot(np.array([1.7, -1.5, 2.9]), depth=3).numpy()
    np.testing.assert_array_equal(got, [[0, 1, 0], [0, 0, 0], [0, 0, 1]])
    got = tf.one_hot(np.array([[1.0], [2.0]], np.float32), depth=3).numpy()
    np.testing.assert_array_equal(got, [[[0, 1, 0]], [[0, 0, 1]]])
    _raises(lambda: tf.one_hot(tf.constant([1.0]), 2), tf.errors.InvalidArgumentError, "OneHot")


def test_boolean_mask_and_misc_errors():
    _raises(lambda: tf.boolean_mask(tf.ones([3]), [True, False]), ValueError,
            "(3,) and (2,) are incompatible")
    _raises(lambda: tf.boolean_mask(tf.ones([3]), True), ValueError, "scalar")
    _raises(lambda: tf.reverse(tf.ones([2]), [1]), tf.errors.InvalidArgumentError, "ReverseV2")
    _raises(lambda: tf.reverse(tf.ones([2, 2]), [0, -2]), tf.errors.InvalidArgumentError,
            "more than once")
    _raises(lambda: tf.roll(tf.ones([2]), [1, 1], [0]), tf.errors.InvalidArgumentError, "Roll")
    _raises(lambda: tf.repeat(tf.ones([3]), [1, 2]), tf.errors.InvalidArgumentError, "Repeat")
    _raises(lambda: tf.unique(tf.ones([2, 2])), tf.errors.InvalidArgumentError, "Unique")
    _raises(lambda: tf.meshgrid(tf.ones([2]), indexing="xx"), ValueError, "indexing")
    _raises(lambda: tf.meshgrid(tf.ones([2]), sparse=True), TypeError, "sparse")
    _raises(lambda: tf.linspace(0.0, 1.0, 0), ValueError, "num")


# -- semantics ---------------------------------------------------------------------------------
def test_gather_gradient_accumulates_duplicates_and_second_order():
    p = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as outer:
        outer.watch(p)
        with tf.GradientTape() as inner:
            inner.watch(p)
            y = tf.reduce_sum(tf.gather(p, [0, 0, 2]) ** 3)
        g = inner.gradient(y, p)
    np.testing.assert_allclose(g.numpy(), [6.0, 0.0, 27.0])  # 2 * 3 * 1**2, 0, 3 * 3**2
    np.testing.assert_allclose(outer.gradient(g, p).numpy(), [12.0, 0.0, 18.0])


def test_embedding_style_gradient_shape_and_dtype():
    table = tf.Variable(np.arange(12, dtype=np.float32).reshape(6, 2))
    ids = tf.constant([[0, 5], [5, 5]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather(table, ids))
    g = tape.gradient(y, table)
    assert g.dtype == tf.float32 and g.shape == (6, 2)
    np.testing.assert_array_equal(g.numpy()[:, 0], [1, 0, 0, 0, 0, 3])


def test_linspace_dtypes_and_exact_end():
    assert tf.linspace(0, 10, 3).dtype == tf.float64  # integers divide to float64, as in TF
    assert tf.linspace(tf.constant(0.0, tf.float64), 1.0, 2).dtype == tf.float64
    out = tf.linspace(0.1, 0.7, 7).numpy()
    assert out[-1] == np.float32(0.7) and out[0] == np.float32(0.1)
    assert tf.linspace([0.0, 5.0], [10.0, 40.0], 5).shape == (5, 2)


def test_unique_and_namedtuple():
    out = tf.unique(tf.constant([b"b", b"a", b"b"]))
    assert out.y.numpy().tolist() == [b"b", b"a"] and out.idx.numpy().tolist() == [0, 1, 0]
    y, idx = tf.unique(tf.constant([3, 3, 1]))
    assert idx.dtype == tf.int32 and y.numpy().tolist() == [3, 1]


def test_tf_split_and_sequence_mask_exported():
    parts = tf.split(tf.range(6), [2, -1], 0)
    assert [p.numpy().tolist() for p in parts] == [[0, 1], [2, 3, 4, 5]]
    assert tf.sequence_mask(tf.constant([2]), 3).dtype == tf.bool


def test_jacobian_through_gather_and_scatter_matches_rows():
    p = tf.constant(rand(4, 3, seed=20))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(p)
        y = tf.tensor_scatter_nd_update(tf.gather(p, [[3, 0], [1, 1]], axis=0) * 2.0,
                                        [[0, 1]], [[5.0, 5.0, 5.0]])
    batched = tape.jacobian(y, p)
    looped = tape.jacobian(y, p, experimental_use_pfor=False)
    np.testing.assert_allclose(batched.numpy(), looped.numpy())
    assert batched.shape == (2, 2, 3, 4, 3)
    assert np.all(batched.numpy()[0, 1] == 0)  # the overwritten slot has no gradient


def test_strided_slice_length_mismatch_and_index_errors():
    x = tf.reshape(tf.range(6), [2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="equal size"):
        tf.strided_slice(x, [0, 1], [1], [1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="3 indices for a tensor of rank 2"):
        x[..., 0, 0, 0]
    with pytest.raises(ValueError, match="Multiple ellipses"):
        x[..., ...]


# -- ensure_shape / Tensor.set_shape -------------------------------------------------------------
def test_ensure_shape_eager_error_is_tensorflows():
    x = tf.zeros([2, 3])
    assert tf.ensure_shape(x, [2, None]) is x  # eager: an assertion returning its input
    _raises(lambda: tf.ensure_shape(x, [2, 4]), tf.errors.InvalidArgumentError,
            "Shape of tensor x [2,3] is not compatible with expected shape [2,4].",
            "EnsureShape")
    _raises(lambda: tf.ensure_shape(x, [None, 3, 1]), tf.errors.InvalidArgumentError,
            "expected shape [?,3,1]")
    _raises(lambda: tf.ensure_shape(tf.constant(1.0), [1]), tf.errors.InvalidArgumentError,
            "Shape of tensor x [] is not")
    _raises(lambda: tf.ensure_shape(x, "23"), TypeError, "tf.ensure_shape")
    assert tf.ensure_shape(tf.constant(["a", "b"]), [2]).dtype == tf.string


def test_ensure_shape_checks_on_every_graph_call():
    width = [3]

    @tf.function
    def f(n):
        rows = tf.py_function(lambda k: tf.ones([int(k.numpy()), width[0]]), [n], tf.float32)
        return tf.ensure_shape(rows, [None, 3]) + 1.0

    assert f(tf.constant(2)).shape == (2, 3)
    assert f(tf.constant(5)).shape == (5, 3)  # same graph: the None dimension matches any
    assert f.experimental_get_tracing_count() == 1
    width[0] = 4  # the traced graph now gets a [k, 4] tensor: the node checks each run
    _raises(lambda: f(tf.constant(2)), tf.errors.InvalidArgumentError,
            "Shape of tensor x [2,4] is not compatible with expected shape [?,3].")
    assert "EnsureShape" in f.get_concrete_function(tf.constant(1)).graph.op_counts()


def test_ensure_shape_with_input_signature_and_gradient():
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def f(t):
        return tf.reduce_sum(tf.ensure_shape(t, [None, 2]) ** 2)

    assert float(f(tf.ones([3, 2]))) == 6.0
    _raises(lambda: f(tf.ones([3, 3])), tf.errors.InvalidArgumentError, "[3,3]", "[?,2]")
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[2.0, 4.0]])


def test_ensure_shape_shape_rule_refines_unknown_dims():
    from tensorlite.framework.registry import Spec, get
    op = get("EnsureShape")
    assert op.infer(Spec((None, None), tf.float32), shape=(None, 3)).shape == (None, 3)
    assert op.infer(Spec((2, None), tf.float32), shape=(None, 3)).shape == (2, 3)
    assert op.infer(Spec((2, 5), tf.float32), shape=None).shape == (2, 5)


def test_set_shape_checks_compatibility():
    x = tf.zeros([2, 3])
    x.set_shape([2, 3])
    x.set_shape([None, 3])
    x.set_shape(tf.TensorShape(None))
    assert x.shape == (2, 3)
    _raises(lambda: x.set_shape([2, 4]), ValueError,
            "Tensor's shape (2, 3) is not compatible with supplied shape [2, 4]")
    _raises(lambda: x.set_shape([None, 3, 1]), ValueError, "supplied shape [None, 3, 1]")
    _raises(lambda: x.set_shape("23"), TypeError, "set_shape")


def test_set_shape_in_dataset_map_after_py_function():
    def load(i):
        return tf.ones([2, 3]) * tf.cast(i, tf.float32)

    def parse(i):
        t = tf.py_function(load, [i], tf.float32)
        t.set_shape([None, 3])
        return t

    ds = tf.data.Dataset.range(3).map(parse)
    assert ds.element_spec.shape.as_list()[-1] == 3
    assert [e.numpy().sum() for e in ds] == [0.0, 6.0, 12.0]

    def wrong(i):
        t = tf.py_function(load, [i], tf.float32)
        t.set_shape([None, 4])
        return t

    with pytest.raises(ValueError, match="not compatible with supplied shape"):
        list(tf.data.Dataset.range(2).map(wrong))


def test_set_shape_inside_tf_function():
    @tf.function
    def f(x):
        x.set_shape([None, 2])
        return x * 2

    assert f(tf.ones([3, 2])).shape == (3, 2)
    with pytest.raises(ValueError, match="not compatible with supplied shape"):
        f(tf.ones([3, 3]))


def test_set_shape_refines_a_v1_placeholder():
    tf.compat.v1.disable_eager_execution()
    try:
        p = tf.compat.v1.placeholder(tf.float32, [None, None])
        p.set_shape([None, 3])
        assert p.shape.as_list() == [None, 3]
        with pytest.raises(ValueError, match=r"\(None, 3\) is not compatible"):
            p.set_shape([2, 4])
    finally:
        tf.compat.v1.enable_eager_execution()
