"""What the service's Dask workers run: a whole split (distributed_epoch) or the next chunk
of this worker's own epoch (parallel_epochs). Elements travel back as NumPy arrays, which
Dask serialises as raw buffers.

Example (in one process):
    >>> from tensorlite.data.service import shipping
    >>> blob = shipping.dumps(tf.data.Dataset.range(4))
    >>> [int(e) for e in unpack(run_split(blob, "id", 1, 2))]   # blob None on a worker
    [1, 3]
"""
import threading

import numpy as np

from tensorlite.framework import nest
from tensorlite.framework.tensor import Tensor

_DATASETS = {}      # dataset id -> pipeline, per worker process
_ITERATORS = {}     # (job id, dataset id) -> iterator of this worker's parallel epoch
_LOCK = threading.Lock()


def _pipeline(blob, dataset_id):
    """The pipeline, cached per worker process; fetched from the dispatcher on first use
    (blob None), so a restarted worker needs nothing but the dataset id."""
    ds = _DATASETS.get(dataset_id)
    if ds is None:
        from tensorlite.data.service import dispatcher, shipping  # noqa: PLC0415
        if blob is None:
            from distributed import get_client  # noqa: PLC0415
            found = dispatcher.call(get_client(), "get_dataset", dataset_id=dataset_id)
            if found is None:
                from tensorlite.framework import errors  # noqa: PLC0415
                raise errors.NotFoundError(
                    None, None, f"tf.data service: dataset {dataset_id!r} is not registered "
                    f"at the dispatcher (was it restarted?); register it again")
            blob = found[0]
        ds = _DATASETS[dataset_id] = shipping.loads(blob)
    return ds


def to_arrays(element):
    return nest.map_structure(lambda t: t._value if isinstance(t, Tensor) else np.asarray(t),
                              element)


def pack(elements):
    """Elements for the trip to the consumer: when every element has the same structure,
    shapes and (non-object) dtypes, one stacked array per component ("stacked", first
    element, arrays); else the list as is ("list", elements). Dask ships a stacked array as
    one buffer; a list of 75 scalars cost 885 us to serialise and read back, stacked 9 us.

    Example:
        >>> kind, _, arrays = pack([np.int64(1), np.int64(2)])
        >>> kind, arrays[0].tolist()
        ('stacked', [1, 2])
    """
    if len(elements) > 1:
        flat = [nest.flatten(e) for e in elements]
        first = [np.asarray(a) for a in flat[0]]
        if all(a.dtype.kind != "O" for a in first) and all(
                len(f) == len(first) and all(
                    np.shape(a) == b.shape and np.asarray(a).dtype == b.dtype
                    for a, b in zip(f, first)) for f in flat):
            return "stacked", elements[0], [np.stack([f[i] for f in flat])
                                            for i in range(len(first))]
    return "list", None, elements


def unpack(packed):
    """The element list `pack` was given."""
    kind, template, payload = packed
    if kind == "list":
        return payload
    n = len(payload[0]) if payload else 0
    return [nest.pack_like(template, [a[j, ...] for a in payload]) for j in range(n)]


def run_split(blob, dataset_id, index, num_splits):
    """Every element of split `index` of `num_splits`, packed (see `pack`)."""
    from tensorlite.data.service.splits import split_pipeline  # noqa: PLC0415
    ds = split_pipeline(_pipeline(blob, dataset_id), index, num_splits)
    return pack([to_arrays(e) for e in ds])


def next_chunk(blob, dataset_id, job_id, chunk_size):
    """(up to chunk_size next elements of this worker's epoch, whether it has ended)."""
    with _LOCK:
        key = (job_id, dataset_id)
        it = _ITERATORS.get(key)
        if it is None:
            it = _ITERATORS[key] = iter(_pipeline(blob, dataset_id))
        out = []
        for _ in range(chunk_size):
            try:
                out.append(to_arrays(next(it)))
            except StopIteration:
                _ITERATORS[key] = _Exhausted()
                return pack(out), True
        return pack(out), False


class _Exhausted:
    def __next__(self):
        raise StopIteration
