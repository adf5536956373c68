"""The `.keras` archive of Keras 3: a zip of `config.json` (the model's Keras config with
its `compile_config`), `metadata.json` (`keras_version`, `date_saved`) and
`model.weights.h5` (see weights_layout.py). Keras 3 loads what tensorlite writes, and
tensorlite loads what Keras 3 (TensorFlow's tf.keras) writes.

Only those three members are ever read, by name, into memory: nothing is extracted, so a
member name cannot write outside anything; an archive with an absolute or `..` member name
is refused outright as crafted. Earlier tensorlite archives (`weights.npz`, format
`tensorlite-keras-1`) still load.

Example:
    >>> write_archive(model, "m.keras")
    >>> read_archive("m.keras").predict(x)
"""
import datetime
import io
import json
import struct
import tokenize
import warnings
import zipfile
import zlib

import numpy as np

from tensorlite.framework import errors, size_limits
from tensorlite.keras.saving.object_registration import get_registered_name
from tensorlite.keras.saving import keras_config, weights_layout
from tensorlite.keras.saving.legacy_h5 import check_h5_sizes, damaged_h5

KERAS_VERSION = "3.0.0"  # the archive layout written: Keras 3's
CONFIG, METADATA, WEIGHTS_H5, WEIGHTS_NPZ = ("config.json", "metadata.json",
                                             "model.weights.h5", "model.weights.npz")


def model_entry(model, include_optimizer=True):
    """config.json's content: the Keras config, build_config and compile_config."""
    if model._is_network():
        entry = keras_config.to_keras(model)
    else:  # a subclassed model: its class (registered by the user), config and input shape
        cls = type(model)
        try:
            config = model.get_config()
        except NotImplementedError:
            config = {}
        entry = {"module": cls.__module__, "class_name": cls.__name__, "config": config,
                 "registered_name": get_registered_name(cls),  # "Custom>MyModel"
                 "build_config": {"input_shape": _shape(model._build_input_shape)}}
    if include_optimizer and model.optimizer is not None:
        entry["compile_config"] = keras_config.compile_to_keras(model._compile_config)
    return entry


def _shape(shape):
    if shape is None:
        return None
    if hasattr(shape, "as_list"):
        return shape.as_list()
    return [_shape(s) if isinstance(s, (list, tuple)) or hasattr(s, "as_list") else s
            for s in shape]


def write_zip(model, file, include_optimizer=True):
    """Writes the `.keras` zip to a path or binary file. The weights' HDF5 image is built
    in memory (h5py needs a seekable file) and streamed into the zip in chunks, so saving
    holds about one copy of the weights beyond the model's own."""
    entry = model_entry(model, include_optimizer)
    arrays = weights_layout.keras3_arrays(model, include_optimizer)
    with zipfile.ZipFile(file, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(CONFIG, json.dumps(entry, default=_json_default))
        z.writestr(METADATA, json.dumps({"keras_version": KERAS_VERSION, "date_saved":
                                         datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}))
        try:
            h5py = weights_layout.h5py_module()
        except ImportError:
            warnings.warn("h5py is not installed: the .keras archive holds its weights as "
                          "model.weights.npz, which only tensorlite reads; pip install h5py "
                          "for archives Keras loads", stacklevel=4)
            npz = io.BytesIO()
            np.savez(npz, **arrays)
            z.writestr(WEIGHTS_NPZ, npz.getvalue())
        else:
            h5 = io.BytesIO()
            with h5py.File(h5, "w") as f:
                weights_layout.write_h5(f, arrays)
            del arrays
            view = h5.getbuffer()
            with z.open(WEIGHTS_H5, "w", force_zip64=len(view) > 2 ** 31) as member:
                for start in range(0, len(view), 1 << 24):
                    member.write(view[start:start + (1 << 24)])
            del view


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "as_list"):
        return o.as_list()
    if hasattr(o, "name") and hasattr(o, "is_floating"):  # a DType
        return o.name
    if hasattr(o, "numpy") and hasattr(o, "dtype"):  # a constant tensor argument of an op
        return o.numpy().tolist()
    raise TypeError(f"cannot serialise {type(o).__name__} in a model config")


# -- reading -------------------------------------------------------------------------------------
def _loss(path, what):
    return errors.DataLossError(None, None, f"{path} is not a complete Keras model archive: "
                                f"{what}")


def _members(z, path):
    names = z.namelist()
    for name in names:
        if name.startswith(("/", "\\")) or ".." in name.replace("\\", "/").split("/") \
                or ":" in name.split("/")[0]:
            raise ValueError(f"{path}: the archive holds a member named {name!r}, outside the "
                             f"archive's own tree; refusing a crafted file")
    return set(names)


# What a damaged zip raises from zipfile and zlib: each is the archive's DataLossError.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError,
               NotImplementedError, RuntimeError, struct.error, OverflowError)


def read_member(z, name, path, config=False):
    """The bytes of archive member `name`. Its declared size is checked against the cap
    (a config's against the smaller config cap) before reading, and the read is bounded
    by that size too, since the declaration can lie: a zip bomb fails, never allocates."""
    try:
        info = z.getinfo(name)
        declared = info.file_size
        if config:
            size_limits.check_config(declared, f"archive member {name}", path)
        size_limits.check_inflated(declared, f"archive member {name}", path)
        out = bytearray()
        with z.open(info) as member:
            while chunk := member.read(min(1 << 20, declared + 1 - len(out))):
                out += chunk
                if len(out) > declared:
                    raise _loss(path, f"{name} holds more than the {declared} bytes its "
                                      f"header declares")
            return bytes(out)
    except (*_ZIP_ERRORS, OSError, ValueError) as e:  # open: these are bad offsets
        raise _loss(path, f"{name} cannot be read ({type(e).__name__}: {e})") from None


def _open_zip(file, path):
    """The zip in `file` (a path or a binary file); a damaged one is `path`'s DataLoss."""
    try:
        return zipfile.ZipFile(file)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise  # the path, not the archive, is wrong: the caller reports it
    except (*_ZIP_ERRORS, ValueError, OSError) as e:  # offsets that seek before the start
        raise _loss(path, f"{type(e).__name__}: {e}") from None


def read_archive(path, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """The model of a `.keras` archive (Keras 3's, or an earlier tensorlite one)."""
    try:
        with _open_zip(path, path) as z:
            names = _members(z, path)
            if CONFIG not in names:
                raise _loss(path, f"it has no {CONFIG}")
            entry = json.loads(read_member(z, CONFIG, path, config=True))
            if not isinstance(entry, dict):
                raise _loss(path, f"{CONFIG} is not a JSON object")
            if entry.get("format") == "tensorlite-keras-1":
                from tensorlite.keras.saving.legacy_archive import load  # noqa: PLC0415
                return load(z, entry, path, custom_objects, compile)
            weights = _read_weights(z, names, path)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise _loss(path, f"{CONFIG} is not valid JSON ({e})") from None
    return build_model(entry, weights, custom_objects, compile, safe_mode, path)


def _read_weights(z, names, path):
    if WEIGHTS_H5 in names:
        h5py = weights_layout.h5py_module()
        image = read_member(z, WEIGHTS_H5, path)
        with damaged_h5(path, WEIGHTS_H5), h5py.File(io.BytesIO(image), "r") as f:
            check_h5_sizes(f, path)
            return weights_layout.read_h5(f, path)
    if WEIGHTS_NPZ in names:
        return read_npz(read_member(z, WEIGHTS_NPZ, path), path)
    raise _loss(path, f"it has neither {WEIGHTS_H5} nor {WEIGHTS_NPZ}")


def read_npz(data, path):
    """name -> array of an `.npz` image (no pickles). Each member's `.npy` header is
    checked against the bytes that follow it before the array is made."""
    out = {}
    with _open_zip(io.BytesIO(data), path) as z:
        for name in z.namelist():
            raw = read_member(z, name, path)
            key = name[:-4] if name.endswith(".npy") else name
            try:
                out[key] = _npy(raw, f"{name} of its weights", path)
            except (ValueError, SyntaxError, TypeError, KeyError,
                    tokenize.TokenError) as e:  # numpy's parse of the header's dict
                raise _loss(path, f"{name} of its weights is not a valid .npy array ({e})") \
                    from None
    return out


def _npy(raw, what, path):
    f = io.BytesIO(raw)
    version = np.lib.format.read_magic(f)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
        np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read_header(f)
    if dtype.kind not in "biufc":  # objects would be unpickled; strings are no weights
        raise _loss(path, f"{what} has dtype {dtype}, not a weight array's")
    size_limits.check_shape(shape, dtype, len(raw) - f.tell(), what, path)
    count = 1
    for d in shape:
        count *= d
    array = np.frombuffer(raw, dtype=dtype, count=count, offset=f.tell())
    return array.reshape(shape, order="F" if fortran else "C").copy()


def build_model(entry, weights, custom_objects, compile, safe_mode, path):  # noqa: A002
    """A model from its Keras config entry and `keras3_arrays`-style weights."""
    try:
        model = _from_entry(entry, custom_objects, safe_mode)
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        raise _loss(path, f"its model config is malformed ({type(e).__name__}: {e})") from None
    if compile and entry.get("compile_config"):
        keras_config.compile_from_keras(model, entry["compile_config"], custom_objects)
    weights_layout.assign_keras3(model, weights, load_optimizer=compile)
    return model


def _from_entry(entry, custom_objects, safe_mode):
    if entry.get("class_name") in ("Sequential", "Functional", "Model") \
            and "layers" in entry.get("config", {}):
        return keras_config.from_keras(entry, custom_objects, safe_mode)
    from tensorlite.keras.saving.registry import get_class  # noqa: PLC0415
    cls = get_class(entry["class_name"], custom_objects)
    config = entry.get("config") or {}
    model = cls.from_config(config) if config and hasattr(cls, "from_config") else cls()
    shape = (entry.get("build_config") or {}).get("input_shape")
    if not model.built:
        if shape is None:
            raise ValueError(f"Cannot rebuild {entry['class_name']}: its input shape was not "
                             f"recorded; call the model on data before saving it")
        model.build(shape)
    return model


def write_archive(model, path, include_optimizer=True):
    """Writes the archive atomically: a temporary name, fsync, then rename."""
    from tensorlite.framework.atomic_files import write_with  # noqa: PLC0415
    write_with(path, lambda tmp: write_zip(model, tmp, include_optimizer))
