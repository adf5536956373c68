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
import sys

import numpy as np
import tensorflow as tf

CORPUS = ["The cat sat on the mat.", "A dog ate my homework!", "the CAT and the dog",
          "Zebras, zebras everywhere?", "héllo wörld, the café is open"]
TEXTS = CORPUS + ["unknown words here", "", "  spaces   between  ", "CAT cat Cat"]


class Ops(tf.Module):
    def __init__(self, vocab_file):
        super().__init__()
        init = tf.lookup.TextFileInitializer(vocab_file, tf.string,
                                             tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                                             tf.lookup.TextFileIndex.LINE_NUMBER)
        self.vocab = tf.lookup.StaticVocabularyTable(init, num_oov_buckets=3)
        self.counts = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
        self.counts.insert(tf.constant(["the", "cat"]), tf.constant([10, 20], tf.int64))

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
        }


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


if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    print(json.dumps({"write": write}[command](directory)))
