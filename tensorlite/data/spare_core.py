"""Whether a parallel map would find a core beyond the one its consumer runs on.

With another program spinning on every other core, worker processes of a CPU-bound map
share cores with it and with the consumer: measured, such a plan runs at 0.9-1.0x the
inline loop (bench/data_parallel_map.py, contended case), so AUTOTUNE runs inline until a
spare core shows. One run-queue reading (framework/blas_threads.free_cores) catches a
moment; the verdict is the majority of the last few readings, taken at least
`_SPACING_S` apart as elements go by (each ~3 us: under 0.1% of the time).

Example:
    >>> watch = SpareCore(2)
    >>> watch.sample()
    >>> watch.spare() in (True, False)
    True
"""
import time

from tensorlite.framework.blas_threads import free_cores

_READINGS = 8  # the verdict is the majority of this many recent readings
_SPACING_S = 5e-3  # apart at least this much: one short burst of load is one reading


class SpareCore:
    """Recent run-queue readings for a plan of `n` parallel workers."""

    def __init__(self, n):
        self._n = n
        self._readings = []  # True where a reading showed a core beyond the consumer's
        self._at = -1.0

    def sample(self):
        """Takes a reading unless the last one is more recent than `_SPACING_S`."""
        now = time.perf_counter()
        if now - self._at < _SPACING_S:
            return
        self._at = now
        self._readings.append(free_cores(self._n, max_age=0) >= 2)
        del self._readings[:-_READINGS]

    def sample_now(self):
        """Takes a reading whatever the time since the last one (the first few, at start)."""
        self._at = -1.0
        self.sample()

    def spare(self):
        """Most recent readings showed a spare core (none taken yet: assume one)."""
        return not self._readings or 2 * sum(self._readings) > len(self._readings)
