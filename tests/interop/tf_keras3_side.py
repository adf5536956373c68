"""TensorFlow's side of test_keras3_*_interop.py, run under real TensorFlow by
conftest.run_tf with Keras 3 (TF 2.16+'s default) or tf.keras 2 (TF_USE_LEGACY_KERAS=1):

    python tf_keras3_side.py ckpt_write DIR  writes tf.train.Checkpoint(model=...) of the
                                  keras3_models.py models into DIR/<name>/, and what they
                                  compute into DIR/expected.npz
    python tf_keras3_side.py ckpt_read DIR   restores the checkpoints tensorlite wrote into
                                  DIR/<name>/ (assert_consumed), dumps DIR/tf_read.npz

    python tf_keras3_side.py sm_write DIR   writes SavedModels into DIR (see sm_write) and
                                  what they compute into DIR/expected_sm.npz
    python tf_keras3_side.py sm_read DIR    loads the SavedModels tensorlite wrote into DIR,
                                  calls them as users do, dumps DIR/tf_read_sm.npz

The last line printed is a JSON object of facts (Keras version, checkpoint keys).
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf
from core_api_tutorials import TUTORIALS
from keras3_models import (PAIR, SEQUENCES, TOKENS, VIDEO, attention_block, functional_mlp,
                           sequence_model, sequential_text, signature_modules, subclassed,
                           two_inputs)
from shared_data import X, Y, images, keras_models  # (this directory is on sys.path)

keras = tf.keras
_KERAS3 = not keras.__name__.startswith("tf_keras")


def _models():
    keras.utils.set_random_seed(3)
    return {"functional": functional_mlp(keras), "sequential": sequential_text(keras),
            "subclassed": subclassed(keras), "cnn": keras_models(keras)[1],
            "attention": attention_block(keras), "two_inputs": two_inputs(keras)}


def _inputs(name):
    return {"sequential": TOKENS, "cnn": images(), "attention": SEQUENCES,
            "two_inputs": PAIR}.get(name, X)


def ckpt_write(directory):
    out, facts = {}, {"keras": keras.__name__}
    models = _models()
    models["functional"].fit(X, Y, epochs=2, batch_size=4, verbose=0)
    for name, model in models.items():
        path = tf.train.Checkpoint(model=model).write(os.path.join(directory, name, "ckpt"))
        facts[name] = sorted(k for k, _ in tf.train.list_variables(path))
        out[f"{name}_pred"] = np.asarray(model(_inputs(name), training=False))
        # Keras 3's weights file, or tf.keras 2's HDF5 weights (it has no .weights.h5)
        model.save_weights(os.path.join(directory, f"{name}.weights.h5" if _KERAS3 else
                                        f"{name}.h5"))
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
        if _KERAS3:
            fresh = _models()[name]
            fresh.load_weights(os.path.join(directory, f"{name}.weights.h5"))
            out[f"{name}_h5_pred"] = np.asarray(fresh(_inputs(name), training=False))
    out["functional_iterations"] = mlp.optimizer.iterations.numpy()
    mlp.train_on_batch(X, Y)
    out["functional_next_kernel"] = np.asarray(mlp.layers[1].kernel)
    np.savez(os.path.join(directory, "tf_read.npz"), **out)
    return facts


OPTIMIZERS = {"sgd": lambda: keras.optimizers.SGD(0.1, momentum=0.9),
              "rmsprop": lambda: keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
              "adagrad": lambda: keras.optimizers.Adagrad(0.1)}


def _slots(optimizer):
    """The optimizer's per-variable state arrays, ordered by value (both sides' orders
    differ): what a restore must reproduce."""
    arrays = [np.asarray(v) for v in optimizer.variables if len(v.shape) >= 1]
    return sorted(arrays, key=lambda a: (a.shape, float(np.abs(a).sum())))


def opt_write(directory):
    """Each optimizer trains the MLP two epochs; its checkpoint and slots are written."""
    out = {}
    for name, make in OPTIMIZERS.items():
        keras.utils.set_random_seed(4)
        model = functional_mlp(keras)
        model.compile(optimizer=make(), loss="mse")
        model.fit(X, Y, epochs=2, batch_size=4, verbose=0)
        tf.train.Checkpoint(model=model).write(os.path.join(directory, "opt", name, "ckpt"))
        for i, a in enumerate(_slots(model.optimizer)):
            out[f"{name}_{i}"] = a
    np.savez(os.path.join(directory, "expected_opt.npz"), **out)
    return {"keras": keras.__name__}


def opt_read(directory):
    """Restores tensorlite's optimizer checkpoints (assert_consumed), dumps the slots."""
    out = {}
    for name, make in OPTIMIZERS.items():
        model = functional_mlp(keras)
        model.compile(optimizer=make(), loss="mse")
        model.optimizer.build(model.trainable_variables)
        tf.train.Checkpoint(model=model).read(
            os.path.join(directory, "opt", name, "ckpt")).assert_consumed()
        for i, a in enumerate(_slots(model.optimizer)):
            out[f"{name}_{i}"] = a
    np.savez(os.path.join(directory, "tf_read_opt.npz"), **out)
    return {"keras": keras.__name__}


def _modules():
    return signature_modules(tf, X)


def sm_write(directory):
    out, facts = {}, {"keras": keras.__name__}
    for name, (module, x) in _modules().items():
        tf.saved_model.save(module, os.path.join(directory, name),
                            signatures={"serving_default": module.__call__})
        out[name] = np.asarray(tf.nest.flatten(module(x))[0])
    for name, make in TUTORIALS.items():
        module, x = make(tf)
        tf.saved_model.save(module, os.path.join(directory, f"tutorial_{name}"))
        out[f"tutorial_{name}"] = module(x).numpy()
    keras.utils.set_random_seed(5)
    model = functional_mlp(keras)
    tf.saved_model.save(model, os.path.join(directory, "keras_model"))
    out["keras_model"] = np.asarray(model(X, training=False))
    model = sequence_model(keras)
    tf.saved_model.save(model, os.path.join(directory, "keras_sequence"))
    for n in (5, 2):
        out[f"keras_sequence_{n}"] = np.asarray(model(VIDEO[:, :n], training=False))
    np.savez(os.path.join(directory, "expected_sm.npz"), **out)
    return facts


def _first(value):
    return np.asarray(tf.nest.flatten(value)[0])


def sm_read(directory):
    """Each of tensorlite's SavedModels called as users call them: the signature with its
    one input positionally, the restored object itself (`loaded(x)`, what hub.load(d)(x)
    does), and a tf.keras layer wrapping it as hub.KerasLayer does."""
    out, facts = {}, {"keras": keras.__name__}
    for name, (_, x) in _modules().items():
        loaded = tf.saved_model.load(os.path.join(directory, name))
        out[f"{name}_signature"] = _first(loaded.signatures["serving_default"](tf.constant(x)))
        out[f"{name}_call"] = _first(loaded(x))
    for name, make in TUTORIALS.items():
        _, x = make(tf)
        out[f"tutorial_{name}"] = _first(tf.saved_model.load(
            os.path.join(directory, f"tutorial_{name}"))(x))
    loaded = tf.saved_model.load(os.path.join(directory, "keras_model"))
    out["keras_model_call"] = _first(loaded(X))
    out["keras_model_signature"] = _first(loaded.signatures["serving_default"](tf.constant(X)))
    inputs = keras.Input((3,))
    wrapped = keras.Model(inputs, keras.layers.Lambda(lambda t: loaded(t))(inputs))
    out["keras_model_wrapped"] = np.asarray(wrapped(X))
    loaded = tf.saved_model.load(os.path.join(directory, "keras_sequence"))
    for n in (5, 2):  # two sequence lengths through one [None, None, 3] signature
        out[f"keras_sequence_{n}"] = _first(
            loaded.signatures["serving_default"](tf.constant(VIDEO[:, :n])))
    np.savez(os.path.join(directory, "tf_read_sm.npz"), **out)
    return facts


if __name__ == "__main__":
    command, target = sys.argv[1], sys.argv[2]
    print(json.dumps(globals()[command](target)))
