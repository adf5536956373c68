"""The protocol buffers of TensorFlow's SavedModel, wire-compatible with TensorFlow's.

Built at import, as `tensorlite.summary.graph_def` builds GraphDef and FunctionDef, from
descriptors written here with the field names and numbers of TensorFlow's public
`tensorflow/core/protobuf/{saved_model,meta_graph,saved_object_graph,struct,fingerprint}
.proto`, in the private pool of `tensorlite.protos.example` (reusing GraphDef, TensorProto,
TensorShapeProto, DataType, VersionDef and the checkpoint's TrackableObjectGraph).
Fields tensorlite does not use (a MetaGraphDef's collections, type specs other than ragged
and sparse ones) are left out; protobuf keeps them as unknown fields.

Example:
    >>> SavedModel.FromString(open("m/saved_model.pb", "rb").read()).meta_graphs[0]
"""
from google.protobuf import descriptor_pb2

from tensorlite.checkpoint import protos as _checkpoint_protos  # noqa: F401 - in POOL
from tensorlite.summary import graph_def as _graph_def  # noqa: F401 - GraphDef in POOL
from tensorlite.protos.example import (POOL, _F, _field, _map_field, _message, message_class,
                                      add_files)

_PB = "tensorflow/core/protobuf/"
_FW = "tensorflow/core/framework/"


def _file(name, *deps):
    return descriptor_pb2.FileDescriptorProto(name=_PB + name, package="tensorflow",
                                              syntax="proto3", dependency=list(deps))


def _struct_file():
    """struct.proto: StructuredValue (function signatures) and TensorSpecProto."""
    file = _file("struct.proto", _FW + "tensor_shape.proto", _FW + "types.proto",
                 _FW + "tensor.proto")
    value = _message(file, "StructuredValue")
    value.oneof_decl.add(name="kind")
    _message(file, "NoneValue")
    for name, number, kind, type_name in (
            ("none_value", 1, _F.TYPE_MESSAGE, "NoneValue"),
            ("float64_value", 11, _F.TYPE_DOUBLE, None),
            ("int64_value", 12, _F.TYPE_SINT64, None),
            ("string_value", 13, _F.TYPE_STRING, None),
            ("bool_value", 14, _F.TYPE_BOOL, None),
            ("tensor_shape_value", 31, _F.TYPE_MESSAGE, "TensorShapeProto"),
            ("tensor_dtype_value", 32, _F.TYPE_ENUM, "DataType"),
            ("tensor_spec_value", 33, _F.TYPE_MESSAGE, "TensorSpecProto"),
            ("type_spec_value", 34, _F.TYPE_MESSAGE, "TypeSpecProto"),
            ("list_value", 51, _F.TYPE_MESSAGE, "ListValue"),
            ("tuple_value", 52, _F.TYPE_MESSAGE, "TupleValue"),
            ("dict_value", 53, _F.TYPE_MESSAGE, "DictValue"),
            ("named_tuple_value", 54, _F.TYPE_MESSAGE, "NamedTupleValue"),
            ("tensor_value", 55, _F.TYPE_MESSAGE, "TensorProto"),
            ("numpy_value", 56, _F.TYPE_MESSAGE, "TensorProto")):
        _field(value, name, number, kind, type_name=type_name, oneof=0)
    for name in ("ListValue", "TupleValue"):
        _field(_message(file, name), "values", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
               type_name="StructuredValue")
    _map_field(_message(file, "DictValue"), "fields", 1, "StructuredValue")
    pair = _message(file, "PairValue")
    _field(pair, "key", 1, _F.TYPE_STRING)
    _field(pair, "value", 2, _F.TYPE_MESSAGE, type_name="StructuredValue")
    named = _message(file, "NamedTupleValue")
    _field(named, "name", 1, _F.TYPE_STRING)
    _field(named, "values", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="PairValue")
    spec = _message(file, "TensorSpecProto")
    _field(spec, "name", 1, _F.TYPE_STRING)
    _field(spec, "shape", 2, _F.TYPE_MESSAGE, type_name="TensorShapeProto")
    _field(spec, "dtype", 3, _F.TYPE_ENUM, type_name="DataType")
    type_spec = _message(file, "TypeSpecProto")  # a composite's spec (ragged, sparse)
    type_spec.enum_type.add(name="TypeSpecClass", value=[
        descriptor_pb2.EnumValueDescriptorProto(name=n, number=i) for i, n in enumerate((
            "UNKNOWN", "SPARSE_TENSOR_SPEC", "INDEXED_SLICES_SPEC", "RAGGED_TENSOR_SPEC"))])
    _field(type_spec, "type_spec_class", 1, _F.TYPE_ENUM,
           type_name="TypeSpecProto.TypeSpecClass")
    _field(type_spec, "type_state", 2, _F.TYPE_MESSAGE, type_name="StructuredValue")
    _field(type_spec, "type_spec_class_name", 3, _F.TYPE_STRING)
    _field(type_spec, "num_flat_components", 4, _F.TYPE_INT32)
    return file


def _object_graph_file():
    """saved_object_graph.proto (the kinds of objects tensorlite reads and writes)."""
    file = _file("saved_object_graph.proto", _PB + "trackable_object_graph.proto",
                 _PB + "struct.proto", _FW + "tensor_shape.proto", _FW + "types.proto",
                 _FW + "versions.proto")
    ref = "TrackableObjectGraph.TrackableObject.ObjectReference"
    graph = _message(file, "SavedObjectGraph")
    _field(graph, "nodes", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="SavedObject")
    _map_field(graph, "concrete_functions", 2, "SavedConcreteFunction")
    obj = _message(file, "SavedObject")
    _field(obj, "children", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name=ref)
    _field(obj, "dependencies", 15, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name=ref)
    obj.oneof_decl.add(name="kind")
    for name, number, type_name in (("user_object", 4, "SavedUserObject"),
                                    ("asset", 5, "SavedAsset"),
                                    ("function", 6, "SavedFunction"),
                                    ("variable", 7, "SavedVariable"),
                                    ("bare_concrete_function", 8, "SavedBareConcreteFunction"),
                                    ("constant", 9, "SavedConstant"),
                                    ("resource", 10, "SavedResource"),
                                    ("captured_tensor", 12, "CapturedTensor")):
        _field(obj, name, number, _F.TYPE_MESSAGE, type_name=type_name, oneof=0)
    _field(obj, "registered_name", 13, _F.TYPE_STRING)
    user = _message(file, "SavedUserObject")
    _field(user, "identifier", 1, _F.TYPE_STRING)
    _field(user, "version", 2, _F.TYPE_MESSAGE, type_name="VersionDef")
    _field(user, "metadata", 3, _F.TYPE_STRING)
    _field(_message(file, "SavedAsset"), "asset_file_def_index", 1, _F.TYPE_INT32)
    function = _message(file, "SavedFunction")
    _field(function, "concrete_functions", 1, _F.TYPE_STRING, _F.LABEL_REPEATED)
    _field(function, "function_spec", 2, _F.TYPE_MESSAGE, type_name="FunctionSpec")
    concrete = _message(file, "SavedConcreteFunction")
    _field(concrete, "bound_inputs", 2, _F.TYPE_INT32, _F.LABEL_REPEATED, packed=True)
    _field(concrete, "canonicalized_input_signature", 3, _F.TYPE_MESSAGE,
           type_name="StructuredValue")
    _field(concrete, "output_signature", 4, _F.TYPE_MESSAGE, type_name="StructuredValue")
    bare = _message(file, "SavedBareConcreteFunction")
    _field(bare, "concrete_function_name", 1, _F.TYPE_STRING)
    _field(bare, "argument_keywords", 2, _F.TYPE_STRING, _F.LABEL_REPEATED)
    _field(bare, "allowed_positional_arguments", 3, _F.TYPE_INT64)
    _field(bare, "function_spec", 4, _F.TYPE_MESSAGE, type_name="FunctionSpec")
    _field(_message(file, "SavedConstant"), "operation", 1, _F.TYPE_STRING)
    _field(_message(file, "SavedResource"), "device", 1, _F.TYPE_STRING)
    captured = _message(file, "CapturedTensor")
    _field(captured, "name", 1, _F.TYPE_STRING)
    _field(captured, "concrete_function", 2, _F.TYPE_STRING)
    variable = _message(file, "SavedVariable")
    _field(variable, "dtype", 1, _F.TYPE_ENUM, type_name="DataType")
    _field(variable, "shape", 2, _F.TYPE_MESSAGE, type_name="TensorShapeProto")
    _field(variable, "trainable", 3, _F.TYPE_BOOL)
    _field(variable, "name", 6, _F.TYPE_STRING)
    _field(variable, "device", 7, _F.TYPE_STRING)
    spec = _message(file, "FunctionSpec")
    _field(spec, "fullargspec", 1, _F.TYPE_MESSAGE, type_name="StructuredValue")
    _field(spec, "is_method", 2, _F.TYPE_BOOL)
    _field(spec, "input_signature", 5, _F.TYPE_MESSAGE, type_name="StructuredValue")
    return file


def _meta_graph_file():
    """meta_graph.proto: MetaGraphDef (without collection_def), MetaInfoDef,
    SignatureDef, TensorInfo (dense tensors), AssetFileDef."""
    file = _file("meta_graph.proto", _FW + "graph.proto", _FW + "op_def.proto",
                 _FW + "tensor_shape.proto", _FW + "types.proto",
                 _PB + "saved_object_graph.proto", _PB + "saver.proto", _PB + "struct.proto")
    meta = _message(file, "MetaGraphDef")
    info = meta.nested_type.add(name="MetaInfoDef")
    _field(info, "meta_graph_version", 1, _F.TYPE_STRING)
    _field(info, "stripped_op_list", 2, _F.TYPE_MESSAGE, type_name="OpList")
    _field(info, "tags", 4, _F.TYPE_STRING, _F.LABEL_REPEATED)
    _field(info, "tensorflow_version", 5, _F.TYPE_STRING)
    _field(info, "tensorflow_git_version", 6, _F.TYPE_STRING)
    _field(info, "stripped_default_attrs", 7, _F.TYPE_BOOL)
    _map_field(info, "function_aliases", 8, None, value_kind=_F.TYPE_STRING,
               scope="MetaGraphDef.MetaInfoDef")
    _field(meta, "meta_info_def", 1, _F.TYPE_MESSAGE, type_name="MetaGraphDef.MetaInfoDef")
    _field(meta, "saver_def", 3, _F.TYPE_MESSAGE, type_name="SaverDef")
    _field(meta, "graph_def", 2, _F.TYPE_MESSAGE, type_name="GraphDef")
    _map_field(meta, "signature_def", 5, "SignatureDef")
    _field(meta, "asset_file_def", 6, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="AssetFileDef")
    _field(meta, "object_graph_def", 7, _F.TYPE_MESSAGE, type_name="SavedObjectGraph")
    info_msg = _message(file, "TensorInfo")
    info_msg.oneof_decl.add(name="encoding")
    _field(info_msg, "name", 1, _F.TYPE_STRING, oneof=0)
    _field(info_msg, "dtype", 2, _F.TYPE_ENUM, type_name="DataType")
    _field(info_msg, "tensor_shape", 3, _F.TYPE_MESSAGE, type_name="TensorShapeProto")
    coo = info_msg.nested_type.add(name="CooSparse")  # a SparseTensor output
    for name, number in (("values_tensor_name", 1), ("indices_tensor_name", 2),
                         ("dense_shape_tensor_name", 3)):
        _field(coo, name, number, _F.TYPE_STRING)
    composite = info_msg.nested_type.add(name="CompositeTensor")  # a RaggedTensor output
    _field(composite, "type_spec", 1, _F.TYPE_MESSAGE, type_name="TypeSpecProto")
    _field(composite, "components", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="TensorInfo")
    _field(info_msg, "coo_sparse", 4, _F.TYPE_MESSAGE, type_name="TensorInfo.CooSparse",
           oneof=0)
    _field(info_msg, "composite_tensor", 5, _F.TYPE_MESSAGE,
           type_name="TensorInfo.CompositeTensor", oneof=0)
    signature = _message(file, "SignatureDef")
    _map_field(signature, "inputs", 1, "TensorInfo")
    _map_field(signature, "outputs", 2, "TensorInfo")
    _field(signature, "method_name", 3, _F.TYPE_STRING)
    asset = _message(file, "AssetFileDef")
    _field(asset, "tensor_info", 1, _F.TYPE_MESSAGE, type_name="TensorInfo")
    _field(asset, "filename", 2, _F.TYPE_STRING)
    return file


def _saver_file():
    """saver.proto: SaverDef (its CheckpointFormatVersion enum as the int it encodes)."""
    file = _file("saver.proto")
    saver = _message(file, "SaverDef")
    for name, number, kind in (("filename_tensor_name", 1, _F.TYPE_STRING),
                               ("save_tensor_name", 2, _F.TYPE_STRING),
                               ("restore_op_name", 3, _F.TYPE_STRING),
                               ("max_to_keep", 4, _F.TYPE_INT32), ("sharded", 5, _F.TYPE_BOOL),
                               ("keep_checkpoint_every_n_hours", 6, _F.TYPE_FLOAT),
                               ("version", 7, _F.TYPE_INT32)):
        _field(saver, name, number, kind)
    return file


def _saved_model_file():
    file = _file("saved_model.proto", _PB + "meta_graph.proto")
    model = _message(file, "SavedModel")
    _field(model, "saved_model_schema_version", 1, _F.TYPE_INT64)
    _field(model, "meta_graphs", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="MetaGraphDef")
    return file


def _fingerprint_file():
    file = _file("fingerprint.proto", _FW + "versions.proto")
    fingerprint = _message(file, "FingerprintDef")
    for name, number in (("saved_model_checksum", 1), ("graph_def_program_hash", 2),
                         ("signature_def_hash", 3), ("saved_object_graph_hash", 4),
                         ("checkpoint_hash", 5)):
        _field(fingerprint, name, number, _F.TYPE_UINT64)
    _field(fingerprint, "uuid", 7, _F.TYPE_STRING)
    _field(fingerprint, "version", 6, _F.TYPE_MESSAGE, type_name="VersionDef")
    return file


add_files(_struct_file, _object_graph_file, _saver_file, _meta_graph_file, _saved_model_file,
          _fingerprint_file)




SavedModel = message_class("SavedModel")
MetaGraphDef = message_class("MetaGraphDef")
SignatureDef = message_class("SignatureDef")
TensorInfo = message_class("TensorInfo")
SavedObjectGraph = message_class("SavedObjectGraph")
StructuredValue = message_class("StructuredValue")
FingerprintDef = message_class("FingerprintDef")

__all__ = ["SavedModel", "MetaGraphDef", "SignatureDef", "TensorInfo", "SavedObjectGraph",
           "StructuredValue", "FingerprintDef"]
