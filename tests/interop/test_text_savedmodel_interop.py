"""SavedModels of text models written by real TensorFlow (tf.keras 2) load in tensorlite and
give TensorFlow's outputs: TextVectorization layers (int with bigrams, multi_hot, tf_idf)
with their adapted vocabularies in lookup tables, a StringLookup whose vocabulary file is an
asset, and a tf.Module of string, unicode, ragged and lookup-table ops whose
MutableHashTable was filled before saving (restored from the checkpoint) and whose
StaticVocabularyTable reads its assets/ file with OOV buckets by Fingerprint64
(tests/interop/tf_text_side.py writes them)."""
import shutil

import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import TF_SIDE, run_tf

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    directory = tmp_path_factory.mktemp("text_savedmodels")
    facts = run_tf("write", directory, script=TF_SIDE.with_name("tf_text_side.py"))
    return directory, facts, np.load(directory / "expected.npz", allow_pickle=True)


@pytest.mark.parametrize("name", ["tv_int", "tv_multi_hot", "tv_tf_idf"])
def test_text_vectorization_models_give_tensorflows_outputs(written, name):
    directory, facts, expected = written
    model = tf.saved_model.load(str(directory / name))
    texts = tf.constant(facts["texts"])
    out = model(texts)
    assert out.dtype == tf.as_dtype(expected[name].dtype)
    np.testing.assert_allclose(out.numpy(), expected[name], rtol=1e-6)
    serve = model.signatures["serving_default"]
    (arg,) = serve.structured_input_signature[1]  # signatures take keyword arguments only
    (signature_out,) = serve(**{arg: texts}).values()
    np.testing.assert_allclose(signature_out.numpy(), expected[name], rtol=1e-6)


def test_string_lookup_reads_its_vocabulary_asset(written):
    directory, _, expected = written
    model = tf.saved_model.load(str(directory / "lookup"))
    out = model(tf.constant([["the", "zebras", "owl"], ["cat", "cat", "ant"]]))
    np.testing.assert_array_equal(out.numpy(), expected["lookup"])
    assert out.numpy()[0, :2].tolist() == [2, 6]  # after the 2 OOV ids, in file order
    assert 0 <= out.numpy()[0, 2] < 2


def test_string_and_table_ops_module_gives_tensorflows_outputs(written):
    directory, facts, expected = written
    module = tf.saved_model.load(str(directory / "ops"))
    out = module(tf.constant(facts["texts"]))
    keys = sorted(k[len("ops_"):] for k in expected.files if k.startswith("ops_"))
    assert sorted(out) == keys
    for key in keys:
        want = expected[f"ops_{key}"]
        got = out[key].numpy()
        assert got.shape == want.shape, key
        if want.dtype == object:
            assert got.tolist() == want.tolist(), key
        else:
            np.testing.assert_array_equal(got, want, err_msg=key)
    assert int(out["table_size"]) == 2  # the MutableHashTable came back from the checkpoint


def test_missing_asset_is_a_clear_error(written, tmp_path):
    directory, _, _ = written
    copy = tmp_path / "lookup"
    shutil.copytree(directory / "lookup", copy)
    (copy / "assets" / "vocab.txt").unlink()
    with pytest.raises(tf.errors.NotFoundError, match=r"asset 'vocab.txt' is not a file"):
        tf.saved_model.load(str(copy))
