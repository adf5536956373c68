"""tf.sparse's operations (the TF 2 sparse tensor guide's): results against dense NumPy,
gradients to the values against finite differences, and the index bookkeeping."""
import numpy as np
import pytest

import tensorlite as tf
from tests.op_check import check_op, rand


def st(values, indices, shape):
    return tf.sparse.SparseTensor(indices=indices, values=values, dense_shape=shape)


def dense(sp):
    return tf.sparse.to_dense(sp).numpy()


A_IDX, B_IDX = [[0, 2], [3, 4]], [[0, 2], [3, 0]]


def test_add_sums_shared_entries_and_thresholds():
    total = tf.sparse.add(st([31, 2], A_IDX, [4, 10]), st([56, 38], B_IDX, [4, 10]))
    assert total.indices.numpy().tolist() == [[0, 2], [3, 0], [3, 4]]
    assert total.values.numpy().tolist() == [87, 38, 2]
    small = tf.sparse.add(st([1.0, 0.5], A_IDX, [4, 10]), st([-0.9, 3.0], B_IDX, [4, 10]),
                          threshold=0.2)
    assert small.indices.numpy().tolist() == [[3, 0], [3, 4]]
    with_dense = tf.sparse.add(st([1.0, 2.0], A_IDX, [4, 10]), tf.ones([4, 10]))
    assert float(tf.reduce_sum(with_dense)) == 43.0
    check_op(lambda a, b: tf.sparse.to_dense(tf.sparse.add(st(a, A_IDX, [4, 5]),
                                                           st(b, B_IDX, [4, 5]))),
             lambda a, b: _scatter(a, A_IDX, (4, 5)) + _scatter(b, B_IDX, (4, 5)),
             [rand(2, seed=1), rand(2, seed=2)])


def _scatter(values, idx, shape):
    out = np.zeros(shape)
    for v, i in zip(values, idx):
        out[tuple(i)] += v
    return out


def test_sparse_dense_matmul_both_ways_and_in_a_graph():
    idx = [[0, 1], [1, 0], [1, 1]]
    check_op(lambda v, b: tf.sparse.sparse_dense_matmul(st(v, idx, [2, 2]), b),
             lambda v, b: _scatter(v, idx, (2, 2)) @ b, [rand(3, seed=3), rand(2, 3, seed=4)])
    check_op(lambda v, a: tf.sparse.sparse_dense_matmul(a, st(v, idx, [2, 2]),
                                                        adjoint_b=True),
             lambda v, a: a @ _scatter(v, idx, (2, 2)).T, [rand(3, seed=5), rand(4, 2, seed=6)])
    f = tf.function(lambda x, y: tf.sparse.sparse_dense_matmul(x, y))
    a = st([15, 25], [[0, 3], [2, 4]], [3, 10])
    b = tf.sparse.to_dense(tf.sparse.transpose(a))
    assert f(a, b).numpy().tolist() == [[225, 0, 0], [0, 0, 0], [0, 0, 625]]


def test_concat_slice_transpose_round_trip():
    a = st([1, 2, 3], [[2, 4], [3, 3], [5, 4]], [8, 5])
    b = st([4, 5], [[0, 2], [7, 5]], [8, 6])
    joined = tf.sparse.concat(axis=1, sp_inputs=[a, b])
    want = np.concatenate([dense(a), dense(b)], axis=1)
    np.testing.assert_array_equal(dense(joined), want)
    np.testing.assert_array_equal(dense(tf.sparse.slice(joined, [0, 5], [8, 6])), dense(b))
    np.testing.assert_array_equal(dense(tf.sparse.slice(joined, [1, 3], [3, 100])),
                                  want[1:4, 3:])
    np.testing.assert_array_equal(dense(tf.sparse.transpose(joined)), want.T)
    with pytest.raises(tf.errors.InvalidArgumentError, match="expand_nonconcat_dims"):
        tf.sparse.concat(0, [a, b])
    wide = tf.sparse.concat(0, [a, b], expand_nonconcat_dims=True)
    assert wide.shape.as_list() == [16, 6]
    check_op(lambda v: tf.sparse.to_dense(tf.sparse.transpose(tf.sparse.concat(
        1, [st(v, [[0, 1], [1, 0]], [2, 2]), st(v * 2.0, [[0, 0], [1, 1]], [2, 2])]))),
        lambda v: np.concatenate([_scatter(v, [[0, 1], [1, 0]], (2, 2)),
                                  _scatter(v * 2, [[0, 0], [1, 1]], (2, 2))], 1).T,
        [rand(2, seed=7)])


def test_map_values_and_reductions():
    s = st([1.0, -4.0, 2.0], [[0, 0], [1, 2], [2, 1]], [3, 3])
    assert dense(tf.sparse.map_values(tf.add, s, 5.0)).tolist() == \
        [[6, 0, 0], [0, 0, 1], [0, 7, 0]]
    with pytest.raises(ValueError, match="same indices"):
        tf.sparse.map_values(tf.add, s, st([1.0], [[0, 1]], [3, 3]))
    assert int(tf.sparse.reduce_max(tf.sparse.from_dense([-5, 0, -3]))) == -3
    assert tf.sparse.reduce_sum(s, axis=1).numpy().tolist() == [1, -4, 2]
    assert float(tf.sparse.reduce_sum(s)) == -1.0
    assert tf.sparse.reduce_max(s, axis=0, keepdims=True).numpy().tolist() == [[1, 2, -4]]
    out = tf.sparse.reduce_sum(s, axis=0, output_is_sparse=True)
    assert isinstance(out, tf.sparse.SparseTensor) and dense(out).tolist() == [1, 2, -4]


def test_datasets_of_sparse_tensors_slice_batch_unbatch_and_map():
    """The sparse guide's tf.data section, and the data guide's SparseTensor element."""
    sp = st([1, 1, 1, 1, 1, 1], [(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)], [6, 4])
    want = dense(sp)
    ds = tf.data.Dataset.from_tensor_slices(sp)
    assert ds.element_spec == tf.SparseTensorSpec([4], tf.int32)
    assert [dense(e).tolist() for e in ds] == want.tolist()
    batched = ds.batch(4)
    assert batched.element_spec == tf.SparseTensorSpec([None, 4], tf.int32)
    first = next(iter(batched))
    assert isinstance(first, tf.sparse.SparseTensor) and dense(first).tolist() == \
        want[:4].tolist()
    assert [dense(e).tolist() for e in batched.unbatch()] == want.tolist()
    doubled = ds.map(lambda x: x * 2)
    assert [dense(e).tolist() for e in doubled] == (want * 2).tolist()
    one = tf.data.Dataset.from_tensors(st([1, 2], [[0, 0], [1, 2]], [3, 4]))
    assert one.element_spec.value_type is tf.sparse.SparseTensor


def test_sparse_arithmetic_with_dense_operands():
    s = st([1.0, 2.0], [[0, 1], [1, 0]], [2, 2])
    assert dense(s * 3.0).tolist() == [[0, 3], [6, 0]]
    assert dense(2.0 * s).tolist() == [[0, 2], [4, 0]]
    assert dense(s * tf.constant([10.0, 100.0])).tolist() == [[0, 100], [20, 0]]
    assert dense(s / 2.0).tolist() == [[0, 0.5], [1, 0]]
    assert dense(-s).tolist() == [[0, -1], [-2, 0]]
    assert (s + tf.ones([2, 2])).numpy().tolist() == [[1, 2], [3, 1]]
    assert dense(s[1]).tolist() == [2, 0]
    with pytest.raises(TypeError, match="SparseTensor \\* SparseTensor"):
        s * s
