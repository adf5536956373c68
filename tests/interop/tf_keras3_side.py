"""TensorFlow's side of test_keras3_*_interop.py, run under real TensorFlow by
conftest.run_tf with Keras 3 (TF 2.16+'s default) or tf.keras 2 (TF_USE_LEGACY_KERAS=1):

    python tf_keras3_side.py ckpt_write DIR  writes tf.train.Checkpoint(model=...) of the
                                  keras3_models.py models into DIR/<name>/, and what they
                                  compute into DIR/expected.npz
    python tf_keras3_side.py ckpt_read DIR   restores the checkpoints tensorlite wrote into
                                  DIR/<name>/ (assert_consumed), dumps DIR/tf_read.npz

The last line printed is a JSON object of facts (Keras version, checkpoint keys).
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf
from keras3_models import TOKENS, functional_mlp, sequential_text, subclassed
from shared_data import X, Y  # (this directory is on sys.path)

keras = tf.keras


def _models():
    keras.utils.set_random_seed(3)
    return {"functional": functional_mlp(keras), "sequential": sequential_text(keras),
            "subclassed": subclassed(keras)}


def _inputs(name):
    return TOKENS if name == "sequential" else X


def ckpt_write(directory):
    out, facts = {}, {"keras": keras.__name__}
    models = _models()
    models["functional"].fit(X, Y, epochs=2, batch_size=4, verbose=0)
    for name, model in models.items():
        path = tf.train.Checkpoint(model=model).write(os.path.join(directory, name, "ckpt"))
        facts[name] = sorted(k for k, _ in tf.train.list_variables(path))
        out[f"{name}_pred"] = np.asarray(model(_inputs(name), training=False))
    mlp = models["functional"]
    out["functional_iterations"] = mlp.optimizer.iterations.numpy()
    mlp.train_on_batch(X, Y)  # one more step from the saved state: the continuation
    out["functional_next_kernel"] = np.asarray(mlp.layers[1].kernel)
    np.savez(os.path.join(directory, "expected.npz"), **out)
    return facts


def ckpt_read(directory):
    out, facts = {}, {"keras": keras.__name__}
    models = _models()
    mlp = models["functional"]
    mlp.optimizer.build(mlp.trainable_variables)  # so assert_consumed sees its slots
    for name, model in models.items():
        status = tf.train.Checkpoint(model=model).read(os.path.join(directory, name, "ckpt"))
        status.assert_existing_objects_matched()
        try:
            status.assert_consumed()
            facts[f"{name}_consumed"] = "yes"
        except AssertionError as e:
            facts[f"{name}_consumed"] = str(e)[:2000]
        out[f"{name}_pred"] = np.asarray(model(_inputs(name), training=False))
    out["functional_iterations"] = mlp.optimizer.iterations.numpy()
    mlp.train_on_batch(X, Y)
    out["functional_next_kernel"] = np.asarray(mlp.layers[1].kernel)
    np.savez(os.path.join(directory, "tf_read.npz"), **out)
    return facts


if __name__ == "__main__":
    command, target = sys.argv[1], sys.argv[2]
    print(json.dumps(globals()[command](target)))
