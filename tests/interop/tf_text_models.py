"""TensorFlow's side of test_tf_text_model_resave_interop.py: run under real TensorFlow by
conftest.run_tf, never imported by tensorlite or pytest.

    python tf_text_models.py write DIR   TensorFlow writes Keras models with a
        TextVectorization layer adapted on a small corpus (kinds below) as SavedModels
        DIR/tf_KIND, and their outputs on DIR/inputs.npz's texts into DIR/tf_outputs.npz

The last line printed is a JSON object: the kinds written.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf

CORPUS = ["the cat sat on the mat", "the dog ran", "a cat ran far", "dogs and cats"]
KINDS = {
    "int": dict(max_tokens=20, output_sequence_length=6),
    "bigrams": dict(ngrams=2, output_sequence_length=8),
    "multi_hot": dict(output_mode="multi_hot"),
    "count": dict(output_mode="count"),
    "tf_idf": dict(output_mode="tf_idf", ngrams=2),
}


def write(directory):
    texts = np.load(os.path.join(directory, "inputs.npz"))["texts"]
    out = {}
    for kind, kwargs in KINDS.items():
        layer = tf.keras.layers.TextVectorization(**kwargs)
        layer.adapt(CORPUS)
        inputs = tf.keras.Input(shape=(), dtype=tf.string, name="inputs")
        model = tf.keras.Model(inputs, layer(inputs))
        tf.saved_model.save(model, os.path.join(directory, f"tf_{kind}"))
        out[kind] = model(tf.constant(texts)).numpy()
    np.savez(os.path.join(directory, "tf_outputs.npz"), **out)
    return sorted(KINDS)


if __name__ == "__main__":
    print(json.dumps({"write": write}[sys.argv[1]](sys.argv[2])))
