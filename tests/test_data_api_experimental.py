"""tf.data.experimental's transformations, options and switches, as TF's API docs use them:
the dataset.apply forms, assert_cardinality, group_by_reducer/Reducer, lookup tables from
datasets, AutoShardPolicy/DistributeOptions/ExternalStatePolicy, enable_debug_mode and
prefetch_to_device/copy_to_device."""
import threading
import time

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.data import debug_mode

E = tf.data.experimental


def _values(ds):
    return [x.tolist() if isinstance(x, np.ndarray) else x for x in ds.as_numpy_iterator()]


def test_apply_forms_match_the_methods():
    ds = tf.data.Dataset.range(10)
    assert _values(ds.apply(E.take_while(lambda x: x < 4))) == [0, 1, 2, 3]
    assert _values(ds.apply(E.scan(np.int64(0), lambda s, x: (s + x, s + x))).take(4)) == \
        [0, 1, 3, 6]
    assert _values(ds.batch(4).apply(E.unbatch())) == list(range(10))
    assert _values(tf.data.Dataset.from_tensor_slices([1, 2, 2, 1, 3]).apply(E.unique())) == \
        [1, 2, 3]
    assert _values(ds.take(3).apply(E.enumerate_dataset(start=5))) == [(5, 0), (6, 1), (7, 2)]
    windows = ds.apply(E.group_by_window(lambda x: x % 2, lambda k, w: w.batch(5),
                                         window_size=5))
    assert _values(windows) == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]


def test_ignore_errors_api_doc_example():
    dataset = tf.data.Dataset.from_tensor_slices([1., 2., 0., 4.])
    dataset = dataset.map(lambda x: tf.debugging.check_numerics(1. / x, "error"))
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(dataset)
    assert _values(dataset.apply(E.ignore_errors())) == [1.0, 0.5, 0.25]
    with pytest.warns(UserWarning, match="ignore_errors"):
        assert len(_values(dataset.apply(E.ignore_errors(log_warning=True)))) == 3


def test_bucket_by_sequence_length_apply_form():
    elements = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20],
                [21, 22]]
    dataset = tf.data.Dataset.from_generator(lambda: elements, tf.int64, output_shapes=[None])
    dataset = dataset.apply(E.bucket_by_sequence_length(
        element_length_func=lambda elem: tf.shape(elem)[0], bucket_boundaries=[3, 5],
        bucket_batch_sizes=[2, 2, 2]))
    # the TF API doc's printed batches
    assert _values(dataset) == [[[1, 2, 3, 4], [5, 6, 7, 0]],
                                [[7, 8, 9, 10, 11, 0], [13, 14, 15, 16, 19, 20]],
                                [[0, 0], [21, 22]]]


def test_parallel_interleave_keeps_the_deterministic_order():
    ds = tf.data.Dataset.range(1, 4).apply(E.parallel_interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2))
    assert _values(ds) == [1, 2, 1, 2, 3, 3]


def test_rejection_resample_apply_form_yields_class_element_pairs():
    ds = tf.data.Dataset.from_tensor_slices(np.array([0] * 90 + [1] * 10, np.int32)).repeat()
    resampled = ds.apply(E.rejection_resample(lambda x: x, target_dist=[0.5, 0.5],
                                              initial_dist=[0.9, 0.1], seed=3))
    pairs = _values(resampled.take(400))
    assert all(c == x for c, x in pairs)
    share = np.mean([c for c, _ in pairs])
    assert 0.35 < share < 0.65


def test_assert_cardinality_api_doc_example_and_errors():
    ds = tf.data.Dataset.range(42).filter(lambda x: True)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    ds = ds.apply(E.assert_cardinality(42))
    assert int(ds.cardinality()) == 42 and len(ds) == 42
    assert len(list(ds)) == 42
    short = tf.data.Dataset.range(3).apply(E.assert_cardinality(5))
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="expected to contain 5 elements but contained only 3 elements"):
        list(short)
    long = tf.data.Dataset.range(10).apply(E.assert_cardinality(5))
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="expected to contain 5 elements but contained at least 6"):
        list(long)


def test_group_by_reducer_sums_per_key():
    reducer = E.Reducer(init_func=lambda _: np.int64(0), reduce_func=lambda x, y: x + y,
                        finalize_func=lambda x: x)
    ds = tf.data.Dataset.range(10).apply(E.group_by_reducer(lambda x: x % 2, reducer))
    assert _values(ds) == [20, 25]
    # a (count, sum) state: the mean per key
    mean = E.Reducer(init_func=lambda _: (np.int64(0), np.int64(0)),
                     reduce_func=lambda s, x: (s[0] + 1, s[1] + x),
                     finalize_func=lambda n, total: total / n)
    ds = tf.data.Dataset.range(9).apply(E.group_by_reducer(lambda x: x % 3, mean))
    assert _values(ds) == [3.0, 4.0, 5.0]
    with pytest.raises(TypeError, match="Reducer"):
        tf.data.Dataset.range(3).apply(E.group_by_reducer(lambda x: x, lambda s: s))


def test_table_from_dataset_api_doc_example():
    keys = tf.data.Dataset.range(100)
    values = tf.data.Dataset.range(100).map(lambda x: tf.strings.as_string(x * 2))
    ds = tf.data.Dataset.zip((keys, values))
    table = E.table_from_dataset(ds, default_value="n/a", key_dtype=tf.int64)
    assert table.lookup(tf.constant([0, 1, 2], dtype=tf.int64)).numpy().tolist() == \
        [b"0", b"2", b"4"]
    assert table.lookup(tf.constant([500], dtype=tf.int64)).numpy().tolist() == [b"n/a"]
    with pytest.raises(ValueError, match="default_value"):
        E.table_from_dataset(ds, key_dtype=tf.int64)
    with pytest.raises(ValueError, match="2 components|components instead of two"):
        E.table_from_dataset(keys)


def test_dataset_initializer_api_doc_example():
    keys = tf.data.Dataset.range(100)
    values = tf.data.Dataset.range(100).map(lambda x: tf.strings.as_string(x * 2))
    ds = tf.data.Dataset.zip((keys, values))
    init = tf.data.experimental.DatasetInitializer(ds)
    table = tf.lookup.StaticHashTable(init, "")
    assert table.lookup(tf.constant([0, 1, 2], dtype=tf.int64)).numpy().tolist() == \
        [b"0", b"2", b"4"]
    with pytest.raises(ValueError, match="non-scalar key"):
        E.DatasetInitializer(tf.data.Dataset.zip((keys.batch(2), values.batch(2))))


def test_index_table_from_dataset_api_doc_example():
    ds = tf.data.Dataset.range(100).map(lambda x: tf.strings.as_string(x * 2))
    table = E.index_table_from_dataset(ds, key_dtype=tf.int64)  # the doc's spelling
    assert table.lookup(tf.constant(["0", "2", "4"], dtype=tf.string)).numpy().tolist() == \
        [0, 1, 2]
    assert table.lookup(tf.constant(["1"])).numpy().tolist() == [-1]
    small = E.index_table_from_dataset(tf.data.Dataset.from_tensor_slices(["a", "b"]),
                                       num_oov_buckets=3)
    ids = small.lookup(tf.constant(["a", "b", "zzz"])).numpy().tolist()
    assert ids[:2] == [0, 1] and 2 <= ids[2] < 5
    assert int(small.size()) == 5
    with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 3"):
        E.index_table_from_dataset(tf.data.Dataset.from_tensor_slices(["a", "b"]),
                                   vocab_size=3)


def test_auto_shard_policy_and_distribute_options():
    options = tf.data.Options()
    assert options.experimental_distribute.auto_shard_policy == E.AutoShardPolicy.AUTO
    options.experimental_distribute.auto_shard_policy = E.AutoShardPolicy.DATA
    ds = tf.data.Dataset.range(4).with_options(options)
    assert ds.options().experimental_distribute.auto_shard_policy == E.AutoShardPolicy.DATA
    assert [int(p) for p in (E.AutoShardPolicy.OFF, E.AutoShardPolicy.AUTO,
                             E.AutoShardPolicy.FILE, E.AutoShardPolicy.DATA,
                             E.AutoShardPolicy.HINT)] == [-1, 0, 1, 2, 3]
    with pytest.raises(ValueError, match="AutoShardPolicy"):
        options.experimental_distribute.auto_shard_policy = 7
    assert isinstance(options.experimental_distribute, E.DistributeOptions)
    options.experimental_external_state_policy = E.ExternalStatePolicy.IGNORE
    assert [p.value for p in E.ExternalStatePolicy] == [0, 1, 2]


def _threads_of_a_parallel_map():
    seen = []

    def record(x):
        seen.append((int(x), threading.get_ident()))
        time.sleep(0.002)  # releases the GIL: the map's threads overlap
        return x

    options = tf.data.Options()
    options.threading.worker_mechanism = "thread"
    ds = tf.data.Dataset.range(16).map(lambda x: tf.py_function(record, [x], tf.int64),
                                       num_parallel_calls=4).with_options(options)
    assert _values(ds) == list(range(16))
    return seen[-16:]


def test_enable_debug_mode_runs_parallel_maps_in_order_on_the_calling_thread():
    # without debug mode the forced-thread parallel map runs on its worker threads
    assert {t for _, t in _threads_of_a_parallel_map()} != {threading.get_ident()}
    try:
        E.enable_debug_mode()
        calls = _threads_of_a_parallel_map()
    finally:
        debug_mode._disable_for_tests()
    assert [i for i, _ in calls] == list(range(16))
    assert {t for _, t in calls} == {threading.get_ident()}


def test_prefetch_to_device_and_copy_to_device_on_the_cpu():
    ds = tf.data.Dataset.range(5)
    assert _values(ds.apply(E.prefetch_to_device("/cpu:0"))) == list(range(5))
    assert _values(ds.apply(E.prefetch_to_device("/device:CPU:0", buffer_size=2))) == \
        list(range(5))
    assert _values(ds.apply(E.copy_to_device("/cpu:0"))) == list(range(5))
    with pytest.raises(tf.errors.InvalidArgumentError, match="/gpu:0"):
        E.prefetch_to_device("/gpu:0")
    with pytest.raises(tf.errors.InvalidArgumentError, match="/job:worker/task:1"):
        E.copy_to_device("/job:worker/task:1/device:CPU:0")
    with pytest.raises(tf.errors.InvalidArgumentError, match="CPU:7"):
        E.copy_to_device("/cpu:0", source_device="/device:CPU:7")


def _resumed(ds, consumed):
    it = iter(ds)
    for _ in range(consumed):
        next(it)
    state = it.save_state()
    again = iter(ds)
    again.restore_state(state)
    return [x.numpy().tolist() for x in again]


def test_new_stages_checkpoint_mid_iteration():
    reducer = E.Reducer(lambda _: np.int64(0), lambda x, y: x + y, lambda x: x)
    ds = tf.data.Dataset.range(10).apply(E.group_by_reducer(lambda x: x % 3, reducer))
    assert _resumed(ds, 1) == [12, 15]
    checked = tf.data.Dataset.range(5).apply(E.assert_cardinality(5))
    assert _resumed(checked, 2) == [2, 3, 4]
    rnd = tf.data.Dataset.random(seed=3).take(6)
    assert _resumed(rnd, 2) == list(rnd.as_numpy_iterator())[2:]


def test_pad_to_cardinality_api_doc_example():
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2]})
    ds = ds.apply(E.pad_to_cardinality(3))
    assert list(ds.as_numpy_iterator()) == [{"a": 1, "valid": True}, {"a": 2, "valid": True},
                                            {"a": 0, "valid": False}]
    # the doc's eval use: round up to whole batches, drop_remainder drops nothing
    ds = tf.data.Dataset.from_tensor_slices({"x": np.arange(5.0, dtype=np.float32)})
    target = -(-int(ds.cardinality()) // 2) * 2
    batches = list(ds.apply(E.pad_to_cardinality(target)).batch(2, drop_remainder=True))
    assert [b["valid"].numpy().tolist() for b in batches] == [[True, True], [True, True],
                                                              [True, False]]
    with pytest.raises(ValueError, match="known cardinalty"):
        tf.data.Dataset.range(3).filter(lambda x: True).map(
            lambda x: {"a": x}).apply(E.pad_to_cardinality(4))
    with pytest.raises(ValueError, match="dictionary"):
        tf.data.Dataset.range(3).apply(E.pad_to_cardinality(4))
    with pytest.raises(ValueError, match="less than the target"):
        tf.data.Dataset.range(3).map(lambda x: {"a": x}).apply(E.pad_to_cardinality(2))


def test_at_gives_random_access_where_tf_does():
    ds = tf.data.Dataset.range(10)
    assert int(E.at(ds, 3)) == 3
    assert int(E.at(ds.map(lambda x: x * 2), 3)) == 6
    assert E.at(ds.batch(3), 1).numpy().tolist() == [3, 4, 5]
    assert E.at(ds.batch(3), 3).numpy().tolist() == [9]
    assert int(E.at(ds.skip(2).take(5), 1)) == 3
    assert int(E.at(ds.repeat(2), 12)) == 2
    assert int(E.at(ds.prefetch(2).cache(), 2)) == 2
    assert E.at(tf.data.Dataset.from_tensor_slices({"a": [1, 2]}).enumerate(), 1)[1]["a"] \
        .numpy() == 2
    assert int(E.at(ds.take(2).concatenate(tf.data.Dataset.range(5, 7)), 3)) == 6
    calls = []
    mapped = ds.map(lambda x: tf.py_function(lambda v: calls.append(int(v)) or v, [x],
                                             tf.int64))
    assert int(E.at(mapped, 7)) == 7 and calls == [7]  # only the one element is computed
    with pytest.raises(tf.errors.OutOfRangeError, match=r"Index out of range \[0, 10\):12"):
        E.at(ds, 12)
    with pytest.raises(tf.errors.UnimplementedError, match="Random access is not implemented"):
        E.at(ds.filter(lambda x: True), 3)
    with pytest.raises(tf.errors.UnimplementedError, match="Random access is not implemented"):
        E.at(tf.data.Dataset.from_generator(lambda: iter([1, 2]), tf.int64), 1)


def test_autotune_algorithm_is_tfs_enum_and_an_option():
    assert [(a.name, a.value) for a in E.AutotuneAlgorithm] == [
        ("DEFAULT", 0), ("HILL_CLIMB", 1), ("GRADIENT_DESCENT", 2), ("MAX_PARALLELISM", 3),
        ("STAGE_BASED", 4)]
    options = tf.data.Options()
    assert options.autotune.autotune_algorithm is None
    options.autotune.autotune_algorithm = E.AutotuneAlgorithm.HILL_CLIMB
    ds = tf.data.Dataset.range(3).with_options(options)
    assert ds.options().autotune.autotune_algorithm == E.AutotuneAlgorithm.HILL_CLIMB
    assert list(ds.as_numpy_iterator()) == [0, 1, 2]


def _threads_of_a_parallel_interleave():
    seen = []

    def gen(k):
        for j in range(3):
            seen.append(threading.get_ident())
            time.sleep(0.001)
            yield k * 10 + j

    ds = tf.data.Dataset.range(3).interleave(
        lambda k: tf.data.Dataset.from_generator(gen, args=(k,), output_types=tf.int64),
        cycle_length=3, block_length=1, num_parallel_calls=3, deterministic=False)
    values = sorted(_values(ds))
    assert values == [0, 1, 2, 10, 11, 12, 20, 21, 22]
    return seen, _values(ds) if debug_mode.enabled() else None


def test_enable_debug_mode_reads_parallel_interleaves_in_cycle_order_on_the_calling_thread():
    seen, _ = _threads_of_a_parallel_interleave()
    assert set(seen) != {threading.get_ident()}  # otherwise: the inputs' own threads
    try:
        E.enable_debug_mode()
        seen, order = _threads_of_a_parallel_interleave()
    finally:
        debug_mode._disable_for_tests()
    assert set(seen) == {threading.get_ident()}
    assert order == [0, 10, 20, 1, 11, 21, 2, 12, 22]
