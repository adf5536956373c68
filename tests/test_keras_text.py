"""Keras text layers: TextVectorization, lookups, Hashing, CategoryEncoding, masking,
Bidirectional/TimeDistributed, sequence utilities, and the text-classification tutorial's
model learning a synthetic two-class corpus."""
import math

import farmhash
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors
from tensorlite.keras.layers.mask_propagation import keras_mask

L = tf.keras.layers
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "A cat, a dog; a bird?"]


def _keras_tokens(text):
    """Keras's default standardization and split, in plain Python."""
    strip = set('!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\'')
    return "".join(c for c in text.lower() if c not in strip).split()


def _ref_vocab(texts, max_tokens=None, specials=2):
    counts = {}
    for t in texts:
        for w in _keras_tokens(t):
            counts[w] = counts.get(w, 0) + 1
    order = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    words = [w for w, _ in order]
    return words if max_tokens is None else words[:max_tokens - specials]


def test_text_vectorization_int_mode_against_reference():
    layer = L.TextVectorization(output_sequence_length=6)
    layer.adapt(tf.data.Dataset.from_tensor_slices(TEXTS).batch(2))
    vocab = layer.get_vocabulary()
    assert vocab == ["", "[UNK]"] + _ref_vocab(TEXTS)
    got = layer(tf.constant(["the bird flew over the cat", "dog"])).numpy().tolist()
    index = {w: i for i, w in enumerate(vocab)}
    for text, row in zip(["the bird flew over the cat", "dog"], got):
        ids = [index.get(w, 1) for w in _keras_tokens(text)][:6]
        assert row == ids + [0] * (6 - len(ids))
    ragged = L.TextVectorization(vocabulary=vocab[2:], ragged=True)(["cat cat", "zebra"])
    assert ragged.to_list() == [[index["cat"]] * 2, [1]]
    column = layer(tf.constant([["the cat"], ["a dog"]]))  # a [batch, 1] column of texts
    assert column.shape == (2, 6)


def test_text_vectorization_max_tokens_and_vocabulary_io():
    layer = L.TextVectorization(max_tokens=5)
    layer.adapt(TEXTS)
    assert layer.get_vocabulary() == ["", "[UNK]"] + _ref_vocab(TEXTS, 5)
    assert layer.vocabulary_size() == 5
    other = L.TextVectorization()
    other.set_vocabulary(layer.get_vocabulary())
    assert other.get_vocabulary() == layer.get_vocabulary()
    restored = L.TextVectorization.from_config(layer.get_config())
    assert restored.get_vocabulary() == layer.get_vocabulary()
    np.testing.assert_array_equal(restored(TEXTS).numpy(), layer(TEXTS).numpy())
    with pytest.raises(ValueError, match="repeated"):
        other.set_vocabulary(["a", "a"])


def test_text_vectorization_multi_hot_count_tf_idf_ngrams():
    words = _ref_vocab(TEXTS)
    multi = L.TextVectorization(output_mode="multi_hot")
    multi.adapt(TEXTS)
    vocab = multi.get_vocabulary()
    assert vocab == ["[UNK]"] + words
    got = multi(["cat cat zebra"]).numpy()[0]
    want = np.zeros(len(vocab))
    want[vocab.index("cat")] = want[0] = 1
    np.testing.assert_array_equal(got, want)
    count = L.TextVectorization(output_mode="count", vocabulary=words)
    assert count(["cat cat zebra"]).numpy()[0][vocab.index("cat")] == 2
    tfidf = L.TextVectorization(output_mode="tf_idf")
    tfidf.adapt(TEXTS)
    docs = [set(_keras_tokens(t)) for t in TEXTS]
    idf = {w: math.log(1 + len(TEXTS) / (1 + sum(w in d for d in docs))) for w in words}
    got = tfidf(["cat cat"]).numpy()[0]
    assert got[vocab.index("cat")] == pytest.approx(2 * idf["cat"], rel=1e-5)
    bigrams = L.TextVectorization(ngrams=2, output_mode="multi_hot")
    bigrams.adapt(["a b c"])
    assert set(bigrams.get_vocabulary()) == {"[UNK]", "a", "b", "c", "a b", "b c"}


def test_string_and_integer_lookup():
    layer = L.StringLookup(vocabulary=["a", "b", "c"])
    assert layer(tf.constant([["a", "z", "c"]])).numpy().tolist() == [[1, 0, 3]]
    inverse = L.StringLookup(vocabulary=["a", "b", "c"], invert=True)
    assert inverse(tf.constant([[1, 0, 3]])).numpy().tolist() == [[b"a", b"[UNK]", b"c"]]
    masked = L.StringLookup(vocabulary=["a"], mask_token="", num_oov_indices=3)
    got = masked(tf.constant(["", "a", "q"])).numpy().tolist()
    assert got == [0, 4, 1 + farmhash.fingerprint64(b"q") % 3]
    assert masked.get_vocabulary() == ["", "[UNK]", "[UNK]", "[UNK]", "a"]
    ints = L.IntegerLookup(vocabulary=[12, 36, 1138])
    assert ints(tf.constant([[12, 1138, 42]])).numpy().tolist() == [[1, 3, 0]]
    adapted = L.IntegerLookup()
    adapted.adapt(tf.constant([5, 5, 5, 9, 9, 1]))
    assert adapted.get_vocabulary() == [-1, 5, 9, 1]
    hot = L.StringLookup(vocabulary=["a", "b"], output_mode="multi_hot")
    assert hot(tf.constant([["a", "a", "q"]])).numpy().tolist() == [[1, 1, 0]]
    ragged = layer(tf.ragged.constant([["a"], ["b", "zz"]]))
    assert ragged.to_list() == [[1], [2, 0]]


def test_hashing_and_category_encoding():
    got = L.Hashing(num_bins=3)(tf.constant([["Hello"], ["TensorFlow"], ["2.x"]]))
    assert got.numpy().ravel().tolist() == [0, 2, 2]  # TF's documented Fingerprint64 bins
    ints = L.Hashing(num_bins=5)(tf.constant([[7], [12]], tf.int64)).numpy().ravel().tolist()
    assert ints == [farmhash.fingerprint64(b"7") % 5, farmhash.fingerprint64(b"12") % 5]
    salted = L.Hashing(num_bins=3, salt=[1, 2])(tf.constant([["Hello"], ["TF"]]))
    assert salted.numpy().ravel().tolist() == [2, 0]
    masked = L.Hashing(num_bins=4, mask_value="")(tf.constant([[""], ["x"]])).numpy().ravel()
    assert masked[0] == 0 and masked[1] == 1 + farmhash.fingerprint64(b"x") % 3
    enc = L.CategoryEncoding(num_tokens=4, output_mode="count")
    assert enc(tf.constant([[0, 1, 1], [3, 3, 2]])).numpy().tolist() == [[1, 2, 0, 0],
                                                                          [0, 0, 1, 2]]
    hot = L.CategoryEncoding(num_tokens=3, output_mode="one_hot")
    assert hot(tf.constant([2, 0])).numpy().tolist() == [[0, 0, 1], [1, 0, 0]]
    multi = L.CategoryEncoding(num_tokens=3)
    assert multi(tf.constant([[0, 0, 2]])).numpy().tolist() == [[1, 0, 1]]
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        enc(tf.constant([[4]]))


def test_mask_propagation_and_embedding_with_ragged_and_masked_inputs():
    emb = L.Embedding(10, 3, mask_zero=True)
    ids = tf.constant([[4, 2, 0, 0], [1, 0, 0, 0]])
    out = emb(ids)
    assert keras_mask(out).numpy().tolist() == (ids.numpy() != 0).tolist()
    pooled = L.GlobalAveragePooling1D()(out)  # receives the mask from the embedding
    np.testing.assert_allclose(pooled.numpy()[0], out.numpy()[0, :2].mean(axis=0), rtol=1e-6)
    lstm = L.LSTM(2, return_sequences=True)
    seq = lstm(out)
    assert keras_mask(seq) is not None
    np.testing.assert_allclose(seq.numpy()[1, 3], seq.numpy()[1, 0], rtol=1e-6)  # held
    ragged = emb(tf.ragged.constant([[4, 2], [1]]))
    assert ragged.shape.as_list() == [2, None, 3]
    np.testing.assert_allclose(ragged.to_list()[0], out.numpy()[0, :2].tolist(), rtol=1e-6)
    masking = L.Masking(mask_value=0.0)
    x = tf.constant([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]])
    assert keras_mask(masking(x)).numpy().tolist() == [[True, False, True]]


def test_bidirectional_and_time_distributed():
    x = tf.random.normal([2, 5, 4], seed=1)
    forward = L.LSTM(3, return_sequences=True)
    bi = L.Bidirectional(forward, merge_mode="concat")
    y = bi(x)
    assert y.shape == (2, 5, 6)
    np.testing.assert_allclose(y.numpy()[..., :3], forward(x).numpy(), rtol=1e-5)
    backward = bi.backward_layer(x)  # go_backwards: outputs in reversed time order
    np.testing.assert_allclose(y.numpy()[:, ::-1, 3:], backward.numpy(), rtol=1e-5)
    assert L.Bidirectional(L.GRU(2), merge_mode="sum")(x).shape == (2, 2)
    dense = L.Dense(2)
    td = L.TimeDistributed(dense)
    out = td(x)
    np.testing.assert_allclose(out.numpy()[:, 3], dense(x[:, 3]).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="recurrent"):
        L.Bidirectional(L.Dense(2))


def test_pad_sequences_and_text_dataset_from_directory(tmp_path):
    pad = tf.keras.utils.pad_sequences
    assert pad([[1, 2, 3], [4]]).tolist() == [[1, 2, 3], [0, 0, 4]]
    assert pad([[1, 2, 3], [4]], maxlen=2, padding="post", truncating="post").tolist() == \
        [[1, 2], [4, 0]]
    assert pad([[1], []], maxlen=3, value=-1).tolist() == [[-1, -1, 1], [-1, -1, -1]]
    for label, texts in (("neg", ["bad", "awful", "meh"]), ("pos", ["good", "great"])):
        (tmp_path / label).mkdir()
        for i, t in enumerate(texts):
            (tmp_path / label / f"{i}.txt").write_text(t)
    ds = tf.keras.utils.text_dataset_from_directory(str(tmp_path), batch_size=2, seed=1)
    assert ds.class_names == ["neg", "pos"]
    pairs = [(t, int(y)) for xb, yb in ds for t, y in zip(xb.numpy(), yb.numpy())]
    assert sorted(pairs) == sorted([(b"bad", 0), (b"awful", 0), (b"meh", 0), (b"good", 1),
                                    (b"great", 1)])
    train = tf.keras.utils.text_dataset_from_directory(
        str(tmp_path), validation_split=0.4, subset="training", seed=3, batch_size=8)
    val = tf.keras.utils.text_dataset_from_directory(
        str(tmp_path), validation_split=0.4, subset="validation", seed=3, batch_size=8)
    n_train = sum(len(b[0].numpy()) for b in train)
    n_val = sum(len(b[0].numpy()) for b in val)
    assert (n_train, n_val) == (3, 2)


def test_text_dataset_with_a_list_of_labels_or_none(tmp_path):
    """Explicit labels: one per .txt file below the directory, in sorted path order (the
    sub-directories no longer name classes)."""
    for path, text in (("b/2.txt", "two"), ("a/1.txt", "one"), ("a/0.txt", "zero"),
                       ("c.txt", "three")):
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text(text)
    # sorted paths: a/0.txt, a/1.txt, b/2.txt, c.txt
    ds = tf.keras.utils.text_dataset_from_directory(str(tmp_path), labels=[5, 7, 5, 7],
                                                    shuffle=False, batch_size=None)
    assert [(t.numpy(), int(y)) for t, y in ds] == [(b"zero", 5), (b"one", 7), (b"two", 5),
                                                    (b"three", 7)]
    assert ds.class_names == [5, 7]
    texts = tf.keras.utils.text_dataset_from_directory(str(tmp_path), labels=None,
                                                       shuffle=False, batch_size=2)
    assert [t.tolist() for t in texts.as_numpy_iterator()] == [[b"zero", b"one"],
                                                               [b"two", b"three"]]
    train, val = tf.keras.utils.text_dataset_from_directory(
        str(tmp_path), labels=[0, 1, 0, 1], validation_split=0.5, subset="both", seed=2)
    got = sorted(t for ds in (train, val) for xb, _ in ds for t in xb.numpy().tolist())
    assert got == [b"one", b"three", b"two", b"zero"]
    with pytest.raises(ValueError, match=r"len\(labels\) is 3 while we found 4 files"):
        tf.keras.utils.text_dataset_from_directory(str(tmp_path), labels=[0, 1, 0])
    with pytest.raises(ValueError, match="list/tuple of integer labels"):
        tf.keras.utils.text_dataset_from_directory(str(tmp_path), labels="folders")


def _corpus(n, seed):
    rng = np.random.default_rng(seed)
    pos = ["great", "wonderful", "loved", "excellent", "fun", "brilliant", "charming"]
    neg = ["awful", "boring", "hated", "terrible", "dull", "poor", "mess"]
    filler = ["the", "movie", "was", "a", "film", "plot", "actor", "and", "it", "really"]
    texts, labels = [], []
    for _ in range(n):
        y = int(rng.integers(2))
        words = list(rng.choice(filler, size=8)) + list(rng.choice(pos if y else neg, size=2))
        words += list(rng.choice(neg if y else pos, size=int(rng.integers(0, 2))))
        rng.shuffle(words)
        texts.append(" ".join(words).capitalize() + ".")
        labels.append(y)
    return np.array(texts, dtype=object), np.array(labels, dtype=np.float32)


def test_text_classification_tutorial_model_learns():
    x_train, y_train = _corpus(600, 0)
    x_test, y_test = _corpus(200, 1)
    max_features, sequence_length = 200, 20
    vectorize_layer = L.TextVectorization(max_tokens=max_features, output_mode="int",
                                          output_sequence_length=sequence_length)
    train_text = tf.data.Dataset.from_tensor_slices(x_train).batch(64)
    vectorize_layer.adapt(train_text)

    def vectorize_text(text, label):
        text = tf.expand_dims(text, -1)
        return vectorize_layer(text), label

    train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32).map(
        vectorize_text)
    tf.keras.utils.set_random_seed(0) if hasattr(tf.keras.utils, "set_random_seed") else None
    model = tf.keras.Sequential([
        L.Embedding(max_features + 1, 16),
        L.Dropout(0.2),
        L.GlobalAveragePooling1D(),
        L.Dropout(0.2),
        L.Dense(1)])
    model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.Adam(0.01),
                  metrics=[tf.keras.metrics.BinaryAccuracy(threshold=0.0)])
    model.fit(train_ds, epochs=8, verbose=0)
    export_model = tf.keras.Sequential([vectorize_layer, model, L.Activation("sigmoid")])
    probs = export_model(tf.constant(x_test)).numpy().ravel()
    accuracy = float(np.mean((probs > 0.5) == (y_test > 0.5)))
    assert accuracy > 0.9, accuracy


def test_keras_input_ragged_functional_model_trains():
    inputs = tf.keras.Input(shape=(None,), dtype=tf.int64, ragged=True)
    x = L.Embedding(20, 4)(inputs)
    x = L.Lambda(lambda t: tf.reduce_mean(t, axis=1))(x)
    model = tf.keras.Model(inputs, L.Dense(1)(x))
    ids = tf.ragged.constant([[1, 2, 3], [4], [5, 6]], dtype=tf.int64)
    target = tf.constant([[1.0], [-1.0], [0.5]])
    opt = tf.keras.optimizers.SGD(0.5)
    losses = []
    for _ in range(30):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(ids) - target))
        grads = tape.gradient(loss, model.trainable_variables)
        assert all(g is not None for g in grads)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    assert losses[-1] < 0.1 * losses[0]


def test_wrapper_configs_round_trip():
    bi = L.Bidirectional(L.LSTM(2, return_sequences=True), merge_mode="sum")
    again = L.Bidirectional.from_config(bi.get_config())
    assert again.merge_mode == "sum" and again.backward_layer.go_backwards
    assert again(tf.zeros([1, 3, 2])).shape == (1, 3, 2)
    td = L.TimeDistributed.from_config(L.TimeDistributed(L.Dense(3)).get_config())
    assert td(tf.zeros([1, 2, 4])).shape == (1, 2, 3)


def test_preprocessing_text_tokenizer():
    text = tf.keras.preprocessing.text
    assert text.text_to_word_sequence("Hello, World! hello") == ["hello", "world", "hello"]
    tok = text.Tokenizer(num_words=4, oov_token="<OOV>")
    tok.fit_on_texts(["the cat sat", "the dog", "The cat"])
    assert tok.word_index == {"<OOV>": 1, "the": 2, "cat": 3, "sat": 4, "dog": 5}
    assert tok.texts_to_sequences(["the dog sat", "cat"]) == [[2, 1, 1], [3]]
    assert tok.sequences_to_texts([[2, 3]]) == ["the cat"]
    assert text.hashing_trick("a b a", 10, "md5")[0] == text.hashing_trick("a", 10, "md5")[0]
    pad = tf.keras.preprocessing.sequence.pad_sequences
    assert pad([[1, 2]], maxlen=3).tolist() == [[0, 1, 2]]


def test_fit_and_predict_on_a_ragged_dataset():
    inputs = tf.keras.Input(shape=(None,), dtype=tf.int64, ragged=True)
    x = L.Embedding(20, 4)(inputs)
    x = L.Lambda(lambda t: tf.reduce_mean(t, axis=1))(x)
    model = tf.keras.Model(inputs, L.Dense(1)(x))
    model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(0.5))
    rt = tf.ragged.constant([[1, 2, 3], [4], [5, 6], [7]], dtype=tf.int64)
    y = tf.constant([[1.0], [0.0], [1.0], [0.0]])
    ds = tf.data.Dataset.from_tensor_slices((rt, y)).ragged_batch(2)
    assert isinstance(ds.element_spec[0], tf.RaggedTensorSpec)  # ids ragged, labels dense
    assert isinstance(ds.element_spec[1], tf.TensorSpec)
    history = model.fit(ds, epochs=20, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert model.predict(ds, verbose=0).shape == (4, 1)


def test_load_text_tutorials_binary_vectorizer_and_string_predict():
    """The load-text tutorial: `output_mode='binary'` (TF 2.4's name for multi_hot, still
    accepted by Keras), a Sequential of an adapted vectorizer and a Dense is built as in
    tf.keras 2, and `predict` takes a Python list of strings as one batch of examples."""
    raw = tf.data.Dataset.from_tensor_slices(
        (TEXTS * 4, [0, 1, 2, 3] * 3)).batch(4)
    binary_vectorize_layer = L.TextVectorization(max_tokens=20, output_mode='binary')
    assert binary_vectorize_layer.get_config()["output_mode"] == "multi_hot"
    binary_vectorize_layer.adapt(raw.map(lambda text, labels: text))
    vocab = binary_vectorize_layer.get_vocabulary()
    hot = binary_vectorize_layer(tf.constant(TEXTS[0])).numpy()
    np.testing.assert_array_equal(
        hot, [1.0 if w in _keras_tokens(TEXTS[0]) else 0.0 for w in vocab])
    with pytest.raises(ValueError, match="output_mode"):
        L.Hashing(num_bins=3, output_mode="binary")  # Keras's Hashing has no old name
    int_vectorize_layer = L.TextVectorization(max_tokens=20, output_mode='int',
                                              output_sequence_length=6)
    int_vectorize_layer.adapt(raw.map(lambda text, labels: text))
    int_model = tf.keras.Sequential([int_vectorize_layer, L.Embedding(21, 8, mask_zero=True),
                                     L.GlobalMaxPooling1D(), L.Dense(4)])
    assert int_model.built and int_model.input.dtype == tf.string
    binary_model = tf.keras.Sequential([binary_vectorize_layer, L.Dense(4)])
    binary_model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                         optimizer='adam', metrics=['accuracy'])
    binary_model.fit(raw, epochs=1, verbose=0)
    one = binary_model.predict(['How do you sort a list?'], verbose=0)
    two = binary_model.predict(['How do you sort a list?', TEXTS[1]], verbose=0)
    assert one.shape == (1, 4) and two.shape == (2, 4)
    np.testing.assert_allclose(one[0], two[0], rtol=1e-6)
    np.testing.assert_allclose(
        two, binary_model(tf.constant(['How do you sort a list?', TEXTS[1]])).numpy(),
        rtol=1e-6)


def test_a_vector_of_ids_is_one_sample_for_multi_hot_count_and_tf_idf():
    """`binary_vectorize_layer(first_question)` (a scalar text) is one [vocab] vector, and a
    vector of ids or tokens is one sample for multi_hot/count in every encoding layer: the
    values are what real TF 2.21 (Keras 3, and tf.keras 2) gives."""
    got = {}
    for mode in ["multi_hot", "count", "tf_idf"]:
        v = L.TextVectorization(max_tokens=20, output_mode=mode)
        v.adapt(TEXTS)
        one, batch = v(tf.constant(TEXTS[0])), v(tf.constant(TEXTS))
        assert one.shape == (12,) and batch.shape == (3, 12)
        np.testing.assert_allclose(one.numpy(), batch.numpy()[0], rtol=1e-6)
        got[mode] = one.numpy().tolist()
    assert got["multi_hot"] == [0, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0]
    assert got["count"] == [0, 2, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0]
    np.testing.assert_allclose(got["tf_idf"], [0, 1.3862944, 0, 0, 0.6931472, 0.9162908,
                                               0.9162908, 0, 0.9162908, 0, 0, 0], rtol=1e-6)
    assert L.CategoryEncoding(4, output_mode="count")(tf.constant([0, 1, 1])).numpy() \
        .tolist() == [1, 2, 0, 0]
    assert L.IntegerLookup(vocabulary=[5, 6], output_mode="count")(
        tf.constant([5, 6, 6])).numpy().tolist() == [0, 1, 2]
    assert L.StringLookup(vocabulary=["a", "b", "c"], output_mode="multi_hot")(
        tf.constant(["a", "b", "a"])).numpy().tolist() == [0, 1, 1, 0]
    assert L.Hashing(num_bins=3, output_mode="multi_hot")(tf.constant(["a", "b"])) \
        .numpy().tolist() == [1, 1, 0]
    assert L.StringLookup(vocabulary=["a", "b", "c"], output_mode="one_hot")(
        tf.constant(["a", "b"])).numpy().tolist() == [[0, 1, 0, 0], [0, 0, 1, 0]]
