"""TensorFlow's side of the text interop test (test_text_savedmodel_interop.py): run under
real TensorFlow with tf.keras 2 (TF_USE_LEGACY_KERAS=1) by conftest.run_tf, never imported by
tensorlite or pytest.

    python tf_text_side.py write DIR   TensorFlow saves text models into DIR and their outputs
                                       for TEXTS into DIR/expected.npz

The models: TextVectorization layers (int with bigrams and a fixed length, multi_hot, tf_idf)
adapted on CORPUS, a StringLookup whose vocabulary is a file (an asset of the SavedModel),
and a tf.Module of string, unicode, ragged and lookup-table ops (a StaticVocabularyTable
from a text file with OOV buckets, a MutableHashTable filled before saving).
"""
import json
import os
import re
import string
import sys

import numpy as np
import tensorflow as tf

CORPUS = ["The cat sat on the mat.", "A dog ate my homework!", "the CAT and the dog",
          "Zebras, zebras everywhere?", "héllo wörld, the café is open"]
TEXTS = CORPUS + ["unknown words here", "", "  spaces   between  ", "CAT cat Cat"]


def vocabulary_table(vocab_file, num_oov_buckets):
    """Word -> its line number in `vocab_file` (saved as an asset), OOV words hashed into
    `num_oov_buckets` ids after the vocabulary."""
    init = tf.lookup.TextFileInitializer(vocab_file, tf.string,
                                         tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                                         tf.lookup.TextFileIndex.LINE_NUMBER)
    return tf.lookup.StaticVocabularyTable(init, num_oov_buckets=num_oov_buckets)


class Ops(tf.Module):
    def __init__(self, vocab_file):
        super().__init__()
        self.vocab = vocabulary_table(vocab_file, 3)
        self.counts = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
        self.counts.insert(tf.constant(["the", "cat"]), tf.constant([10, 20], tf.int64))
        self.dense = tf.lookup.experimental.DenseHashTable(
            tf.string, tf.int64, default_value=-1, empty_key="<e>", deleted_key="<d>")
        self.dense.insert(tf.constant(["the", "dog", "mat"]), tf.constant([1, 2, 3], tf.int64))
        self.dense.erase(tf.constant(["dog"]))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def __call__(self, x):
        low = tf.strings.lower(x)
        clean = tf.strings.regex_replace(low, r"[^a-z0-9\s]", "")
        words = tf.strings.split(clean)
        chars = tf.strings.unicode_decode(x, "UTF-8")
        return {
            "ids": self.vocab.lookup(words).to_tensor(default_value=-1),
            "counts": words.with_flat_values(self.counts.lookup(words.flat_values)).to_tensor(
                default_value=0),
            "bigrams": tf.strings.reduce_join(tf.strings.ngrams(words, 2, separator="_"),
                                              axis=1, separator="|"),
            "upper": tf.strings.upper(tf.strings.strip(x)),
            "length_chars": tf.strings.length(x, unit="UTF8_CHAR"),
            "prefix": tf.strings.substr(x, 0, 3),
            "joined": tf.strings.join([x, low], separator="/"),
            "is_question": tf.strings.regex_full_match(x, r".*\?"),
            "buckets": tf.strings.to_hash_bucket_fast(x, 1000),
            "codepoint_sum": tf.reduce_sum(chars, axis=1),
            "first_word": tf.gather(words.to_tensor(""), [0], axis=1)[:, 0],
            "table_size": self.counts.size(),
            "dense_table": words.with_flat_values(self.dense.lookup(words.flat_values)).to_tensor(
                default_value=0),
            "dense_table_size": self.dense.size(),
            "reversed_rows": tf.gather(words, tf.range(tf.shape(x)[0] - 1, -1, -1)).to_tensor(
                ""),
            "reencoded": tf.strings.unicode_encode(chars, "UTF-8"),
            "numbers": tf.strings.to_number(tf.strings.as_string(tf.strings.length(x)),
                                            tf.int64),
        }


# Keras preprocessing layers alone in a model: (layer, input dtype, input shape, input)
def preprocessing_layers():
    words = [["the", "zebras", "owl"], ["cat", "cat", "ant"]]
    counting = tf.keras.layers.TextVectorization(output_mode="count", ngrams=2, max_tokens=10)
    counting.adapt(CORPUS)
    return {
        "integer_lookup": (tf.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42]),
                           tf.int64, (None,), [[12, 1138, 5], [42, 42, 7]]),
        "hashing": (tf.keras.layers.Hashing(num_bins=7), tf.string, (None,), words),
        "hashing_salted": (tf.keras.layers.Hashing(num_bins=7, salt=133), tf.string, (None,),
                           words),
        "category_count": (tf.keras.layers.CategoryEncoding(num_tokens=6, output_mode="count"),
                           tf.int64, (None,), [[1, 2, 2], [5, 0, 0]]),
        "text_count_bigrams": (counting, tf.string, (), TEXTS),
        "lookup_one_hot": (tf.keras.layers.StringLookup(vocabulary=["the", "cat"],
                                                        output_mode="one_hot"),
                           tf.string, (), ["the", "owl", "cat"]),
    }


def text_classifier(directory, texts):
    """The text-classification tutorial's model (TextVectorization -> Embedding ->
    GlobalAveragePooling1D -> Dense), trained a few steps on CORPUS and saved; its outputs
    for `texts`."""
    layer = tf.keras.layers.TextVectorization(max_tokens=40, output_sequence_length=10)
    layer.adapt(CORPUS)
    model = tf.keras.Sequential([tf.keras.Input(shape=(), dtype=tf.string), layer,
                                 tf.keras.layers.Embedding(40, 8),
                                 tf.keras.layers.GlobalAveragePooling1D(),
                                 tf.keras.layers.Dense(4, activation="relu"),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    model.fit(tf.constant(CORPUS), tf.constant([1.0, 0.0, 1.0, 0.0, 1.0]), epochs=3,
              verbose=0)
    model.save(os.path.join(directory, "classifier"), save_format="tf")
    return model(texts).numpy()


def write(directory):
    out, facts = {}, {}
    tf.keras.utils.set_random_seed(0)
    texts = tf.constant(TEXTS)
    for name, kwargs in (("tv_int", dict(max_tokens=30, ngrams=2, output_sequence_length=8)),
                         ("tv_multi_hot", dict(max_tokens=20, output_mode="multi_hot")),
                         ("tv_tf_idf", dict(max_tokens=20, output_mode="tf_idf"))):
        layer = tf.keras.layers.TextVectorization(**kwargs)
        layer.adapt(CORPUS)
        model = tf.keras.Sequential([tf.keras.Input(shape=(), dtype=tf.string), layer])
        model.save(os.path.join(directory, name), save_format="tf")
        out[name] = model(texts).numpy()
        facts[f"{name}_vocabulary"] = [w if isinstance(w, str) else w.decode()
                                       for w in layer.get_vocabulary()]
    out["classifier"] = text_classifier(directory, texts)
    for name, (layer, dtype, shape, x) in preprocessing_layers().items():
        model = tf.keras.Sequential([tf.keras.Input(shape=shape, dtype=dtype), layer])
        tf.saved_model.save(model, os.path.join(directory, name))
        out[f"layer_{name}"] = model(tf.constant(x, dtype=dtype)).numpy()
        out[f"layer_{name}_input"] = np.array(x, dtype=object if dtype == tf.string else None)
    vocab_file = os.path.join(directory, "vocab.txt")
    with open(vocab_file, "w", encoding="utf-8") as f:
        f.write("the\ncat\ndog\nmat\nzebras\n")
    lookup = tf.keras.layers.StringLookup(vocabulary=vocab_file, num_oov_indices=2)
    model = tf.keras.Sequential([tf.keras.Input(shape=(None,), dtype=tf.string), lookup])
    tf.saved_model.save(model, os.path.join(directory, "lookup"))
    words = tf.constant([["the", "zebras", "owl"], ["cat", "cat", "ant"]])
    out["lookup"] = model(words).numpy()
    ops = Ops(vocab_file)
    tf.saved_model.save(ops, os.path.join(directory, "ops"))
    os.remove(vocab_file)  # the SavedModels must read their own copies in assets/
    for k, v in ops(texts).items():
        out[f"ops_{k}"] = v.numpy()
    np.savez(os.path.join(directory, "expected.npz"), **out)
    facts["texts"] = TEXTS
    return facts


def keras3_write(directory):
    """Keras 3 (TF_USE_LEGACY_KERAS=0) exports a TextVectorization model with model.export."""
    layer = tf.keras.layers.TextVectorization(max_tokens=20, output_sequence_length=6)
    layer.adapt(CORPUS)
    inputs = tf.keras.Input(shape=(), dtype="string")
    model = tf.keras.Model(inputs, layer(inputs))
    model.export(os.path.join(directory, "keras3_tv"))
    np.savez(os.path.join(directory, "keras3_expected.npz"),
             tv=model(tf.constant(TEXTS)).numpy())
    return {"texts": TEXTS}


def custom_standardization(input_data):
    """The text-classification tutorial's standardization (its `custom_objects`)."""
    lowercase = tf.strings.lower(input_data)
    stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
    return tf.strings.regex_replace(stripped_html, "[%s]" % re.escape(string.punctuation), "")


def keras3_read_text_model(directory):
    """Keras 3 loads tensorlite's `export.keras` (the tutorial's export_model, a Sequential
    built on strings, compiled) given the tutorial's function, and predicts `texts.json`."""
    model = tf.keras.models.load_model(
        os.path.join(directory, "export.keras"),
        custom_objects={"custom_standardization": custom_standardization})
    with open(os.path.join(directory, "texts.json")) as f:
        texts = json.load(f)
    np.save(os.path.join(directory, "keras3_predictions.npy"),
            model.predict(tf.constant(texts), verbose=0))
    return {"loss": type(model.loss).__name__}


if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    print(json.dumps({"write": write, "keras3_write": keras3_write,
                      "keras3_read_text_model": keras3_read_text_model}[command](directory)))
