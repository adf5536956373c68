"""tf.data sources and dataset/iterator helpers from TF 2's public API, as the TF guide and
API docs use them: Dataset.counter/random/get_single_element/sparse_batch/fingerprint,
tf.data.NumpyIterator/IteratorSpec, tf.experimental.Optional, from_list, get_structure."""
import numpy as np
import pytest

import tensorlite as tf


def test_counter_as_the_tf_data_guide_zips_it():
    # "tf.data: Build TensorFlow input pipelines", "Consuming Python generators"
    ds_counter = tf.data.Dataset.from_generator(lambda: iter(range(3)), output_types=tf.int32)
    counter = tf.data.experimental.Counter()
    ds = tf.data.Dataset.zip((counter, ds_counter))
    assert [(int(a), int(b)) for a, b in ds] == [(0, 0), (1, 1), (2, 2)]
    assert counter.element_spec == tf.TensorSpec([], tf.int64)
    assert int(counter.cardinality()) == tf.data.INFINITE_CARDINALITY


def test_dataset_counter_api_doc_examples():
    assert list(tf.data.Dataset.counter().take(5).as_numpy_iterator()) == [0, 1, 2, 3, 4]
    assert list(tf.data.Dataset.counter(start=2).take(5).as_numpy_iterator()) == [2, 3, 4, 5, 6]
    assert list(tf.data.Dataset.counter(start=2, step=5).take(5).as_numpy_iterator()) == \
        [2, 7, 12, 17, 22]
    assert list(tf.data.Dataset.counter(start=10, step=-1).take(5).as_numpy_iterator()) == \
        [10, 9, 8, 7, 6]
    ds = tf.data.Dataset.counter(dtype=tf.int32)
    assert ds.element_spec == tf.TensorSpec(shape=(), dtype=tf.int32)
    ds = tf.data.Dataset.counter(dtype=tf.float32)
    assert ds.element_spec == tf.TensorSpec(shape=(), dtype=tf.float32)
    assert list(ds.take(3).as_numpy_iterator()) == [0.0, 1.0, 2.0]


def test_counter_checkpoints_its_position():
    it = iter(tf.data.Dataset.counter(start=3))
    next(it), next(it)
    state = it.save_state()
    nxt = int(next(it))
    it2 = iter(tf.data.Dataset.counter(start=3))
    it2.restore_state(state)
    assert nxt == 5 and int(next(it2)) == 5


def test_random_api_doc_examples():
    ds1 = tf.data.Dataset.random(seed=4).take(10)
    ds2 = tf.data.Dataset.random(seed=4).take(10)
    assert list(ds1.as_numpy_iterator()) == list(ds2.as_numpy_iterator())
    ds3 = tf.data.Dataset.random(seed=4).take(10)
    assert list(ds3.as_numpy_iterator()) == list(ds3.as_numpy_iterator())
    ds4 = tf.data.Dataset.random(seed=4, rerandomize_each_iteration=True).take(10)
    first, second = list(ds4.as_numpy_iterator()), list(ds4.as_numpy_iterator())
    assert first != second
    assert tf.data.Dataset.random().element_spec == tf.TensorSpec([], tf.int64)
    values = np.array(list(tf.data.experimental.RandomDataset(seed=1).take(200)
                           .as_numpy_iterator()))
    # TF's values are uint32 draws: [0, 2**32)
    assert len(set(values.tolist())) == 200 and values.min() >= 0 and values.max() < 2 ** 32
    assert values.max() > 2 ** 31
    assert list(tf.data.Dataset.random(seed=5).take(3).as_numpy_iterator()) != \
        list(tf.data.Dataset.random(seed=6).take(3).as_numpy_iterator())


def test_random_uses_the_global_seed():
    tf.random.set_seed(7)
    a = list(tf.data.Dataset.random().take(4).as_numpy_iterator())
    tf.random.set_seed(7)
    b = list(tf.data.Dataset.random().take(4).as_numpy_iterator())
    tf.random.set_seed(None)
    assert a == b


def test_get_single_element_api_doc_example():
    def preprocessing_fn(raw_feature):
        return raw_feature * 2, raw_feature + 1
    raw = tf.constant([1, 2, 3])
    ds = tf.data.Dataset.from_tensor_slices(raw).batch(3).map(preprocessing_fn)
    feature, label = ds.get_single_element()
    assert feature.numpy().tolist() == [2, 4, 6] and label.numpy().tolist() == [2, 3, 4]
    x = tf.data.experimental.get_single_element(tf.data.Dataset.from_tensors(5))
    assert int(x) == 5


def test_get_single_element_errors_are_tfs():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty"):
        tf.data.Dataset.range(0).get_single_element()
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
        tf.data.Dataset.range(2).get_single_element()
    with pytest.raises(TypeError, match="tf.data.Dataset"):
        tf.data.experimental.get_single_element([1])


def test_sparse_batch_api_doc_example():
    rows = [["a", "b", "c"], ["a", "b"], ["a", "b", "c", "d"]]
    ds = tf.data.Dataset.from_generator(lambda: iter(rows),
                                        output_signature=tf.TensorSpec([None], tf.string))
    batches = list(ds.sparse_batch(batch_size=2, row_shape=[6]))
    assert len(batches) == 2
    first, second = batches
    assert first.indices.numpy().tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]]
    assert first.values.numpy().tolist() == [b"a", b"b", b"c", b"a", b"b"]
    assert first.dense_shape.numpy().tolist() == [2, 6]
    assert second.indices.numpy().tolist() == [[0, 0], [0, 1], [0, 2], [0, 3]]
    assert second.dense_shape.numpy().tolist() == [1, 6]
    spec = ds.sparse_batch(2, [6]).element_spec
    assert isinstance(spec, tf.SparseTensorSpec) and spec.shape.as_list() == [None, 6]
    same = list(ds.apply(tf.data.experimental.dense_to_sparse_batch(2, [6])))
    assert same[0].values.numpy().tolist() == first.values.numpy().tolist()


def test_sparse_batch_unknown_dimension_and_errors():
    ds = tf.data.Dataset.range(1, 4).map(lambda n: tf.fill([n], n))
    sp = next(iter(ds.sparse_batch(3, [None])))
    assert sp.dense_shape.numpy().tolist() == [3, 3]
    assert ds.sparse_batch(3, tf.TensorShape([None])).element_spec.shape.as_list() == \
        [None, None]
    # TF's classes and messages (checked against TF 2.21)
    with pytest.raises(tf.errors.DataLossError,
                       match=r"Input element had shape \(\[3\]\) that is larger than the row "
                             r"shape \(\[2\]\)"):
        list(ds.sparse_batch(3, [2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible with the row shape"):
        list(ds.sparse_batch(3, [2, 2]))
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        ds.sparse_batch(3, [-1])


def test_fingerprint_is_a_uint64_that_tells_pipelines_apart():
    a = tf.data.Dataset.range(10).map(lambda x: x * 2)
    b = tf.data.Dataset.range(10).map(lambda x: x * 2)
    c = tf.data.Dataset.range(10).map(lambda x: x * 3)
    fa = a.fingerprint()
    assert fa.dtype == tf.uint64 and fa.shape == []
    assert int(fa) == int(b.fingerprint())
    assert int(fa) != int(c.fingerprint())
    assert int(fa) != int(tf.data.Dataset.range(11).map(lambda x: x * 2).fingerprint())


def test_as_numpy_iterator_is_a_numpy_iterator():
    it = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [b"x", b"y"]}).as_numpy_iterator()
    assert isinstance(it, tf.data.NumpyIterator)
    assert iter(it) is it
    first = next(it)
    assert first["a"] == 1 and first["b"] == b"x"
    assert it.next()["a"] == 2
    with pytest.raises(StopIteration):
        next(it)


def test_iterator_spec():
    ds = tf.data.Dataset.range(3)
    spec = tf.data.IteratorSpec(ds.element_spec)
    assert spec.element_spec == tf.TensorSpec([], tf.int64)
    assert iter(ds)._type_spec == spec
    assert spec != tf.data.IteratorSpec(tf.TensorSpec([], tf.int32))


def test_optional_api_doc_examples():
    optional = tf.experimental.Optional.from_value(42)
    assert bool(optional.has_value().numpy()) is True
    assert int(optional.get_value().numpy()) == 42
    empty = tf.experimental.Optional.empty(tf.TensorSpec(shape=(), dtype=tf.int32, name=None))
    assert bool(empty.has_value().numpy()) is False
    assert empty.element_spec == tf.TensorSpec([], tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not have a value"):
        empty.get_value()
    structured = tf.experimental.Optional.from_value({"a": 1, "b": [2.0, 3.0]})
    assert structured.element_spec["b"] == tf.TensorSpec([2], tf.float32)
    assert tf.data.experimental.Optional is tf.experimental.Optional


def test_get_next_as_optional_walks_off_the_end():
    it = iter(tf.data.Dataset.range(2))
    got = []
    while True:
        opt = tf.data.experimental.get_next_as_optional(it)
        if not opt.has_value():
            break
        got.append(int(opt.get_value()))
    assert got == [0, 1]
    assert opt.element_spec == tf.TensorSpec([], tf.int64)


def test_from_list_api_doc_examples():
    dataset = tf.data.experimental.from_list([(1, "a"), (2, "b"), (3, "c")])
    assert list(dataset.as_numpy_iterator()) == [(1, b"a"), (2, b"b"), (3, b"c")]
    dataset = tf.data.experimental.from_list([{"a": 1, "b": 2}, {"a": 3, "b": 4}])
    assert list(dataset.as_numpy_iterator()) == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    with pytest.raises(ValueError, match="should not be empty"):
        tf.data.experimental.from_list([])
    with pytest.raises(ValueError, match="must be a list"):
        tf.data.experimental.from_list((1, 2))
    with pytest.raises(ValueError, match="same structure"):
        tf.data.experimental.from_list([(1, 2), (3,)])


def test_get_structure_api_doc_example():
    dataset = tf.data.Dataset.from_tensor_slices(tf.constant([1, 2, 3]))
    assert tf.data.experimental.get_structure(dataset) == tf.TensorSpec([], tf.int32)
    assert tf.data.experimental.get_structure(iter(dataset)) == tf.TensorSpec([], tf.int32)
    with pytest.raises(TypeError, match="dataset_or_iterator"):
        tf.data.experimental.get_structure([1, 2])
