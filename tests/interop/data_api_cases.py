"""tf.data API cases run the same way under real TensorFlow (tf_data_api_side.py) and under
tensorlite (test_data_api_interop.py): each takes the `tf` module and a directory of input
files and returns JSON-able values; an error becomes {"error": class name, "message": text}.
"""
import sqlite3


def _run(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the error class is what is compared
        return {"error": type(e).__name__, "message": str(e)[:400]}


def _bytes(ds):
    return [x.hex() for x in ds.as_numpy_iterator()]


def make_inputs(directory):
    """The files both sides read (written with the standard library only)."""
    import gzip  # noqa: PLC0415
    with open(f"{directory}/fixed.bin", "wb") as f:
        f.write(b"HDR" + bytes(range(20)) + b"FT")
    with open(f"{directory}/fixed.gz", "wb") as f:
        f.write(gzip.compress(b"H" + bytes(range(40, 56)) + b"F"))
    with open(f"{directory}/bad.gz", "wb") as f:
        f.write(gzip.compress(b"x" * 10))
    with open(f"{directory}/bad.bin", "wb") as f:
        f.write(b"HH" + b"x" * 10 + b"F")
    conn = sqlite3.connect(f"{directory}/people.sqlite3")
    conn.execute("CREATE TABLE people (name TEXT, age INTEGER, height REAL)")
    conn.executemany("INSERT INTO people VALUES (?, ?, ?)",
                     [("ann", 31, 1.7), ("bob", 42, 1.8), ("cy", 23, 1.6)])
    conn.commit()
    conn.close()


def _sparse(sp):
    return [sp.indices.numpy().tolist(), [v.decode() if isinstance(v, bytes) else v
                                          for v in sp.values.numpy().tolist()],
            sp.dense_shape.numpy().tolist()]


def _example_files(tf, d):
    """Example files written by whichever side runs first (TensorFlow, in the test)."""
    import os  # noqa: PLC0415
    if os.path.exists(f"{d}/ex-1.tfrecord"):
        return
    rows = [(20, b"f"), (31, b"m"), (42, b"f"), (53, b"m"), (64, b"f")]
    for k, chunk in enumerate((rows[:3], rows[3:])):
        with tf.io.TFRecordWriter(f"{d}/ex-{k}.tfrecord") as w:
            for age, gender in chunk:
                feature = {"age": tf.train.Feature(int64_list=tf.train.Int64List(value=[age])),
                           "gender": tf.train.Feature(
                               bytes_list=tf.train.BytesList(value=[gender]))}
                w.write(tf.train.Example(features=tf.train.Features(feature=feature))
                        .SerializeToString())


def _batched_features(tf, d):
    features = {"age": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
                "gender": tf.io.FixedLenFeature([], tf.string)}
    ds = tf.data.experimental.make_batched_features_dataset(
        f"{d}/ex-*.tfrecord", batch_size=2, features=features, label_key="age", num_epochs=1,
        shuffle=False)
    return [[sorted(x), x["gender"].numpy().tolist(), y.numpy().tolist()] for x, y in ds]


def cases(tf, d):
    E = tf.data.experimental
    _example_files(tf, d)
    fixed = lambda *a, **k: _bytes(tf.data.FixedLengthRecordDataset(*a, **k))  # noqa: E731
    rows = [["a", "b", "c"], ["a", "b"], ["a", "b", "c", "d"]]
    ragged = tf.data.Dataset.from_generator(lambda: iter(rows),
                                            output_signature=tf.TensorSpec([None], tf.string))
    reducer = E.Reducer(init_func=lambda _: tf.constant(0, tf.int64),
                        reduce_func=lambda x, y: x + y, finalize_func=lambda x: x)
    words = tf.data.Dataset.from_tensor_slices(["a", "b", "c"])
    return {
        "fixed": _run(lambda: fixed(f"{d}/fixed.bin", 4, header_bytes=3, footer_bytes=2)),
        "fixed_gzip": _run(lambda: fixed(f"{d}/fixed.gz", 8, header_bytes=1, footer_bytes=1,
                                         compression_type="GZIP")),
        "fixed_bad": _run(lambda: fixed(f"{d}/bad.bin", 4, header_bytes=2, footer_bytes=1)),
        "tfrecord_written": _run(lambda: _bytes(tf.data.TFRecordDataset(
            f"{d}/written.tfrecord", compression_type="GZIP"))),
        "batched_features": _run(lambda: [[k, [g.decode() for g in gs], ages]
                                          for k, gs, ages in _batched_features(tf, d)]),
        "parse_example_dataset": _run(lambda: [x["age"].numpy().tolist() for x in
                                               tf.data.TFRecordDataset(f"{d}/ex-0.tfrecord")
                                               .batch(2).apply(E.parse_example_dataset(
                                                   {"age": tf.io.FixedLenFeature(
                                                       [], tf.int64)}))]),
        "external_state_policies": [p.value for p in (E.ExternalStatePolicy.WARN,
                                                     E.ExternalStatePolicy.IGNORE,
                                                     E.ExternalStatePolicy.FAIL)],
        "pad_to_cardinality": _run(lambda: [{k: v.item() for k, v in x.items()} for x in
                                            tf.data.Dataset.from_tensor_slices({"a": [1, 2]})
                                            .apply(E.pad_to_cardinality(3))
                                            .as_numpy_iterator()]),
        "dataset_initializer": _run(lambda: b",".join(tf.lookup.StaticHashTable(
            E.DatasetInitializer(tf.data.Dataset.zip((tf.data.Dataset.range(3), words))), "?")
            .lookup(tf.constant([2, 0, 9], tf.int64)).numpy().tolist()).decode()),
        "at": _run(lambda: [int(E.at(tf.data.Dataset.range(10).map(lambda x: x * 2), 3)),
                            E.at(tf.data.Dataset.range(10).batch(3), 3).numpy().tolist(),
                            int(E.at(tf.data.Dataset.range(10).repeat(2), 12))]),
        "at_out_of_range": _run(lambda: E.at(tf.data.Dataset.range(10), 12)),
        "at_filter": _run(lambda: E.at(tf.data.Dataset.range(10).filter(lambda x: True), 3)),
        "counter": _run(lambda: [int(x) for x in E.Counter(start=10, step=-3).take(4)]),
        "sparse_batch": _run(lambda: [_sparse(s) for s in ragged.sparse_batch(2, [6])]),
        "sparse_batch_unknown": _run(lambda: [_sparse(s) for s in ragged.apply(
            E.dense_to_sparse_batch(3, [None]))]),
        "sparse_batch_minus_one": _run(lambda: ragged.sparse_batch(3, [-1])),
        "sparse_batch_too_big": _run(lambda: list(ragged.sparse_batch(3, [2]))),
        "fixed_bad_gzip": _run(lambda: fixed(f"{d}/bad.gz", 4, compression_type="GZIP")),
        "group_by_reducer": _run(lambda: [int(x) for x in tf.data.Dataset.range(10).apply(
            E.group_by_reducer(lambda x: x % 3, reducer))]),
        "assert_short": _run(lambda: list(tf.data.Dataset.range(3).apply(
            E.assert_cardinality(5)))),
        "assert_long": _run(lambda: list(tf.data.Dataset.range(10).apply(
            E.assert_cardinality(5)))),
        "assert_card": _run(lambda: int(tf.data.Dataset.range(4).filter(
            lambda x: True).apply(E.assert_cardinality(4)).cardinality())),
        "single_empty": _run(lambda: tf.data.Dataset.range(0).get_single_element()),
        "single_many": _run(lambda: tf.data.Dataset.range(2).get_single_element()),
        "from_list": _run(lambda: [[int(a), b.decode()] for a, b in E.from_list(
            [(1, "a"), (2, "b")]).as_numpy_iterator()]),
        "index_table_oov": _run(lambda: E.index_table_from_dataset(
            words, num_oov_buckets=5).lookup(tf.constant(["b", "zebra", "q", "c"]))
            .numpy().tolist()),
        "sql": _run(lambda: [[n.decode(), int(a), float(h)] for n, a, h in E.SqlDataset(
            "sqlite", f"{d}/people.sqlite3", "SELECT name, age, height FROM people",
            (tf.string, tf.int32, tf.float64)).as_numpy_iterator()]),
        "sql_driver": _run(lambda: E.SqlDataset("mysql", f"{d}/people.sqlite3", "SELECT 1",
                                                (tf.int64,))),
        "optional_empty_get": _run(lambda: tf.experimental.Optional.empty(
            tf.TensorSpec([], tf.int32)).get_value()),
        "shard_policies": [int(p) for p in (E.AutoShardPolicy.OFF, E.AutoShardPolicy.AUTO,
                                            E.AutoShardPolicy.FILE, E.AutoShardPolicy.DATA,
                                            E.AutoShardPolicy.HINT)],
    }
