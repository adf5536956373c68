"""Reading checkpoints by key: `tf.train.load_checkpoint`, `tf.train.list_variables`,
`tf.train.load_variable`, for checkpoints written by tensorlite or by TensorFlow.

Example:
    >>> reader = tf.train.load_checkpoint("/tmp/ckpts")
    >>> reader.get_variable_to_shape_map()
    {'v/.ATTRIBUTES/VARIABLE_VALUE': [3], ...}
"""
import os

from tensorlite.checkpoint.state import latest_checkpoint
from tensorlite.framework import errors


def _prefix(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {path}")
        return latest
    return path


class CheckpointReader:
    """`tf.train.load_checkpoint`'s reader: the tensors of one checkpoint by key."""

    def __init__(self, prefix):
        from tensorlite.checkpoint.bundle import BundleReader  # noqa: PLC0415 - protobuf
        self._bundle = BundleReader(prefix)

    def has_tensor(self, key):
        return key in self._bundle.entries

    def get_tensor(self, key):
        """The saved value as a NumPy array (a scalar string as bytes)."""
        value = self._bundle.tensor(key)
        if value.dtype == object and value.shape == ():
            return value.item()
        return value

    def get_variable_to_shape_map(self):
        return {k: self._bundle.shape(k) for k in self._bundle.entries}

    def get_variable_to_dtype_map(self):
        out = {}
        for key in self._bundle.entries:
            dtype = self._bundle.dtype(key)
            if dtype is None:
                raise errors.UnimplementedError(None, None, f"{key} has a DataType tensorlite "
                                                f"has no dtype for")
            out[key] = dtype
        return out


def load_checkpoint(ckpt_dir_or_file):
    """`tf.train.load_checkpoint`: a CheckpointReader of a checkpoint prefix, or of the
    latest checkpoint of a directory."""
    return CheckpointReader(_prefix(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file):
    """`tf.train.list_variables`: sorted (key, shape) pairs."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return sorted(reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    """`tf.train.load_variable`: one saved value (a trailing ":0" is ignored, as in TF)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
