"""The captured non-variable objects of a SavedModel written by TensorFlow: resources (lookup
tables), constants and assets, as TensorFlow's loader restores them.

- A `resource` node (a `StaticHashTable`, a `MutableHashTable`, ...) is a RestoredResource:
  its `_create_resource` function (a graph with `HashTableV2`, ...) makes the tensorlite
  table on first use, a checkpointed table (a MutableHashTable's `table-keys` and
  `table-values`) is filled by the checkpoint restorer, and its `_initialize` function
  (`LookupTableImportV2`, `InitializeTableFromTextFileV2` on an asset, ...) runs once the
  variables are restored, in the object graph's order, as TensorFlow's loader does.
- A `constant` node is the value of the outer graph's `Const` node it names.
- An `asset` node is the path of its file under the SavedModel's `assets/` directory.

A function that captured one of them receives, as its bound input, the table, the
constant's tensor or the asset path.

Example:
    >>> model = tf.saved_model.load(dir_with_a_text_vectorization_layer)
    >>> model.signatures["serving_default"](tf.constant(["the cat"]))
"""
import os

from tensorlite.framework import errors
from tensorlite.saved_model.load import Loaded


class RestoredResource(Loaded):
    """A resource of the object graph; `resource_handle` is the table its creator made."""

    def __init__(self):
        object.__setattr__(self, "_handle", None)

    @property
    def resource_handle(self):
        if self._handle is None:
            create = self.__dict__.get("_create_resource")
            if create is None:
                raise errors.UnimplementedError(None, None, "SavedModel: a resource without "
                                                "a _create_resource function")
            object.__setattr__(self, "_handle", create())
        return self._handle

    def _trackable_children(self):
        return []  # the creator/initializer functions hold no state

    def _restore_from_tensors(self, restored):
        """A checkpointed table's saved contents (a MutableHashTable's keys and values)."""
        table = self.resource_handle
        if not {"table-keys", "table-values"} <= set(restored):
            raise errors.DataLossError(None, None, f"SavedModel: a table's checkpoint entry "
                                       f"holds {sorted(restored)}, not table-keys and "
                                       f"table-values")
        table._import(restored["table-keys"], restored["table-values"])

    def initialize(self):
        init = self.__dict__.get("_initialize")
        self.resource_handle  # noqa: B018 - created even when nothing initializes it
        if init is not None:
            init()


def constant(proto, meta):
    """The tensor of a `constant` node: the value of the graph's Const node it names."""
    from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
    from tensorlite.saved_model.function_runner import tensor_value  # noqa: PLC0415
    name = proto.constant.operation
    for node in meta.graph_def.node:
        if node.name == name and node.op == "Const":
            return convert_to_tensor(tensor_value(node.attr["value"].tensor))
    raise errors.DataLossError(None, None, f"SavedModel: the captured constant {name!r} is "
                               f"not a Const node of its graph")


def asset(proto, meta, export_dir):
    """The path (a string tensor) of an `asset` node's file in `assets/`."""
    from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
    index = proto.asset.asset_file_def_index
    if not 0 <= index < len(meta.asset_file_def):
        raise errors.DataLossError(None, None, f"SavedModel: asset index {index} out of "
                                   f"range ({len(meta.asset_file_def)} assets)")
    filename = meta.asset_file_def[index].filename
    path = os.path.join(export_dir, "assets", filename)
    if os.path.basename(filename) != filename or not os.path.isfile(path):
        raise errors.NotFoundError(None, None, f"SavedModel: asset {filename!r} is not a file "
                                   f"in {os.path.join(export_dir, 'assets')}")
    from tensorlite.saved_model.file_access import Roots  # noqa: PLC0415
    Roots(export_dir).check(path, "read", f"asset {filename!r}")  # (a symlink out of assets/)
    return convert_to_tensor(path.encode())


def bound_value(obj):
    """What a function receives for a captured object (a table for a resource)."""
    return obj.resource_handle if isinstance(obj, RestoredResource) else obj


def initialize_all(objects):
    """Runs every resource's initializer once the variables are restored."""
    for obj in objects:
        if isinstance(obj, RestoredResource):
            obj.initialize()
