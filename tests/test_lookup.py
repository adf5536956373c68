"""tf.lookup tables against Python dicts; OOV ids against farmhash Fingerprint64."""
import farmhash
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors

VOCAB = ["the", "cat", "sat", "on", "mat"]


def _vocab_table(oov=3):
    init = tf.lookup.KeyValueTensorInitializer(VOCAB, tf.range(5, dtype=tf.int64))
    return tf.lookup.StaticVocabularyTable(init, oov)


def test_static_hash_table_against_dict():
    keys, values = ["a", "b", "c"], [10, 20, 30]
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), -1)
    query = ["c", "zz", "a", "a"]
    ref = dict(zip(keys, values))
    assert table.lookup(tf.constant(query)).numpy().tolist() == [ref.get(q, -1) for q in query]
    assert int(table.size()) == 3
    ints = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([5, 7], tf.int64), ["five", "seven"]), "?")
    assert ints.lookup(tf.constant([[7, 1]], tf.int64)).numpy().tolist() == [[b"seven", b"?"]]


def test_static_vocabulary_table_oov_ids_are_fingerprint64():
    table = _vocab_table(3)
    query = ["cat", "dog", "mat", "zebra", ""]
    want = [VOCAB.index(q) if q in VOCAB else 5 + farmhash.fingerprint64(q.encode()) % 3
            for q in query]
    assert table.lookup(tf.constant(query)).numpy().tolist() == want
    assert int(table.size()) == 5 + 3  # TensorFlow counts the OOV buckets
    traced = tf.function(table.lookup)  # TensorFlow's composition of ops, not the eager pass
    assert traced(tf.constant(query)).numpy().tolist() == want
    ints = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([100, 200], tf.int64), tf.constant([0, 1], tf.int64)), 4)
    want = [0, 2 + farmhash.fingerprint64(b"7") % 4]  # integer keys hash as their text
    assert ints.lookup(tf.constant([100, 7], tf.int64)).numpy().tolist() == want
    assert tf.function(ints.lookup)(tf.constant([100, 7], tf.int64)).numpy().tolist() == want
    with pytest.raises(ValueError, match="num_oov_buckets"):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            ["a"], tf.constant([0], tf.int64)), 0)


def test_text_file_initializer(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("apple\t3\nbanana\t5\ncherry\t8\n")
    by_column = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(path), tf.string, 0, tf.int64, 1, delimiter="\t"), -1)
    assert by_column.lookup(tf.constant(["banana", "kiwi"])).numpy().tolist() == [5, -1]
    lines = tmp_path / "words.txt"
    lines.write_text("red\ngreen\nblue\n")
    by_line = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(lines), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    assert by_line.lookup(tf.constant(["blue", "red"])).numpy().tolist() == [2, 0]
    with pytest.raises(errors.NotFoundError):
        tf.lookup.TextFileInitializer(str(tmp_path / "missing"), tf.string, 0, tf.int64,
                                      1)._pairs()
    bad = tmp_path / "bad.txt"
    bad.write_text("a\tnot-a-number\n")
    with pytest.raises(errors.InvalidArgumentError, match="not a valid int64"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            str(bad), tf.string, 0, tf.int64, 1), -1)


def test_mutable_and_dense_hash_tables():
    table = tf.lookup.MutableHashTable(tf.string, tf.int64, default_value=-1)
    table.insert(tf.constant(["x", "y"]), tf.constant([1, 2], tf.int64))
    table.insert(tf.constant(["y"]), tf.constant([5], tf.int64))
    assert table.lookup(tf.constant(["y", "x", "q"])).numpy().tolist() == [5, 1, -1]
    table.remove(tf.constant(["x"]))
    keys, values = table.export()
    assert dict(zip(keys.numpy().tolist(), values.numpy().tolist())) == {b"y": 5}
    dense = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, default_value=0.0,
                                                  empty_key=-1, deleted_key=-2)
    dense.insert(tf.constant([3, 4], tf.int64), tf.constant([0.5, 1.5]))
    assert dense.lookup(tf.constant([4, 9], tf.int64)).numpy().tolist() == [1.5, 0.0]
    with pytest.raises(errors.InvalidArgumentError, match="empty_key"):
        dense.insert(tf.constant([-1], tf.int64), tf.constant([1.0]))


def test_tables_in_tf_function_and_dataset_map():
    table = _vocab_table()
    counts = tf.lookup.MutableHashTable(tf.string, tf.int64, default_value=0)

    @tf.function
    def encode(line):
        words = tf.strings.split(line)
        counts.insert(words.flat_values, tf.ones_like(words.flat_values, tf.int64))
        return table.lookup(words).to_tensor(default_value=-1)

    got = encode(tf.constant(["the cat sat", "on the mat"]))
    assert got.numpy().tolist() == [[0, 1, 2], [3, 0, 4]]
    got = encode(tf.constant(["mat cat", "sat"]))  # the same graph, new data
    assert got.numpy().tolist() == [[4, 1], [2, -1]]
    assert int(counts.size()) == 5  # the insert ran on both calls (a stateful node)
    ds = tf.data.Dataset.from_tensor_slices(["the mat", "cat"]).map(
        lambda s: table.lookup(tf.strings.split(s)))
    assert [x.numpy().tolist() for x in ds] == [[0, 4], [1]]


def test_wrong_key_dtype_is_a_type_error():
    table = _vocab_table()
    with pytest.raises(TypeError, match="Keys must be dtype tf.string"):
        table.lookup(tf.constant([1, 2]))
    ints = tf.lookup.MutableHashTable(tf.int64, tf.int64, 0)
    with pytest.raises(TypeError, match="int64"):
        ints.lookup(tf.constant(["a"]))
    assert np.array_equal(ints.lookup([3]).numpy(), [0])  # Python ints convert to the key dtype
