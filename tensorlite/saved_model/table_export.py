"""Lookup tables in a SavedModel written here: the writer side of resources.py.

A table a saved function captures becomes, as TensorFlow writes it:
- a `resource` node of the SavedObjectGraph (a child of the object holding the table) with
  three function children: `_create_resource` (a `HashTableV2` / `MutableHashTableV2` of the
  table's key and value dtypes, returning its handle; a DenseHashTable's
  `MutableDenseHashTableV2` takes its empty_key and deleted_key as Const inputs),
  `_initialize` (bound to the table: `LookupTableImportV2` of its contents as constants,
  `LookupTableInsertV2` for a DenseHashTable, or `InitializeTableFromTextFileV2` of an
  asset file for a TextFileInitializer) and `_destroy_resource`;
- an `asset` node and an `asset_file_def` for a TextFileInitializer's file, which the writer
  copies into `assets/` (the outer graph's `Const` it names holds the source path until then);
- in the outer graph, the table's `HashTableV2` node (the signatures' calls take it as their
  resource input) and a call of `_initialize` that `__saved_model_init_op` runs, for loaders
  that run the graph (TensorFlow 1, TensorFlow Serving).

Every function that captured the table takes its handle as a `DT_RESOURCE` argument.

Example:
    >>> node_id = TableExporter(builder).node(table, parent_id, "table")  # doctest: +SKIP
"""
import os

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.saved_model.function_def import call_node, datatype_resource
from tensorlite.summary.event_writer import tensor_proto
from tensorlite.summary.graph_def import FunctionDef, datatype

_DT_INT32 = 3


def is_table(obj):
    """Whether `obj` is a tf.lookup table (a resource, not a variable)."""
    from tensorlite.lookup.tables import _Table  # noqa: PLC0415 - lookup sits above
    return isinstance(obj, _Table)


def _is_dense(table):
    from tensorlite.lookup.tables import DenseHashTable  # noqa: PLC0415
    return isinstance(table, DenseHashTable)


def _creator_op(table):
    """TensorFlow's creator op of `table`, declared beside its import rule (lookup/tables.py)."""
    from tensorlite.lookup.tables import tf_creator  # noqa: PLC0415
    return tf_creator(table)[0]


def _const(fdef, name, array):
    array = np.asarray(array)
    node = fdef.node_def.add(name=name, op="Const")
    node.attr["dtype"].type = datatype(dtypes.as_dtype(array.dtype))
    node.attr["value"].tensor.CopyFrom(tensor_proto(array))
    return f"{name}:output:0"


def _returns_one(fdef, after):
    """The int32 1 TensorFlow's initializers and destroyers return, after `after` ran."""
    one = _const(fdef, "Const_ret", np.array(1, np.int32))
    out = fdef.node_def.add(name="Identity", op="Identity",
                            input=[one] + [f"^{a}" for a in after])
    out.attr["T"].type = _DT_INT32
    fdef.signature.output_arg.add(name="identity", type=_DT_INT32)
    fdef.ret["identity"] = "Identity:output:0"
    for a in after:
        fdef.signature.control_output.append(a)
        fdef.control_ret[a] = a
    fdef.signature.is_stateful = bool(after)


def table_attrs(node, table, shared_name):
    """The attributes of `table`'s creator node: dtypes, shared name and, for the creator ops
    that take one, the value shape."""
    from tensorlite.lookup.tables import tf_creator  # noqa: PLC0415
    node.attr["key_dtype"].type = datatype(table.key_dtype)
    node.attr["value_dtype"].type = datatype(table.value_dtype)
    node.attr["shared_name"].s = shared_name.encode()
    if tf_creator(table)[1]:
        from tensorlite.summary.graph_def import shape_proto  # noqa: PLC0415
        node.attr["value_shape"].shape.CopyFrom(shape_proto(list(table._value_shape)))


def _reserved_key_inputs(add_node, suffix, table):
    """A DenseHashTable's empty_key and deleted_key as Const nodes (added by `add_node`,
    named with `suffix` for a function's output form), the creator's two inputs."""
    if not _is_dense(table):
        return []
    names = []
    for name, key in (("empty_key", table._empty_key), ("deleted_key", table._deleted_key)):
        node = add_node(name)
        node.op = "Const"
        array = np.array(key, dtype=object if table.key_dtype.is_string else
                         table.key_dtype.as_numpy_dtype)
        node.attr["dtype"].type = datatype(table.key_dtype)
        node.attr["value"].tensor.CopyFrom(tensor_proto(array))
        names.append(node.name + suffix)
    return names


def creator(name, table, shared_name):
    fdef = FunctionDef()
    fdef.signature.name = name
    keys = _reserved_key_inputs(lambda n: fdef.node_def.add(name=n), ":output:0", table)
    node = fdef.node_def.add(name="hash_table", op=_creator_op(table), input=keys)
    table_attrs(node, table, shared_name)
    out = fdef.node_def.add(name="Identity", op="Identity", input=["hash_table:table_handle:0"])
    out.attr["T"].type = datatype_resource()
    fdef.signature.output_arg.add(name="identity", type=datatype_resource())
    fdef.ret["identity"] = "Identity:output:0"
    fdef.signature.is_stateful = True
    fdef.signature.control_output.append("hash_table")
    fdef.control_ret["hash_table"] = "hash_table"
    fdef.attr["_construction_context"].s = b"kEagerRuntime"
    return fdef


def _contents(table):
    """(keys, values) a table starts with: its initializer's, or (mutable) what it holds."""
    init = getattr(table, "_initializer", None)
    if init is not None and hasattr(init, "_pairs"):
        return init._pairs()
    return table._export()


def initializer(name, table):
    """(FunctionDef, asset source path or None): the table filled by import of its
    contents, or from its TextFileInitializer's file (then a second, string argument)."""
    from tensorlite.lookup.initializers import TextFileInitializer  # noqa: PLC0415
    fdef = FunctionDef()
    fdef.signature.name = name
    fdef.signature.input_arg.add(name="table_handle", type=datatype_resource())
    init = getattr(table, "_initializer", None)
    if isinstance(init, TextFileInitializer):
        fdef.signature.input_arg.add(name="filename", type=datatype(dtypes.string))
        node = fdef.node_def.add(name="text_file_init/InitializeTableFromTextFileV2",
                                 op="InitializeTableFromTextFileV2",
                                 input=["table_handle", "filename"])
        node.attr["key_index"].i = init._key_index
        node.attr["value_index"].i = init._value_index
        node.attr["vocab_size"].i = -1 if init._vocab_size is None else init._vocab_size
        node.attr["delimiter"].s = init._delimiter
        node.attr["offset"].i = init._offset
        source = os.path.abspath(init._filename)
    else:
        # TensorFlow's ImportV2 of a DenseHashTable takes its raw bucket array (keys placed
        # by TensorFlow's hash), so a dense table's entries are inserted instead
        op = "LookupTableInsertV2" if _is_dense(table) else "LookupTableImportV2"
        keys, values = _contents(table)
        node = fdef.node_def.add(name=f"key_value_init/{op}", op=op,
                                 input=["table_handle", _const(fdef, "keys", keys),
                                        _const(fdef, "values", values)])
        node.attr["Tin"].type = datatype(table.key_dtype)
        node.attr["Tout"].type = datatype(table.value_dtype)
        source = None
    _returns_one(fdef, [node.name])
    fdef.attr["_construction_context"].s = b"kEagerRuntime"
    return fdef, source


def destroyer(name):
    fdef = FunctionDef()
    fdef.signature.name = name
    _returns_one(fdef, [])
    fdef.attr["_construction_context"].s = b"kEagerRuntime"
    return fdef


def _owner(graph, table):
    """(node id, attribute name) of the saved object holding `table` as an attribute, or
    the root with a made-up name (a Keras layer keeps its tables in a tuple)."""
    for node_id, obj in enumerate(graph.nodes):
        for name, value in getattr(obj, "__dict__", {}).items():
            if value is table and isinstance(name, str):
                return node_id, name
            if isinstance(value, (tuple, list)) and any(v is table for v in value):
                return node_id, f"{name}_{[v is table for v in value].index(True)}"
    return 0, f"_table_{len(graph.nodes)}"


class TableExporter:
    """Writes table resources into a writer.py _Builder's MetaGraphDef, once per table."""

    def __init__(self, builder):
        self.b = builder
        self.ids = {}  # id(table) -> resource node id
        self.handles = {}  # resource node id -> outer graph HashTableV2 node name
        self.init_calls = []  # outer graph nodes the init op runs

    def node(self, table):
        """The resource node id of `table`, written on first use."""
        if id(table) in self.ids:
            return self.ids[id(table)]
        b = self.b
        parent, attr = _owner(b.graph, table)
        node_id = len(b.objects.nodes)
        self.ids[id(table)] = node_id
        proto = b.objects.nodes.add()
        proto.resource.SetInParent()
        proto.registered_name = f"tf.{type(table).__name__}"
        b.objects.nodes[parent].children.add(node_id=node_id, local_name=attr)
        shared = f"table_{node_id}"
        create = self._function(node_id, "_create_resource", creator(
            b._new_name("_creator"), table, shared), [], "DT_RESOURCE")
        fdef, source = initializer(b._new_name("_initializer"), table)
        bound = [node_id] + ([self._asset(source, node_id)] if source else [])
        init = self._function(node_id, "_initialize", fdef, bound, "DT_INT32")
        self._function(node_id, "_destroy_resource", destroyer(b._new_name("_destroyer")), [],
                       "DT_INT32")
        self._outer(table, node_id, create, init, source)
        return node_id

    def _function(self, parent_id, attr, fdef, bound, out_dtype):
        from tensorlite.saved_model.writer import _fullargspec  # noqa: PLC0415 - no cycle
        from tensorlite.protos.example import DATA_TYPES  # noqa: PLC0415
        b = self.b
        b.library.function.add().CopyFrom(fdef)
        name = fdef.signature.name
        node_id = len(b.objects.nodes)
        saved = b.objects.nodes.add().function
        saved.concrete_functions.append(name)
        _fullargspec(saved.function_spec.fullargspec, [])
        saved.function_spec.input_signature.tuple_value.SetInParent()
        b.objects.nodes[parent_id].children.add(node_id=node_id, local_name=attr)
        concrete = b.objects.concrete_functions[name]
        concrete.bound_inputs.extend(bound)
        args = concrete.canonicalized_input_signature.tuple_value
        args.values.add().tuple_value.SetInParent()
        args.values.add().dict_value.SetInParent()
        out = concrete.output_signature.tensor_spec_value
        out.name = "unknown"
        out.shape.SetInParent()
        out.dtype = DATA_TYPES[out_dtype]
        return name

    def _asset(self, source, parent_id):
        """An asset node for file `source` (copied into assets/ by writer.write)."""
        b = self.b
        index = add_asset_file(b.meta, source)
        node_id = len(b.objects.nodes)
        b.objects.nodes.add().asset.asset_file_def_index = index
        b.objects.nodes[parent_id].children.add(node_id=node_id, local_name="_filename")
        return node_id

    def _outer(self, table, node_id, create, init, source):
        """The outer graph's table node and the call of its initializer."""
        graph = self.b.meta.graph_def
        keys = _reserved_key_inputs(lambda n: graph.node.add(name=f"{n}_{node_id}"), "", table)
        node = graph.node.add(name=f"hash_table_{node_id}", op=_creator_op(table), input=keys)
        table_attrs(node, table, f"table_{node_id}")
        self.handles[node_id] = node.name
        inputs = [node.name] + ([self.b.meta.asset_file_def[-1].tensor_info.name[:-2]]
                                if source else [])
        tin = [datatype_resource()] + ([datatype(dtypes.string)] if source else [])
        call = call_node(graph.node.add(), f"table_init_{node_id}", init, inputs, tin,
                         [_DT_INT32])
        self.init_calls.append(call.name)



def add_asset_file(meta, source):
    """Adds file `source` to the MetaGraphDef's asset_file_def (a unique file name in
    assets/, and an outer-graph Const holding the source path until writer.write copies
    it); returns its index."""
    if not os.path.isfile(source):
        raise errors.NotFoundError(None, None, f"SavedModel export: the asset file {source} "
                                   f"does not exist")
    filename = os.path.basename(source)
    taken = {a.filename for a in meta.asset_file_def}
    stem, ext = os.path.splitext(filename)
    i = 0
    while filename in taken:
        i += 1
        filename = f"{stem}_{i}{ext}"
    const = meta.graph_def.node.add(name=f"asset_path_{len(meta.asset_file_def)}", op="Const")
    const.attr["dtype"].type = datatype(dtypes.string)
    const.attr["value"].tensor.CopyFrom(tensor_proto(np.array(source.encode(), dtype=object)))
    asset = meta.asset_file_def.add(filename=filename)
    asset.tensor_info.name = f"{const.name}:0"
    asset.tensor_info.dtype = datatype(dtypes.string)
    asset.tensor_info.tensor_shape.SetInParent()
    return len(meta.asset_file_def) - 1


def copy_assets(meta, directory):
    """Copies each asset's source file (the value of the Const its asset_file_def names)
    into `directory`/assets/ under its asset file name."""
    import shutil  # noqa: PLC0415
    consts = {n.name: n for n in meta.graph_def.node if n.op == "Const"}
    for asset in meta.asset_file_def:
        node = consts.get(asset.tensor_info.name.split(":")[0])
        if node is None:
            continue
        source = bytes(node.attr["value"].tensor.string_val[0]).decode()
        shutil.copyfile(source, os.path.join(directory, "assets", asset.filename))


__all__ = ["TableExporter", "is_table", "copy_assets", "add_asset_file"]
