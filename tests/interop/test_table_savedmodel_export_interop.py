"""tensorlite writes SavedModels that use lookup tables, real TensorFlow loads them
(tf_side.py savedmodel_read: tf.saved_model.load, and TensorFlow 1's loader running the init
op and the SignatureDefs by tensor name, as TensorFlow Serving does): a StaticHashTable, a
StaticVocabularyTable with OOV buckets, a TextFileInitializer table whose file is an asset,
DenseHashTables, and Keras StringLookup and TextVectorization models give tensorlite's ids
for words in and out of vocabulary; a tf.saved_model.Asset's path is the SavedModel's copy."""
import json
import os

import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf
from tests.saved_model_helpers import (DENSE_IDS, STRING_PAIRS, STRING_WORDS, TABLE_WORDS,
                                       TEXT_KINDS, TEXTS, AssetReader, DenseTables,
                                       StringFunctions, Tables, string_lookup_model,
                                       text_vectorization_model, write_vocab_file)

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def tables_read_by_tensorflow(tmp_path_factory):
    directory = tmp_path_factory.mktemp("table_savedmodels")
    vocab = write_vocab_file(directory / "vocab_source.txt")
    module, model = Tables(vocab), string_lookup_model()
    text_models = {f"text_{kind}": text_vectorization_model(kind) for kind in TEXT_KINDS}
    tf.saved_model.save(module, str(directory / "tables"))
    tf.saved_model.save(model, str(directory / "string_lookup"))
    for name, text_model in text_models.items():
        tf.saved_model.save(text_model, str(directory / name))
    words = write_vocab_file(directory / "words_source.txt")
    tf.saved_model.save(AssetReader(words), str(directory / "asset_reader"))
    dense = DenseTables()
    tf.saved_model.save(dense, str(directory / "dense"))
    strings = StringFunctions()
    tf.saved_model.save(strings, str(directory / "strings"))
    os.remove(vocab)  # TensorFlow must read the copies in assets/
    os.remove(words)
    np.savez(directory / "inputs.npz", words=TABLE_WORDS, texts=TEXTS, ids=DENSE_IDS,
             string_words=STRING_WORDS, pairs=STRING_PAIRS)
    manifest = {
        "tables": {"functions": {"__call__": ["words"]},
                   "signatures": {"serving_default": {"words": "words"}}},
        "string_lookup": {"signatures": {"serving_default": {"inputs": "words"}}},
        **{name: {"signatures": {"serving_default": {"inputs": "texts"}}}
           for name in text_models},
        "asset_reader": {"functions": {"read": []}},
        "dense": {"functions": {"__call__": ["ids", "words"]},
                  "signatures": {"serving_default": {"ids": "ids", "words": "words"}}},
        "strings": {"functions": {"__call__": ["string_words", "pairs"]},
                    "signatures": {"serving_default": {"words": "string_words",
                                                       "pairs": "pairs"}}}}
    (directory / "manifest.json").write_text(json.dumps(manifest))
    run_tf("savedmodel_read", directory)
    expected = {k: v.numpy() for k, v in module(tf.constant(TABLE_WORDS)).items()}
    expected["directory"] = directory
    expected["strings"] = {k: v.numpy() for k, v in strings(
        tf.constant(STRING_WORDS), tf.constant(STRING_PAIRS)).items()}
    expected["dense"] = {k: v.numpy() for k, v in dense(tf.constant(DENSE_IDS),
                                                       tf.constant(TABLE_WORDS)).items()}
    expected["string_lookup"] = model(tf.constant(TABLE_WORDS)).numpy()
    for name, text_model in text_models.items():
        expected[name] = text_model(tf.constant(TEXTS)).numpy()
    return np.load(directory / "tf_read.npz"), expected


@pytest.mark.parametrize("key", ["static", "vocab", "text", "size"])
def test_tensorflow_looks_up_tensorlites_ids(tables_read_by_tensorflow, key):
    got, expected = tables_read_by_tensorflow
    for where in ("tables.__call__", "tables.sig.serving_default",
                  "tables.tf1.serving_default"):
        np.testing.assert_array_equal(got[f"{where}.{key}"], expected[key], err_msg=where)


@pytest.mark.parametrize("name", ["string_lookup"] + [f"text_{k}" for k in TEXT_KINDS])
def test_tensorflow_runs_saved_keras_text_layers(tables_read_by_tensorflow, name):
    """StringLookup (two OOV indices), and TextVectorization: lower-case, punctuation,
    whitespace split to a ragged tensor, bigrams, vocabulary lookup, then padding to dense,
    multi-hot or tf-idf counts, or the text classification tutorial's model on top."""
    got, expected = tables_read_by_tensorflow
    for where in ("sig", "tf1"):
        np.testing.assert_allclose(got[f"{name}.{where}.serving_default.output_0"],
                                   expected[name], rtol=1e-5, atol=1e-7, err_msg=where)


def test_tensorflow_reads_an_asset_from_the_saved_models_copy(tables_read_by_tensorflow):
    got, expected = tables_read_by_tensorflow
    assert got["asset_reader.read.contents"] == b"the\ncat\nsat\n"
    assert got["asset_reader.read.path"] == os.fsencode(
        expected["directory"] / "asset_reader" / "assets" / "words_source.txt")


@pytest.mark.parametrize("key", ["ids", "vectors", "size"])
def test_tensorflow_looks_up_a_dense_hash_tables_entries(tables_read_by_tensorflow, key):
    """DenseHashTables (MutableDenseHashTableV2, entries inserted by the initializer, one
    removed before the save) give tensorlite's values in TF2's and TF1's loaders."""
    got, expected = tables_read_by_tensorflow
    for where in ("dense.__call__", "dense.sig.serving_default", "dense.tf1.serving_default"):
        np.testing.assert_array_equal(got[f"{where}.{key}"], expected["dense"][key],
                                      err_msg=where)


@pytest.mark.parametrize("key", ["bytes", "chars", "match", "strip", "tokens", "token_splits",
                                 "joined", "reversed"])
def test_tensorflow_runs_saved_string_functions(tables_read_by_tensorflow, key):
    """StringLength (BYTE, UTF8_CHAR), StaticRegexFullMatch, StringStrip, StringJoin, ReverseV2 and
    tf.strings.split of a matrix (flattened for StringSplitV2, rows partitioned again by
    a uniform row length) give tensorlite's values in real TensorFlow."""
    got, expected = tables_read_by_tensorflow
    for where in ("strings.__call__", "strings.sig.serving_default",
                  "strings.tf1.serving_default"):
        np.testing.assert_array_equal(got[f"{where}.{key}"], expected["strings"][key],
                                      err_msg=where)
