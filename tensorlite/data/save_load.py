"""`Dataset.save(path)` and `tf.data.Dataset.load(path)` (also `tf.data.experimental.save`
and `load`): a dataset's elements written to a directory once and read back later, with
its element_spec, in shards.

The directory holds `dataset_spec.json` (the element_spec and the shard list) and one
record file per shard (`shard_00000.tlrec`, gzip'd with compression="GZIP"), each record
an element in tensorlite's pickle-free element format (data/element_io.py). It is not
TensorFlow's on-disk format: `load` reads what tensorlite's `save` wrote. Elements go to
shards round-robin, or by `shard_func(element) -> shard index`; `load` reads the shards
round-robin again (so the default sharding gives back the original order), or hands a
dataset of shard datasets to `reader_func`, as TensorFlow does. A save goes to a temporary
directory that replaces `path` only when complete: a killed save leaves the old directory
or the new one, never a mix.

Example:
    >>> ds = tf.data.Dataset.range(6).map(lambda x: (x, x * 2))
    >>> ds.save("/tmp/saved_ds")                                    # doctest: +SKIP
    >>> list(tf.data.Dataset.load("/tmp/saved_ds").as_numpy_iterator())[:2]  # doctest: +SKIP
    [(0, 0), (1, 2)]
"""
import gzip
import json
import os
import re
import shutil
import tempfile

import numpy as np

from tensorlite.data import element_io
from tensorlite.data.dataset import DatasetV2
from tensorlite.data.grouping import ListDataset
from tensorlite.data.iterator import RawIterator
from tensorlite.data.parallel_map import cpu_count
from tensorlite.data.transforms import DatasetSpec
from tensorlite.framework import dtypes, errors, nest
from tensorlite.framework.tensor import Tensor
from tensorlite.framework.tensor_spec import TensorSpec

_SPEC_FILE = "dataset_spec.json"
_SHARD = re.compile(r"shard_\d{5}\.tlrec(\.gz)?")
_MAX_SPEC_BYTES = 16 << 20


# -- element_spec as JSON -----------------------------------------------------------------
def _spec_to_json(spec):
    if isinstance(spec, dict):
        return {"d": {k: _spec_to_json(v) for k, v in spec.items()}}
    if isinstance(spec, tuple) and not hasattr(spec, "_fields"):
        return {"t": [_spec_to_json(v) for v in spec]}
    if type(spec) is TensorSpec:
        return {"shape": spec.shape.as_list() if spec.shape.rank is not None else None,
                "dtype": spec.dtype.name}
    raise NotImplementedError(f"Dataset.save: elements with a {type(spec).__name__} component "
                              f"are not supported yet; save dicts and tuples of tensors")


def _spec_from_json(value, where):
    try:
        if "d" in value:
            return {k: _spec_from_json(v, where) for k, v in value["d"].items()}
        if "t" in value:
            return tuple(_spec_from_json(v, where) for v in value["t"])
        shape = value["shape"]
        if shape is not None and not all(d is None or (isinstance(d, int) and d >= 0)
                                         for d in shape):
            raise ValueError(f"bad shape {shape!r}")
        return TensorSpec(shape, dtypes.as_dtype(value["dtype"]))
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
        raise errors.DataLossError(None, None, f"{where}: the element_spec is malformed "
                                              f"({e!r})") from None


# -- save -----------------------------------------------------------------------------------
def _shard_of(shard_func, element, count, n_default):
    if shard_func is None:
        return count % n_default
    index = shard_func(*element) if isinstance(element, tuple) else shard_func(element)
    index = np.asarray(index._value if isinstance(index, Tensor) else index)
    if index.ndim != 0 or index.dtype.kind not in "iu" or int(index) < 0:
        raise errors.InvalidArgumentError(
            None, None, f"Dataset.save: shard_func must return a non-negative integer "
                        f"scalar, got {index!r}")
    return int(index)


def _shard_name(k, gz):
    return f"shard_{k:05d}.tlrec" + (".gz" if gz else "")


def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """Writes every element of `dataset` under the directory `path` (replacing what was
    there only once the new contents are complete)."""
    if checkpoint_args is not None:
        raise NotImplementedError("Dataset.save(checkpoint_args=...): resumable saves are not "
                                  "supported yet; a save that is interrupted is redone whole")
    if compression not in (None, "", "GZIP"):
        raise errors.InvalidArgumentError(None, None, f"Dataset.save: compression must be "
                                                      f"None or 'GZIP', got {compression!r}")
    gz = compression == "GZIP"
    spec_json = _spec_to_json(dataset.element_spec)
    path = os.path.abspath(os.fspath(path))
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.saving-", dir=parent)
    files, count = {}, 0
    try:
        n_default = cpu_count()
        for element in dataset:
            k = _shard_of(shard_func, element, count, n_default)
            if k not in files:
                files[k] = (gzip.open if gz else open)(os.path.join(tmp, _shard_name(k, gz)),
                                                       "wb")
            files[k].write(element_io.encode(element))
            count += 1
        for f in files.values():
            f.close()
        meta = {"element_spec": spec_json, "num_elements": count, "compression": compression,
                "shards": [_shard_name(k, gz) for k in sorted(files)]}
        with open(os.path.join(tmp, _SPEC_FILE), "w", encoding="utf-8") as f:
            json.dump(meta, f)
        _replace(tmp, path)
    except BaseException:
        for f in files.values():
            f.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace(new, path):
    """Puts the complete directory `new` at `path`; an old one is moved aside first and
    removed after, so a kill in between leaves one of the two whole."""
    if not os.path.exists(path):
        os.rename(new, path)
        return
    if not os.path.isfile(os.path.join(path, _SPEC_FILE)):
        shutil.rmtree(new, ignore_errors=True)
        raise errors.AlreadyExistsError(
            None, None, f"Dataset.save: {path} exists and is not a saved dataset; choose "
                        f"another path (nothing there was changed)")
    old = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.old-", dir=os.path.dirname(path))
    os.rmdir(old)
    os.rename(path, old)
    os.rename(new, path)
    shutil.rmtree(old, ignore_errors=True)


# -- load -----------------------------------------------------------------------------------
def _read_meta(path):
    spec_path = os.path.join(path, _SPEC_FILE)
    if not os.path.isfile(spec_path):
        raise errors.NotFoundError(None, None, f"Dataset.load: {path} holds no saved dataset "
                                               f"({_SPEC_FILE} is missing)")
    size = os.path.getsize(spec_path)
    if size > _MAX_SPEC_BYTES:
        raise errors.DataLossError(None, None, f"{spec_path}: {size} bytes is too large for a "
                                               f"dataset spec")
    try:
        with open(spec_path, encoding="utf-8") as f:
            meta = json.load(f)
        shards = [str(s) for s in meta["shards"]]
        num = int(meta["num_elements"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError) as e:
        raise errors.DataLossError(None, None, f"{spec_path} is malformed ({e!r})") from None
    for name in shards:  # names only, inside the directory: nothing else is ever opened
        if not _SHARD.fullmatch(name):
            raise errors.DataLossError(None, None, f"{spec_path}: bad shard name {name!r}")
        if not os.path.isfile(os.path.join(path, name)):
            raise errors.DataLossError(None, None, f"{path}: shard {name} is missing")
    return meta, shards, num


class _ShardIterator(RawIterator):
    _profiled = False  # no span of its own yet (tracing.hook_next)
    def __init__(self, path, gz):
        self._path = path
        self._file = (gzip.open if gz else open)(path, "rb")
        self._records = element_io.read_records(self._file, path)

    def next(self):
        try:
            return next(self._records)
        except (OSError, EOFError, gzip.BadGzipFile) as e:
            raise errors.DataLossError(None, None, f"{self._path}: {e}") from None

    def close(self):
        self._file.close()


class ShardDataset(DatasetV2):
    """One shard file of a saved dataset."""

    _name = "LoadShard"

    def __init__(self, path, gz, spec):
        self._path, self._gz, self._spec_value = path, gz, spec

    def _compute_spec(self):
        return self._spec_value

    def _make_iterator(self, ctx):
        return _ShardIterator(self._path, self._gz)


class _RoundRobin(RawIterator):
    _profiled = False  # no span of its own yet (tracing.hook_next)
    def __init__(self, shards, ctx):
        self._iters = [s._make_iterator(ctx) for s in shards]
        self._at = 0

    def next(self):
        while self._iters:
            self._at %= len(self._iters)
            try:
                element = self._iters[self._at].next()
            except StopIteration:
                self._iters.pop(self._at).close()
                continue
            self._at += 1
            return element
        raise StopIteration

    def close(self):
        for it in self._iters:
            it.close()
        self._iters = []


class LoadDataset(DatasetV2):
    """A saved dataset's shards read round-robin (the order the default sharding wrote)."""

    _name = "Load"

    def __init__(self, shards, spec, num):
        self._shards, self._spec_value, self._num = shards, spec, num

    def _compute_spec(self):
        return self._spec_value

    def _cardinality(self):
        return self._num

    def _make_iterator(self, ctx):
        return _RoundRobin(self._shards, ctx)


def load(path, element_spec=None, compression=None, reader_func=None):
    """The dataset `save` wrote under `path`; `element_spec` defaults to the saved one."""
    path = os.path.abspath(os.fspath(path))
    meta, names, num = _read_meta(path)
    saved_spec = _spec_from_json(meta.get("element_spec"), os.path.join(path, _SPEC_FILE))
    spec = element_spec if element_spec is not None else saved_spec
    if element_spec is not None and nest.flatten(element_spec) and \
            len(nest.flatten(element_spec)) != len(nest.flatten(saved_spec)):
        raise errors.InvalidArgumentError(
            None, None, f"Dataset.load: element_spec {element_spec!r} does not match the "
                        f"saved one {saved_spec!r}")
    gz = meta.get("compression") == "GZIP" if compression is None else compression == "GZIP"
    shards = [ShardDataset(os.path.join(path, n), gz, spec) for n in names]
    if reader_func is None:
        return LoadDataset(shards, spec, num)
    result = reader_func(ListDataset(shards, DatasetSpec(spec)))  # a dataset of datasets
    if not isinstance(result, DatasetV2):
        raise TypeError(f"Dataset.load: reader_func must return a Dataset, got "
                        f"{type(result).__name__}")
    return result


DatasetV2.save = save
DatasetV2.load = staticmethod(load)
