"""Per-stage measurements of a running pipeline, and the one RAM budget every buffer draws
from. AUTOTUNE reads the stats to choose; `explain()` and the profiler print them."""
import threading

from tensorlite.framework import errors


class StageStats:
    __slots__ = ("name", "count", "total", "max", "wait", "choice", "buffer", "capacity",
                 "parallelism", "_lock")

    def __init__(self, name):
        self.name = name
        self.count = 0
        self.total = 0.0  # seconds spent producing elements (summed over workers)
        self.max = 0.0
        self.wait = 0.0  # seconds the consumer waited on this stage
        self.choice = ""  # what AUTOTUNE or the user chose (mechanism, parallelism, buffer)
        self.buffer = 0  # current fill level of the stage's buffer
        self.capacity = 0
        self.parallelism = 1
        self._lock = threading.Lock()

    def add(self, seconds):
        with self._lock:
            self.count += 1
            self.total += seconds
            if seconds > self.max:
                self.max = seconds

    @property
    def mean(self):
        return self.total / self.count if self.count else 0.0


class Stats:
    """Stage name -> StageStats for one pipeline."""

    def __init__(self):
        self.stages = {}
        self._lock = threading.Lock()

    def stage(self, key, name):
        with self._lock:
            s = self.stages.get(key)
            if s is None:
                s = self.stages[key] = StageStats(name)
            return s


class RamBudget:
    """Bytes reserved by buffers (prefetch, shuffle, cache, parallel stages) against one
    limit; exceeding it is a ResourceExhaustedError naming the stage, not an OOM kill."""

    def __init__(self, limit_bytes):
        self.limit = int(limit_bytes) if limit_bytes else 0  # 0: no limit
        self.used = 0
        self.by_stage = {}
        self._lock = threading.Lock()

    def reserve(self, stage, nbytes):
        with self._lock:
            if self.limit and self.used + nbytes > self.limit:
                raise errors.ResourceExhaustedError(
                    None, None, f"tf.data RAM budget exceeded by the {stage} stage: it needs "
                    f"{nbytes} more bytes with {self.used} of {self.limit} in use "
                    f"({', '.join(f'{k}: {v}' for k, v in self.by_stage.items() if v)}); "
                    f"raise options.autotune.ram_budget or shrink the buffer")
            self.used += nbytes
            self.by_stage[stage] = self.by_stage.get(stage, 0) + nbytes

    def release(self, stage, nbytes):
        with self._lock:
            self.used -= nbytes
            self.by_stage[stage] = self.by_stage.get(stage, 0) - nbytes


def element_nbytes(element):
    from tensorlite.framework import nest  # noqa: PLC0415
    return sum(getattr(t, "_value", None).nbytes if hasattr(t, "_value") else 0
               for t in nest.flatten(element, expand_composites=True))
