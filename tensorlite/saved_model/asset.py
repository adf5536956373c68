"""`tf.saved_model.Asset`: a file a SavedModel carries in its `assets/` directory.

A function that uses `asset.asset_path` reads the path of the SavedModel's copy once loaded
(by TensorFlow or tensorlite), not the path the file had when it was saved: the writer makes
that string a captured input of the function, bound to the asset.

Example:
    >>> class Reader(tf.Module):
    ...     def __init__(self, path):
    ...         self.vocab = tf.saved_model.Asset(path)
    ...     @tf.function(input_signature=[])
    ...     def lines(self):
    ...         return tf.strings.split(tf.io.read_file(self.vocab.asset_path), "\\n")
"""
import os

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor


class Asset:
    """A file to copy into a SavedModel's assets/; `asset_path` is its path as a string
    tensor."""

    def __init__(self, path):
        value = path.numpy() if hasattr(path, "numpy") else path
        self._path = os.fsdecode(value)
        self.asset_path = convert_to_tensor(self._path.encode(), dtype=dtypes.string)

    def _trackable_children(self):
        return []  # a node of the object graph, with no state of its own

    def __repr__(self):
        return f"<tf.saved_model.Asset {self._path!r}>"


__all__ = ["Asset"]
