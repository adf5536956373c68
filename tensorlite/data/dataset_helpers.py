"""`tf.data.experimental.from_list`, `get_structure` and `get_single_element`.

Example (the TF API doc's):
    >>> dataset = tf.data.experimental.from_list([(1, 'a'), (2, 'b'), (3, 'c')])
    >>> list(dataset.as_numpy_iterator())
    [(1, b'a'), (2, b'b'), (3, b'c')]
"""
import numpy as np

from tensorlite.data import structure
from tensorlite.data.dataset import DatasetV2
from tensorlite.data.iterator import OwnedIterator
from tensorlite.data.sources import FromTensorSlicesDataset
from tensorlite.framework import nest
from tensorlite.framework.tensor import wrap


def from_list(elements, name=None):
    """A dataset of the list's items, one by one (each item may be a structure: unlike
    from_tensor_slices, the list itself is never sliced into components)."""
    if not isinstance(elements, list):
        raise ValueError(f"Invalid `elements`. `elements` must be a list. Got type "
                         f"{type(elements)}.")
    if not elements:
        raise ValueError("Invalid `elements`. `elements` should not be empty.")
    items = [structure.to_element(e, "from_list element") for e in elements]
    for i, item in enumerate(items[1:], 1):
        try:
            nest.map_structure(lambda a, b: None, items[0], item)
        except (TypeError, ValueError):
            raise ValueError(f"Invalid `elements`. All elements must have the same structure, "
                             f"but element 0 is {items[0]} and element {i} is {item}.") from None
    flats = [nest.flatten(item) for item in items]
    columns = []
    for k, column in enumerate(zip(*flats)):
        values = [t._value for t in column]
        if len({(v.dtype, v.shape) for v in values}) != 1:
            raise ValueError(f"Invalid `elements`. Component {k} of the elements differs in "
                             f"dtype or shape: {[(v.dtype.name, v.shape) for v in values]}.")
        columns.append(wrap(np.stack(values)))
    return FromTensorSlicesDataset(nest.pack_like(items[0], columns))


def get_structure(dataset_or_iterator):
    """The element_spec of a dataset or iterator."""
    if isinstance(dataset_or_iterator, (DatasetV2, OwnedIterator)):
        return dataset_or_iterator.element_spec
    raise TypeError(f"Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a "
                    f"`tf.data.Dataset` or tf.data.Iterator object, but got "
                    f"{type(dataset_or_iterator)}.")


def get_single_element(dataset):
    """`dataset.get_single_element()` (TF's deprecated function form)."""
    if not isinstance(dataset, DatasetV2):
        raise TypeError(f"Invalid `dataset`. Expected a `tf.data.Dataset` object but got "
                        f"{type(dataset)}.")
    return dataset.get_single_element()
