"""tf.data's file sources and sinks from TF 2's API: FixedLengthRecordDataset,
experimental.TFRecordWriter, parse_example_dataset / make_batched_features_dataset and
SqlDataset, as the TF API docs use them."""
import gzip
import os
import sqlite3
import zlib

import pytest

import tensorlite as tf

E = tf.data.experimental


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return str(path)


def test_fixed_length_records_with_header_and_footer(tmp_path):
    body = b"".join(bytes([i]) * 4 for i in range(5))
    path = _write(tmp_path / "data.bin", b"HDR" + body + b"FT")
    ds = tf.data.FixedLengthRecordDataset(path, record_bytes=4, header_bytes=3, footer_bytes=2)
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    assert list(ds.as_numpy_iterator()) == [bytes([i]) * 4 for i in range(5)]
    # decode_raw of each record, as the CIFAR readers do
    first = next(iter(ds.map(lambda r: tf.io.decode_raw(r, tf.uint8))))
    assert first.numpy().tolist() == [0, 0, 0, 0]


def test_fixed_length_several_files_compressed_and_parallel(tmp_path):
    a = _write(tmp_path / "a.bin", b"aaaabbbb")
    b = _write(tmp_path / "b.bin", b"ccccdddd")
    both = tf.data.FixedLengthRecordDataset([a, b], 4)
    assert list(both.as_numpy_iterator()) == [b"aaaa", b"bbbb", b"cccc", b"dddd"]
    inter = tf.data.FixedLengthRecordDataset([a, b], 4, num_parallel_reads=2)
    assert list(inter.as_numpy_iterator()) == [b"aaaa", b"cccc", b"bbbb", b"dddd"]
    gz = _write(tmp_path / "c.gz", gzip.compress(b"H" + b"xyxyzwzw" + b"F"))
    ds = tf.data.FixedLengthRecordDataset(gz, 4, header_bytes=1, footer_bytes=1,
                                          compression_type="GZIP")
    assert list(ds.as_numpy_iterator()) == [b"xyxy", b"zwzw"]
    zl = _write(tmp_path / "d.z", zlib.compress(b"12345678"))
    ds = tf.data.FixedLengthRecordDataset(zl, 8, compression_type="ZLIB")
    assert list(ds.as_numpy_iterator()) == [b"12345678"]


def test_fixed_length_body_not_a_multiple_is_data_loss_naming_the_file(tmp_path):
    path = _write(tmp_path / "bad.bin", b"HH" + b"x" * 10 + b"F")
    ds = tf.data.FixedLengthRecordDataset(path, record_bytes=4, header_bytes=2, footer_bytes=1)
    # TF 2.21's classes: InvalidArgumentError for a plain file, DataLossError compressed
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"bad\.bin.*body length 10 bytes.*"
                                                             r"record length \(4 bytes\)"):
        list(ds)
    gz = _write(tmp_path / "bad.gz", gzip.compress(b"x" * 10))
    ds = tf.data.FixedLengthRecordDataset(gz, 4, compression_type="GZIP")
    with pytest.raises(tf.errors.DataLossError, match=r"bad\.gz"):
        list(ds)
    with pytest.raises(tf.errors.InvalidArgumentError, match="record_bytes"):
        tf.data.FixedLengthRecordDataset(path, record_bytes=0)
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.data.FixedLengthRecordDataset(str(tmp_path / "missing.bin"), 4))


def test_fixed_length_iterator_checkpoint(tmp_path):
    path = _write(tmp_path / "r.bin", bytes(range(12)))
    ds = tf.data.FixedLengthRecordDataset(path, 3)
    it = iter(ds)
    next(it), next(it)
    state = it.save_state()
    it2 = iter(ds)
    it2.restore_state(state)
    assert next(it2).numpy() == bytes([6, 7, 8])


def test_experimental_tfrecord_writer_api_doc_example(tmp_path):
    dataset = tf.data.Dataset.range(3)
    dataset = dataset.map(tf.io.serialize_tensor)
    path = str(tmp_path / "tensors.tfrecord")
    writer = E.TFRecordWriter(path)
    writer.write(dataset)
    back = tf.data.TFRecordDataset(path).map(
        lambda x: tf.io.parse_tensor(x, out_type=tf.int64))
    assert [int(x) for x in back] == [0, 1, 2]
    gz = str(tmp_path / "g.tfrecord")
    E.TFRecordWriter(gz, compression_type="GZIP").write(
        tf.data.Dataset.from_tensor_slices([b"a", b"bc"]))
    assert list(tf.data.TFRecordDataset(gz, "GZIP").as_numpy_iterator()) == [b"a", b"bc"]
    with open(gz, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    with pytest.raises(TypeError, match="scalar `DT_STRING`"):
        E.TFRecordWriter(path).write(tf.data.Dataset.range(3))


def _example(age, gender):
    feature = {"age": tf.train.Feature(int64_list=tf.train.Int64List(value=[age])),
               "gender": tf.train.Feature(bytes_list=tf.train.BytesList(value=[gender]))}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _example_files(tmp_path):
    rows = [(20, b"f"), (31, b"m"), (42, b"f"), (53, b"m"), (64, b"f")]
    for k, chunk in enumerate((rows[:3], rows[3:])):
        with tf.io.TFRecordWriter(str(tmp_path / f"data-{k}.tfrecord")) as w:
            for age, gender in chunk:
                w.write(_example(age, gender))
    return rows


FEATURES = {"age": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
            "gender": tf.io.FixedLenFeature([], tf.string)}


def test_parse_example_dataset(tmp_path):
    _example_files(tmp_path)
    ds = tf.data.TFRecordDataset(str(tmp_path / "data-0.tfrecord")).batch(2)
    parsed = list(ds.apply(E.parse_example_dataset(FEATURES)))
    assert parsed[0]["age"].numpy().tolist() == [20, 31]
    assert parsed[1]["gender"].numpy().tolist() == [b"f"]
    # each string is bytes, never a 0-d array in an object array
    assert [type(g) for g in parsed[0]["gender"].numpy().tolist()] == [bytes, bytes]
    with pytest.raises(ValueError, match="features"):
        E.parse_example_dataset(None)


def test_make_batched_features_dataset(tmp_path):
    rows = _example_files(tmp_path)
    ds = E.make_batched_features_dataset(str(tmp_path / "data-*.tfrecord"), batch_size=2,
                                         features=FEATURES, label_key="age", num_epochs=1,
                                         shuffle=False)
    batches = list(ds)
    assert [b[1].numpy().tolist() for b in batches] == [[20, 31], [42, 53], [64]]
    assert [g.decode() for g in batches[0][0]["gender"].numpy().tolist()] == ["f", "m"]
    assert "age" not in batches[0][0]
    forever = E.make_batched_features_dataset(str(tmp_path / "data-*.tfrecord"), 2, FEATURES,
                                              shuffle=True, shuffle_seed=1)
    ages = [a for b in forever.take(10) for a in b["age"].numpy().tolist()]
    assert len(ages) == 20 and sorted(set(ages)) == [r[0] for r in rows]
    with pytest.raises(ValueError, match="label_key"):
        E.make_batched_features_dataset(str(tmp_path / "*.tfrecord"), 2, FEATURES,
                                        label_key="height")


def _people_db(tmp_path):
    path = str(tmp_path / "people.sqlite3")
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT, age INTEGER, height REAL)")
    conn.executemany("INSERT INTO people VALUES (?, ?, ?)",
                     [("ann", 31, 1.7), ("bob", 42, 1.8), ("cy", 23, 1.6)])
    conn.commit()
    conn.close()
    return path


def test_sql_dataset_api_doc_example(tmp_path):
    path = _people_db(tmp_path)
    dataset = E.SqlDataset("sqlite", path, "SELECT name, age FROM people",
                           (tf.string, tf.int32))
    rows = [(name.numpy(), int(age)) for name, age in dataset]
    assert rows == [(b"ann", 31), (b"bob", 42), (b"cy", 23)]
    assert dataset.element_spec == (tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.int32))
    heights = E.SqlDataset("sqlite", path, "SELECT height FROM people ORDER BY age",
                           tf.float64)
    assert [float(h) for h in heights] == [1.6, 1.7, 1.8]


def test_sql_dataset_is_read_only_and_checks_its_arguments(tmp_path):
    path = _people_db(tmp_path)
    before = os.path.getmtime(path), os.path.getsize(path)
    writing = E.SqlDataset("sqlite", path, "INSERT INTO people VALUES ('eve', 1, 1.0)",
                           (tf.string,))
    with pytest.raises(tf.errors.InvalidArgumentError, match="readonly|read-only"):
        list(writing)
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM people").fetchone()[0] == 3
    assert (os.path.getmtime(path), os.path.getsize(path)) == before
    with pytest.raises(tf.errors.InvalidArgumentError, match="not supported by SqlDataset"):
        E.SqlDataset("postgres", path, "SELECT 1", (tf.int64,))
    with pytest.raises(tf.errors.InvalidArgumentError, match="2 columns"):
        list(E.SqlDataset("sqlite", path, "SELECT name, age FROM people", (tf.string,)))
    missing = str(tmp_path / "nope.sqlite3")
    with pytest.raises(tf.errors.NotFoundError, match="nope.sqlite3"):
        list(E.SqlDataset("sqlite", missing, "SELECT 1", (tf.int64,)))
    assert not os.path.exists(missing)


def test_sql_dataset_checkpoint_resumes_after_the_rows_read(tmp_path):
    path = _people_db(tmp_path)
    ds = E.SqlDataset("sqlite", path, "SELECT age FROM people", tf.int64)
    it = iter(ds)
    next(it)
    state = it.save_state()
    again = iter(ds)
    again.restore_state(state)
    assert [int(x) for x in again] == [42, 23]
