"""SavedModels of text models written by real TensorFlow (tf.keras 2, and Keras 3's export)
load in tensorlite and give TensorFlow's outputs: TextVectorization layers (int with bigrams,
multi_hot, tf_idf) with their adapted vocabularies in lookup tables, the text-classification
tutorial's model, a StringLookup whose vocabulary file is an asset, and a tf.Module of
string, unicode, ragged and lookup-table ops whose MutableHashTable was filled before saving
(restored from the checkpoint) and whose StaticVocabularyTable reads its assets/ file with
OOV buckets by Fingerprint64 (tests/interop/tf_text_side.py writes them)."""
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


def test_text_classifier_gives_tensorflows_predictions(written):
    """TextVectorization -> Embedding -> GlobalAveragePooling1D -> Dense, trained and saved
    by TensorFlow: a SavedModel with a string input."""
    directory, facts, expected = written
    model = tf.saved_model.load(str(directory / "classifier"))
    got = model(tf.constant(facts["texts"]))
    np.testing.assert_allclose(got.numpy(), expected["classifier"], rtol=1e-5, atol=1e-6)


def test_keras3_exported_text_vectorization(tmp_path):
    facts = run_tf("keras3_write", tmp_path, legacy_keras=False,
                   script=TF_SIDE.with_name("tf_text_side.py"))
    model = tf.saved_model.load(str(tmp_path / "keras3_tv"))
    got = model.serve(tf.constant(facts["texts"]))
    np.testing.assert_array_equal(got.numpy(), np.load(tmp_path / "keras3_expected.npz")["tv"])


@pytest.mark.parametrize("name", ["integer_lookup", "hashing", "hashing_salted",
                                  "category_count", "text_count_bigrams", "lookup_one_hot"])
def test_preprocessing_layer_models_give_tensorflows_outputs(written, name):
    directory, _, expected = written
    model = tf.saved_model.load(str(directory / name))
    x = expected[f"layer_{name}_input"]
    np.testing.assert_allclose(model(tf.constant(x)).numpy(), expected[f"layer_{name}"])


def test_category_encoding_out_of_range_is_tensorflows_assertion(written):
    directory, _, _ = written
    model = tf.saved_model.load(str(directory / "category_count"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="values < num_tokens"):
        model(tf.constant([[1, 9]], dtype=tf.int64))


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



def test_asset_path_outside_assets_is_refused(written, tmp_path):
    """An asset file name may not leave the SavedModel's assets/ directory."""
    from tensorlite.saved_model.load import read_saved_model
    directory, _, _ = written
    copy = tmp_path / "lookup"
    shutil.copytree(directory / "lookup", copy)
    (tmp_path / "outside.txt").write_text("the\ncat\n")
    model = read_saved_model(str(copy))
    model.meta_graphs[0].asset_file_def[0].filename = "../../outside.txt"
    (copy / "saved_model.pb").write_bytes(model.SerializeToString())
    with pytest.raises(tf.errors.NotFoundError, match=r"is not a file in .*assets"):
        tf.saved_model.load(str(copy))


def test_keras3_loads_the_text_classification_tutorials_export_model(tmp_path):
    """The basic text-classification tutorial, run here: TextVectorization with its
    custom_standardization, adapted; the model trained; export_model (a Sequential of the
    vectorizer, the model and a sigmoid, built on strings by evaluate) compiled and saved.
    Real Keras 3 loads the `.keras` file given the function by custom_objects, with the
    compiled loss, and predicts what tensorlite predicts; here too it reloads only given it."""
    import json
    import re
    import string

    def custom_standardization(input_data):
        lowercase = tf.strings.lower(input_data)
        stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
        return tf.strings.regex_replace(stripped_html,
                                        "[%s]" % re.escape(string.punctuation), "")
    texts = ["The movie was great!", "The movie was okay.", "Worst <br /> movie, awful."]
    train = ["great movie", "awful movie", "the best", "the worst <br /> ever"] * 4
    vectorize_layer = tf.keras.layers.TextVectorization(
        standardize=custom_standardization, max_tokens=50, output_mode="int",
        output_sequence_length=8)
    vectorize_layer.adapt(tf.data.Dataset.from_tensor_slices(train).batch(4))
    model = tf.keras.Sequential([tf.keras.layers.Embedding(50, 4),
                                 tf.keras.layers.GlobalAveragePooling1D(),
                                 tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer="adam")
    model.fit(vectorize_layer(tf.constant(train)), np.tile([1.0, 0, 1, 0], 4), verbose=0)
    export_model = tf.keras.Sequential([vectorize_layer, model,
                                        tf.keras.layers.Activation("sigmoid")])
    export_model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=False),
                         optimizer="adam", metrics=["accuracy"])
    export_model.evaluate(tf.constant(train), np.tile([1.0, 0, 1, 0], 4), verbose=0)
    expected = export_model.predict(tf.constant(texts), verbose=0)
    export_model.save(tmp_path / "export.keras")
    (tmp_path / "texts.json").write_text(json.dumps(texts))

    facts = run_tf("keras3_read_text_model", tmp_path, legacy_keras=False,
                   script=TF_SIDE.with_name("tf_text_side.py"))
    assert facts["loss"] == "BinaryCrossentropy"
    np.testing.assert_allclose(np.load(tmp_path / "keras3_predictions.npy"), expected,
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="custom_standardization"):
        tf.keras.models.load_model(tmp_path / "export.keras")
    again = tf.keras.models.load_model(
        tmp_path / "export.keras",
        custom_objects={"custom_standardization": custom_standardization})
    np.testing.assert_allclose(again.predict(tf.constant(texts), verbose=0), expected,
                               rtol=1e-6)
