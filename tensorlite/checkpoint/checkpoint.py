"""`tf.train.Checkpoint`: saves and restores variables, modules and iterators.

Files follow TensorFlow's naming: `save("dir/ckpt")` writes `dir/ckpt-1.index` and
`dir/ckpt-1.data-00000-of-00001` and records the latest save in `dir/checkpoint`. Every file
is written to a temporary name, flushed, then renamed, data before index: a crash leaves
the previous complete checkpoint, never a torn one (the index appears last).

Example:
    >>> ckpt = tf.train.Checkpoint(step=tf.Variable(1), iterator=iter(dataset))
    >>> path = ckpt.save("/tmp/ckpts/ckpt")
    >>> ckpt.restore(path)
"""
import json
import os

import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.module import Module
from tensorlite.framework.variables import Variable

_DATA = ".data-00000-of-00001"
_INDEX = ".index"


def _collect(obj, path, out, seen):
    """(path, leaf) pairs: Variables, and objects with the _serialize_to_tensors protocol."""
    if id(obj) in seen:
        return
    if isinstance(obj, Variable) or getattr(obj, "_is_variable", False):
        seen.add(id(obj))
        out.append((path, obj))
    elif hasattr(obj, "_serialize_to_tensors"):
        seen.add(id(obj))
        out.append((path, obj))
    elif isinstance(obj, (Module, Checkpoint)) or hasattr(obj, "_checkpoint_dependencies"):
        seen.add(id(obj))
        deps = obj._checkpoint_dependencies() if hasattr(obj, "_checkpoint_dependencies") \
            else {k: v for k, v in vars(obj).items() if not k.startswith("_ckpt")}
        for k in sorted(deps):
            _collect(deps[k], f"{path}/{k}" if path else k, out, seen)
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            _collect(obj[k], f"{path}/{k}", out, seen)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _collect(v, f"{path}/{i}", out, seen)


def _atomic_write(path, data):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class _Status:
    def __init__(self, unmatched_saved, unrestored):
        self._unmatched, self._unrestored = unmatched_saved, unrestored

    def assert_consumed(self):
        if self._unmatched or self._unrestored:
            raise AssertionError(f"Unresolved checkpoint values: saved but not restored "
                                 f"{sorted(self._unmatched)}; objects without a saved value "
                                 f"{sorted(self._unrestored)}")
        return self

    def assert_existing_objects_matched(self):
        if self._unrestored:
            raise AssertionError(f"objects without a saved value: {sorted(self._unrestored)}")
        return self

    def expect_partial(self):
        return self

    def assert_nontrivial_match(self):
        return self


class Checkpoint:
    """Groups trackable objects (keyword arguments) for saving and restoring."""

    def __init__(self, root=None, **kwargs):
        if root is not None:
            kwargs["root"] = root
        for k, v in kwargs.items():
            setattr(self, k, v)
        self._ckpt_counter = 0

    def _checkpoint_dependencies(self):
        return {k: v for k, v in vars(self).items() if not k.startswith("_ckpt")}

    @property
    def save_counter(self):
        return self._ckpt_counter

    def write(self, file_prefix):
        """Writes exactly `file_prefix` (.index and .data files); returns it."""
        file_prefix = os.fspath(file_prefix)
        from tensorlite.distribute.distribute_lib import should_write_checkpoint  # noqa
        if not should_write_checkpoint():
            return file_prefix  # a non-chief worker of a multi-worker strategy
        directory = os.path.dirname(os.path.abspath(file_prefix))
        os.makedirs(directory, exist_ok=True)
        leaves = []
        _collect(self, "", leaves, set())
        blobs, index, offset = [], {}, 0
        for path, obj in leaves:
            if hasattr(obj, "_serialize_to_tensors"):
                for name, value in obj._serialize_to_tensors().items():
                    raw = value if isinstance(value, bytes) else np.asarray(value).tobytes()
                    index[f"{path}/.ATTRIBUTES/{name}"] = {"kind": "bytes", "offset": offset,
                                                          "size": len(raw)}
                    blobs.append(raw)
                    offset += len(raw)
            else:
                arr = np.asarray(obj.numpy())  # tobytes() is C-ordered; keep 0-d shapes
                raw = arr.tobytes()
                index[f"{path}/.ATTRIBUTES/VARIABLE_VALUE"] = {
                    "kind": "array", "dtype": arr.dtype.str, "shape": list(arr.shape),
                    "offset": offset, "size": len(raw)}
                blobs.append(raw)
                offset += len(raw)
        _atomic_write(file_prefix + _DATA, b"".join(blobs))
        _atomic_write(file_prefix + _INDEX, json.dumps({"format": "tensorlite-ckpt-1",
                                                        "entries": index}).encode())
        return file_prefix

    def save(self, file_prefix):
        """Writes `file_prefix-N` (N counts saves) and records it as the latest."""
        self._ckpt_counter += 1
        path = self.write(f"{os.fspath(file_prefix)}-{self._ckpt_counter}")
        directory = os.path.dirname(os.path.abspath(path))
        name = os.path.basename(path)
        _atomic_write(os.path.join(directory, "checkpoint"),
                      f'model_checkpoint_path: "{name}"\n'
                      f'all_model_checkpoint_paths: "{name}"\n'.encode())
        return path

    def read(self, save_path):
        return self.restore(save_path)

    def restore(self, save_path):
        """Restores every object that has a saved value; returns a status object."""
        if save_path is None:
            return _Status(set(), set())
        save_path = os.fspath(save_path)
        if not os.path.exists(save_path + _INDEX):
            raise errors.NotFoundError(None, None, f"Failed to find any matching files for "
                                       f"{save_path}; pass the prefix returned by save() or "
                                       f"tf.train.latest_checkpoint(directory)")
        with open(save_path + _INDEX, "rb") as f:
            index = json.loads(f.read())["entries"]
        with open(save_path + _DATA, "rb") as f:
            data = f.read()
        leaves = []
        _collect(self, "", leaves, set())
        used, unrestored = set(), set()
        for path, obj in leaves:
            if hasattr(obj, "_restore_from_tensors"):
                prefix = f"{path}/.ATTRIBUTES/"
                found = {k[len(prefix):]: index[k] for k in index if k.startswith(prefix)}
                if not found:
                    unrestored.add(path)
                    continue
                obj._restore_from_tensors({n: data[e["offset"]:e["offset"] + e["size"]]
                                           for n, e in found.items()})
                used.update(prefix + n for n in found)
                continue
            key = f"{path}/.ATTRIBUTES/VARIABLE_VALUE"
            entry = index.get(key)
            if entry is None:
                unrestored.add(path)
                continue
            raw = data[entry["offset"]:entry["offset"] + entry["size"]]
            arr = np.frombuffer(raw, dtype=np.dtype(entry["dtype"])).reshape(entry["shape"])
            if tuple(obj.shape.as_list()) != tuple(arr.shape):
                raise errors.InvalidArgumentError(
                    None, None, f"checkpoint value for {path} has shape {list(arr.shape)} but "
                    f"the variable has shape {obj.shape}")
            obj.assign(arr.copy())
            used.add(key)
        return _Status(set(index) - used, unrestored)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """`tf.train.latest_checkpoint`: the prefix recorded in `checkpoint_dir/checkpoint`."""
    path = os.path.join(os.fspath(checkpoint_dir), latest_filename or "checkpoint")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("model_checkpoint_path:"):
                name = line.split(":", 1)[1].strip().strip('"')
                full = os.path.join(os.fspath(checkpoint_dir), name)
                return full if os.path.exists(full + _INDEX) else None
    return None
