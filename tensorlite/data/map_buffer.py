"""Finished elements of a parallel map waiting for the consumer (parallel_map.py)."""
from tensorlite.data.stats import element_nbytes


class ResultBuffer:
    """Results by input index (an element, or the exception its function raised, delivered
    in its place), each counted against the pipeline's RAM budget until it is taken."""

    def __init__(self, ram, stage):
        self._ram, self._stage = ram, stage
        self._items = {}  # index -> (element | BaseException, nbytes)

    def __len__(self):
        return len(self._items)

    def __contains__(self, index):
        return index in self._items

    def put(self, index, value):
        nbytes = 0 if isinstance(value, BaseException) else element_nbytes(value)
        self._ram.reserve(self._stage, nbytes)
        self._items[index] = (value, nbytes)

    def lowest(self):
        """The lowest index held (completion order: the earliest element finished)."""
        return min(self._items)

    def take(self, index):
        """Removes and returns the result at `index`, releasing its RAM."""
        value, nbytes = self._items.pop(index)
        self._ram.release(self._stage, nbytes)
        return value

    def results(self):
        """{index: result} (a copy)."""
        return {i: v for i, (v, _) in self._items.items()}

    def clear(self):
        for _, nbytes in self._items.values():
            self._ram.release(self._stage, nbytes)
        self._items = {}
