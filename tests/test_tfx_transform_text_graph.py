"""tft.ngrams, tft.bag_of_words and tft.tfidf inside a transform graph: the graph applies the
same transform the Beam pipeline applied, at batch sizes and row lengths the trace never
saw (empty documents too); a Keras model exported once with the transform layer serves raw
text through the model server; real TensorFlow loads the transform graph and the served
model and gives the same values."""
import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

pytest.importorskip("apache_beam")

import tensorlite as tf  # noqa: E402
import tensorlite.transform as tft  # noqa: E402
import tensorlite.transform.beam as tft_beam  # noqa: E402
from tensorlite.transform.tf_metadata import dataset_metadata, schema_utils  # noqa: E402
from tests.test_tfx_transform import predict_over_rest  # noqa: E402

SPEC = {"text": tf.io.FixedLenFeature([], tf.string)}
WORDS = ["good", "bad", "movie", "plot", "great", "boring", "actors", "the", "a", "film"]
VOCAB, GRAMS = 12, 16  # top-k vocabulary sizes (one more id each: the OOV bucket)


def _texts(count, seed):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(0, 7)))) for _ in range(count)]


def _dense(ids, weights, width):
    """[documents, width]: each document's weights at its (ascending, distinct) term ids."""
    shape = tf.stack([ids.dense_shape[0], tf.constant(width, tf.int64)])
    where = tf.stack([ids.indices[:, 0], ids.values], axis=1)
    return tf.sparse.to_dense(tf.SparseTensor(where, weights.values, shape))


def preprocessing_fn(inputs):
    """Bag of words and bigrams/trigrams as tf-idf vectors, as a TFX text pipeline does."""
    tokens = tf.strings.split(inputs["text"]).to_sparse()
    bag = tft.bag_of_words(tokens, (1, 2), " ")
    bag_ids = tft.compute_and_apply_vocabulary(bag, top_k=VOCAB, num_oov_buckets=1)
    grams = tft.ngrams(tokens, (2, 3), "_")
    gram_ids = tft.compute_and_apply_vocabulary(grams, top_k=GRAMS, num_oov_buckets=1)
    bag_index, bag_weight = tft.tfidf(bag_ids, VOCAB + 1)
    return {"bag_tfidf": _dense(bag_index, bag_weight, VOCAB + 1),
            "bag_index": bag_index, "bag_weight": bag_weight,  # SparseTensor outputs
            "gram_tfidf": _dense(*tft.tfidf(gram_ids, GRAMS + 1, smooth=False), GRAMS + 1),
            # words per document: a segment sum over as many segments as the batch has rows
            "words": tf.math.unsorted_segment_sum(tf.ones_like(tokens.indices[:, 0]),
                                                  tokens.indices[:, 0], tokens.dense_shape[0])}


def _analyze_and_transform(texts, tmp):
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(SPEC))
    with tft_beam.Context(temp_dir=tmp):
        (data, _), transform_fn = ([{"text": t} for t in texts], metadata) | \
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn)
        _ = transform_fn | tft_beam.WriteTransformFn(os.path.join(tmp, "out"))
    return data, os.path.join(tmp, "out")


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory):
    texts = _texts(60, seed=0)
    data, out = _analyze_and_transform(texts, str(tmp_path_factory.mktemp("tft_text")))
    return texts, data, out


def test_transform_graph_applies_what_the_pipeline_applied(analyzed):
    texts, data, out = analyzed
    layer = tft.TFTransformOutput(out).transform_features_layer()
    # another batch size and other row lengths than the trace's, an empty document first
    got = layer({"text": tf.constant([""] + texts[:7])})
    for name in ("bag_tfidf", "gram_tfidf", "words"):
        want = np.stack([np.asarray(r[name]) for r in data[:7]])
        np.testing.assert_allclose(got[name].numpy()[1:], want, rtol=1e-6, err_msg=name)
        assert not got[name].numpy()[0].any(), name
    assert got["words"].numpy()[1:].tolist() == [len(t.split()) for t in texts[:7]]
    spec = tft.TFTransformOutput(out).transformed_feature_spec()
    assert spec["bag_index"] == tf.io.VarLenFeature(tf.int64), spec
    assert spec["bag_weight"] == tf.io.VarLenFeature(tf.float32), spec
    assert spec["words"] == tf.io.FixedLenFeature([], tf.int64), spec
    for name in ("bag_index", "bag_weight"):  # sparse: each row's values, as the pipeline's
        assert isinstance(got[name], tf.SparseTensor), name
        rows = _sparse_rows(got[name])
        assert rows[0] == [], name
        for row, r in zip(rows[1:], data[:7]):
            np.testing.assert_allclose(row, np.asarray(r[name]), rtol=1e-6, err_msg=name)


def _sparse_rows(st):
    idx, values = st.indices.numpy(), st.values.numpy()
    return [values[idx[:, 0] == r].tolist() for r in range(int(st.dense_shape[0]))]


def test_transform_graph_values_are_tf_transforms_formulas(analyzed):
    """One document by hand: bag ids from the vocabulary file, tf * smoothed idf."""
    texts, _, out = analyzed
    output = tft.TFTransformOutput(out)
    vocab_files = sorted(os.listdir(os.path.join(out, "transform_fn", "assets")))
    bag_vocab = [line.rstrip("\n") for line in open(os.path.join(
        out, "transform_fn", "assets", vocab_files[0]), encoding="utf-8")]
    assert len(bag_vocab) == VOCAB
    doc = f"{bag_vocab[0]} {bag_vocab[0]} zzz"  # a unigram (twice) and an OOV
    got = output.transform_features_layer()({"text": tf.constant([doc])})["bag_tfidf"]
    grams = doc.split() + [" ".join(p) for p in zip(doc.split(), doc.split()[1:])]
    bag = list(dict.fromkeys(grams))  # what bag_of_words keeps: 4 distinct ngrams
    ids = [bag_vocab.index(g) if g in bag_vocab else VOCAB for g in bag]
    docs_with = {i: sum(any((bag_vocab.index(g) if g in bag_vocab else VOCAB) == i for g in
                            dict.fromkeys(t.split() + [" ".join(p) for p in
                                                       zip(t.split(), t.split()[1:])]))
                        for t in texts) for i in set(ids)}
    for i in set(ids):
        idf = 1 + np.log((len(texts) + 1) / (docs_with[i] + 1))
        np.testing.assert_allclose(got.numpy()[0, i], ids.count(i) / len(bag) * idf,
                                   rtol=1e-6)


def export_text_model(tmp_path, out, data):
    """A Keras model on the tf-idf vectors, exported once with the transform layer: its
    serving signature takes raw text."""
    tf.random.set_seed(2)
    bag = tf.keras.Input(shape=(VOCAB + 1,), name="bag_tfidf")
    model = tf.keras.Model(bag, tf.keras.layers.Dense(1, activation="sigmoid")(
        tf.keras.layers.Dense(4, activation="relu")(bag)))
    model.compile("adam", "binary_crossentropy")
    x = np.stack([np.asarray(r["bag_tfidf"], np.float32) for r in data])
    model.fit(x, (x[:, 0] > 0).astype(np.float32), epochs=2, verbose=0)
    model.tft_layer = tft.TFTransformOutput(out).transform_features_layer()

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def serve(text):
        return {"score": model(model.tft_layer({"text": text})["bag_tfidf"])}
    tf.saved_model.save(model, str(tmp_path / "serving" / "1"),
                        signatures={"serving_default": serve})
    return serve


def test_model_server_scores_raw_text(analyzed, tmp_path):
    texts, data, out = analyzed
    serve = export_text_model(tmp_path, out, data)
    docs = ["good movie good plot", "", "boring boring film the actors"]
    r = predict_over_rest(tmp_path / "serving", "reviews", [{"text": d} for d in docs])
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(np.array(r.json()["predictions"]).reshape(-1),
                               serve(tf.constant(docs))["score"].numpy().reshape(-1),
                               rtol=1e-6)


_TF_SIDE = """
import json, sys, tensorflow as tf
d = sys.argv[1]
texts = json.load(open(d + "/texts.json"))
m = tf.saved_model.load(d + "/out/transform_fn")
out = m.signatures["serving_default"](text=tf.constant(texts))
served = tf.saved_model.load(d + "/model/serving/1").signatures["serving_default"](
    text=tf.constant(texts))
res = {k: (v.numpy().tolist() if not isinstance(v, tf.SparseTensor) else
           [v.indices.numpy().tolist(), v.values.numpy().tolist(), v.dense_shape.numpy().tolist()])
       for k, v in out.items()}
res["score"] = served["score"].numpy().tolist()
print(json.dumps(res))
"""


@pytest.mark.interop
def test_real_tensorflow_applies_the_same_text_transform(analyzed, tmp_path):
    from tests.interop.conftest import tf_python
    python = tf_python()
    if python is None:
        pytest.skip("real TensorFlow is not installed (TENSORLITE_TF_PYTHON)")
    texts, data, out = analyzed
    serve = export_text_model(tmp_path / "model", out, data)
    os.symlink(out, tmp_path / "out")
    raw = _texts(9, seed=7) + ["", "good good good", "zzz unseen words only"]
    (tmp_path / "texts.json").write_text(json.dumps(raw))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([python, "-c", _TF_SIDE, str(tmp_path)], capture_output=True,
                          text=True, timeout=400, env=env, cwd=tempfile.gettempdir())
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    ours = tft.TFTransformOutput(out).transform_features_layer()({"text": tf.constant(raw)})
    assert sorted(got) == sorted(list(ours) + ["score"])
    for name, value in ours.items():
        if isinstance(value, tf.SparseTensor):  # TensorFlow got a SparseTensor too
            indices, values, shape = got[name]
            assert indices == value.indices.numpy().tolist(), name
            assert shape == value.dense_shape.numpy().tolist(), name
            np.testing.assert_allclose(values, value.values.numpy(), rtol=1e-6, err_msg=name)
            continue
        np.testing.assert_allclose(np.array(got[name]), value.numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=name)
    np.testing.assert_allclose(np.array(got["score"]).reshape(-1),
                               serve(tf.constant(raw))["score"].numpy().reshape(-1), rtol=1e-5)
