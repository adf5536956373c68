"""cache: keeps the elements of the first complete iteration, in memory or in a file.

File caches follow TensorFlow's rules: a cache is used only once it was written completely
(the writer writes a temporary file and renames it into place at the end, so a killed or
interrupted writer leaves nothing that looks complete), and a second concurrent writer of
the same cache is refused with AlreadyExistsError because of the lock file. The lock file
holds the writer's pid: the lock and temporary file of a writer that was killed are
reclaimed by the next run.
"""
import os

from tensorlite.data import element_io
from tensorlite.data.dataset import DatasetV2
from tensorlite.data.iterator import RawIterator
from tensorlite.data.stats import element_nbytes
from tensorlite.data.transforms import UnaryDataset
from tensorlite.framework import atomic_files, errors


class CacheDataset(UnaryDataset):
    _name = "Cache"

    def __init__(self, input_dataset, filename="", name=None):
        super().__init__(input_dataset)
        self._filename = os.fspath(filename) if filename else ""
        self._memory = None  # list of elements once a full pass completed

    def _describe(self):
        return f"filename={self._filename!r}" if self._filename else "memory"

    def _label(self):
        return f"Cache({'file' if self._filename else 'memory'})"

    @property
    def _data_path(self):
        return self._filename + ".tlcache"

    def _make_iterator(self, ctx):
        if not self._filename:
            if self._memory is not None:
                return _ListIterator(self._memory)
            return _MemoryWriter(self, self._input._make_iterator(ctx), ctx)
        if os.path.exists(self._data_path):
            return _FileReader(self._data_path)
        return _FileWriter(self, self._input._make_iterator(ctx))


class _ListIterator(RawIterator):
    def __init__(self, items):
        self._items, self._i = items, 0

    def next(self):
        if self._i >= len(self._items):
            raise StopIteration
        self._i += 1
        return self._items[self._i - 1]

    def save(self):
        return ("read", self._i)

    def restore(self, state):
        self._i = state[1]


class _MemoryWriter(RawIterator):
    def __init__(self, ds, inner, ctx):
        self._ds, self._in, self._ram = ds, inner, ctx.ram
        self._items = []
        self._bytes = 0

    def next(self):
        try:
            e = self._in.next()
        except StopIteration:
            self._ds._memory = self._items  # complete: later iterations read memory
            self._bytes = 0  # the dataset owns the memory now
            raise
        n = element_nbytes(e)
        self._ram.reserve("Cache(memory)", n)
        self._bytes += n
        self._items.append(e)
        return e

    def save(self):
        return ("write", len(self._items), self._in.save())

    def restore(self, state):
        _, n, inner = state
        if n:
            raise errors.UnimplementedError(None, None, "restoring an in-memory cache that was "
                                            "partially filled is not supported; checkpoint "
                                            "before or after the first epoch")
        self._in.restore(inner)

    def close(self):
        self._ram.release("Cache(memory)", self._bytes)
        self._bytes = 0
        self._in.close()


class _FileWriter(RawIterator):
    def __init__(self, ds, inner):
        self._ds, self._in = ds, inner
        self._lock = ds._filename + ".lockfile"
        directory = os.path.dirname(os.path.abspath(ds._filename))
        if not os.path.isdir(directory):
            raise errors.NotFoundError(None, None, f"cache: directory {directory} does not exist; "
                                       f"create it before caching to {ds._filename!r}")
        atomic_files.acquire_lock(self._lock, "caching iterator")
        atomic_files.remove_dead_temps(directory)
        self._tmp = atomic_files.temp_name(ds._data_path)
        self._f = open(self._tmp, "wb")  # noqa: SIM115 - closed in _finish/close

    def next(self):
        try:
            e = self._in.next()
        except StopIteration:
            self._finish()
            raise
        self._f.write(element_io.encode(e))
        return e

    def _finish(self):
        if self._f is not None:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()
            self._f = None
            atomic_files.publish(self._tmp, self._ds._data_path)  # complete: publish atomically
            os.unlink(self._lock)

    def close(self):
        if self._f is not None:  # abandoned before the end: leave no partial cache behind
            self._f.close()
            self._f = None
            os.unlink(self._tmp)
            os.unlink(self._lock)
        self._in.close()


class _FileReader(RawIterator):
    def __init__(self, path):
        self._path = path
        self._f = open(path, "rb")  # noqa: SIM115
        self._records = element_io.read_records(self._f, path)
        self._i = 0

    def next(self):
        e = next(self._records)
        self._i += 1
        return e

    def save(self):
        return ("file", self._i)

    def restore(self, state):
        self._f.seek(0)
        self._records = element_io.read_records(self._f, self._path)
        for _ in range(state[1]):
            next(self._records)
        self._i = state[1]

    def close(self):
        self._f.close()


DatasetV2.cache = lambda self, filename="", name=None: CacheDataset(self, filename)
