"""tf.saved_model.save of objects that use lookup tables, loaded back by tensorlite: the
tables come back with their contents, a vocabulary file travels in assets/ (the original may
be gone), DenseHashTables keep their entries, string functions round trip, and what export
cannot write yet says so. Real TensorFlow loading the same files:
tests/interop/test_table_savedmodel_export_interop.py."""
import os

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors
from tests.saved_model_helpers import (DENSE_IDS, STRING_PAIRS, STRING_WORDS, TABLE_WORDS,
                                       TEXT_KINDS, TEXTS, AssetReader, DenseTables,
                                       StringFunctions, Tables, string_lookup_model,
                                       text_vectorization_model, write_vocab_file)


def test_tables_round_trip_with_the_vocabulary_file_as_an_asset(tmp_path):
    vocab = write_vocab_file(tmp_path / "vocab.txt")
    module = Tables(vocab)
    want = {k: v.numpy() for k, v in module(tf.constant(TABLE_WORDS)).items()}
    np.testing.assert_array_equal(want["static"], [7, 8, -1, -1, -1, 9, -1, -1])
    np.testing.assert_array_equal(want["text"], [0, 1, -5, -5, 2, -5, -5, -5])
    assert want["vocab"][[1, 5, 7]].tolist() == [2, 0, 1] and (want["vocab"][[0, 2]] >= 3).all()
    tf.saved_model.save(module, str(tmp_path / "m"))
    assert os.listdir(tmp_path / "m" / "assets") == ["vocab.txt"]
    os.remove(vocab)  # the SavedModel reads its own copy
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    for got in (loaded(tf.constant(TABLE_WORDS)),
                loaded.signatures["serving_default"](words=tf.constant(TABLE_WORDS))):
        for key, value in want.items():
            np.testing.assert_array_equal(got[key].numpy(), value, err_msg=key)


def test_a_loaded_model_with_tables_saves_again(tmp_path):
    vocab = write_vocab_file(tmp_path / "vocab.txt")
    module = Tables(vocab)
    want = module(tf.constant(TABLE_WORDS))
    tf.saved_model.save(module, str(tmp_path / "first"))
    tf.saved_model.save(tf.saved_model.load(str(tmp_path / "first")), str(tmp_path / "again"))
    got = tf.saved_model.load(str(tmp_path / "again")).signatures["serving_default"](
        words=tf.constant(TABLE_WORDS))
    for key, value in want.items():
        np.testing.assert_array_equal(got[key].numpy(), value.numpy(), err_msg=key)


def test_keras_string_lookup_round_trip(tmp_path):
    model = string_lookup_model()
    want = model(tf.constant(TABLE_WORDS)).numpy()
    tf.saved_model.save(model, str(tmp_path / "k"))
    loaded = tf.saved_model.load(str(tmp_path / "k"))
    (got,) = loaded.signatures["serving_default"](inputs=tf.constant(TABLE_WORDS)).values()
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("kind", TEXT_KINDS)
def test_keras_text_vectorization_round_trip(tmp_path, kind):
    model = text_vectorization_model(kind)
    want = model(tf.constant(TEXTS)).numpy()
    assert want.shape[0] == 4 and want[3].any() and (kind != "int" or not want[2].any())
    tf.saved_model.save(model, str(tmp_path / "tv"))
    loaded = tf.saved_model.load(str(tmp_path / "tv"))
    (got,) = loaded.signatures["serving_default"](inputs=tf.constant(TEXTS)).values()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_an_asset_is_copied_and_its_path_is_the_saved_models_copy(tmp_path):
    source = write_vocab_file(tmp_path / "words.txt")
    tf.saved_model.save(AssetReader(source), str(tmp_path / "a"))
    os.remove(source)
    got = tf.saved_model.load(str(tmp_path / "a")).read()
    assert got["contents"].numpy() == b"the\ncat\nsat\n"
    assert got["path"].numpy() == os.fsencode(tmp_path / "a" / "assets" / "words.txt")


def test_a_missing_vocabulary_file_is_a_clear_error_and_leaves_the_old_model(tmp_path):
    vocab = write_vocab_file(tmp_path / "vocab.txt")
    module = Tables(vocab)
    tf.saved_model.save(module, str(tmp_path / "m"))
    os.remove(vocab)
    with pytest.raises(errors.NotFoundError, match="vocab.txt"):
        tf.saved_model.save(module, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))  # the first save is intact
    assert loaded(tf.constant([b"sat"]))["text"].numpy().tolist() == [2]


def test_a_mutable_table_keeps_what_was_inserted(tmp_path):
    class Counts(tf.Module):
        def __init__(self):
            super().__init__()
            self.t = tf.lookup.MutableHashTable(tf.string, tf.int64, -1)
            self.t.insert(["x", "y"], tf.constant([5, 6], tf.int64))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def __call__(self, x):
            return self.t.lookup(x)
    tf.saved_model.save(Counts(), str(tmp_path / "c"))
    got = tf.saved_model.load(str(tmp_path / "c"))(tf.constant(["y", "q", "x"]))
    assert got.numpy().tolist() == [6, -1, 5]


def test_dense_hash_tables_round_trip_and_re_save(tmp_path):
    """A DenseHashTable is a MutableDenseHashTableV2 with its empty_key and deleted_key as
    inputs; what was inserted (less what was removed) comes back, and again after a
    re-save of the loaded model."""
    module = DenseTables()
    args = tf.constant(DENSE_IDS), tf.constant(TABLE_WORDS)
    want = {k: v.numpy() for k, v in module(*args).items()}
    assert want["ids"].tolist() == [40, 90, -1, -1, -1] and want["size"] == 2
    tf.saved_model.save(module, str(tmp_path / "d"))
    loaded = tf.saved_model.load(str(tmp_path / "d"))
    tf.saved_model.save(loaded, str(tmp_path / "again"))
    for path in ("d", "again"):
        got = tf.saved_model.load(str(tmp_path / path))(*args)
        for key, value in want.items():
            np.testing.assert_array_equal(got[key].numpy(), value, err_msg=f"{path} {key}")


def test_dense_hash_table_with_the_empty_string_as_empty_key_saves(tmp_path):
    """Tracing runs on made-up inputs (the empty string) that are this table's empty_key:
    the save still works, while an eager lookup of the empty_key stays an error."""
    class Dense(tf.Module):
        def __init__(self):
            super().__init__()
            self.t = tf.lookup.experimental.DenseHashTable(tf.string, tf.int64, -1, "", "$")
            self.t.insert(["x"], tf.constant([3], tf.int64))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def __call__(self, x):
            return self.t.lookup(x)
    module = Dense()
    tf.saved_model.save(module, str(tmp_path / "d"))
    got = tf.saved_model.load(str(tmp_path / "d"))(tf.constant(["x", "y"]))
    assert got.numpy().tolist() == [3, -1]
    with pytest.raises(errors.InvalidArgumentError, match="empty_key"):
        module.t.lookup(tf.constant(["", "x"]))

def test_string_functions_round_trip_through_tensorflows_ops(tmp_path):
    """StringLength, StaticRegexFullMatch, StringStrip, ReduceJoin and the split of a matrix
    (Reshape, StringSplitV2, a uniform row partition) as written come back with the same
    values, for the saved batch and a batch of another size."""
    module = StringFunctions()
    tf.saved_model.save(module, str(tmp_path / "s"))
    loaded = tf.saved_model.load(str(tmp_path / "s"))
    for words, pairs in ((STRING_WORDS, STRING_PAIRS), (STRING_WORDS[:2], STRING_PAIRS[1:2])):
        want = module(tf.constant(words), tf.constant(pairs))
        got = loaded(tf.constant(words), tf.constant(pairs))
        sig = loaded.signatures["serving_default"](words=tf.constant(words),
                                                   pairs=tf.constant(pairs))
        for key, value in want.items():
            np.testing.assert_array_equal(got[key].numpy(), value.numpy(), err_msg=key)
            np.testing.assert_array_equal(sig[key].numpy(), value.numpy(), err_msg=key)
