"""Per-replica values: what `strategy.run` returns and distributed datasets yield.

Example:
    >>> v = PerReplica([1, 2])
    >>> v.values
    (1, 2)
"""
import numpy as np

from tensorlite.framework import nest
from tensorlite.framework.tensor import Tensor, wrap


class PerReplica:
    """One value per local replica (TF's `tf.distribute.DistributedValues`)."""

    def __init__(self, values):
        self._values = tuple(values)

    @property
    def values(self):
        return self._values

    def __len__(self):
        return len(self._values)

    def __repr__(self):
        body = ",\n  ".join(f"{i}: {v!r}" for i, v in enumerate(self._values))
        return f"PerReplica:{{\n  {body}\n}}"


DistributedValues = PerReplica


def select_replica(i, structure):
    """Replica `i`'s part of a structure that may hold PerReplica leaves."""
    return nest.map_structure(lambda v: v.values[i] if isinstance(v, PerReplica) else v,
                              structure)


def regroup(per_replica_results):
    """A list of replica results (same structure) -> one structure of PerReplica leaves."""
    if len(per_replica_results) == 1:
        return per_replica_results[0]
    return nest.map_structure(lambda *vs: PerReplica(vs), *per_replica_results)


def to_numpy(v):
    """A NumPy array from a Tensor, Variable, array or Python number."""
    if isinstance(v, Tensor):
        return v._value
    if getattr(v, "_is_variable", False):
        return np.asarray(v.numpy())
    return np.asarray(v)


def split_batch(structure, n):
    """Splits every array in `structure` along axis 0 into `n` nearly equal parts (the first
    parts one longer when it does not divide), as TF splits a global batch among replicas.
    Returns (parts, sizes)."""
    leaves = [to_numpy(v) for v in nest.flatten(structure) if v is not None]
    if not leaves:
        raise ValueError("cannot split an element with no arrays among replicas")
    total = leaves[0].shape[0] if leaves[0].ndim else 1
    base, extra = divmod(total, n)
    sizes = [base + (1 if i < extra else 0) for i in range(n)]
    bounds = np.cumsum([0] + sizes)

    def part(i):
        return nest.map_structure(
            lambda v: None if v is None else wrap(to_numpy(v)[bounds[i]:bounds[i + 1]]),
            structure)
    return [part(i) for i in range(n)], sizes
