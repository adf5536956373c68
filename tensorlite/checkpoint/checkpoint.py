"""`tf.train.Checkpoint`: saves and restores variables, modules, Keras models, optimizers and
iterators in TensorFlow's own checkpoint format, readable by TensorFlow and back.

`save("dir/ckpt")` writes the tensor bundle `dir/ckpt-1.index` +
`dir/ckpt-1.data-00000-of-00001` (see `bundle.py`: atomic as a pair) with the object graph
under `_CHECKPOINTABLE_OBJECT_GRAPH` and keys such as `model/layer_with_weights-0/kernel/
.ATTRIBUTES/VARIABLE_VALUE` (see `object_graph.py`), and records it in `dir/checkpoint`.

Example:
    >>> ckpt = tf.train.Checkpoint(step=tf.Variable(1), iterator=iter(dataset))
    >>> path = ckpt.save("/tmp/ckpts/ckpt")
    >>> ckpt.restore(path).assert_consumed()
"""
import os

import numpy as np

from tensorlite.checkpoint import object_graph as og
from tensorlite.checkpoint.restore import Status, restore_into
from tensorlite.checkpoint.state import latest_checkpoint, update_state
from tensorlite.framework import module
from tensorlite.framework.variables import Variable
from tensorlite.framework.write_policy import may_write


def write_checkpoint(root, file_prefix):
    """Writes every trackable object reachable from `root` as the bundle `file_prefix`
    (nothing on a non-chief worker of a multi-worker strategy: the chief writes)."""
    from tensorlite.checkpoint.bundle import write_bundle  # noqa: PLC0415 - needs protobuf
    if not may_write():
        return file_prefix
    graph = og.gather(root)
    tensors = list(graph.tensors())
    tensors.append((og.OBJECT_GRAPH_KEY, graph.proto().SerializeToString()))
    return write_bundle(file_prefix, tensors)


def read_checkpoint(root, save_path):
    """Restores `root` from the checkpoint `save_path` (a prefix, or a directory holding a
    `checkpoint` state file); returns the restore status."""
    from tensorlite.checkpoint.bundle import BundleReader  # noqa: PLC0415 - needs protobuf
    save_path = os.fspath(save_path)
    if os.path.isdir(save_path):
        save_path = latest_checkpoint(save_path) or save_path
    return restore_into(root, BundleReader(save_path))


class ListWrapper(list):
    """A list attribute of a `tf.train.Checkpoint`, as TensorFlow wraps it: an element
    added later is restored from a checkpoint restored before (checkpoint/deferred.py)."""

    def _changed(self):
        if module.CHILD_ADDED:
            module.child_added()

    def append(self, value):
        super().append(value)
        self._changed()

    def extend(self, values):
        super().extend(values)
        self._changed()

    def insert(self, index, value):
        super().insert(index, value)
        self._changed()

    def __setitem__(self, index, value):
        super().__setitem__(index, value)
        self._changed()

    def __repr__(self):
        return f"ListWrapper({list.__repr__(self)})"


class _DictWrapper(dict):
    """A dict attribute of a `tf.train.Checkpoint` (TensorFlow's _DictWrapper)."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        if module.CHILD_ADDED:
            module.child_added()

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        if module.CHILD_ADDED:
            module.child_added()

    def __repr__(self):
        return f"_DictWrapper({dict.__repr__(self)})"


class Checkpoint:
    """Groups trackable objects (keyword arguments) for saving and restoring."""

    def __init__(self, root=None, **kwargs):
        self._ckpt_children = {}
        self._ckpt_save_counter = None
        if root is not None:
            kwargs = {"root": root, **kwargs}
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __setattr__(self, name, value):
        if not name.startswith("_ckpt"):
            if type(value) is list:  # TF's ListWrapper: a later append may be restored
                value = ListWrapper(value)
            elif type(value) is dict:
                value = _DictWrapper(value)
            self._ckpt_children[name] = value
        object.__setattr__(self, name, value)
        if module.CHILD_ADDED:  # a restore waiting for this attribute
            module.child_added()

    def _trackable_children(self):
        out = list(self._ckpt_children.items())
        if self._ckpt_save_counter is not None:
            out.append(("save_counter", self._ckpt_save_counter))
        return out

    @property
    def save_counter(self):
        """The number of `save` calls, an int64 variable saved with the checkpoint."""
        if self._ckpt_save_counter is None:
            self._ckpt_save_counter = Variable(np.int64(0), trainable=False,
                                               name="save_counter")
        return self._ckpt_save_counter

    def write(self, file_prefix, options=None):
        """Writes exactly `file_prefix` (.index and .data files); returns it."""
        return write_checkpoint(self, os.fspath(file_prefix))

    def save(self, file_prefix, options=None):
        """Writes `file_prefix-N` (N counts saves) and records it as the latest."""
        counter = self.save_counter
        counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(counter.numpy())}")
        update_state(os.path.dirname(os.path.abspath(path)), path, [path])
        return path

    def read(self, save_path, options=None):
        """Restores from `save_path` (written by `write`); returns the restore status."""
        return self.restore(save_path)

    def restore(self, save_path, options=None):
        """Restores every object that has a saved value; returns a status object.
        `None` (no checkpoint yet, e.g. `latest_checkpoint` of an empty directory) restores
        nothing."""
        if save_path is None:
            return Status()
        return read_checkpoint(self, save_path)

    def _create_saved_child(self, name):
        """Restore hook: the checkpoint has a save_counter, so one is made to receive it."""
        return self.save_counter if name == "save_counter" else None
