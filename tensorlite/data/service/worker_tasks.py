"""What the service's Dask workers run: a whole split (distributed_epoch) or the next chunk
of this worker's own epoch (parallel_epochs). Elements travel back as NumPy arrays, which
Dask serialises as raw buffers.

Example (in one process):
    >>> from tensorlite.data.service import shipping
    >>> blob = shipping.dumps(tf.data.Dataset.range(4))
    >>> [int(e) for e in run_split(blob, "id", 1, 2)]   # blob None on a worker
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
            blob = dispatcher.call(get_client(), "get_dataset", dataset_id=dataset_id)[0]
        ds = _DATASETS[dataset_id] = shipping.loads(blob)
    return ds


def to_arrays(element):
    return nest.map_structure(lambda t: t._value if isinstance(t, Tensor) else np.asarray(t),
                              element)


def run_split(blob, dataset_id, index, num_splits):
    """Every element of split `index` of `num_splits`, as NumPy structures."""
    from tensorlite.data.service.splits import split_pipeline  # noqa: PLC0415
    ds = split_pipeline(_pipeline(blob, dataset_id), index, num_splits)
    return [to_arrays(e) for e in ds]


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
                return out, True
        return out, False


class _Exhausted:
    def __next__(self):
        raise StopIteration
