"""Saving and loading Keras models.

`model.save(path)` writes one archive (a zip holding `config.json` — the architecture and
compile settings — and `weights.npz`): `path` itself when it ends in `.keras`, otherwise
`path/model.keras` inside a directory. The archive is written to a temporary file, flushed
and renamed over the old one, so a crash mid-write leaves the old complete model or the new
complete one; the next save removes the temporary files of killed saves. Loading reads only
JSON and raw arrays and resolves only known or registered classes (`registry`). `save_weights(prefix)` writes TensorFlow's checkpoint layout
(`prefix.index`, `prefix.data-00000-of-00001`) through tf.train.Checkpoint, equally atomic.
"""
import io
import json
import os
import zipfile

import numpy as np

from tensorlite.distribute.distribute_lib import should_write_checkpoint
from tensorlite.checkpoint.checkpoint import Checkpoint
from tensorlite.framework import atomic_files, errors
from tensorlite.keras.saving.object_registration import get_registered_name, safe_mode_scope

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
             "module": cls.__module__, "registered_name": get_registered_name(cls)}
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
    if not should_write_checkpoint():
        return  # a non-chief worker of a multi-worker strategy: the chief writes
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
    atomic_files.remove_dead_temps(path)
    tmp = atomic_files.temp_path(path)
    with open(tmp, "wb") as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr("config.json", json.dumps(config, default=_json_default))
            z.writestr("weights.npz", weights.getvalue())
        f.flush()
        os.fsync(f.fileno())
    atomic_files.publish(tmp, path)


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


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True,  # noqa: A002
               options=None):
    """`tf.keras.models.load_model`. Only tensorlite's classes and those given in
    `custom_objects` or registered resolve; Lambda code loads only with safe_mode=False."""
    path = _archive_path(filepath, creating=False)
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"No model found at {os.fspath(filepath)} "
                                   f"(expected {path}); save one with model.save()")
    config, arrays = _read_archive(path)
    with safe_mode_scope(safe_mode):
        model = _rebuild(config, arrays, custom_objects, path)
    if compile and config.get("compile_config"):
        cc = config["compile_config"]
        from tensorlite.keras import optimizers  # noqa: PLC0415
        model.compile(optimizer=optimizers.deserialize(cc["optimizer"]),
                      loss=_loss_from(cc["loss"], custom_objects),
                      metrics=cc.get("metrics"), loss_weights=cc.get("loss_weights"))
    return model


def _read_archive(path):
    """(config dict, weight arrays); a torn, foreign or malformed archive is DataLossError.
    Weights are read with allow_pickle=False: an archive cannot smuggle in objects."""
    try:
        with zipfile.ZipFile(path) as z:
            config = json.loads(z.read("config.json"))
            with np.load(io.BytesIO(z.read("weights.npz")), allow_pickle=False) as weights:
                arrays = [weights[f"arr_{i}"] for i in range(len(weights.files))]
        if not isinstance(config, dict) or not isinstance(config.get("model"), dict) \
                or not isinstance(config["model"].get("class_name"), str):
            raise ValueError("config.json has no 'model' entry with a 'class_name'")
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, EOFError, RecursionError) as e:
        raise errors.DataLossError(None, None, f"{path} is not a complete tensorlite model "
                                   f"archive: {e}") from None
    return config, arrays


def _rebuild(config, arrays, custom_objects, path):
    from tensorlite.keras.saving.registry import get_class, layer_from_config  # noqa: PLC0415
    entry = config["model"]
    cls = get_class(entry["class_name"], custom_objects, entry.get("registered_name"))
    if entry.get("config") is not None and hasattr(cls, "from_config"):
        model = layer_from_config(entry, custom_objects)
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
    try:
        model.set_weights(arrays)
    except ValueError as e:
        raise errors.DataLossError(None, None, f"{path}: its weights do not fit the model its "
                                   f"config describes ({e})") from None
    return model


def _loss_from(spec, custom_objects):
    if isinstance(spec, dict) and "class_name" in spec:
        from tensorlite.keras import losses  # noqa: PLC0415
        return losses.deserialize(spec, custom_objects=custom_objects)
    return spec


def save_weights(model, filepath):
    if not should_write_checkpoint():
        return  # a non-chief worker of a multi-worker strategy: the chief writes
    filepath = os.fspath(filepath)
    if filepath.endswith(".h5") or filepath.endswith(".hdf5"):
        raise NotImplementedError("HDF5 (.h5) weight files need h5py, which tensorlite does "
                                  "not use; pass a path without .h5 for TensorFlow's "
                                  "checkpoint format")
    Checkpoint(model=_WeightsView(model)).write(filepath)


def load_weights(model, filepath):
    if not model.built:
        raise ValueError(f"Unable to load weights into model {model.name}: it is not built. "
                         f"Call the model on a batch of data (or build()) first.")
    return Checkpoint(model=_WeightsView(model)).restore(os.fspath(filepath))


class _WeightsView:
    """The model's weights in order, as a checkpointable object (stable across instances of
    the same architecture, whatever their attribute names)."""

    def __init__(self, model):
        self._model = model

    def _checkpoint_dependencies(self):
        return {f"weight_{i:05d}": w for i, w in enumerate(self._model.weights)}
