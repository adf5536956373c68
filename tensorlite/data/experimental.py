"""`tf.data.experimental`."""
from tensorlite.data.dataset import AUTOTUNE, INFINITE, UNKNOWN  # noqa: F401
from tensorlite.data.optimize import batch_safe  # noqa: F401
from tensorlite.data.options import (AutotuneOptions, OptimizationOptions,  # noqa: F401
                                     ThreadingOptions)
from tensorlite.data.sources import choose_from_datasets, sample_from_datasets  # noqa: F401
from tensorlite.data.fused import map_and_batch, shuffle_and_repeat  # noqa: F401

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN


def cardinality(dataset):
    return dataset.cardinality()


def __getattr__(name):
    # tf.data.experimental.service loads Dask only when used.
    if name == "service":
        from tensorlite.data import service  # noqa: PLC0415
        return service
    raise AttributeError(f"module 'tensorlite.data.experimental' has no attribute {name!r}")
