"""`tf.data.experimental.pad_to_cardinality`: fills a dataset of dicts up to a cardinality
with zero elements, each element marked real (`mask_key`=True) or padding (False).

Example (the TF API doc's):
    >>> ds = tf.data.Dataset.from_tensor_slices({'a': [1, 2]})
    >>> ds = ds.apply(tf.data.experimental.pad_to_cardinality(3))
    >>> list(ds.as_numpy_iterator())
    [{'a': 1, 'valid': True}, {'a': 2, 'valid': True}, {'a': 0, 'valid': False}]
"""
import collections.abc

import numpy as np

from tensorlite.data.sources import FromTensorsDataset
from tensorlite.framework import nest
from tensorlite.framework.tensor import wrap


def _filler(spec, mask_key):
    def zeros(s):
        if s.shape.rank is None or None in s.shape.as_list():
            raise ValueError(f"pad_to_cardinality: cannot make a padding element for a "
                             f"component of unknown shape {s.shape}")
        dtype = s.dtype.as_numpy_dtype
        return wrap(np.full(s.shape.as_list(), b"" if dtype is object else 0, dtype=dtype))
    element = dict(nest.map_structure(zeros, spec))
    element[mask_key] = wrap(np.array(False))
    return element


def pad_to_cardinality(cardinality, mask_key="valid"):
    """For `dataset.apply`: the dataset (known, finite cardinality, dict elements) with
    `mask_key`=True added to its elements, then padding elements (zeros, `mask_key`=False)
    up to `cardinality` elements."""
    def apply(dataset):
        n = int(dataset.cardinality())
        if n < 0:
            raise ValueError(f"The dataset passed into `pad_to_cardinality` must have a known "
                             f"cardinalty, but has cardinality {n}")
        if n > cardinality:
            raise ValueError(f"The dataset passed into `pad_to_cardinality` must have a "
                             f"cardinalty less than the target cardinality ({cardinality}), "
                             f"but has cardinality {n}")
        if not isinstance(dataset.element_spec, collections.abc.Mapping):
            raise ValueError("`pad_to_cardinality` requires its input dataset to be a "
                             "dictionary.")
        filler = FromTensorsDataset(_filler(dataset.element_spec, mask_key))
        marked = dataset.map(lambda x: {**x, mask_key: True})
        return marked.concatenate(filler.repeat(int(cardinality) - n))
    return apply
