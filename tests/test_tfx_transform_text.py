"""tft.ngrams, tft.bag_of_words and tft.tfidf against tf.Transform's documented examples;
tfidf's document frequencies are a full-pass analyzer whose result does not depend on how
the data is split into batches; the transform graph with them is in
tests/test_tfx_transform_text_graph.py."""
import numpy as np
import pytest

import tensorlite as tf
import tensorlite.transform as tft
from tensorlite.transform import analyzers, graph

SPEC = {"x": tf.io.FixedLenFeature([], tf.string)}


def test_ngrams_documented_example():
    tokens = tf.SparseTensor(
        indices=[[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [1, 3]],
        values=['One', 'was', 'Johnny', 'Two', 'was', 'a', 'rat'],
        dense_shape=[2, 4])
    got = tft.ngrams(tokens, ngram_range=(1, 3), separator=' ')
    assert got.values.numpy().tolist() == [
        b'One', b'One was', b'One was Johnny', b'was', b'was Johnny', b'Johnny', b'Two',
        b'Two was', b'Two was a', b'was', b'was a', b'was a rat', b'a', b'a rat', b'rat']
    assert got.indices.numpy().tolist() == [[0, i] for i in range(6)] + \
        [[1, i] for i in range(9)]
    assert got.dense_shape.numpy().tolist() == [2, 9]


def test_ngrams_of_characters_and_ragged_tokens():
    chars = tf.ragged.constant([["a", "b", "a", "b"], [], ["z"]])
    got = tft.ngrams(chars, (2, 2), "")
    assert got.values.numpy().tolist() == [b"ab", b"ba", b"ab"]
    assert got.indices.numpy().tolist() == [[0, 0], [0, 1], [0, 2]]
    assert got.dense_shape.numpy().tolist() == [3, 3]


def test_bag_of_words_keeps_each_ngram_once_per_row():
    tokens = tf.ragged.constant([["a", "b", "a", "b"], ["b", "b"]])
    got = tft.bag_of_words(tokens, (1, 2), " ")
    assert got.values.numpy().tolist() == [b"a", b"a b", b"b", b"b a", b"b", b"b b"]
    assert got.indices.numpy().tolist() == [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1]]


def test_bad_arguments_raise_value_error():
    tokens = tf.ragged.constant([["a", "b"]])
    with pytest.raises(ValueError, match="ngram_range"):
        tft.ngrams(tokens, (0, 2), " ")
    with pytest.raises(ValueError, match="ngram_range"):
        tft.ngrams(tokens, (3, 2), " ")
    with pytest.raises(ValueError, match="2-D"):
        tft.ngrams(tf.SparseTensor([[0, 0, 0]], ["a"], [1, 1, 1]), (1, 1), " ")
    with pytest.raises(ValueError, match="2-D SparseTensor"):
        tft.ngrams(tf.constant(["a", "b"]), (1, 1), " ")
    unordered = tf.SparseTensor([[1, 0], [0, 0]], ["b", "a"], [2, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="row-major.*tf.sparse.reorder"):
        tft.ngrams(unordered, (1, 1), " ")
    got = tft.ngrams(tf.sparse.reorder(unordered), (1, 1), " ")
    assert got.values.numpy().tolist() == [b"a", b"b"]


def preprocessing_fn(inputs):
    """tf.Transform's tfidf example, the tokens split from a text feature."""
    tokens = tf.strings.split(inputs["x"]).to_sparse()
    integerized = tft.compute_and_apply_vocabulary(tokens)
    vocab_index, tfidf_weight = tft.tfidf(integerized, 4)
    return {"index": vocab_index, "tf_idf": tfidf_weight, "integerized": integerized}


def _analyze(fn, batches):
    """The analyzer results of a full pass over batches, phase by phase, with the partial
    accumulators merged as the Beam combiner merges them."""
    phases, kinds, _ = graph.plan(fn, SPEC)
    known = {}
    for phase in phases:
        parts = {i: [] for i in phase}
        for batch in batches:
            run = graph.run_analyze(fn, batch, SPEC, known)
            for i in phase:
                parts[i] += run.partials[i]
        for i in phase:
            known[i] = analyzers.finalize(kinds[i][0], parts[i], kinds[i][1])
    return known


def _rows(sparse):
    idx, values = sparse.indices.numpy(), sparse.values.numpy()
    return [values[idx[:, 0] == r].tolist() for r in range(int(sparse.dense_shape[0]))]


DOCS = np.array([b"I like pie pie pie", b"yum yum pie"], dtype=object)


@pytest.mark.parametrize("batches", [[DOCS], [DOCS[:1], DOCS[1:]]], ids=["one", "two"])
def test_tfidf_documented_example(batches):
    known = _analyze(preprocessing_fn, [{"x": b} for b in batches])
    out = graph.run_analyze(preprocessing_fn, {"x": DOCS}, SPEC, known).outputs
    assert _rows(out["integerized"]) == [[3, 2, 0, 0, 0], [1, 1, 0]]
    assert _rows(out["index"]) == [[0, 2, 3], [0, 1]]
    weights = _rows(out["tf_idf"])
    np.testing.assert_allclose(weights[0], [0.6, 0.28109303, 0.28109303], rtol=1e-6)
    np.testing.assert_allclose(weights[1], [0.33333334, 0.9369768], rtol=1e-6)
    assert out["tf_idf"].dtype == tf.float32 and out["index"].dtype == tf.int64


def test_tfidf_unsmoothed_idf_is_one_plus_log_of_the_ratio():
    def fn(inputs):
        ids = tft.compute_and_apply_vocabulary(tf.strings.split(inputs["x"]).to_sparse())
        return dict(zip(("i", "w"), tft.tfidf(ids, 4, smooth=False)))
    known = _analyze(fn, [{"x": DOCS}])
    out = graph.run_analyze(fn, {"x": DOCS}, SPEC, known).outputs
    # 2 documents; 'pie' is in both, the others in one: idf 1 + log(2/2), 1 + log(2/1)
    expected = [[0.6, 0.2 * (1 + np.log(2)), 0.2 * (1 + np.log(2))], [1 / 3, 2 / 3 * (1 + np.log(2))]]
    for got, want in zip(_rows(out["w"]), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_tfidf_analysis_on_beam_equals_the_in_process_pass():
    """The analysis phases of the tfidf example run as tft_beam's combiner runs them on
    Beam (one document per batch), giving the same document frequencies."""
    beam = pytest.importorskip("apache_beam")
    from tensorlite.data_validation import beam_util
    from tensorlite.transform import beam as tft_beam
    phases, kinds, _ = graph.plan(preprocessing_fn, SPEC)
    assert [[kinds[i][0] for i in phase] for phase in phases] == [["vocabulary"], ["doc_freq"]]
    known = {}
    for phase in phases:
        result = beam_util.ResultFile()
        with beam_util.make_pipeline([]) as p:
            _ = (p | beam.Create([{"x": DOCS[:1]}, {"x": DOCS[1:]}])
                 | beam.Map(tft_beam._phase_partials, preprocessing_fn, SPEC, phase, known)
                 | beam.CombineGlobally(tft_beam._PhaseCombineFn(phase, kinds))
                 | beam.Map(result.write))
        known.update(result.read())
    expected = _analyze(preprocessing_fn, [{"x": DOCS}])
    assert known[0] == expected[0] == ["pie", "yum", "like", "I"]
    docs, doc_freq = known[1]
    assert docs == expected[1][0] == 2
    assert doc_freq.tolist() == expected[1][1].tolist() == [2, 1, 1, 1]
