"""TensorFlow's side of the symbolic Keras interop test (test_keras_symbolic_interop.py): run
under real TensorFlow by conftest.run_tf, never imported by tensorlite or pytest.

    python tf_symbolic_side.py shapes DIR   (tf.keras 2) the symbolic output shapes of the
                                            models of symbolic_models.py, as JSON
    python tf_symbolic_side.py load DIR     (Keras 3) loads DIR/dict_io.keras and
                                            DIR/encoder.keras (written by tensorlite),
                                            predicts on DIR/inputs.npz into DIR/tf_out.npz
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symbolic_models  # noqa: E402


def shapes():
    return {name: [list(t.shape) for t in tf.nest.flatten(fn(tf))]
            for name, fn in symbolic_models.MODELS.items()}


def load(directory):
    import keras  # noqa: PLC0415 - Keras 3, TF 2.16+'s default
    data = np.load(os.path.join(directory, "inputs.npz"))
    out = {}
    dict_io = keras.models.load_model(os.path.join(directory, "dict_io.keras"))
    got = dict_io({"title": data["title"], "body": data["body"]})
    out.update({f"dict_{k}": np.asarray(v) for k, v in got.items()})
    encoder_class = symbolic_models.transformer_encoder_class(keras)
    encoder = keras.models.load_model(os.path.join(directory, "encoder.keras"),
                                      custom_objects={"TransformerEncoder": encoder_class})
    out["encoder"] = np.asarray(encoder(data["sequences"]))
    np.savez(os.path.join(directory, "tf_out.npz"), **out)
    return {"keras": keras.__version__, "outputs": sorted(out)}


if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    result = shapes() if command == "shapes" else load(directory)
    print(json.dumps(result))
