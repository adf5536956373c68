"""`tf.train.Checkpoint`: saves and restores variables, modules and iterators.

Files follow TensorFlow's naming: `save("dir/ckpt")` writes `dir/ckpt-1.index` and
`dir/ckpt-1.data-00000-of-00001` and records the latest save in `dir/checkpoint`.

A checkpoint is committed as a whole. Both files are first written completely under
temporary names (`.tmp-<pid>`); the index records the data file's size and CRC32. Then the
data file is renamed into place, then the index. A kill between the two renames leaves the
new data beside the old index: the next reader or writer sees that the index does not
describe the data, finds the dead writer's temporary index that does, and finishes its
commit. So a killed write leaves the old or the new complete checkpoint; a pair that no
index describes is a DataLossError naming both files. Writers remove the temporary files of
dead writers.

Example:
    >>> ckpt = tf.train.Checkpoint(step=tf.Variable(1), iterator=iter(dataset))
    >>> path = ckpt.save("/tmp/ckpts/ckpt")
    >>> ckpt.restore(path)
"""
import json
import os
import re
import zlib

import numpy as np

from tensorlite.framework import atomic_files, errors
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


_FORMAT = "tensorlite-ckpt-2"


def _write_pair(prefix, data, entries):
    """Commits `prefix`'s data and index as one: see the module docstring."""
    _settle_dead_writers(prefix)
    index = json.dumps({"format": _FORMAT, "entries": entries, "data_size": len(data),
                        "data_crc32": zlib.crc32(data)}).encode()
    data_tmp = atomic_files.write_temp(prefix + _DATA, data)
    index_tmp = atomic_files.write_temp(prefix + _INDEX, index)
    atomic_files.publish(data_tmp, prefix + _DATA)
    atomic_files.publish(index_tmp, prefix + _INDEX)  # the commit point


def _parse_index(raw):
    """The index dict, or None if it is not a complete index of this format."""
    try:
        index = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(index, dict) or index.get("format") != _FORMAT \
            or not isinstance(index.get("entries"), dict):
        return None
    return index


def _describes(index, data):
    return index is not None and index.get("data_size") == len(data) \
        and index.get("data_crc32") == zlib.crc32(data)


def _read_file(path):
    with open(path, "rb") as f:
        return f.read()


def _load_pair(prefix):
    """(index entries, data bytes) of a committed checkpoint, finishing a dead writer's
    interrupted commit if there is one; DataLossError if the pair is inconsistent."""
    data = _read_file(prefix + _DATA) if os.path.exists(prefix + _DATA) else None
    index = _parse_index(_read_file(prefix + _INDEX))
    if data is not None and _describes(index, data):
        return index["entries"], data
    if data is not None:
        finished = _finish_dead_commit(prefix, data)
        if finished is not None:
            return finished["entries"], data
    raise errors.DataLossError(
        None, None, f"checkpoint {prefix} is inconsistent: {prefix + _INDEX} does not describe "
        f"{prefix + _DATA} (" + ("the data file is missing" if data is None else
                                 "sizes or checksums differ") + "). The files were changed or "
        f"damaged after they were written; restore them from a backup or an older checkpoint")


def _finish_dead_commit(prefix, data):
    """Publishes a dead writer's temporary index if it describes the current data."""
    directory = os.path.dirname(os.path.abspath(prefix))
    stem = os.path.basename(prefix) + _INDEX + ".tmp-"
    for name in sorted(os.listdir(directory)):
        if not name.startswith(stem) or atomic_files.dead_temp_pid(name) is None:
            continue
        path = os.path.join(directory, name)
        index = _parse_index(_read_file(path))
        if _describes(index, data):
            atomic_files.publish(path, prefix + _INDEX)
            return index
    return None


def _settle_dead_writers(prefix):
    """Finishes the interrupted commits of dead writers in `prefix`'s directory (of this
    checkpoint's name, e.g. every `ckpt-N`), then removes their temporary files."""
    directory = os.path.dirname(os.path.abspath(prefix))
    stem = re.sub(r"-\d+$", "", os.path.basename(prefix))
    suffix = re.compile(re.escape(_INDEX) + r"\.tmp-\d+$")
    for name in os.listdir(directory):
        if name.startswith(stem) and suffix.search(name) \
                and atomic_files.dead_temp_pid(name) is not None:
            other = os.path.join(directory, suffix.sub("", name))
            if os.path.exists(other + _DATA):
                _finish_dead_commit(other, _read_file(other + _DATA))
    atomic_files.remove_dead_temps(os.path.join(directory, stem))


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
        _write_pair(file_prefix, b"".join(blobs), index)
        return file_prefix

    def save(self, file_prefix):
        """Writes `file_prefix-N` (N counts saves) and records it as the latest."""
        self._ckpt_counter += 1
        path = self.write(f"{os.fspath(file_prefix)}-{self._ckpt_counter}")
        directory = os.path.dirname(os.path.abspath(path))
        name = os.path.basename(path)
        atomic_files.remove_dead_temps(os.path.join(directory, "checkpoint"))
        atomic_files.write_file(os.path.join(directory, "checkpoint"),
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
        index, data = _load_pair(save_path)
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
            arr = _entry_array(save_path, key, entry, data)
            if tuple(obj.shape.as_list()) != tuple(arr.shape):
                raise errors.InvalidArgumentError(
                    None, None, f"checkpoint value for {path} has shape {list(arr.shape)} but "
                    f"the variable has shape {obj.shape}")
            obj.assign(arr.copy())
            used.add(key)
        return _Status(set(index) - used, unrestored)


def _entry_array(prefix, key, entry, data):
    """A variable's saved array; an entry that does not fit its data is DataLossError."""
    try:
        dtype = np.dtype(entry["dtype"])
        if dtype.kind not in "biufc":
            raise ValueError(f"dtype {dtype} is not a variable dtype")
        start, size = int(entry["offset"]), int(entry["size"])
        if start < 0 or size < 0 or start + size > len(data):
            raise ValueError("its bytes lie outside the data file")
        return np.frombuffer(data[start:start + size], dtype=dtype).reshape(entry["shape"])
    except (KeyError, TypeError, ValueError) as e:
        raise errors.DataLossError(None, None, f"checkpoint {prefix}: entry {key} is malformed "
                                   f"({e})") from None


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
