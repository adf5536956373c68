"""The protocol buffers of TensorFlow's checkpoints, wire-compatible with TensorFlow's.

Built at import, as `tensorlite.summary.graph_def` builds GraphDef, from descriptors written
here with the field names and numbers of TensorFlow's public
`tensorflow/core/protobuf/tensor_bundle.proto` (BundleHeaderProto, BundleEntryProto) and
`tensorflow/core/protobuf/trackable_object_graph.proto` (TrackableObjectGraph) and
`tensorflow/python/checkpoint/checkpoint_state.proto` (the text of the `checkpoint`
file), in the
private descriptor pool of `tensorlite.protos.example` (reusing its TensorShapeProto and
DataType and graph_def's VersionDef). Fields tensorlite does not use (a BundleEntryProto's
`slices` of partitioned variables, an object's `registered_saver`) are left out; protobuf
keeps them as unknown fields when it parses TensorFlow's bytes.

Example:
    >>> BundleHeaderProto(num_shards=1).num_shards
    1
"""
try:
    from google.protobuf import descriptor_pb2, wrappers_pb2
except ImportError as e:  # protobuf is an optional extra
    raise ImportError("TensorFlow's checkpoint format needs the `protobuf` package: pip "
                      "install '.[checkpoint]' in a clone of tensorlite (or pip install "
                      "protobuf crc32c)") from e

from tensorlite.summary import graph_def as _graph_def  # noqa: F401 - versions.proto in POOL
from tensorlite.protos.example import POOL, _F, _field, _message, message_class, add_files

_WRAPPERS = "google/protobuf/wrappers.proto"
_BUNDLE = "tensorflow/core/protobuf/tensor_bundle.proto"
_OBJECT_GRAPH = "tensorflow/core/protobuf/trackable_object_graph.proto"
_STATE = "tensorflow/python/checkpoint/checkpoint_state.proto"


def _bundle_file():
    """tensor_bundle.proto (without BundleEntryProto.slices)."""
    file = descriptor_pb2.FileDescriptorProto(
        name=_BUNDLE, package="tensorflow", syntax="proto3",
        dependency=["tensorflow/core/framework/tensor_shape.proto",
                    "tensorflow/core/framework/types.proto",
                    "tensorflow/core/framework/versions.proto"])
    header = _message(file, "BundleHeaderProto")
    endian = header.enum_type.add(name="Endianness")
    endian.value.add(name="LITTLE", number=0)
    endian.value.add(name="BIG", number=1)
    _field(header, "num_shards", 1, _F.TYPE_INT32)
    _field(header, "endianness", 2, _F.TYPE_ENUM, type_name="BundleHeaderProto.Endianness")
    _field(header, "version", 3, _F.TYPE_MESSAGE, type_name="VersionDef")
    entry = _message(file, "BundleEntryProto")
    _field(entry, "dtype", 1, _F.TYPE_ENUM, type_name="DataType")
    _field(entry, "shape", 2, _F.TYPE_MESSAGE, type_name="TensorShapeProto")
    _field(entry, "shard_id", 3, _F.TYPE_INT32)
    _field(entry, "offset", 4, _F.TYPE_INT64)
    _field(entry, "size", 5, _F.TYPE_INT64)
    _field(entry, "crc32c", 6, _F.TYPE_FIXED32)
    return file


def _object_graph_file():
    """trackable_object_graph.proto (without TrackableObject.registered_saver)."""
    file = descriptor_pb2.FileDescriptorProto(
        name=_OBJECT_GRAPH, package="tensorflow", syntax="proto3", dependency=[_WRAPPERS])
    graph = _message(file, "TrackableObjectGraph")
    obj = graph.nested_type.add(name="TrackableObject")
    ref = obj.nested_type.add(name="ObjectReference")
    _field(ref, "node_id", 1, _F.TYPE_INT32)
    _field(ref, "local_name", 2, _F.TYPE_STRING)
    tensor = obj.nested_type.add(name="SerializedTensor")
    _field(tensor, "name", 1, _F.TYPE_STRING)
    _field(tensor, "full_name", 2, _F.TYPE_STRING)
    _field(tensor, "checkpoint_key", 3, _F.TYPE_STRING)
    slot = obj.nested_type.add(name="SlotVariableReference")
    _field(slot, "original_variable_node_id", 1, _F.TYPE_INT32)
    _field(slot, "slot_name", 2, _F.TYPE_STRING)
    _field(slot, "slot_variable_node_id", 3, _F.TYPE_INT32)
    prefix = "TrackableObjectGraph.TrackableObject."
    _field(obj, "children", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name=prefix + "ObjectReference")
    _field(obj, "attributes", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name=prefix + "SerializedTensor")
    _field(obj, "slot_variables", 3, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name=prefix + "SlotVariableReference")
    has_values = _field(obj, "has_checkpoint_values", 5, _F.TYPE_MESSAGE)
    has_values.type_name = ".google.protobuf.BoolValue"
    _field(graph, "nodes", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="TrackableObjectGraph.TrackableObject")
    return file


def _state_file():
    """tensorflow/python/checkpoint/checkpoint_state.proto: the `checkpoint` file."""
    file = descriptor_pb2.FileDescriptorProto(name=_STATE, package="tensorflow",
                                              syntax="proto3")
    state = _message(file, "CheckpointState")
    _field(state, "model_checkpoint_path", 1, _F.TYPE_STRING)
    _field(state, "all_model_checkpoint_paths", 2, _F.TYPE_STRING, _F.LABEL_REPEATED)
    _field(state, "all_model_checkpoint_timestamps", 3, _F.TYPE_DOUBLE, _F.LABEL_REPEATED,
           packed=True)
    _field(state, "last_preserved_timestamp", 4, _F.TYPE_DOUBLE)
    return file


def _wrappers_file():
    """google/protobuf/wrappers.proto (BoolValue), from protobuf's own descriptor."""
    file = descriptor_pb2.FileDescriptorProto()
    wrappers_pb2.DESCRIPTOR.CopyToProto(file)
    return file


add_files(_wrappers_file, _bundle_file, _object_graph_file, _state_file)
BundleHeaderProto = message_class("tensorflow.BundleHeaderProto")
BundleEntryProto = message_class("tensorflow.BundleEntryProto")
TrackableObjectGraph = message_class("tensorflow.TrackableObjectGraph")
CheckpointState = message_class("tensorflow.CheckpointState")

__all__ = ["BundleHeaderProto", "BundleEntryProto", "TrackableObjectGraph", "CheckpointState"]
