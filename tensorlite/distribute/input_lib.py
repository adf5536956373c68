"""Distributed datasets: global batches split among replicas, or one pipeline per worker.

Example:
    >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    >>> ds = tf.data.Dataset.range(8).batch(4)
    >>> [[v.numpy().tolist() for v in b.values] for b in
    ...  strategy.experimental_distribute_dataset(ds)]
    [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
"""
from tensorlite.distribute import values as values_lib


class _StrategyDataset:
    def __init__(self, strategy, dataset):
        self._strategy = strategy
        self._dataset = dataset

    @property
    def element_spec(self):
        return self._dataset.element_spec


class DistributedDataset(_StrategyDataset):
    """Iterates a dataset of global batches; yields this worker's replicas' parts."""

    def __iter__(self):
        return DistributedIterator(self._strategy, iter(self._dataset))


class DistributedIterator:
    def __init__(self, strategy, it):
        self._strategy = strategy
        self._it = it

    def __iter__(self):
        return self

    def __next__(self):
        return local_parts(self._strategy, next(self._it))

    def get_next(self):
        return next(self)


def local_parts(strategy, element):
    """Splits a global batch among all replicas and keeps this worker's parts (a PerReplica
    when there are several local replicas); returns (value, sizes of all parts)."""
    value, _ = local_parts_and_sizes(strategy, element)
    return value


def local_parts_and_sizes(strategy, element):
    parts, sizes = values_lib.split_batch(element, strategy.num_replicas_in_sync)
    first = strategy._replica_offset()
    mine = parts[first:first + strategy._num_local_replicas]
    value = mine[0] if len(mine) == 1 else values_lib.PerReplica(mine)
    return value, sizes


class DatasetsFromFunction(_StrategyDataset):
    """One input pipeline per worker: consecutive elements go to the local replicas."""

    def __iter__(self):
        n = self._strategy._num_local_replicas
        it = iter(self._dataset)
        while True:
            group = []
            for _ in range(n):
                try:
                    group.append(next(it))
                except StopIteration:
                    break
            if len(group) < n:
                return
            yield group[0] if n == 1 else values_lib.PerReplica(group)
