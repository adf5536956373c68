"""tf.data sources and transformations with TensorFlow's semantics."""
import os

import numpy as np
import pytest

import tensorlite as tf


def values(ds):
    return [tf.nest.map_structure(lambda t: t.numpy().tolist(), e) for e in ds]


def test_range_and_specs():
    ds = tf.data.Dataset.range(5)
    assert values(ds) == [0, 1, 2, 3, 4]
    assert ds.element_spec == tf.TensorSpec([], tf.int64)
    assert values(tf.data.Dataset.range(2, 10, 3)) == [2, 5, 8]
    assert int(ds.cardinality()) == 5 and len(ds) == 5
    assert int(ds.repeat().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert int(ds.filter(lambda x: x > 2).cardinality()) == tf.data.UNKNOWN_CARDINALITY


def test_from_tensor_slices_nested():
    x = np.arange(6).reshape(3, 2).astype(np.float32)
    y = np.array([0, 1, 0])
    ds = tf.data.Dataset.from_tensor_slices((x, {"label": y}))
    first = next(iter(ds))
    assert first[0].numpy().tolist() == [0.0, 1.0] and int(first[1]["label"]) == 0
    assert ds.element_spec == (tf.TensorSpec([2], tf.float32),
                               {"label": tf.TensorSpec([], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size in dimension 0"):
        tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
    assert values(tf.data.Dataset.from_tensors([1, 2])) == [[1, 2]]


def test_from_generator_seed002_artificial_dataset():
    class ArtificialDataset(tf.data.Dataset):
        def _generator(num_samples):
            for sample_idx in range(num_samples):
                yield (sample_idx,)

        def __new__(cls, num_samples=3):
            return tf.data.Dataset.from_generator(
                cls._generator, output_types=tf.dtypes.int64, output_shapes=(1,),
                args=(num_samples,))
    ds = ArtificialDataset()
    assert values(ds) == [[0], [1], [2]]
    assert ds.element_spec == tf.TensorSpec([1], tf.int64)
    # interleave passes each range element as num_samples: 0, 1, 2 and 3 samples
    got = values(tf.data.Dataset.range(4).interleave(ArtificialDataset, cycle_length=2))
    assert got == [[0], [0], [1], [0], [1], [2]]


def test_from_generator_signature_and_bad_yield():
    def gen():
        yield np.ones(2, np.float32), 1
        yield np.ones(3, np.float32), 2
        yield "bad", 3
    ds = tf.data.Dataset.from_generator(gen, output_signature=(
        tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)))
    it = iter(ds)
    assert next(it)[0].shape == (2,) and next(it)[1].dtype == tf.int32
    with pytest.raises(tf.errors.InvalidArgumentError, match="element 2.*float32"):
        next(it)


def test_map_filter_flat_map_semantics():
    ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [10, 20, 30]))
    assert values(ds.map(lambda a, b: a + b)) == [11, 22, 33]
    assert values(tf.data.Dataset.range(6).filter(lambda x: x % 2 == 0)) == [0, 2, 4]
    assert values(tf.data.Dataset.range(3).flat_map(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(2))) == [0, 0, 1, 1, 2, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="scalar tf.bool"):
        list(tf.data.Dataset.range(3).filter(lambda x: x))


def test_map_error_names_stage_and_element():
    def f(x):
        if int(x) == 3:
            raise ValueError("boom")
        return x
    with pytest.raises(ValueError, match="boom") as e:
        list(tf.data.Dataset.range(5).map(f))
    assert "element 3" in "".join(e.value.__notes__) and "Map" in "".join(e.value.__notes__)


def test_map_inconsistent_structure_and_dtype():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Map stage.*element 1.*structure"):
        list(tf.data.Dataset.range(3).map(lambda x: x if int(x) == 0 else (x, x)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="element 1.*float32.*int64"):
        list(tf.data.Dataset.range(3).map(lambda x: x if int(x) == 0 else tf.cast(x, tf.float32)))


def test_batch_padded_unbatch_rebatch():
    ds = tf.data.Dataset.range(7)
    assert values(ds.batch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert values(ds.batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert ds.batch(3, drop_remainder=True).element_spec.shape == (3,)
    assert values(ds.batch(3).unbatch()) == list(range(7))
    assert values(ds.batch(3).rebatch(2)) == [[0, 1], [2, 3], [4, 5], [6]]
    ragged = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x))
    assert values(ragged.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3]]]
    assert values(ragged.padded_batch(2, padded_shapes=[4], padding_values=-1)) == \
        [[[1, -1, -1, -1], [2, 2, -1, -1]], [[3, 3, 3, -1]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors with "
                                                            "different shapes in component 0"):
        list(ragged.batch(2))


def test_shuffle_seeded_and_reshuffle():
    ds = tf.data.Dataset.range(20).shuffle(20, seed=7)
    a, b = values(ds), values(ds)
    assert sorted(a) == list(range(20)) and a != list(range(20)) and a != b
    again = values(tf.data.Dataset.range(20).shuffle(20, seed=7))
    assert again == a
    fixed = tf.data.Dataset.range(20).shuffle(20, seed=7, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)
    epochs = values(tf.data.Dataset.range(5).shuffle(5, seed=1).repeat(2))
    assert sorted(epochs[:5]) == sorted(epochs[5:]) == list(range(5))


def test_repeat_take_skip_shard_enumerate_window_scan():
    ds = tf.data.Dataset.range(5)
    assert values(ds.repeat(2).take(7)) == [0, 1, 2, 3, 4, 0, 1]
    assert values(ds.skip(3)) == [3, 4]
    assert values(ds.shard(2, 1)) == [1, 3]
    assert values(ds.enumerate(start=10).take(2)) == [(10, 0), (11, 1)]
    assert values(ds.take_while(lambda x: x < 3)) == [0, 1, 2]
    assert values(ds.scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s + x))) == \
        [0, 1, 3, 6, 10]
    windows = [[int(v) for v in w] for w in ds.window(2, shift=2)]
    assert windows == [[0, 1], [2, 3], [4]]
    assert values(tf.data.Dataset.from_tensor_slices([1, 2, 1, 3, 2]).unique()) == [1, 2, 3]
    assert int(ds.reduce(tf.constant(0, tf.int64), lambda s, x: s + x)) == 10
    assert list(ds.take(2).as_numpy_iterator()) == [0, 1]


def test_zip_concatenate_sample_choose():
    a, b = tf.data.Dataset.range(3), tf.data.Dataset.range(10, 15)
    assert values(tf.data.Dataset.zip((a, b))) == [(0, 10), (1, 11), (2, 12)]
    assert values(tf.data.Dataset.zip({"x": a, "y": b}).take(1)) == [{"x": 0, "y": 10}]
    assert values(a.concatenate(b)) == [0, 1, 2, 10, 11, 12, 13, 14]
    mixed = values(tf.data.Dataset.sample_from_datasets([a, b], seed=3))
    assert sorted(mixed) == [0, 1, 2, 10, 11, 12, 13, 14]
    chosen = tf.data.Dataset.choose_from_datasets(
        [tf.data.Dataset.from_tensors(0).repeat(), tf.data.Dataset.from_tensors(1).repeat()],
        tf.data.Dataset.range(2).repeat(2))
    assert values(chosen) == [0, 1, 0, 1]


def test_interleave_cycle_block_parallel_equals_sequential():
    def make(x):
        return tf.data.Dataset.range(10 * x, 10 * x + 4)
    seq = values(tf.data.Dataset.range(5).interleave(make, cycle_length=2, block_length=2))
    assert seq[:6] == [0, 1, 10, 11, 2, 3]
    par = values(tf.data.Dataset.range(5).interleave(make, cycle_length=2, block_length=2,
                                                     num_parallel_calls=tf.data.AUTOTUNE))
    assert par == seq


def test_prefetch_keeps_order_and_surfaces_errors():
    assert values(tf.data.Dataset.range(50).prefetch(tf.data.AUTOTUNE)) == list(range(50))
    assert values(tf.data.Dataset.range(5).prefetch(tf.data.AUTOTUNE)) == list(range(5))
    with pytest.raises(TypeError, match="buffer_size.*AUTOTUNE"):
        tf.data.Dataset.range(5).prefetch()  # required, as in TensorFlow

    def bad(x):
        if int(x) == 2:
            raise KeyError("nope")
        return x
    it = iter(tf.data.Dataset.range(5).map(bad).prefetch(2))
    assert int(next(it)) == 0 and int(next(it)) == 1
    with pytest.raises(KeyError):
        next(it)


def test_get_next_out_of_range():
    it = iter(tf.data.Dataset.range(1))
    assert int(it.get_next()) == 0
    with pytest.raises(tf.errors.OutOfRangeError):
        it.get_next()


def test_text_line_dataset_and_seed003_cleaning(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("_BOOK_TITLE_ Something\nhello world\nsecond line here\n")
    lines = tf.data.TextLineDataset(str(path))
    assert [l.numpy() for l in lines] == [b"_BOOK_TITLE_ Something", b"hello world",
                                           b"second line here"]
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.data.TextLineDataset(str(tmp_path / "missing.txt")))


def test_list_files(tmp_path):
    for n in ("a.txt", "b.txt", "c.csv"):
        (tmp_path / n).write_text("x")
    files = sorted(f.numpy() for f in tf.data.Dataset.list_files(str(tmp_path / "*.txt")))
    assert [f.decode().rsplit("/", 1)[1] for f in files] == ["a.txt", "b.txt"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched"):
        tf.data.Dataset.list_files(str(tmp_path / "*.nope"))


def test_options_rewrites_are_observable():
    ds = tf.data.Dataset.range(10).map(lambda x: x + 1).map(lambda x: x * 2).take(-1)
    options = tf.data.Options()
    options.experimental_optimization.map_fusion = True
    ds = ds.with_options(options)
    text = ds.explain(print_fn=None)
    assert "map_fusion" in text and "noop_elimination" in text
    assert values(ds) == [(x + 1) * 2 for x in range(10)]
    with pytest.raises(AttributeError, match="no option"):
        options.experimental_optimization.not_a_thing = True


def test_map_vectorization_of_batch_safe_function():
    @tf.data.experimental.batch_safe
    def double(x):
        return x * 2
    options = tf.data.Options()
    options.experimental_optimization.map_vectorization = True
    ds = tf.data.Dataset.range(6).map(double).batch(3).with_options(options)
    assert "map_vectorization" in ds.explain(print_fn=None)
    assert values(ds) == [[0, 2, 4], [6, 8, 10]]


def test_random_in_parallel_map_is_deterministic_per_element():
    def noisy(x):
        return tf.cast(x, tf.float32) + tf.random.uniform([])

    def run(parallel, mechanism="auto"):
        tf.random.set_seed(11)
        options = tf.data.Options()
        options.threading.worker_mechanism = mechanism
        ds = tf.data.Dataset.range(12).map(noisy, num_parallel_calls=parallel,
                                           deterministic=False).with_options(options)
        return sorted(float(v) for v in ds)
    sequential = run(None)
    assert run(2, "thread") == sequential
    assert run(2, "process") == sequential
    assert run(tf.data.AUTOTUNE) == sequential
    tf.random.set_seed(12)
    other = sorted(float(v) for v in tf.data.Dataset.range(12).map(noisy))
    assert other != sequential


def test_ram_budget_exceeded_names_the_stage():
    options = tf.data.Options()
    options.autotune.ram_budget = 10_000
    ds = tf.data.Dataset.range(100).map(lambda x: tf.fill([1000], x)).shuffle(50)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="Shuffle.*ram_budget"):
        list(ds.with_options(options))


def test_parallel_interleave_continues_after_an_inner_error_with_ignore_errors():
    import threading

    def inner(x):
        def check(v):
            if int(x) == 1 and int(v) == 11:
                raise ValueError("bad record")
            return v
        return tf.data.Dataset.range(10 * x, 10 * x + 3).map(check)
    result = []

    def run():
        ds = tf.data.Dataset.range(3).interleave(inner, cycle_length=2,
                                                 num_parallel_calls=2).ignore_errors()
        result.extend(values(ds))
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "parallel interleave hung after an inner error"
    assert sorted(result) == [0, 1, 2, 10, 12, 20, 21, 22]


def test_ram_budget_covers_parallel_interleave_buffers():
    options = tf.data.Options()
    options.autotune.ram_budget = 5_000
    ds = tf.data.Dataset.range(4).interleave(
        lambda x: tf.data.Dataset.range(10).map(lambda v: tf.fill([500], v)),
        cycle_length=2, num_parallel_calls=2).with_options(options)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="Interleave"):
        list(ds)
    options.autotune.ram_budget = 10_000_000
    assert len(list(ds.with_options(options))) == 40


def test_forked_map_workers_do_not_spin_blas_threads():
    # Setting OpenBLAS's thread count in a forked child restarts its thread pool, whose idle
    # threads spin ~0.1 s: fresh workers then ran a pure-Python map at a third of its speed.
    # A worker's first elements sleep; the process's CPU time meanwhile is what other
    # threads of it burn (a spinning one: about the whole sleep).
    import time
    np.ones((64, 64)) @ np.ones((64, 64))  # the parent's BLAS is loaded and in use
    try:  # and a second OpenBLAS (SciPy's, which numba loads too), on every core
        import scipy.linalg
        scipy.linalg.blas.dgemm(1.0, np.ones((300, 300)), np.ones((300, 300)))
    except ImportError:
        pass

    def cpu_while_sleeping(x):
        t0 = time.process_time()
        time.sleep(0.05)
        return np.array([os.getpid(), time.process_time() - t0])
    options = tf.data.Options()
    options.threading.worker_mechanism = "process"
    ds = tf.data.Dataset.range(8).map(cpu_while_sleeping, num_parallel_calls=2)
    # (the map measures its first elements inline, in this process)
    in_workers = [cpu for pid, cpu in values(ds.with_options(options)) if pid != os.getpid()]
    assert len(in_workers) >= 4 and max(in_workers) < 0.02, in_workers


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs 2 CPUs to spread workers over")
def test_worker_processes_are_spread_one_per_cpu():
    import time
    """Linux balances run-queue lengths, not shares: beside a busy process, two workers
    left on the other core look balanced to it. Each worker is pinned to its own CPU."""
    def where(x):
        time.sleep(0.01)
        return np.array([os.getpid()] + sorted(os.sched_getaffinity(0)))
    options = tf.data.Options()
    options.threading.worker_mechanism = "process"
    ds = tf.data.Dataset.range(12).map(where, num_parallel_calls=2).with_options(options)
    seen = {int(v[0]): tuple(int(c) for c in v[1:]) for v in values(ds)}
    workers = {pid: cpus for pid, cpus in seen.items() if pid != os.getpid()}
    assert len(workers) == 2, seen
    assert all(len(cpus) == 1 for cpus in workers.values()), workers
    assert len(set(workers.values())) == 2, workers  # different CPUs


@pytest.mark.parametrize("mechanism", ["thread", "process"])
def test_parallel_map_equals_sequential_and_shuts_down_cleanly(mechanism):
    import gc
    import glob
    import os

    def f(x):
        return x * x + 1
    options = tf.data.Options()
    options.threading.worker_mechanism = mechanism
    base = tf.data.Dataset.range(50)
    parallel = base.map(f, num_parallel_calls=2).with_options(options)
    assert values(parallel) == values(base.map(f))
    shm_before = set(glob.glob("/dev/shm/psm_*"))
    it = iter(parallel)
    next(it)
    raw = it._raw
    while not hasattr(raw, "_workers"):
        raw = raw._in
    procs = [w.proc for w in raw._workers]
    del it, raw
    gc.collect()
    for p in procs:
        p.join(5)
        assert not p.is_alive()
    assert set(glob.glob("/dev/shm/psm_*")) <= shm_before


def test_cpu_budget_caps_autotune_parallelism():
    options = tf.data.Options()
    options.autotune.cpu_budget = 1
    options.threading.worker_mechanism = "thread"
    ds = tf.data.Dataset.range(20).map(lambda x: x + 1, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.with_options(options)
    assert values(ds) == list(range(1, 21))
    assert "x1" in ds.explain(print_fn=None)


def test_unbatch_cardinality_is_unknown_for_finite_input():
    assert int(tf.data.Dataset.range(6).batch(2).unbatch().cardinality()) == \
        tf.data.UNKNOWN_CARDINALITY
    assert int(tf.data.Dataset.range(6).repeat().batch(2).unbatch().cardinality()) == \
        tf.data.INFINITE_CARDINALITY


def test_map_after_batch_keeps_the_unknown_batch_size_in_element_spec():
    """The time-series tutorial's WindowGenerator: batches of windows split by a map whose
    outputs get set_shape([None, width, None]); TensorFlow's element_spec traces the map,
    so the batch dimension stays None (the last batch may be smaller)."""
    data = np.arange(200, dtype=np.float32).reshape(50, 4)
    ds = tf.keras.utils.timeseries_dataset_from_array(data, None, sequence_length=7,
                                                      batch_size=32)

    def split_window(features):
        inputs = features[:, slice(0, 6), :]
        labels = tf.stack([features[:, slice(6, None), 1]], axis=-1)
        inputs.set_shape([None, 6, None])
        labels.set_shape([None, 1, None])
        return inputs, labels
    spec = ds.map(split_window).element_spec
    assert spec == (tf.TensorSpec((None, 6, 4), tf.float32),
                    tf.TensorSpec((None, 1, 1), tf.float32))
    sizes = [x.shape[0] for x, _ in ds.map(split_window)]
    assert sizes == [32, 12]


def test_map_element_spec_of_an_untraceable_function_comes_from_its_first_element():
    ds = tf.data.Dataset.range(5).batch(2).map(
        lambda x: tf.constant(np.asarray(x.numpy()) * 2))  # reads .numpy(): not traceable
    assert ds.element_spec == tf.TensorSpec((2,), tf.int64)
