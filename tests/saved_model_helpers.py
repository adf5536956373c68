"""A tf.Module shared by the SavedModel tests (tensorlite's own and the interop ones with real
TensorFlow): two tf.functions, one of them __call__ returning a dict, and a non-trainable
variable."""
import numpy as np

import tensorlite as tf


class Scorer(tf.Module):
    """Two tf.functions (one of them __call__, returning a dict) over three variables."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(5)
        self.w = tf.Variable(rng.normal(size=(3, 4)).astype(np.float32), name="w")
        self.b = tf.Variable(rng.normal(size=(4,)).astype(np.float32), name="b")
        self.scale = tf.Variable(np.float32(1.5), name="scale", trainable=False)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w) + self.b)
        return {"score": tf.reduce_sum(h, axis=1) * self.scale, "probs": tf.nn.softmax(h)}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def features(self, x):
        return tf.concat([tf.tanh(x), tf.reshape(tf.reduce_mean(x, axis=1), [-1, 1])], 1)


# -- lookup tables (tests/test_saved_model_tables.py and the interop test of them) --------------
TABLE_WORDS = np.array([b"the", b"cat", b"zebra", b"", b"sat", b"a", b"qq", b"b"])


class Tables(tf.Module):
    """A StaticHashTable, a StaticVocabularyTable with OOV buckets and a table read from a
    vocabulary file (a TextFileInitializer) behind one signature."""

    def __init__(self, vocab_file):
        super().__init__()
        self.static = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            ["the", "cat", "a"], tf.constant([7, 8, 9], tf.int64)), default_value=-1)
        self.vocab = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            ["a", "b", "cat"], tf.constant([0, 1, 2], tf.int64)), num_oov_buckets=3)
        self.text = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            vocab_file, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), default_value=-5)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="words")])
    def __call__(self, words):
        return {"static": self.static.lookup(words), "vocab": self.vocab.lookup(words),
                "text": self.text.lookup(words), "size": self.static.size()}


DENSE_IDS = np.array([4, 9, 7, 12, 3], np.int64)


class DenseTables(tf.Module):
    """Two DenseHashTables filled by insert (and one entry removed): int64 keys with
    TensorFlow's documented empty_key 0 / deleted_key -1, and string keys to [2] vectors."""

    def __init__(self):
        super().__init__()
        self.ids = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, 0, -1)
        self.ids.insert(tf.constant([4, 9, 3], tf.int64), tf.constant([40, 90, 30], tf.int64))
        self.ids.remove(tf.constant([3], tf.int64))
        self.vectors = tf.lookup.experimental.DenseHashTable(
            tf.string, tf.float32, tf.constant([0.0, -1.0]), "<empty>", "<deleted>")
        self.vectors.insert(["cat", "the", "b"], tf.constant([[1, 2], [3, 4], [5, 6]],
                                                              tf.float32))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int64, name="ids"),
                                  tf.TensorSpec([None], tf.string, name="words")])
    def __call__(self, ids, words):
        return {"ids": self.ids.lookup(ids), "vectors": self.vectors.lookup(words),
                "size": self.ids.size()}


STRING_WORDS = np.array([" héllo ".encode(), b"cat", b"", b"Zed9"])
STRING_PAIRS = np.array([[b"a b", b""], [b" c  d e", b"f"], [b"x", b"y z"]])


class StringFunctions(tf.Module):
    """tf.strings.length (bytes and UTF-8 characters), regex_full_match, strip, join, split of
    a matrix (a ragged result with two row partitions); strings come back joined by "|"
    (reduce_join) so that the results are plain byte strings."""

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="words"),
                                  tf.TensorSpec([None, 2], tf.string, name="pairs")])
    def __call__(self, words, pairs):
        split = tf.strings.split(pairs)
        return {"bytes": tf.strings.length(words),
                "chars": tf.strings.length(words, unit="UTF8_CHAR"),
                "match": tf.strings.regex_full_match(words, "[a-z]+"),
                "strip": tf.strings.reduce_join(tf.strings.strip(words), separator="|"),
                "tokens": tf.strings.reduce_join(split.flat_values, separator="|"),
                "token_splits": split.nested_row_splits[-1],
                # StringJoin, as the NMT tutorial's tf_lower_and_split_punct writes it
                "joined": tf.strings.reduce_join(
                    tf.strings.join(["[START]", words, "[END]"], separator=" "),
                    separator="|"),
                # ReverseV2, as a Bidirectional RNN's backward pass writes it
                "reversed": tf.strings.reduce_join(tf.reverse(pairs, [0, -1]), separator="|")}


def write_vocab_file(path):
    path.write_text("the\ncat\nsat\n")
    return str(path)


def string_lookup_model():
    """A Keras model: StringLookup with two OOV indices on a string input."""
    words = tf.keras.Input(shape=(), dtype=tf.string)
    ids = tf.keras.layers.StringLookup(vocabulary=["a", "b", "cat", "the"],
                                       num_oov_indices=2)(words)
    return tf.keras.Model(words, ids)


CORPUS = ["the cat sat on the mat", "the dog ran", "a cat ran far", "dogs and cats"]


def text_vectorization_model(kind="int"):
    """A Keras model on a string input, TextVectorization (lower-case, strip punctuation,
    split on whitespace, vocabulary lookup) adapted on a small corpus: `kind` "int" (padded
    to 6 ids), "ngrams" (bigrams too), "multi_hot", "tf_idf", or "classifier" (the text
    classification tutorial's TextVectorization -> Embedding -> GlobalAveragePooling1D ->
    Dense)."""
    texts = tf.keras.Input(shape=(), dtype=tf.string)
    if kind in ("int", "classifier"):
        layer = tf.keras.layers.TextVectorization(max_tokens=12, output_sequence_length=6)
    elif kind == "ngrams":
        layer = tf.keras.layers.TextVectorization(max_tokens=30, ngrams=2,
                                                  output_sequence_length=8)
    else:
        layer = tf.keras.layers.TextVectorization(max_tokens=20, output_mode=kind)
    layer.adapt(CORPUS)
    out = layer(texts)
    if kind == "classifier":
        pooled = tf.keras.layers.GlobalAveragePooling1D()(tf.keras.layers.Embedding(12, 4)(out))
        out = tf.keras.layers.Dense(1, activation="sigmoid")(pooled)
    return tf.keras.Model(texts, out)


TEXT_KINDS = ["int", "ngrams", "multi_hot", "tf_idf", "classifier"]
TEXTS = np.array([b"The cat ran!", b"zebra", b"", b"a  dog, the MAT on the cat sat far"])


class AssetReader(tf.Module):
    """A tf.saved_model.Asset whose path a function reads."""

    def __init__(self, path):
        super().__init__()
        self.words = tf.saved_model.Asset(path)

    @tf.function(input_signature=[])
    def read(self):
        return {"contents": tf.io.read_file(self.words.asset_path),
                "path": self.words.asset_path}
