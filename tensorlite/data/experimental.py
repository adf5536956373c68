"""`tf.data.experimental`."""
from tensorlite.data.csv_dataset import CsvDataset, make_csv_dataset  # noqa: F401
from tensorlite.data.dataset import AUTOTUNE, INFINITE, UNKNOWN  # noqa: F401
from tensorlite.data.optimize import batch_safe  # noqa: F401
from tensorlite.data.options import (AutotuneOptions, OptimizationOptions,  # noqa: F401
                                     ThreadingOptions)
from tensorlite.data.sources import choose_from_datasets, sample_from_datasets  # noqa: F401

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN


def cardinality(dataset):
    return dataset.cardinality()
