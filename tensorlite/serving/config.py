"""TF Serving's configuration files: `--model_config_file` (ModelServerConfig) and
`--batching_parameters_file` (BatchingParameters), in protobuf text format.

The messages are built at import from descriptors written here with the field names and
numbers of TF Serving's `model_server_config.proto`, `file_system_storage_path_source.proto`
and `session_bundle_config.proto`, so protobuf's own text-format parser reads the files
exactly as `tensorflow_model_server` does (a typo is a parse error naming line and field).
`logging_config` and `custom_model_config` are not supported and fail to parse.

Example:
    >>> models = parse_model_config('model_config_list { config { name: "m" '
    ...                             'base_path: "/models/m" model_platform: "tensorflow" } }')
    >>> models[0].name, models[0].policy
    ('m', ('latest', 1))
"""
from dataclasses import dataclass, field

from google.protobuf import descriptor_pb2, text_format, wrappers_pb2

from tensorlite.protos.example import POOL, _F, _field, _message, message_class, add_files

_PKG = "tensorflow/serving/"


def _wrappers_file():
    return descriptor_pb2.FileDescriptorProto.FromString(wrappers_pb2.DESCRIPTOR.serialized_pb)


def _storage_path_file():
    """file_system_storage_path_source.proto: the ServableVersionPolicy message."""
    file = descriptor_pb2.FileDescriptorProto(
        name=_PKG + "sources/storage_path/file_system_storage_path_source.proto",
        package="tensorflow.serving", syntax="proto3")
    source = _message(file, "FileSystemStoragePathSourceConfig")
    policy = source.nested_type.add(name="ServableVersionPolicy")
    latest = policy.nested_type.add(name="Latest")
    _field(latest, "num_versions", 1, _F.TYPE_UINT32)
    policy.nested_type.add(name="All")
    specific = policy.nested_type.add(name="Specific")
    _field(specific, "versions", 1, _F.TYPE_INT64, _F.LABEL_REPEATED, packed=True)
    policy.oneof_decl.add(name="policy_choice")
    prefix = "serving.FileSystemStoragePathSourceConfig.ServableVersionPolicy."
    _field(policy, "latest", 100, _F.TYPE_MESSAGE, type_name=prefix + "Latest", oneof=0)
    _field(policy, "all", 101, _F.TYPE_MESSAGE, type_name=prefix + "All", oneof=0)
    _field(policy, "specific", 102, _F.TYPE_MESSAGE, type_name=prefix + "Specific", oneof=0)
    return file


def _model_server_config_file():
    """model_server_config.proto: ModelConfig, ModelConfigList, ModelServerConfig."""
    file = descriptor_pb2.FileDescriptorProto(
        name=_PKG + "config/model_server_config.proto", package="tensorflow.serving",
        syntax="proto3",
        dependency=[_PKG + "sources/storage_path/file_system_storage_path_source.proto"])
    config = _message(file, "ModelConfig")
    _field(config, "name", 1, _F.TYPE_STRING)
    _field(config, "base_path", 2, _F.TYPE_STRING)
    _field(config, "model_platform", 4, _F.TYPE_STRING)
    _field(config, "model_version_policy", 7, _F.TYPE_MESSAGE,
           type_name="serving.FileSystemStoragePathSourceConfig.ServableVersionPolicy")
    labels = config.nested_type.add(name="VersionLabelsEntry")
    labels.options.map_entry = True
    _field(labels, "key", 1, _F.TYPE_STRING)
    _field(labels, "value", 2, _F.TYPE_INT64)
    _field(config, "version_labels", 8, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           type_name="serving.ModelConfig.VersionLabelsEntry")
    lst = _message(file, "ModelConfigList")
    _field(lst, "config", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name="serving.ModelConfig")
    server = _message(file, "ModelServerConfig")
    server.oneof_decl.add(name="config")
    _field(server, "model_config_list", 1, _F.TYPE_MESSAGE, type_name="serving.ModelConfigList",
           oneof=0)
    return file


def _batching_file():
    """session_bundle_config.proto: the BatchingParameters message."""
    file = descriptor_pb2.FileDescriptorProto(
        name=_PKG + "servables/tensorflow/session_bundle_config.proto",
        package="tensorflow.serving", syntax="proto3",
        dependency=["google/protobuf/wrappers.proto"])
    params = _message(file, "BatchingParameters")
    for name, number in (("max_batch_size", 1), ("batch_timeout_micros", 2),
                         ("max_enqueued_batches", 3), ("num_batch_threads", 4)):
        f = _field(params, name, number, _F.TYPE_MESSAGE)
        f.type_name = ".google.protobuf.Int64Value"
    f = _field(params, "thread_pool_name", 5, _F.TYPE_MESSAGE)
    f.type_name = ".google.protobuf.StringValue"
    _field(params, "allowed_batch_sizes", 6, _F.TYPE_INT64, _F.LABEL_REPEATED, packed=True)
    _field(params, "pad_variable_length_inputs", 7, _F.TYPE_BOOL)
    return file


add_files(_wrappers_file, _storage_path_file, _model_server_config_file, _batching_file)

ModelServerConfig = message_class("tensorflow.serving.ModelServerConfig")
BatchingParametersProto = message_class("tensorflow.serving.BatchingParameters")


@dataclass
class ModelSpec:
    """One served model: where its numbered versions live and which of them to serve."""
    name: str
    base_path: str
    policy: tuple = ("latest", 1)  # ("latest", n) | ("all",) | ("specific", (v, ...))
    labels: dict = field(default_factory=dict)
    platform: str = "tensorflow"


@dataclass
class BatchingParameters:
    """TF Serving's batching options, with its defaults."""
    max_batch_size: int = 32
    batch_timeout_micros: int = 1000
    max_enqueued_batches: int = 100
    num_batch_threads: int = 1
    allowed_batch_sizes: tuple = ()
    pad_variable_length_inputs: bool = False


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message says which and why."""


def _parse(text, message, what):
    try:
        return text_format.Parse(text, message)
    except text_format.ParseError as e:
        raise ConfigError(f"{what}: {e}") from None


def parse_model_config(text, what="model config"):
    """The ModelSpecs of a ModelServerConfig in text format."""
    proto = _parse(text, ModelServerConfig(), what)
    specs = []
    for c in proto.model_config_list.config:
        if not c.name or not c.base_path:
            raise ConfigError(f"{what}: every config needs a name and a base_path")
        if c.model_platform not in ("", "tensorflow"):
            raise ConfigError(f"{what}: model {c.name!r} has model_platform "
                              f"{c.model_platform!r}; only 'tensorflow' (SavedModel) is served")
        choice = c.model_version_policy.WhichOneof("policy_choice")
        if choice == "all":
            policy = ("all",)
        elif choice == "specific":
            if not c.model_version_policy.specific.versions:
                raise ConfigError(f"{what}: model {c.name!r}: a specific policy needs versions")
            policy = ("specific", tuple(sorted(c.model_version_policy.specific.versions)))
        else:
            policy = ("latest", max(1, c.model_version_policy.latest.num_versions))
        specs.append(ModelSpec(c.name, c.base_path, policy, dict(c.version_labels),
                               c.model_platform or "tensorflow"))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"{what}: model names must be unique, got {names}")
    return specs


def parse_batching_parameters(text, what="batching parameters"):
    proto = _parse(text, BatchingParametersProto(), what)
    params = BatchingParameters()
    for name in ("max_batch_size", "batch_timeout_micros", "max_enqueued_batches",
                 "num_batch_threads"):
        if proto.HasField(name):
            setattr(params, name, int(getattr(proto, name).value))
    params.allowed_batch_sizes = tuple(proto.allowed_batch_sizes)
    params.pad_variable_length_inputs = proto.pad_variable_length_inputs
    if params.max_batch_size < 1 or params.num_batch_threads < 1 \
            or params.max_enqueued_batches < 1 or params.batch_timeout_micros < 0:
        raise ConfigError(f"{what}: max_batch_size, num_batch_threads and max_enqueued_batches "
                          f"must be >= 1 and batch_timeout_micros >= 0")
    if params.allowed_batch_sizes and (
            list(params.allowed_batch_sizes) != sorted(params.allowed_batch_sizes)
            or params.allowed_batch_sizes[-1] != params.max_batch_size):
        raise ConfigError(f"{what}: allowed_batch_sizes must increase and end with "
                          f"max_batch_size ({params.max_batch_size})")
    return params
