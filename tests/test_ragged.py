"""tf.RaggedTensor against list-of-lists references (tests/ragged_check.py)."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors
from tests.ragged_check import (check_ragged, ref_map, ref_mean, ref_merge_dims, ref_reduce,
                                ref_rows, ref_to_dense, to_ragged)

ROWS = [[1.0, 2.0, 3.0], [], [4.0], [5.0, -6.0]]
ROWS_B = [[0.5, 1.5, -1.0], [], [2.0], [3.0, 0.25]]
_BIG = float(np.finfo(np.float64).max)  # an empty row's max is -_BIG (TensorFlow's lowest)
NESTED = [[[1.0, 2.0], [3.0]], [], [[4.0, 5.0, 6.0], [], [7.0]]]


def test_construction_and_structure():
    rt = tf.RaggedTensor.from_row_splits([3, 1, 4, 1, 5, 9, 2], [0, 4, 4, 7])
    assert rt.to_list() == [[3, 1, 4, 1], [], [5, 9, 2]]
    assert repr(rt) == "<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2]]>"
    assert rt.shape.as_list() == [3, None] and rt.dtype == tf.int32 and rt.ragged_rank == 1
    assert rt.row_lengths().numpy().tolist() == [4, 0, 3]
    assert rt.value_rowids().numpy().tolist() == [0, 0, 0, 0, 2, 2, 2]
    assert int(rt.nrows()) == 3 and rt.bounding_shape().numpy().tolist() == [3, 4]
    same = [tf.RaggedTensor.from_row_lengths([3, 1, 4, 1, 5, 9, 2], [4, 0, 3]),
            tf.RaggedTensor.from_value_rowids([3, 1, 4, 1, 5, 9, 2], [0, 0, 0, 0, 2, 2, 2],
                                              nrows=3),
            tf.RaggedTensor.from_row_starts([3, 1, 4, 1, 5, 9, 2], [0, 4, 4]),
            tf.RaggedTensor.from_row_limits([3, 1, 4, 1, 5, 9, 2], [4, 4, 7])]
    for other in same:
        assert other.to_list() == rt.to_list()


def test_multiple_ragged_dimensions():
    rt = tf.ragged.constant(NESTED)
    assert rt.ragged_rank == 2 and rt.shape.as_list() == [3, None, None]
    assert [s.numpy().tolist() for s in rt.nested_row_splits] == [[0, 2, 2, 5], [0, 2, 3, 6, 6, 7]]
    assert rt.flat_values.numpy().tolist() == [1, 2, 3, 4, 5, 6, 7]
    again = tf.RaggedTensor.from_nested_row_splits(rt.flat_values, rt.nested_row_splits)
    assert again.to_list() == NESTED
    assert rt.bounding_shape().numpy().tolist() == [3, 3, 3]
    dense = rt.to_tensor(default_value=-1).numpy().tolist()
    assert dense[0] == [[1, 2, -1], [3, -1, -1], [-1, -1, -1]]
    inner = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert inner.shape.as_list() == [2, None, 2] and inner.flat_values.shape == (3, 2)


def test_to_tensor_and_from_tensor():
    check_ragged(lambda rt: rt.to_tensor(), lambda r: ref_to_dense(r), ROWS, grad=True)
    check_ragged(lambda rt: rt.to_tensor(default_value=9.0, shape=[3, 2]),
                 lambda r: ref_to_dense(r[:3], 9.0, 2), ROWS, grad=True)
    t = tf.constant([[1, 2, 0], [3, 0, 0], [0, 0, 0]])
    assert tf.RaggedTensor.from_tensor(t, padding=0).to_list() == [[1, 2], [3], []]
    assert tf.RaggedTensor.from_tensor(t, lengths=[1, 3, 0]).to_list() == [[1], [3, 0, 0], []]
    assert tf.RaggedTensor.from_tensor(t).to_list() == t.numpy().tolist()
    nested = tf.RaggedTensor.from_tensor(tf.zeros([2, 3, 4]), ragged_rank=2)
    assert nested.ragged_rank == 2 and nested.to_tensor().shape == (2, 3, 4)


def test_indexing_and_slicing():
    rt = to_ragged(ROWS)
    assert rt[0].numpy().tolist() == [1, 2, 3] and rt[-1].numpy().tolist() == [5, -6]
    assert float(rt[3, 1]) == -6.0
    check_ragged(lambda r: r[1:3], lambda r: r[1:3], ROWS)
    check_ragged(lambda r: r[::-2], lambda r: r[::-2], ROWS)
    check_ragged(lambda r: r[:, :2], lambda r: [x[:2] for x in r], ROWS, grad=True)
    check_ragged(lambda r: r[:, -1:], lambda r: [x[-1:] for x in r], ROWS, grad=True)
    check_ragged(lambda r: r[0:1, 0], lambda r: [r[0][0]], ROWS)
    nested = to_ragged(NESTED)
    check_ragged(lambda r: r[2, 0], lambda r: r[2][0], NESTED)
    assert nested[0].to_list() == NESTED[0]
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        rt[:, 1]  # row 1 is empty, as in TensorFlow
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        rt[7]


def test_from_tensor_with_padding_or_nested_lengths_for_ragged_rank_2():
    """Padding strips the innermost ragged dimension only; nested lengths cut each level
    (outputs equal TF 2.x's)."""
    t = tf.constant([[[1, 0, 0], [2, 3, 0]], [[0, 0, 0], [4, 5, 6]]])
    assert tf.RaggedTensor.from_tensor(t, padding=0, ragged_rank=2).to_list() == \
        [[[1], [2, 3]], [[], [4, 5, 6]]]
    assert tf.RaggedTensor.from_tensor(t, lengths=([1, 2], [1, 2, 3]),
                                       ragged_rank=2).to_list() == [[[1]], [[0, 0], [4, 5, 6]]]
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 2, 2)
    a[0, 1, 1] = [0, 1]
    got = tf.RaggedTensor.from_tensor(tf.constant(a), padding=tf.constant([0, 1]),
                                      ragged_rank=2)
    want = a.tolist()
    want[0][1] = want[0][1][:1]
    assert got.to_list() == want
    with pytest.raises(ValueError, match="lengths"):
        tf.RaggedTensor.from_tensor(t, lengths=[[1, 2]], ragged_rank=2)


def test_indexing_with_ellipsis_and_newaxis():
    """Results equal TensorFlow 2.x's for these keys."""
    check_ragged(lambda r: r[...], lambda r: r, NESTED_B)
    check_ragged(lambda r: r[0, ...], lambda r: r[0], NESTED_B, grad=True)
    check_ragged(lambda r: r[tf.newaxis], lambda r: [r], NESTED_B)
    check_ragged(lambda r: r[0, tf.newaxis], lambda r: [r[0]], NESTED_B)
    check_ragged(lambda r: r[:, tf.newaxis], lambda r: [[x] for x in r], NESTED_B, grad=True)
    check_ragged(lambda r: r[1:, ..., tf.newaxis],
                 lambda r: [[[[v] for v in x] for x in row] for row in r[1:]], NESTED_B)
    check_ragged(lambda r: r[:, tf.newaxis, 0:1], lambda r: [[x[0:1]] for x in r], NESTED_B)
    with pytest.raises(ValueError, match="single ellipsis"):
        to_ragged(ROWS)[..., ...]


def test_elementwise_dispatch_over_flat_values():
    check_ragged(lambda a, b: a * b + 1.0, lambda a, b: [[x * y + 1.0 for x, y in zip(r, s)]
                                                       for r, s in zip(a, b)],
                 ROWS, ROWS_B, grad=True)
    check_ragged(lambda a: tf.exp(-a), lambda a: ref_map(a, lambda x: float(np.exp(-x))), ROWS,
                 grad=True)
    check_ragged(lambda a: tf.maximum(a, 2.0), lambda a: ref_map(a, lambda x: max(x, 2.0)), ROWS)
    check_ragged(lambda a: a > 1.5, lambda a: ref_map(a, lambda x: x > 1.5), ROWS)
    check_ragged(lambda a: tf.cast(a, tf.int32), lambda a: ref_map(a, int), ROWS)
    check_ragged(lambda a: a + tf.constant([[1.0], [2.0], [3.0], [4.0]], tf.float64),
                 lambda a: [[x + i + 1 for x in r] for i, r in enumerate(a)], ROWS, grad=True)
    other = tf.ragged.constant([[1.0], [2.0, 3.0], [], [4.0, 5.0]], dtype=tf.float64)
    with pytest.raises(errors.InvalidArgumentError, match="row partitions"):
        to_ragged(ROWS) + other


def test_reductions():
    nan = float("nan")
    check_ragged(lambda r: tf.reduce_sum(r, axis=1), lambda r: ref_rows(r, sum), ROWS, grad=True)
    check_ragged(lambda r: tf.reduce_mean(r, axis=1), lambda r: ref_rows(r, ref_mean), ROWS)
    check_ragged(lambda r: tf.reduce_mean(r[0:1], axis=1), lambda r: [ref_mean(r[0])], ROWS,
                 grad=True)
    check_ragged(lambda r: tf.reduce_max(r, axis=1),
                 # an empty row: the dtype's lowest finite value, as TensorFlow's
                 lambda r: ref_rows(r, lambda x: max(x) if x else -_BIG), ROWS)
    check_ragged(lambda r: tf.reduce_max(r[0:1], axis=1), lambda r: [max(r[0])], ROWS,
                 grad=True)
    check_ragged(lambda r: tf.reduce_min(r, axis=-1),
                 lambda r: ref_rows(r, lambda x: min(x) if x else _BIG), ROWS)
    check_ragged(lambda r: tf.reduce_prod(r, axis=1),
                 lambda r: ref_rows(r, lambda x: float(np.prod(x))), ROWS)
    check_ragged(lambda r: tf.reduce_sum(r, axis=0),
                 lambda r: [sum(x[i] for x in r if len(x) > i) for i in range(3)], ROWS,
                 grad=True)
    check_ragged(lambda r: tf.reduce_mean(r, axis=0),
                 lambda r: [ref_mean([x[i] for x in r if len(x) > i]) for i in range(3)], ROWS)
    check_ragged(lambda r: tf.reduce_sum(r), lambda r: sum(sum(x) for x in r), ROWS)
    check_ragged(lambda r: tf.reduce_sum(r, axis=2),
                 lambda r: [[sum(x) for x in row] for row in r], NESTED, grad=True)
    assert np.isnan(tf.reduce_mean(tf.ragged.constant([[1.0], []]), axis=1).numpy()[1])
    del nan


NESTED_B = [[[1.0, 2.0], [3.0]], [[4.0], [], [5.0, 6.0, 7.0]], []]  # TF's doc-like example


def ref_map2(rows, mask):
    """The values of nested `rows` where the same-shaped nested `mask` is True."""
    if rows and not isinstance(rows[0], list):
        return [x for x, k in zip(rows, mask) if k]
    return [ref_map2(r, m) for r, m in zip(rows, mask)]


@pytest.mark.parametrize("rows", [NESTED, NESTED_B], ids=["nested", "nested_b"])
@pytest.mark.parametrize("axis", [0, 1, -2])
def test_reductions_over_outer_ragged_axes_of_nested_rows(rows, axis):
    """ragged_rank 2: axis 0 and 1 reduce sub-rows position by position (TensorFlow's
    segment aggregation), with gradients."""
    for reducer, fn, grad in ((tf.reduce_sum, sum, True), (tf.reduce_mean, ref_mean, True),
                              (tf.reduce_max, max, False), (tf.reduce_min, min, False)):
        check_ragged(lambda r: reducer(r, axis=axis),
                     lambda r: ref_reduce(r, axis % 3, fn, 3), rows, grad=grad)


NESTED_3 = [[[[1.0], [2.0, 3.0]], [[4.0]]], [[[5.0, 6.0]]], []]


@pytest.mark.parametrize("outer,inner", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3),
                                         (1, -1), (0, -1)])
def test_merge_dims_any_range(outer, inner):
    check_ragged(lambda r: r.merge_dims(outer, inner),
                 lambda r: ref_merge_dims(r, outer, inner % 4), NESTED_3, grad=True)


def test_stack_dynamic_partitions():
    check_ragged(lambda r: tf.ragged.stack_dynamic_partitions(r, [1, 0, 1, 3], 4),
                 lambda r: [[r[1]], [r[0], r[2]], [], [r[3]]], ROWS, grad=True)
    got = tf.ragged.stack_dynamic_partitions(["a", "b", "c", "d", "e"], [3, 0, 2, 2, 3], 5)
    assert got.to_list() == [[b"b"], [], [b"c", b"d"], [b"a", b"e"], []]  # TF 2.x's
    with pytest.raises(tf.errors.InvalidArgumentError, match="less than num_partitions"):
        tf.ragged.stack_dynamic_partitions(["a", "b"], [3, 0], 2)


def test_reductions_keepdims():
    check_ragged(lambda r: tf.reduce_sum(r, axis=1, keepdims=True),
                 lambda r: [[sum(x)] for x in r], ROWS, grad=True)
    check_ragged(lambda r: tf.reduce_sum(r, axis=0, keepdims=True),
                 lambda r: [ref_reduce(r, 0, sum, 2)], ROWS)
    check_ragged(lambda r: tf.reduce_max(r, keepdims=True),
                 lambda r: [[max(max(x) for x in r if x)]], ROWS)
    check_ragged(lambda r: tf.reduce_mean(r, axis=0, keepdims=True),
                 lambda r: [ref_reduce(r, 0, ref_mean, 3)], NESTED_B, grad=True)
    check_ragged(lambda r: tf.reduce_sum(r, axis=2, keepdims=True),
                 lambda r: [[[sum(x)] for x in row] for row in r], NESTED_B, grad=True)


def test_inner_axis_concat_stack_expand_dims_and_batch_gather():
    """Axes inside the rows, as TensorFlow does them (outputs checked against TF 2.x)."""
    nested_c = [[[5.0], [6.0]], [[7.0, 8.0], [], [9.0]]]
    check_ragged(lambda a, b: tf.concat([a, b], axis=2),
                 lambda a, b: [[x + y for x, y in zip(r, s)] for r, s in zip(a, b)],
                 NESTED_B[:2], nested_c, grad=True)
    check_ragged(lambda a, b: tf.stack([a, b], axis=2),
                 lambda a, b: [[[x, y] for x, y in zip(r, s)] for r, s in zip(a, b)],
                 ROWS, ROWS, grad=True)
    check_ragged(lambda a, b: tf.stack([a, b], axis=-1),
                 lambda a, b: [[[[x, y] for x, y in zip(u, v)] for u, v in zip(r, s)]
                               for r, s in zip(a, b)], NESTED_B, NESTED_B)
    check_ragged(lambda a: tf.expand_dims(a, 2), lambda a: [[[x] for x in r] for r in a],
                 NESTED_B)
    indices = tf.ragged.constant([[0, 2], [], [0], [1, 1, 0]], dtype=tf.int64)
    check_ragged(lambda a: tf.gather(a, indices, batch_dims=1),
                 lambda a: [[r[i] for i in ix] for r, ix in zip(a, indices.to_list())],
                 ROWS, grad=True)
    check_ragged(lambda a: tf.gather(a, [[1, 0], [0, 0]], batch_dims=1),
                 lambda a: [[r[i] for i in ix] for r, ix in zip(a, [[1, 0], [0, 0]])],
                 NESTED_B[:2], grad=True)
    mask_rows = tf.ragged.constant([[True, False], [False, True, True], []])
    check_ragged(lambda a: tf.boolean_mask(a, mask_rows),
                 lambda a: [[x for x, k in zip(r, m) if k] for r, m in
                            zip(a, mask_rows.to_list())], NESTED_B, grad=True)
    mask_values = tf.ragged.constant([[[True, False], [True]],
                                      [[False], [], [True, False, True]], []])
    check_ragged(lambda a: tf.ragged.boolean_mask(a, mask_values),
                 lambda a: ref_map2(a, mask_values.to_list()), NESTED_B, grad=True)
    check_ragged(lambda a: tf.tile(a, [2, 2, 3]),
                 lambda a: [[x * 3 for x in r] * 2 for r in a] * 2, NESTED_B, grad=True)
    check_ragged(lambda a: tf.gather(a, indices),
                 lambda a: [[a[i] for i in ix] for ix in indices.to_list()], ROWS, grad=True)
    check_ragged(lambda a: tf.gather(a, [1, 0], axis=1),
                 lambda a: [[r[1], r[0]] for r in a], NESTED_B[:2], grad=True)
    check_ragged(lambda a: tf.gather(a, [[0, 0]], axis=-1),
                 lambda a: [[[r[0], r[0]]] for r in a], [[1.0, 2.0], [7.0], [4.0, 5.0]])
    check_ragged(lambda a: tf.gather(a, [[[0]], [[0]], [[1]]], batch_dims=1),
                 lambda a: [[[a[0][0]]], [[a[1][0]]], [[a[2][1]]]],
                 [[1.0, 2.0], [7.0], [4.0, 5.0]], grad=True)
    dense_rows = tf.gather(tf.ragged.constant([[1.0, 2.0, 3.0], [7.0]]), [[2], [0]],
                           batch_dims=1)
    assert isinstance(dense_rows, tf.Tensor) and dense_rows.numpy().tolist() == [[3.0], [7.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"index 3 in row 0 is not in "):
        tf.gather(tf.ragged.constant([[1.0, 2.0, 3.0], [7.0]]), [[3], [0]], batch_dims=1)


def test_structure_ops():
    check_ragged(lambda a, b: tf.concat([a, b], axis=0), lambda a, b: a + b, ROWS, ROWS_B,
                 grad=True)
    check_ragged(lambda a, b: tf.concat([a, b], axis=1),
                 lambda a, b: [r + s for r, s in zip(a, b)], ROWS, ROWS_B, grad=True)
    check_ragged(lambda a, b: tf.stack([a, b], axis=0), lambda a, b: [a, b], ROWS, ROWS_B)
    check_ragged(lambda a, b: tf.stack([a, b], axis=1),
                 lambda a, b: [[r, s] for r, s in zip(a, b)], ROWS, ROWS_B)
    check_ragged(lambda a: tf.tile(a, [2, 3]), lambda a: [r * 3 for r in a] * 2, ROWS, grad=True)
    check_ragged(lambda a: tf.gather(a, [3, 0, 0]), lambda a: [a[3], a[0], a[0]], ROWS,
                 grad=True)
    check_ragged(lambda a: tf.boolean_mask(a, [True, False, False, True]),
                 lambda a: [a[0], a[3]], ROWS, grad=True)
    mask = tf.ragged.constant([[True, False, True], [], [False], [True, True]])
    check_ragged(lambda a: tf.boolean_mask(a, mask),
                 lambda a: [[1.0, 3.0], [], [], [5.0, -6.0]], ROWS)
    check_ragged(lambda a: tf.ragged.map_flat_values(tf.square, a),
                 lambda a: ref_map(a, lambda x: x * x), ROWS, grad=True)
    check_ragged(lambda a: tf.expand_dims(a, 0), lambda a: [a], ROWS)


def test_gather_with_ragged_indices_and_seed_embedding():
    table = tf.constant(np.arange(12.0).reshape(6, 2))
    ids = tf.ragged.constant([[0, 5], [], [2]])
    got = tf.gather(table, ids)
    assert got.shape.as_list() == [3, None, 2]
    assert got.to_list() == [[[0.0, 1.0], [10.0, 11.0]], [], [[4.0, 5.0]]]


def test_seed_001_ragged_example_runs_as_written():
    data = [["this", "is", "a", "sentence"],
            ["another", "one"],
            ["a", "somewhat", "longer", "one", ",", "this"]]
    rt = tf.ragged.constant(data)
    vocab = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
        ["this", "is", "a", "sentence", "another", "one", "somewhat", "longer"],
        tf.range(8, dtype=tf.int64)), 1)
    rt = tf.ragged.map_flat_values(lambda x: vocab.lookup(x), rt)
    assert rt.to_list() == [[0, 1, 2, 3], [4, 5], [2, 6, 7, 5, 8, 0]]
    embedding_table = tf.Variable(tf.random.normal([9, 10]))
    rt = tf.gather(embedding_table, rt)
    result = tf.math.reduce_mean(rt, axis=1)
    assert result.shape == (3, 10) and isinstance(result, tf.Tensor)
    table = embedding_table.numpy()
    np.testing.assert_allclose(result.numpy()[1], table[[4, 5]].mean(axis=0), rtol=1e-6)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.math.reduce_mean(tf.gather(embedding_table, tf.ragged.constant(
            [[0, 1], [1]], dtype=tf.int64)), axis=1))
    grad = tape.gradient(loss, embedding_table)
    dense = tf.convert_to_tensor(grad).numpy()
    np.testing.assert_allclose(dense[0], 0.5) and np.testing.assert_allclose(dense[1], 1.5)


def test_sparse_conversions():
    rt = tf.ragged.constant([[1, 2], [], [3]])
    st = rt.to_sparse()
    assert st.indices.numpy().tolist() == [[0, 0], [0, 1], [2, 0]]
    assert st.dense_shape.numpy().tolist() == [3, 2]
    assert tf.RaggedTensor.from_sparse(st).to_list() == rt.to_list()
    bad = tf.SparseTensor([[0, 1]], [1], [2, 2])
    with pytest.raises(errors.InvalidArgumentError, match="ragged-right"):
        tf.RaggedTensor.from_sparse(bad)


def test_spec_and_bad_input():
    rt = tf.ragged.constant([[1], [2, 3]])
    spec = tf.RaggedTensorSpec.from_value(rt)
    assert repr(spec) == "RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)"
    assert tf.RaggedTensorSpec([None, None], tf.int32).is_compatible_with(rt)
    assert not tf.RaggedTensorSpec([None, None], tf.float32).is_compatible_with(rt)
    with pytest.raises(ValueError, match="same nesting depth"):
        tf.ragged.constant([[1, [2]], [3]])
    with pytest.raises(errors.InvalidArgumentError, match="number of values"):
        tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 2])
    with pytest.raises(errors.InvalidArgumentError, match="ascending"):
        tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 1, 3])
    with pytest.raises(ValueError, match="must have rank 2"):
        rt.to_tensor(shape=[2])
    inner = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    with pytest.raises(errors.InvalidArgumentError, match="uniform dimensions must match"):
        inner.to_tensor(shape=[2, 2, 1])  # too small where the values are uniform
    assert inner.to_tensor(shape=[1, 1, 2]).numpy().tolist() == [[[1, 2]]]  # TF cuts rows
    with pytest.raises(TypeError, match="boolean"):
        bool(rt)


def test_ragged_ops_inside_tf_function():
    @tf.function
    def f(values, splits):
        rt = tf.RaggedTensor.from_row_splits(values, splits)
        return tf.reduce_sum(rt * 2.0, axis=1), rt.to_tensor()

    s, d = f(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 2, 3], tf.int64))
    assert s.numpy().tolist() == [6.0, 6.0] and d.shape == (2, 2)
    s, d = f(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 0, 3], tf.int64))
    assert s.numpy().tolist() == [0.0, 12.0] and d.shape == (2, 3)


def test_ragged_in_tf_data():
    rt = tf.ragged.constant([[1], [2, 3], [], [4, 5, 6]])
    ds = tf.data.Dataset.from_tensor_slices(rt)
    assert ds.element_spec == tf.RaggedTensorSpec([None], tf.int32, 0)
    assert [x.numpy().tolist() for x in ds] == rt.to_list()
    batched = ds.ragged_batch(3)
    assert batched.element_spec == tf.RaggedTensorSpec([None, None], tf.int32, 1)
    assert [b.to_list() for b in batched] == [[[1], [2, 3], []], [[4, 5, 6]]]
    assert [x.numpy().tolist() for x in batched.unbatch()] == rt.to_list()
    ranges = tf.data.Dataset.range(4).map(lambda n: tf.range(n))
    got = [b.to_list() for b in ranges.apply(tf.data.experimental.dense_to_ragged_batch(3))]
    assert got == [[[], [0], [0, 1]], [[0, 1, 2]]]
    # ragged components batch into ragged tensors of one more ragged dimension
    words = tf.data.Dataset.from_tensor_slices(["a b", "c", "d e f"]).map(
        lambda s: (tf.strings.split(tf.stack([s, s])), tf.strings.length(s)))
    first = next(iter(words.batch(2)))
    assert first[0].to_list() == [[[b"a", b"b"], [b"a", b"b"]], [[b"c"], [b"c"]]]
    assert first[1].numpy().tolist() == [3, 1]


def test_ragged_arguments_and_results_of_tf_function():
    @tf.function
    def f(rt):
        return tf.reduce_sum(rt * 2, axis=1), rt + 1

    total, plus = f(tf.ragged.constant([[1, 2], [3]]))
    assert total.numpy().tolist() == [6, 6] and plus.to_list() == [[2, 3], [4]]
    total, plus = f(tf.ragged.constant([[1, 2], [4]]))  # same component shapes: no retrace
    assert plus.to_list() == [[2, 3], [5]] and f.experimental_get_tracing_count() == 1

    @tf.function
    def words(x):
        return tf.strings.split(x)

    assert words(tf.constant(["a b", "c"])).to_list() == [[b"a", b"b"], [b"c"]]
    assert words(tf.constant(["d e f", "g"])).to_list() == [[b"d", b"e", b"f"], [b"g"]]
    assert "RaggedTensor" in words.last_concrete_function.graph.pretty_printed()
    v = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = tf.function(lambda rt: tf.reduce_sum(tf.reduce_mean(rt * rt, axis=1)))(
            tf.RaggedTensor.from_row_splits(v, [0, 2, 3]))
    assert tape.gradient(y, v).numpy().tolist() == [1.0, 2.0, 6.0]


def test_ragged_results_of_parallel_map_in_worker_processes():
    ds = tf.data.Dataset.from_tensor_slices(["a b", "c d e", "f"] * 4).batch(3)
    options = tf.data.Options()
    options.threading.worker_mechanism = "process"
    words = ds.map(tf.strings.split, num_parallel_calls=2).with_options(options)
    assert [b.to_list() for b in words] == [[[b"a", b"b"], [b"c", b"d", b"e"], [b"f"]]] * 4
    lengths = ds.map(lambda x: tf.strings.length(tf.strings.split(x)),
                     num_parallel_calls=2).with_options(options)  # int components: shm
    assert next(iter(lengths)).to_list() == [[1, 1], [1, 1, 1], [1]]


NESTED_P = [[[1.0, 2.0], [3.0]], [[4.0, 5.0, 6.0]], [[7.0], [8.0, 9.0], [10.0]]]


def test_gather_batch_dims_and_inner_axes():
    """tf.gather's remaining ragged forms (outputs checked against TF 2.x): indices nested
    deeper than one ragged dimension with batch_dims=1, batch_dims=2, an axis inside the rows
    with and without batch dimensions, axis=1 with ragged indices; gradients by finite
    differences."""
    deep = [[[1], [0, 1]], [[0]], [[2, 0], [], [1]]]
    check_ragged(lambda p: tf.gather(p, tf.ragged.constant(deep, dtype=tf.int64), batch_dims=1),
                 lambda p: [[[r[i] for i in ix] for ix in row] for r, row in zip(p, deep)],
                 NESTED_P, grad=True)
    pairs = [[[1, 0], [0]], [[0, 0, 0]], [[0], [1, 0], [0]]]
    check_ragged(lambda p: tf.gather(p, tf.ragged.constant(pairs, dtype=tf.int64), batch_dims=2),
                 lambda p: [[[v[i] for i in ix] for v, ix in zip(r, row)]
                            for r, row in zip(p, pairs)], NESTED_P, grad=True)
    check_ragged(lambda p: tf.gather(p, [0, 0], axis=2),
                 lambda p: [[[v[0], v[0]] for v in r] for r in p], NESTED_P, grad=True)
    per_row = [[0], [1, 2], [0, 0]]
    check_ragged(lambda p: tf.gather(p, tf.ragged.constant(per_row, dtype=tf.int64),
                                     batch_dims=1, axis=2),
                 lambda p: [[[v[i] for i in ix] for v in r] for r, ix in zip(p, per_row)],
                 NESTED_P, grad=True)
    check_ragged(lambda p: tf.gather(p, [[0], [1], [0]], batch_dims=1, axis=-1),
                 lambda p: [[[v[ix[0]]] for v in r] for r, ix in zip(p, [[0], [1], [0]])],
                 NESTED_P, grad=True)
    ragged_ix = [[0, 1], [1]]
    check_ragged(lambda a: tf.gather(a, tf.ragged.constant(ragged_ix, dtype=tf.int64), axis=1),
                 lambda a: [[[r[i] for i in ix] for ix in ragged_ix] for r in a],
                 [[1.0, 2.0, 3.0], [4.0, 5.0]], grad=True)
    with pytest.raises(ValueError, match="axis 0 must be in"):
        tf.gather(tf.ragged.constant(NESTED_P), [[0]], batch_dims=1, axis=0)


# -- from the TF 2 guide 'Ragged tensors' --------------------------------------------------
def test_reverse_along_each_kind_of_axis_and_the_guides_palindrome():
    rt = tf.ragged.constant([[1, 2], [3], [4, 5, 6]])
    assert tf.reverse(rt, [1]).to_list() == [[2, 1], [3], [6, 5, 4]]
    assert tf.reverse(rt, [0]).to_list() == [[4, 5, 6], [3], [1, 2]]
    make_palindrome = tf.function(lambda x, axis: tf.concat([x, tf.reverse(x, [axis])], axis))
    assert make_palindrome(rt, axis=1).to_list() == [[1, 2, 2, 1], [3, 3], [4, 5, 6, 6, 5, 4]]
    r3 = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert tf.reverse(r3, [2]).to_list() == [[[2, 1], [4, 3]], [[6, 5]]]
    assert tf.reverse(r3, [1, 0]).to_list() == [[[5, 6]], [[3, 4], [1, 2]]]
    deep = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]])
    assert tf.reverse(deep, [2]).to_list() == [[[2, 1], [3]], [[6, 5, 4]]]
    x = tf.ragged.constant([[1.0, 2.0], [3.0]])
    with tf.GradientTape() as tape:
        tape.watch(x.flat_values)
        y = tf.reduce_sum(tf.reverse(x, [1]) * tf.ragged.constant([[1.0, 10.0], [100.0]]))
    assert tape.gradient(y, x.flat_values).numpy().tolist() == [10.0, 1.0, 100.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        tf.reverse(rt, [2])


def test_ragged_input_signature_and_string_join_of_ragged_rows():
    @tf.function(input_signature=[tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)])
    def max_and_min(rt):
        return tf.math.reduce_max(rt, axis=-1), tf.math.reduce_min(rt, axis=-1)
    hi, lo = max_and_min(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]))
    assert hi.numpy().tolist() == [2, 3, 6] and lo.numpy().tolist() == [1, 3, 4]
    hi, _ = max_and_min(tf.ragged.constant([[7], [1, 9]]))
    assert hi.numpy().tolist() == [7, 9]
    with pytest.raises(TypeError, match="RaggedTensorSpec"):
        max_and_min(tf.constant([[1, 2]]))
    words = tf.ragged.constant([["a", "b"], ["c"]])
    joined = tf.strings.join([words, tf.ragged.constant([["x", "y"], ["z"]])], separator="+")
    assert joined.to_list() == [[b"a+x", b"b+y"], [b"c+z"]]
    with pytest.raises(ValueError, match="mixes strings and numbers"):
        tf.ragged.constant([["one", "two"], [3, 4]])


def test_dense_operands_broadcast_by_tensorflows_ragged_rules():
    """The ragged guide's broadcasting examples: dimensions align from the right; a dense
    operand has size 1 along ragged dimensions, 1 or nrows along the outer one."""
    x = tf.ragged.constant([[10, 87, 12], [19, 53], [12, 32]])
    assert (x + [[1000], [2000], [3000]]).to_list() == \
        [[1010, 1087, 1012], [2019, 2053], [3012, 3032]]
    x3 = tf.ragged.constant([[[1, 2], [3, 4], [5, 6]], [[7, 8]]], ragged_rank=1)
    assert (x3 + tf.constant([[10]])).to_list() == [[[11, 12], [13, 14], [15, 16]], [[17, 18]]]
    assert (x3 + tf.constant([[[1, 2]], [[3, 4]]])).to_list() == \
        [[[2, 4], [4, 6], [6, 8]], [[10, 12]]]
    x4 = tf.ragged.constant([[[[1], [2]], [], [[3]]], [[[5]]]], ragged_rank=2)
    assert (x4 + tf.constant([[[[100]]], [[[200]]]])).to_list() == \
        [[[[101], [102]], [], [[103]]], [[[205]]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="ragged dimension must be 1"):
        tf.ragged.constant([[1, 2], [3, 4, 5, 6], [7]]) + tf.ones([3, 4], tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="2 rows for 3"):
        x + tf.ones([2, 1], tf.int32)
    y = tf.constant([[1.0], [2.0]])
    r = tf.ragged.constant([[1.0, 2.0], [3.0]])
    with tf.GradientTape() as tape:
        tape.watch(y)
        total = tf.reduce_sum(r * y)
    assert tape.gradient(total, y).numpy().tolist() == [[3.0], [3.0]]


def test_integer_mean_along_rows_is_float64_with_nan_for_empty_rows():
    """TensorFlow's ragged reduce_mean is sum / count with `/` (the ragged tensors guide)."""
    result = tf.reduce_mean(tf.ragged.constant([[1, 2], [], [4]]), axis=1)
    assert result.dtype == tf.float64
    values = result.numpy()
    assert values[0] == 1.5 and np.isnan(values[1]) and values[2] == 4.0
    assert tf.reduce_mean(tf.ragged.constant([[1, 2]], dtype=tf.int16), axis=1).dtype == \
        tf.float32


def test_reshape_of_a_ragged_tensor_flattens_its_values():
    """The load-text tutorial counts tokens with `tf.reshape(toks, [-1])` over ragged batches
    (TF dispatches tf.reshape to the ragged values, row by row)."""
    toks = tf.ragged.constant([[b"the", b"cat"], [b"sat"], []])
    assert tf.reshape(toks, [-1]).numpy().tolist() == [b"the", b"cat", b"sat"]
    nested = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert tf.reshape(nested, [2, 2]).numpy().tolist() == [[1, 2], [3, 4]]
