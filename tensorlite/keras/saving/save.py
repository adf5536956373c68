"""Saving and loading Keras models.

`model.save(path)` writes one archive (a zip holding `config.json` — the architecture and
compile settings — and `weights.npz`): `path` itself when it ends in `.keras`, otherwise
`path/model.keras` inside a directory. The archive is written to a temporary file, flushed
and renamed over the old one, so a crash mid-write leaves the old complete model or the new
complete one. `save_weights(prefix)` writes TensorFlow's checkpoint layout
(`prefix.index`, `prefix.data-00000-of-00001`) through tf.train.Checkpoint, equally atomic.
"""
import io
import json
import os
import zipfile

import numpy as np

from tensorlite.checkpoint.checkpoint import read_checkpoint, write_checkpoint
from tensorlite.checkpoint.state import update_state
from tensorlite.framework import errors

FORMAT = "tensorlite-keras-1"


def _archive_path(filepath, creating):
    filepath = os.fspath(filepath)
    if filepath.endswith(".h5") or filepath.endswith(".hdf5"):
        raise NotImplementedError("HDF5 (.h5) model files need h5py, which tensorlite does "
                                  "not use; save to a directory or a .keras file instead")
    if filepath.endswith(".keras"):
        return filepath
    if creating:
        os.makedirs(filepath, exist_ok=True)
    return os.path.join(filepath, "model.keras")


def _model_entry(model):
    from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
    from tensorlite.keras.engine.sequential import Sequential  # noqa: PLC0415
    cls = type(model)
    entry = {"class_name": "Functional" if isinstance(model, Functional) else cls.__name__,
             "module": cls.__module__}
    try:
        entry["config"] = model.get_config()
    except NotImplementedError:
        entry["config"] = None
    if not isinstance(model, (Functional, Sequential)):
        entry["build_input_shape"] = _jsonable(model._build_input_shape)
    return entry


def _jsonable(shape):
    if shape is None:
        return None
    if hasattr(shape, "as_list"):
        return shape.as_list()
    if isinstance(shape, dict):
        return {k: _jsonable(v) for k, v in shape.items()}
    if isinstance(shape, (list, tuple)):
        return [_jsonable(s) if isinstance(s, (list, tuple)) or hasattr(s, "as_list") else s
                for s in shape]
    return shape


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling "
                         "`build()` or by calling the model on a batch of data.")
    path = _archive_path(filepath, creating=True)
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} exists and overwrite=False")
    config = {"format": FORMAT, "model": _model_entry(model),
              "weight_names": [w.name for w in model.weights],
              "compile_config": model._compile_config if include_optimizer else None}
    weights = io.BytesIO()
    np.savez(weights, *[np.asarray(w.numpy()) for w in model.weights])
    tmp = f"{path}.tmp-{os.getpid()}"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("config.json", json.dumps(config, default=_json_default))
        z.writestr("weights.npz", weights.getvalue())
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "as_list"):
        return o.as_list()
    if hasattr(o, "name") and hasattr(o, "is_floating"):  # a DType
        return o.name
    raise TypeError(f"cannot serialise {type(o).__name__} in a model config")


def load_model(filepath, custom_objects=None, compile=True, options=None):  # noqa: A002
    """`tf.keras.models.load_model`."""
    from tensorlite.keras.saving.registry import get_class  # noqa: PLC0415
    path = _archive_path(filepath, creating=False)
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"No model found at {os.fspath(filepath)} "
                                   f"(expected {path}); save one with model.save()")
    try:
        with zipfile.ZipFile(path) as z:
            config = json.loads(z.read("config.json"))
            weights = np.load(io.BytesIO(z.read("weights.npz")))
            arrays = [weights[f"arr_{i}"] for i in range(len(weights.files))]
    except (zipfile.BadZipFile, KeyError) as e:
        raise errors.DataLossError(None, None, f"{path} is not a complete tensorlite model "
                                   f"archive: {e}") from None
    entry = config["model"]
    cls = get_class(entry["class_name"], custom_objects, entry.get("module"))
    if entry.get("config") is not None and hasattr(cls, "from_config"):
        try:
            model = cls.from_config(entry["config"], custom_objects=custom_objects)
        except TypeError:
            model = cls.from_config(entry["config"])
    else:
        try:
            model = cls()
        except TypeError as e:
            raise TypeError(f"Cannot rebuild {entry['class_name']}: it defines no get_config() "
                            f"and its constructor needs arguments ({e}); implement get_config "
                            f"and from_config") from None
    if not model.built:
        if entry.get("build_input_shape") is None:
            raise ValueError(f"Cannot rebuild {entry['class_name']}: its input shape was not "
                             f"recorded; call the model on data before saving it")
        model.build(entry["build_input_shape"])
    model.set_weights(arrays)
    if compile and config.get("compile_config"):
        cc = config["compile_config"]
        from tensorlite.keras import optimizers  # noqa: PLC0415
        model.compile(optimizer=optimizers.deserialize(cc["optimizer"]),
                      loss=_loss_from(cc["loss"], custom_objects),
                      metrics=cc.get("metrics"), loss_weights=cc.get("loss_weights"))
    return model


def _loss_from(spec, custom_objects):
    if isinstance(spec, dict) and "class_name" in spec:
        from tensorlite.keras import losses  # noqa: PLC0415
        return losses.deserialize(spec, custom_objects=custom_objects)
    return spec


def save_weights(model, filepath):
    """`model.save_weights(prefix)`: TensorFlow's checkpoint with tf.keras's object graph
    (`layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE`, the optimizer's
    `optimizer/_variables/N`), recorded in the directory's `checkpoint` file as tf.keras
    does; TensorFlow's `model.load_weights` reads it."""
    filepath = os.fspath(filepath)
    if filepath.endswith(".h5") or filepath.endswith(".hdf5"):
        raise NotImplementedError("HDF5 (.h5) weight files need h5py, which tensorlite does "
                                  "not use; pass a path without .h5 for TensorFlow's "
                                  "checkpoint format")
    path = write_checkpoint(model, filepath)
    update_state(os.path.dirname(os.path.abspath(path)), path, [path])


def load_weights(model, filepath):
    """`model.load_weights(prefix)` of a checkpoint written by tensorlite or TensorFlow."""
    if not model.built:
        raise ValueError(f"Unable to load weights into model {model.name}: it is not built. "
                         f"Call the model on a batch of data (or build()) first.")
    return read_checkpoint(model, os.fspath(filepath))
