"""Saving and loading Keras models, in Keras's own formats.

- `model.save("m.keras")`: Keras 3's archive
  (keras_archive.py), which TensorFlow's Keras loads, with the optimizer's state so that
  `load_model` then `fit` continues exactly;
- `model.save("m.h5")`, `load_model("m.h5")`: Keras's legacy HDF5 file (legacy_h5.py);
- `model.save(DIR)`: tf.keras 2's SavedModel directory (export.py), which TensorFlow's
  `tf.saved_model.load` runs, holding the `.keras` archive as `DIR/model.keras` for
  `load_model(DIR)`;
- `save_weights(prefix)`: TensorFlow's checkpoint with tf.keras's object graph;
  `save_weights("w.weights.h5")`: Keras 3's weights file; `load_weights` reads all three.

Every write goes to a temporary name, is flushed and renamed: a crash leaves the old complete
file or the new one. Loading never runs code from the file (see keras_config.py).

Example:
    >>> model.save("/tmp/m.keras")
    >>> tf.keras.models.load_model("/tmp/m.keras").predict(x)
"""
import os

from tensorlite.checkpoint.checkpoint import read_checkpoint, write_checkpoint
from tensorlite.checkpoint.state import update_state
from tensorlite.framework import errors
from tensorlite.framework.write_policy import may_write
from tensorlite.keras.saving.object_registration import custom_object_scope, safe_mode_scope
from tensorlite.keras.saving import keras_archive, legacy_h5


def _is_h5(path):
    return path.endswith((".h5", ".hdf5"))


def _archive_path(filepath, creating):
    filepath = os.fspath(filepath)
    if filepath.endswith(".keras") or _is_h5(filepath):
        return filepath
    if creating:
        os.makedirs(filepath, exist_ok=True)
    return os.path.join(filepath, "model.keras")


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """`tf.keras.models.save_model` / `model.save`."""
    if not may_write():
        return  # a non-chief worker of a multi-worker strategy: the chief writes
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling "
                         "`build()` or by calling the model on a batch of data.")
    path = _archive_path(filepath, creating=True)
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists and overwrite=False")
    _make_parent(path)
    if _is_h5(path):
        legacy_h5.save_model(model, path, include_optimizer)
    elif path != os.fspath(filepath):  # a directory: tf.keras 2's SavedModel, archive inside
        from tensorlite.keras.saving.export import export  # noqa: PLC0415
        export(model, filepath, extra=lambda tmp: keras_archive.write_archive(
            model, os.path.join(tmp, os.path.basename(path)), include_optimizer),
            callable_root=True)
    else:
        keras_archive.write_archive(model, path, include_optimizer)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True,  # noqa: A002
               options=None):
    """`tf.keras.models.load_model`: a `.keras` archive (Keras 3's or tensorlite's), a
    directory holding `model.keras`, or a legacy `.h5` file. Class names resolve only to
    tensorlite's classes and `custom_objects`/registered ones; Lambda layers are refused
    unless `safe_mode=False`."""
    path = _archive_path(filepath, creating=False)
    if not os.path.exists(path) and os.path.exists(os.path.join(os.fspath(filepath),
                                                                 "saved_model.pb")):
        raise ValueError(  # Keras 3's answer for a SavedModel without a Keras model inside
            f"File format not supported: filepath={os.fspath(filepath)}. Keras 3 only supports "
            f"V3 `.keras` files and legacy H5 format files (`.h5` extension). Note that the "
            f"legacy SavedModel format is not supported by `load_model()` in Keras 3. Load "
            f"it for inference with tf.saved_model.load({os.fspath(filepath)!r}).")
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"No model found at {os.fspath(filepath)} "
                                   f"(expected {path}); save one with model.save()")
    # custom_objects also for what configs name deeper (activations, initializers)
    with safe_mode_scope(safe_mode), custom_object_scope(custom_objects):
        if _is_h5(path):
            return legacy_h5.load_model(path, custom_objects, compile, safe_mode)
        return keras_archive.read_archive(path, custom_objects, compile, safe_mode)


def _make_parent(path):
    """Creates the file's directory if missing, as Keras does (the save-and-load tutorial
    saves to './checkpoints/my_checkpoint.weights.h5' without making the folder)."""
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)


def save_weights(model, filepath):
    """`model.save_weights(prefix)`: TensorFlow's checkpoint with tf.keras's object graph
    (`layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE`, the optimizer's
    `optimizer/_variables/N`), recorded in the directory's `checkpoint` file as tf.keras
    does; TensorFlow's `model.load_weights` reads it."""
    filepath = os.fspath(filepath)
    _make_parent(filepath)
    if filepath.endswith((".h5", ".hdf5")):
        return legacy_h5.save_weights(model, filepath)
    path = write_checkpoint(model, filepath)
    update_state(os.path.dirname(os.path.abspath(path)), path, [path])


def load_weights(model, filepath):
    """`model.load_weights(prefix)` of a checkpoint written by tensorlite or TensorFlow.
    As in tf.keras, a checkpoint may be loaded before the model is built: each weight is
    restored when it is made (checkpoint/deferred.py); an HDF5 file needs the weights."""
    filepath = os.fspath(filepath)
    if filepath.endswith((".h5", ".hdf5")):
        if not model.built:
            raise ValueError(f"Unable to load weights saved in HDF5 format into model "
                             f"{model.name}: it is not built. Call the model on a batch of "
                             f"data (or build()) first.")
        return legacy_h5.load_weights(model, filepath)
    return read_checkpoint(model, filepath)
