"""snapshot: materialises everything upstream to a directory once; later runs read it back
(in parallel, one thread per shard) instead of recomputing.

The directory holds one sub-directory per pipeline fingerprint (a hash of the upstream
stages, their arguments, their functions' code and their source data), so a changed
pipeline writes a new snapshot and says why the old one no longer applies. A write goes to
a temporary directory that is renamed into place only when complete: an interrupted writer
(killed process, exception, abandoned iterator) leaves no snapshot that could be read back
partial, and the next run rewrites it.
"""
import gzip
import hashlib
import json
import os
import shutil
import threading
import warnings

import numpy as np

from tensorlite.data import element_io
from tensorlite.data.dataset import DatasetV2
from tensorlite.data.iterator import RawIterator
from tensorlite.data.parallel_map import cpu_count
from tensorlite.data.transforms import UnaryDataset
from tensorlite.framework import atomic_files, errors, size_limits
from tensorlite.framework.tensor import Tensor

_SKIP = {"_key", "_spec", "_last_ctx", "_inputs", "_memory", "_epochs", "_fixed"}
_META = "snapshot.metadata"


def _fp_value(v, h):
    if isinstance(v, Tensor):
        v = v._value
    if isinstance(v, np.ndarray):
        h.update(str((v.dtype.str, v.shape)).encode())
        h.update(v.tobytes() if v.dtype != object else repr(v.tolist()).encode())
    elif callable(v) and hasattr(v, "__code__"):
        _fp_code(v.__code__, h)
        _fp_value(v.__defaults__, h)
        for cell in v.__closure__ or ():
            try:
                _fp_value(cell.cell_contents, h)
            except ValueError:
                pass
    elif isinstance(v, (list, tuple)):
        for x in v:
            _fp_value(x, h)
    elif isinstance(v, dict):
        for k in sorted(v, key=str):
            h.update(str(k).encode())
            _fp_value(v[k], h)
    elif isinstance(v, (str, bytes, int, float, bool, type(None))):
        h.update(repr(v).encode())
    else:
        h.update(type(v).__name__.encode())


def _fp_code(code, h):
    """Hashes a code object by its bytecode, names and constants, recursing into nested
    functions' code: never by repr, which holds memory addresses and set orders that
    change from process to process."""
    h.update(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            h.update(b"<code>")
            _fp_code(c, h)
        elif isinstance(c, frozenset):
            h.update(repr(sorted(map(repr, c))).encode())
        else:
            h.update(repr(c).encode())


def describe_pipeline(node):
    """One line per upstream stage (kept in the metadata to explain invalidations)."""
    lines = []

    def walk(n, depth):
        lines.append(f"{'  ' * depth}{n._name}({n._describe()})")
        for i in n._inputs:
            walk(i, depth + 1)
    walk(node, 0)
    return lines


def fingerprint(node):
    h = hashlib.sha256()

    def walk(n):
        h.update(type(n).__name__.encode())
        for k in sorted(n.__dict__):
            if k not in _SKIP:
                h.update(k.encode())
                _fp_value(n.__dict__[k], h)
        for i in n._inputs:
            walk(i)
    walk(node)
    for path in getattr(node, "_files_for_fingerprint", lambda: [])():
        st = os.stat(path)
        h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


class SnapshotDataset(UnaryDataset):
    _name = "Snapshot"

    def __init__(self, input_dataset, path, compression="AUTO", reader_func=None,
                 shard_func=None, checkpoint_args=None, name=None):
        super().__init__(input_dataset)
        self._path = os.fspath(path)
        if compression not in ("AUTO", "GZIP", None, "", "NONE"):
            raise errors.InvalidArgumentError(None, None, f"snapshot: compression must be "
                                              f"'AUTO', 'GZIP' or None, got {compression!r}")
        self._gzip = compression == "GZIP"
        if reader_func is not None or shard_func is not None:
            raise NotImplementedError("snapshot: custom reader_func/shard_func are not "
                                      "supported yet; elements are sharded round-robin and "
                                      "read back in parallel in their original order")
        self.invalidation = None  # why an earlier snapshot in `path` was not used

    def _describe(self):
        return f"path={self._path!r}, compression={'GZIP' if self._gzip else None}"

    def _make_iterator(self, ctx):
        fp = fingerprint(self._input)
        run = os.path.join(self._path, fp, "run")
        stats = ctx.stats.stage(self._key, "Snapshot")
        if os.path.exists(os.path.join(run, _META)):
            meta = _read_meta(os.path.join(run, _META))
            stats.choice = f"reading snapshot {fp} ({meta['num_elements']} elements, " \
                           f"{meta['num_shards']} shards in parallel)"
            return _SnapshotReader(run, meta)
        self.invalidation = self._why_not_reused(fp)
        if self.invalidation:
            warnings.warn(f"snapshot at {self._path}: {self.invalidation}", stacklevel=3)
        stats.choice = f"writing snapshot {fp}" + (f" ({self.invalidation})"
                                                   if self.invalidation else "")
        return _SnapshotWriter(self, fp, self._input._make_iterator(ctx))

    def _why_not_reused(self, fp):
        if not os.path.isdir(self._path):
            return None
        current = describe_pipeline(self._input)
        reasons = []
        for other in sorted(os.listdir(self._path)):
            meta_path = os.path.join(self._path, other, "run", _META)
            if other == fp:
                if any(n.startswith(".tmp-") for n in os.listdir(os.path.join(self._path, fp))):
                    reasons.append("an earlier write was interrupted before it completed; "
                                   "rewriting it")
                continue
            if os.path.exists(meta_path):
                old = _read_meta(meta_path)["pipeline"]
                changed = [f"'{a.strip()}' became '{b.strip()}'"
                           for a, b in zip(old, current) if a != b]
                if len(old) != len(current):
                    changed.append(f"{len(old)} stages became {len(current)}")
                reasons.append(f"snapshot {other} was made by a different pipeline "
                               f"(fingerprint {other} vs {fp}"
                               + (f": {'; '.join(changed)}" if changed else
                                  ": a function's code or the source data changed") + ")")
        return "; ".join(reasons) or None


def _read_meta(path):
    """A snapshot's metadata, checked: anything else is a DataLossError naming the file."""
    try:
        # parsed JSON takes many times its bytes: a metadata file is capped like a config
        size_limits.check_config(os.path.getsize(path), "snapshot metadata", path)
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
        ok = (isinstance(meta, dict) and type(meta.get("num_elements")) is int
              and meta["num_elements"] >= 0 and type(meta.get("num_shards")) is int
              and 1 <= meta["num_shards"] <= 65536 and isinstance(meta.get("gzip"), bool)
              and isinstance(meta.get("pipeline"), list)
              and all(isinstance(line, str) for line in meta["pipeline"]))
    except (OSError, ValueError, RecursionError) as e:
        ok, meta = False, e
    if not ok:
        raise errors.DataLossError(None, None, f"snapshot metadata {path} is malformed; delete "
                                   f"that snapshot directory to rewrite it")
    return meta


def _open(path, mode, gz):
    return gzip.open(path, mode) if gz else open(path, mode)  # noqa: SIM115


class _SnapshotWriter(RawIterator):
    def __init__(self, ds, fp, inner):
        self._ds, self._in = ds, inner
        self._dir = os.path.join(ds._path, fp)
        os.makedirs(self._dir, exist_ok=True)
        for name in os.listdir(self._dir):  # leftovers of this host's dead writers only
            parts = name[5:].split("-") if name.startswith(".tmp-") else []
            path = os.path.join(self._dir, name)
            if len(parts) == 3 and atomic_files.is_dead_own_temp(parts[0], parts[1]) and \
                    os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
        self._tmp = os.path.join(self._dir, f".tmp-{os.getpid()}-{atomic_files.host_tag()}-"
                                            f"{threading.get_ident()}")
        os.makedirs(self._tmp)
        self._n = cpu_count()
        ext = ".tlsnap.gz" if ds._gzip else ".tlsnap"
        self._files = [_open(os.path.join(self._tmp, f"shard_{k:05d}{ext}"), "wb", ds._gzip)
                       for k in range(self._n)]
        self._count = 0

    def next(self):
        try:
            e = self._in.next()
        except StopIteration:
            self._commit()
            raise
        self._files[self._count % self._n].write(element_io.encode(e))
        self._count += 1
        return e

    def _commit(self):
        if self._files is None:
            return
        for f in self._files:
            f.close()
        self._files = None
        meta = {"num_elements": self._count, "num_shards": self._n, "gzip": self._ds._gzip,
                "pipeline": describe_pipeline(self._ds._input)}
        with open(os.path.join(self._tmp, _META), "w", encoding="utf-8") as f:
            json.dump(meta, f)
        final = os.path.join(self._dir, "run")
        try:
            os.rename(self._tmp, final)  # atomic: the snapshot appears complete or not at all
        except OSError:  # another writer finished first; theirs is equally complete
            shutil.rmtree(self._tmp, ignore_errors=True)

    def save(self):
        raise errors.UnimplementedError(None, None, "cannot checkpoint an iterator while it "
                                        "writes a snapshot; checkpoint after the first epoch")

    def close(self):
        if self._files is not None:  # abandoned: nothing partial may be read back
            for f in self._files:
                f.close()
            self._files = None
            shutil.rmtree(self._tmp, ignore_errors=True)
        self._in.close()


class _SnapshotReader(RawIterator):
    """Reads shards in parallel threads; yields in the order they were written."""

    def __init__(self, run, meta):
        self._run, self._meta = run, meta
        ext = ".tlsnap.gz" if meta["gzip"] else ".tlsnap"
        self._paths = [os.path.join(run, f"shard_{k:05d}{ext}") for k in range(meta["num_shards"])]
        self._i = 0
        self._start()

    def _start(self, skip=0):
        import queue  # noqa: PLC0415
        self._queues = [queue.Queue(maxsize=8) for _ in self._paths]
        self._stop = threading.Event()
        self._threads = []
        n = len(self._paths)
        for k, path in enumerate(self._paths):
            already = skip // n + (1 if k < skip % n else 0)
            t = threading.Thread(target=self._read, args=(k, path, already), daemon=True,
                                 name="tensorlite-snapshot-reader")
            t.start()
            self._threads.append(t)

    def _read(self, k, path, skip):
        q = self._queues[k]
        try:
            with _open(path, "rb", self._meta["gzip"]) as f:
                for j, e in enumerate(element_io.read_records(f, path)):
                    if j < skip:
                        continue
                    while not self._stop.is_set():
                        try:
                            q.put(e, timeout=0.1)
                            break
                        except Exception:  # noqa: BLE001 - queue.Full
                            continue
                    if self._stop.is_set():
                        return
        except BaseException as e:  # noqa: BLE001 - raised in the consumer
            q.put(e)
        q.put(None)

    def next(self):
        if self._i >= self._meta["num_elements"]:
            raise StopIteration
        item = self._queues[self._i % len(self._queues)].get()
        if item is None:
            raise errors.DataLossError(None, None, f"snapshot {self._run} has fewer elements "
                                       f"than its metadata says")
        if isinstance(item, BaseException):
            raise item
        self._i += 1
        return item

    def save(self):
        return self._i

    def restore(self, state):
        self.close()
        self._i = state
        self._start(skip=state)

    def close(self):
        self._stop.set()
        for t in self._threads:
            t.join()


DatasetV2.snapshot = lambda self, path, compression="AUTO", reader_func=None, \
    shard_func=None, name=None: SnapshotDataset(self, path, compression, reader_func, shard_func)
