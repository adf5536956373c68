"""`tf.train.Example` and its parts as real protobuf messages, wire-compatible with TensorFlow
(and `TensorProto`, the message of `tf.io.serialize_tensor`).

The message classes are built at import from descriptors written here with the field names
and numbers of TensorFlow's `feature.proto`, `example.proto`, `types.proto`,
`tensor_shape.proto` and `tensor.proto` (package `tensorflow`), so no
protoc and no generated `_pb2` file are needed. They live in a private descriptor pool, so
they never clash with TensorFlow's own classes when both are imported; bytes written by one
parse with the other.

Example:
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))}))
    >>> tf.train.Example.FromString(ex.SerializeToString()).features.feature["x"].float_list.value
    [1.0]
"""
try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as e:  # protobuf is an optional extra
    raise ImportError("tf.train.Example and TFRecord parsing need the `protobuf` package: "
                      "pip install '.[tfrecord]'"
                      " in a clone of tensorlite (or pip install protobuf)") from e

from tensorlite.framework import dtypes  # noqa: E402

_F = descriptor_pb2.FieldDescriptorProto
_PKG = "tensorflow"


def _message(file, name):
    msg = file.message_type.add()
    msg.name = name
    return msg


def _field(msg, name, number, ftype, label=_F.LABEL_OPTIONAL, type_name=None, packed=False,
           oneof=None):
    f = msg.field.add()
    f.name, f.number, f.type, f.label = name, number, ftype, label
    if type_name is not None:
        f.type_name = f".{_PKG}.{type_name}"
    if packed:
        f.options.packed = True
    if oneof is not None:
        f.oneof_index = oneof
    return f


def _map_field(msg, name, number, value_type, key_type=_F.TYPE_STRING,
               value_kind=_F.TYPE_MESSAGE, scope=None):
    """`map<key_type, value_type> name = number;` as protobuf encodes maps: a repeated
    nested `<Name>Entry` message with key = 1 and value = 2 (a message named value_type,
    or a scalar of `value_kind` when value_type is None); `scope` is a nested message's
    full name within the package (`Outer.Inner`)."""
    entry = msg.nested_type.add()
    entry.name = "".join(p.capitalize() for p in name.split("_")) + "Entry"
    entry.options.map_entry = True
    _field(entry, "key", 1, key_type)
    if value_type is None:
        _field(entry, "value", 2, value_kind)
    else:
        _field(entry, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    _field(msg, name, number, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name=f"{scope or msg.name}.{entry.name}")


def _feature_file():
    """tensorflow/core/example/feature.proto"""
    file = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/example/feature.proto", package=_PKG, syntax="proto3")
    _field(_message(file, "BytesList"), "value", 1, _F.TYPE_BYTES, _F.LABEL_REPEATED)
    _field(_message(file, "FloatList"), "value", 1, _F.TYPE_FLOAT, _F.LABEL_REPEATED,
           packed=True)
    _field(_message(file, "Int64List"), "value", 1, _F.TYPE_INT64, _F.LABEL_REPEATED,
           packed=True)
    feature = _message(file, "Feature")
    feature.oneof_decl.add(name="kind")
    for name, number, kind in (("bytes_list", 1, "BytesList"), ("float_list", 2, "FloatList"),
                               ("int64_list", 3, "Int64List")):
        _field(feature, name, number, _F.TYPE_MESSAGE, type_name=kind, oneof=0)
    _map_field(_message(file, "Features"), "feature", 1, "Feature")
    _field(_message(file, "FeatureList"), "feature", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="Feature")
    _map_field(_message(file, "FeatureLists"), "feature_list", 1, "FeatureList")
    return file


def _example_file():
    """tensorflow/core/example/example.proto"""
    file = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/example/example.proto", package=_PKG, syntax="proto3",
        dependency=["tensorflow/core/example/feature.proto"])
    _field(_message(file, "Example"), "features", 1, _F.TYPE_MESSAGE, type_name="Features")
    seq = _message(file, "SequenceExample")
    _field(seq, "context", 1, _F.TYPE_MESSAGE, type_name="Features")
    _field(seq, "feature_lists", 2, _F.TYPE_MESSAGE, type_name="FeatureLists")
    return file


DATA_TYPES = dtypes.DATA_TYPES  # the DataType enum types.proto declares (below)


def _types_file():
    """tensorflow/core/framework/types.proto (the DataType enum only)."""
    file = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/framework/types.proto", package=_PKG, syntax="proto3")
    enum = file.enum_type.add(name="DataType")
    for name, number in DATA_TYPES.items():
        enum.value.add(name=name, number=number)
    return file


def _tensor_files():
    """tensor_shape.proto and tensor.proto (TensorProto, as tf.io.serialize_tensor writes)."""
    shape_file = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/framework/tensor_shape.proto", package=_PKG, syntax="proto3")
    shape = _message(shape_file, "TensorShapeProto")
    dim = shape.nested_type.add(name="Dim")
    _field(dim, "size", 1, _F.TYPE_INT64)
    _field(dim, "name", 2, _F.TYPE_STRING)
    _field(shape, "dim", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="TensorShapeProto.Dim")
    _field(shape, "unknown_rank", 3, _F.TYPE_BOOL)
    tensor_file = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/framework/tensor.proto", package=_PKG, syntax="proto3",
        dependency=["tensorflow/core/framework/tensor_shape.proto",
                    "tensorflow/core/framework/types.proto"])
    tensor = _message(tensor_file, "TensorProto")
    _field(tensor, "dtype", 1, _F.TYPE_ENUM, type_name="DataType")
    _field(tensor, "tensor_shape", 2, _F.TYPE_MESSAGE, type_name="TensorShapeProto")
    _field(tensor, "version_number", 3, _F.TYPE_INT32)
    _field(tensor, "tensor_content", 4, _F.TYPE_BYTES)
    for name, number, ftype in (("float_val", 5, _F.TYPE_FLOAT), ("double_val", 6, _F.TYPE_DOUBLE),
                                ("int_val", 7, _F.TYPE_INT32), ("scomplex_val", 9, _F.TYPE_FLOAT),
                                ("int64_val", 10, _F.TYPE_INT64), ("bool_val", 11, _F.TYPE_BOOL),
                                ("dcomplex_val", 12, _F.TYPE_DOUBLE),
                                ("half_val", 13, _F.TYPE_INT32), ("uint32_val", 16, _F.TYPE_UINT32),
                                ("uint64_val", 17, _F.TYPE_UINT64)):
        _field(tensor, name, number, ftype, _F.LABEL_REPEATED, packed=True)
    _field(tensor, "string_val", 8, _F.TYPE_BYTES, _F.LABEL_REPEATED)
    return shape_file, tensor_file


def _message_class(descriptor):
    get = getattr(message_factory, "GetMessageClass", None)
    if get is not None:
        return get(descriptor)
    return message_factory.MessageFactory(descriptor.file.pool).GetPrototype(descriptor)


POOL = descriptor_pool.DescriptorPool()
POOL.Add(_feature_file())
POOL.Add(_example_file())
POOL.Add(_types_file())
for _file in _tensor_files():
    POOL.Add(_file)

def add_files(*makers):
    """Adds the descriptor files that `makers` build to POOL, in order, skipping any already
    there (a module imported twice, or reloaded)."""
    for make in makers:
        file = make()
        try:
            POOL.FindFileByName(file.name)
        except KeyError:
            POOL.Add(file)


def message_class(name):
    """The message class of `name` in POOL ("Example" for tensorflow.Example, or a full
    name with its package, "tensorflow.serving.ModelServerConfig")."""
    full = name if "." in name else f"{_PKG}.{name}"
    return _message_class(POOL.FindMessageTypeByName(full))


BytesList = message_class("BytesList")
FloatList = message_class("FloatList")
Int64List = message_class("Int64List")
Feature = message_class("Feature")
Features = message_class("Features")
FeatureList = message_class("FeatureList")
FeatureLists = message_class("FeatureLists")
Example = message_class("Example")
SequenceExample = message_class("SequenceExample")
TensorShapeProto = message_class("TensorShapeProto")
TensorProto = message_class("TensorProto")

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
           "FeatureLists", "Example", "SequenceExample", "TensorShapeProto", "TensorProto"]
