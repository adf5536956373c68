"""Parsing ops: `tf.io.parse_example`, `parse_single_example` with `FixedLenFeature`,
`VarLenFeature` and `FixedLenSequenceFeature`; `decode_raw`; `serialize_tensor` and
`parse_tensor` (TensorProto); `read_file`/`write_file`.

Parsing is one registered op (`ParseExampleV2`): its input is the serialized batch (a
scalar or a vector of tf.string), its attribute the feature configuration, its outputs one
dense tensor per fixed-length feature and (indices, values, dense_shape) per sparse one;
the public functions pack those into a dict of Tensors and `tf.sparse.SparseTensor`s.
The Example messages come from the optional `protobuf` package (tensorlite.protos.example).

Example:
    >>> features = {"x": tf.io.FixedLenFeature([2], tf.float32),
    ...             "tags": tf.io.VarLenFeature(tf.string)}
    >>> parsed = tf.io.parse_single_example(record, features)
    >>> parsed["x"].shape, type(parsed["tags"]).__name__
    (TensorShape([2]), 'SparseTensor')
"""
import collections
import os

import numpy as np

from tensorlite.framework import dtypes, errors, size_limits
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.tensor import Tensor
from tensorlite.framework.tensor_shape import TensorShape

__all__ = ["FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "RaggedFeature",
           "parse_example", "parse_single_example", "decode_raw", "serialize_tensor", "parse_tensor",
           "read_file", "write_file"]


# -- feature configurations (TF's namedtuples) ---------------------------------------------------
class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """`tf.io.FixedLenFeature(shape, dtype, default_value=None)`: a dense tensor of `shape`."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """`tf.io.VarLenFeature(dtype)`: all values of the feature, as a SparseTensor."""


class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """`tf.io.RaggedFeature(dtype, value_key=None)`: all values of the feature, as a ragged
    row per Example (`parse_example`) or a vector (`parse_single_example`). `value_key`
    names the Example's feature when it differs from the result's key. Partitions (extra
    ragged dimensions from other features) are not supported yet."""

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=dtypes.int32,
                validate=False):
        if partitions:
            raise NotImplementedError("tf.io.RaggedFeature(partitions=...): only the values "
                                      "(one ragged row per Example) are parsed yet")
        return super().__new__(cls, dtypes.as_dtype(dtype), value_key, tuple(partitions),
                               dtypes.as_dtype(row_splits_dtype), validate)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """`tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)`:
    a variable number of items of `shape`, stacked (and padded across a batch)."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


# The list kind of tf.train.Feature that holds each parseable dtype, and TF's type names.
_KIND = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_TF_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}

# One entry of the op's `config` attribute (hashable: defaults are flat tuples).
_Config = collections.namedtuple("_Config", ["key", "kind", "dtype", "shape", "default", "size"])


def _dtype_of(key, spec):
    dt = dtypes.as_dtype(spec.dtype)
    if dt not in _KIND:
        raise ValueError(f"parse_example: feature {key!r} has dtype {dt.name}, but Example "
                         f"features hold only tf.float32, tf.int64 or tf.string; parse as one "
                         f"of those and tf.cast the result")
    return dt


def _shape_of(key, spec):
    shape = TensorShape(spec.shape)
    if shape.rank is None or any(d is None for d in shape.as_list()):
        raise ValueError(f"All dimensions of shape for feature {key} need to be known but "
                         f"received {shape}")
    return tuple(shape.as_list())


def _default_of(key, spec, dt, shape, exact):
    if spec.default_value is None:
        return None
    value = spec.default_value
    if isinstance(value, Tensor):
        value = value.numpy()
    arr = np.array(value, dtype=object if dt.is_string else dt.as_numpy_dtype)
    if dt.is_string:
        arr = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s,
                           otypes=[object])(arr) if arr.size else arr
    if exact:
        if arr.size != _size(shape):
            raise ValueError(f"parse_example: default_value of feature {key!r} has "
                             f"{arr.size} values but the feature's shape {list(shape)} needs "
                             f"{_size(shape)}")
    elif arr.size != 1:
        raise ValueError(f"parse_example: default_value of FixedLenSequenceFeature {key!r} "
                         f"must be a scalar (it pads the sequence)")
    return tuple(arr.reshape(-1).tolist())


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


_CONFIGS = {}  # id(features dict) -> (its items when seen, config): parsing in map() reuses it


def _config(features):
    """The feature dict -> a tuple of _Config (cached per dict while its items stay equal)."""
    hit = _CONFIGS.get(id(features))
    try:
        if hit is not None and isinstance(features, dict) and \
                hit[0] == list(features.items()):
            return hit[1]
    except (TypeError, ValueError, errors.OpError):  # defaults that are tensors compare oddly
        pass
    config = _make_config(features)
    if len(_CONFIGS) > 256:
        _CONFIGS.clear()
    _CONFIGS[id(features)] = (list(features.items()), config)
    return config


def _make_config(features):
    """The feature dict -> a tuple of _Config, validated as TensorFlow validates it."""
    if not features:
        raise ValueError(f"Missing: features was {features!r}.")
    if not isinstance(features, dict):
        raise TypeError(f"parse_example: `features` must be a dict of feature configurations, "
                        f"got {type(features).__name__}")
    out = []
    for key, spec in features.items():
        if not isinstance(key, str):
            raise TypeError(f"parse_example: feature keys must be strings, got {key!r}")
        if isinstance(spec, VarLenFeature):
            out.append(_Config(key, "sparse", _dtype_of(key, spec), (), None, 1))
        elif isinstance(spec, FixedLenFeature):
            dt, shape = _dtype_of(key, spec), _shape_of(key, spec)
            out.append(_Config(key, "dense", dt, shape, _default_of(key, spec, dt, shape, True),
                               _size(shape)))
        elif isinstance(spec, FixedLenSequenceFeature):
            if not spec.allow_missing:
                raise ValueError(f"Unsupported: FixedLenSequenceFeature {key!r} requires "
                                 f"allow_missing to be True when parsing Examples.")
            dt, shape = _dtype_of(key, spec), _shape_of(key, spec)
            out.append(_Config(key, "seq", dt, shape, _default_of(key, spec, dt, shape, False),
                               _size(shape)))
        else:
            raise TypeError(f"parse_example: feature {key!r} has unsupported configuration "
                            f"{type(spec).__name__}; use tf.io.FixedLenFeature, "
                            f"tf.io.VarLenFeature or tf.io.FixedLenSequenceFeature")
    return tuple(out)


# -- parsing one Example ---------------------------------------------------------------------
def _example_class():
    from tensorlite.protos.example import Example  # noqa: PLC0415 - optional protobuf
    return Example


def _features_of(blob, name, Example):  # noqa: N803
    from google.protobuf.message import DecodeError  # noqa: PLC0415
    try:
        return Example.FromString(blob).features.feature
    except (DecodeError, TypeError, ValueError):
        shown = repr(blob[:40]) + ("..." if len(blob) > 40 else "")
        raise errors.InvalidArgumentError(
            None, None, f"Name: {name}, Could not parse example input, value: {shown}; is "
            f"this a serialized tf.train.Example?") from None


def _np_values(values, dt):
    if dt.is_string:
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    return np.array(values, dtype=dt.as_numpy_dtype)


def _values(fmap, cfg, name, index):
    """The feature's values as a NumPy array of its configured shape (None if missing)."""
    key, want = cfg.key, _KIND[cfg.dtype]
    if key not in fmap:
        if cfg.kind == "dense" and cfg.default is None:
            raise errors.InvalidArgumentError(
                None, None, f"Name: {name}, Feature: {key} (data type: {_TF_NAME[want]}) is "
                f"required but could not be found; give the FixedLenFeature a default_value "
                f"or check the feature's name")
        return None
    feature = fmap[key]
    kind = feature.WhichOneof("kind")
    where = f"Name: {name}, Key: {key}, Index: {index}."
    if kind is not None and kind != want:
        raise errors.InvalidArgumentError(
            None, None, f"{where}  Data types don't match. Data type: {_TF_NAME[kind]} but "
            f"expected type: {_TF_NAME[want]}")
    vals = _np_values(getattr(feature, want).value if kind else (), cfg.dtype)
    size = cfg.size
    if cfg.kind == "dense":
        if vals.size != size:
            raise errors.InvalidArgumentError(
                None, None, f"{where}  Number of {_TF_NAME[want]} values != expected.  "
                f"Values size: {vals.size} but output shape: {list(cfg.shape)}")
        return vals.reshape(cfg.shape)
    if cfg.kind == "seq":
        if size == 0 or vals.size % size:
            raise errors.InvalidArgumentError(
                None, None, f"{where}  Number of {_TF_NAME[want]} values is not a "
                f"multiple of stride length. Saw {vals.size} values but output shape is: "
                f"{list(cfg.shape)}")
        return vals.reshape((vals.size // size,) + cfg.shape)
    return vals


# -- assembling a batch ------------------------------------------------------------------------
def _np_dtype(dt):
    return object if dt.is_string else dt.as_numpy_dtype


def _fill_value(cfg):
    if cfg.default is not None:
        return cfg.default[0]
    return b"" if cfg.dtype.is_string else 0


def _dense(vals, cfg, batch):
    if not batch and vals[0] is not None:
        return [vals[0]]
    out = np.empty((len(vals),) + cfg.shape, dtype=_np_dtype(cfg.dtype))
    for b, v in enumerate(vals):
        # `[b, ...]`: a scalar string slot would otherwise hold the 0-d array itself
        out[b, ...] = np.array(cfg.default, dtype=out.dtype).reshape(cfg.shape) if v is None else v
    return [out.reshape(batch + cfg.shape)]


def _seq(vals, cfg, batch):
    lengths = [0 if v is None else len(v) for v in vals]
    out = np.full((len(vals), max(lengths, default=0)) + cfg.shape, _fill_value(cfg),
                  dtype=_np_dtype(cfg.dtype))
    for b, v in enumerate(vals):
        if lengths[b]:
            out[b, :lengths[b]] = v
    return [out.reshape(batch + out.shape[1:])]


def _sparse(vals, cfg, batch):
    lengths = np.array([0 if v is None else len(v) for v in vals], dtype=np.int64)
    parts = [v for v in vals if v is not None]
    values = np.concatenate(parts) if parts else np.empty(0, dtype=_np_dtype(cfg.dtype))
    max_len = int(lengths.max(initial=0))
    position = np.arange(values.size, dtype=np.int64) - np.repeat(
        np.cumsum(lengths) - lengths, lengths)
    if batch:
        rows = np.repeat(np.arange(len(vals), dtype=np.int64), lengths)
        indices, shape = np.stack([rows, position], axis=1), [len(vals), max_len]
    else:
        indices, shape = position.reshape(-1, 1), [max_len]
    return [indices, values, np.array(shape, dtype=np.int64)]


_ASSEMBLE = {"dense": _dense, "seq": _seq, "sparse": _sparse}


def _parse_fwd(serialized, config, names):
    Example = _example_class()  # noqa: N806
    blobs = serialized.reshape(-1)
    per_key = [[] for _ in config]
    for b, blob in enumerate(blobs.tolist()):
        name = names[b] if names else "<unknown>"
        if not isinstance(blob, bytes):
            raise errors.InvalidArgumentError(None, None, f"Name: {name}, serialized must hold "
                                              f"bytes, got {type(blob).__name__}")
        fmap = _features_of(blob, name, Example)
        for k, cfg in enumerate(config):
            per_key[k].append(_values(fmap, cfg, name, b))
    outs = []
    for cfg, vals in zip(config, per_key):
        outs.extend(_ASSEMBLE[cfg.kind](vals, cfg, serialized.shape))
    return outs


def _parse_shape(serialized, config, names):
    batch = tuple(serialized.shape)
    specs = []
    for cfg in config:
        if cfg.kind == "dense":
            specs.append(Spec(batch + cfg.shape, cfg.dtype))
        elif cfg.kind == "seq":
            specs.append(Spec(batch + (None,) + cfg.shape, cfg.dtype))
        else:
            rank = len(batch) + 1
            specs += [Spec((None, rank), dtypes.int64), Spec((None,), cfg.dtype),
                      Spec((rank,), dtypes.int64)]
    return specs


def _import_parse_example(inputs, attrs):
    """TensorFlow's ParseExampleV2 node (inputs: serialized, names, sparse_keys, dense_keys,
    ragged_keys, dense_defaults...) -> its outputs in TensorFlow's order: every sparse
    feature's indices, then their values, then their shapes, then the dense values."""
    serialized, _, sparse_keys, dense_keys, ragged_keys = inputs[:5]
    if np.asarray(ragged_keys.numpy()).size:
        raise errors.UnimplementedError(None, None, "ParseExampleV2: ragged features are not "
                                        "supported by tensorlite's parse_example")
    sparse = [k.decode() for k in np.asarray(sparse_keys.numpy()).reshape(-1)]
    dense = [k.decode() for k in np.asarray(dense_keys.numpy()).reshape(-1)]
    features = {k: VarLenFeature(t) for k, t in zip(sparse, attrs.get("sparse_types") or [])}
    for key, dtype, shape, default in zip(dense, attrs.get("Tdense") or [],
                                          attrs.get("dense_shapes") or [], inputs[5:]):
        value = default.numpy()
        features[key] = FixedLenFeature(shape, dtype,
                                        default_value=value if np.size(value) else None)
    parsed = parse_example(serialized, features)
    tensors = [parsed[k] for k in sparse]
    return [t.indices for t in tensors] + [t.values for t in tensors] + \
        [t.dense_shape for t in tensors] + [parsed[k] for k in dense]


PARSE_EXAMPLE = register("ParseExampleV2", _parse_fwd, grad=NOT_DIFFERENTIABLE,
                         shape=_parse_shape, multi_output=True, unsupported="tf onnx tflite batch",
                         tf_import=_import_parse_example)



def _serialized(serialized, op_name):
    try:
        t = serialized if isinstance(serialized, Tensor) else convert_to_tensor(
            serialized, dtype=dtypes.string)
    except (TypeError, ValueError):
        raise TypeError(f"{op_name}: `serialized` must be a tf.string tensor (serialized "
                        f"tf.train.Example protos), got {type(serialized).__name__}") from None
    if not t.dtype.is_string:
        raise TypeError(f"{op_name}: `serialized` must be a tf.string tensor, got "
                        f"{t.dtype.name}")
    return t


def _names(example_names, n):
    if example_names is None:
        return None
    arr = np.asarray(example_names.numpy() if isinstance(example_names, Tensor)
                     else example_names, dtype=object).reshape(-1)
    names = tuple(x.decode() if isinstance(x, bytes) else str(x) for x in arr)
    if len(names) != n:
        raise ValueError(f"parse_example: got {len(names)} example_names for {n} examples")
    return names


def _pack(config, outs):
    from tensorlite.framework.sparse_tensor import SparseTensor  # noqa: PLC0415
    result, i = {}, 0
    for cfg in config:
        if cfg.kind == "sparse":
            result[cfg.key] = SparseTensor(outs[i], outs[i + 1], outs[i + 2])
            i += 3
        else:
            result[cfg.key] = outs[i]
            i += 1
    return result


def _without_ragged(features):
    """(features with each RaggedFeature read as a VarLenFeature of its Example key,
    {result key: (that key, the RaggedFeature)})."""
    ragged = {k: f for k, f in features.items() if isinstance(f, RaggedFeature)} \
        if isinstance(features, dict) else {}
    if not ragged:
        return features, {}
    plain = {k: f for k, f in features.items() if k not in ragged}
    read = {}
    for key, f in ragged.items():
        source = f.value_key or key
        if source in plain:
            raise ValueError(f"parse_example: feature {source!r} is requested twice (as "
                             f"{key!r} and as itself); parse it once")
        plain[source] = VarLenFeature(f.dtype)
        read[key] = (source, f)
    return plain, read


def _with_ragged(result, read, batch):
    """The VarLenFeature results of RaggedFeatures as TF gives them: ragged rows for a
    batch (`batch` Examples), the values for one Example."""
    from tensorlite.ragged import RaggedTensor  # noqa: PLC0415
    parsed = {source: result.pop(source) for source, _ in read.values()}
    for key, (source, f) in read.items():
        sp = parsed[source]
        result[key] = sp.values if batch is None else RaggedTensor.from_value_rowids(
            sp.values, sp.indices._value[:, 0].astype(f.row_splits_dtype.as_numpy_dtype),
            nrows=batch)
    return result


def parse_example(serialized, features, example_names=None, name=None):
    """`tf.io.parse_example`: a batch (vector) of serialized Examples -> a dict of batched
    Tensors (FixedLenFeature: [batch] + shape), SparseTensors (VarLenFeature: [batch, n])
    and RaggedTensors (RaggedFeature: [batch, None]).
    """
    s = _serialized(serialized, "parse_example")
    if s.shape.rank > 1:
        raise ValueError(f"parse_example: `serialized` must be a scalar or a vector of "
                         f"serialized Examples, got shape {s.shape}")
    features, ragged = _without_ragged(features)
    config = _config(features)
    names = _names(example_names, s._value.size)
    result = _pack(config, execute(PARSE_EXAMPLE, (s,), {"config": config, "names": names}))
    if not ragged:
        return result
    return _with_ragged(result, ragged, None if s.shape.rank == 0 else s._value.size)


def parse_single_example(serialized, features, example_names=None, name=None):
    """`tf.io.parse_single_example`: one serialized Example (a scalar string, e.g. a
    TFRecordDataset element inside `map`) -> a dict of Tensors and SparseTensors."""
    s = _serialized(serialized, "parse_single_example")
    if s.shape.rank != 0:
        raise ValueError(f"parse_single_example: `serialized` must be a scalar string, got "
                         f"shape {s.shape}; use tf.io.parse_example for a batch")
    features, ragged = _without_ragged(features)
    config = _config(features)
    names = _names(example_names, 1)
    result = _pack(config, execute(PARSE_EXAMPLE, (s,), {"config": config, "names": names}))
    return _with_ragged(result, ragged, None) if ragged else result


# -- decode_raw ---------------------------------------------------------------------------------
def _decode_raw_fwd(data, out_type, little_endian, fixed_length):
    dt = np.dtype(out_type).newbyteorder("<" if little_endian else ">")
    flat = data.reshape(-1).tolist()
    if fixed_length is not None:
        flat = [b[:fixed_length].ljust(fixed_length, b"\0") for b in flat]
    sizes = {len(b) for b in flat}
    if len(sizes) > 1:
        first = len(flat[0])
        k = next(i for i, b in enumerate(flat) if len(b) != first)
        raise errors.InvalidArgumentError(
            None, None, f"DecodeRaw requires input strings to all be the same size, but "
            f"element {k} has size {len(flat[k])} != {first}; pass fixed_length to pad or "
            f"truncate them")
    width = sizes.pop() if sizes else 0
    if width % dt.itemsize:
        raise errors.InvalidArgumentError(
            None, None, f"Input to DecodeRaw has length {width} that is not a multiple of "
            f"{dt.itemsize}, the size of {np.dtype(out_type).name}")
    out = np.frombuffer(b"".join(flat), dtype=dt).astype(np.dtype(out_type), copy=True)
    return out.reshape(data.shape + (width // dt.itemsize,))


DECODE_RAW = register(
    "DecodeRaw", _decode_raw_fwd, grad=NOT_DIFFERENTIABLE,
    unsupported="tf onnx tflite batch tf_import")

_RAW_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
              dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32,
              dtypes.uint64, dtypes.complex64, dtypes.complex128, dtypes.bool)


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """`tf.io.decode_raw`: reinterprets the bytes of each string as numbers; the result has
    one more (last) dimension than the input.

    >>> tf.io.decode_raw(tf.constant(b"\\x01\\x00\\x02\\x00"), tf.int16).numpy()
    array([1, 2], dtype=int16)"""
    data = _serialized(input_bytes, "decode_raw")
    dt = dtypes.as_dtype(out_type)
    if dt not in _RAW_TYPES:
        raise TypeError(f"decode_raw: out_type {dt.name} is not supported; use a numeric or "
                        f"bool dtype")
    if fixed_length is not None:
        fixed_length = int(fixed_length)
        if fixed_length < 0 or fixed_length % dt.size:
            raise invalid("DecodeRaw", f"decode_raw: fixed_length must be a non-negative "
                          f"multiple of the size of {dt.name} ({dt.size}), got {fixed_length}")
    return execute(DECODE_RAW, (data,), {"out_type": np.dtype(dt.as_numpy_dtype).str,
                                         "little_endian": bool(little_endian),
                                         "fixed_length": fixed_length})


# -- serialize_tensor / parse_tensor (TensorProto) ------------------------------------------------
_DT_NUMBER = {dtypes.float32: 1, dtypes.float64: 2, dtypes.int32: 3, dtypes.uint8: 4,
              dtypes.int16: 5, dtypes.int8: 6, dtypes.string: 7, dtypes.complex64: 8,
              dtypes.int64: 9, dtypes.bool: 10, dtypes.bfloat16: 14, dtypes.uint16: 17,
              dtypes.complex128: 18, dtypes.float16: 19, dtypes.uint32: 22, dtypes.uint64: 23}
_DT_BY_NUMBER = {v: k for k, v in _DT_NUMBER.items()}
# The repeated field that holds each dtype's values when tensor_content is not used.
_VAL_FIELD = {1: "float_val", 2: "double_val", 3: "int_val", 4: "int_val", 5: "int_val",
              6: "int_val", 7: "string_val", 8: "scomplex_val", 9: "int64_val", 10: "bool_val",
              14: "half_val", 17: "int_val", 18: "dcomplex_val", 19: "half_val",
              22: "uint32_val", 23: "uint64_val"}


def _tensor_proto_class():
    from tensorlite.protos.example import TensorProto  # noqa: PLC0415 - optional protobuf
    return TensorProto


def _serialize_fwd(x):
    dt = dtypes.as_dtype(x.dtype)
    proto = _tensor_proto_class()(dtype=_DT_NUMBER[dt])
    proto.tensor_shape.SetInParent()  # TF writes the (empty) shape of a scalar too
    for d in x.shape:
        proto.tensor_shape.dim.add(size=d)
    if dt.is_string:
        proto.string_val.extend(x.reshape(-1).tolist())
    elif x.size:
        proto.tensor_content = np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("<")).tobytes()
    return np.array(proto.SerializeToString(), dtype=object)


def _values_from_fields(proto, dt, size):
    """Values stored in the typed repeated field; fewer than `size` repeat the last one."""
    field = _VAL_FIELD[proto.dtype]
    vals = list(getattr(proto, field))
    np_dt = object if dt.is_string else dt.as_numpy_dtype
    if field in ("scomplex_val", "dcomplex_val"):
        vals = [complex(a, b) for a, b in zip(vals[0::2], vals[1::2])]
    if field == "half_val":  # float16/bfloat16 bit patterns in int32s: the low 16 bits
        arr = np.array(vals, dtype=np.int64).astype(np.uint16).view(np_dt)
    elif field == "int_val" and not dt.is_bool:  # int32s narrowed as TF's static_cast does
        arr = np.array(vals, dtype=np.int64).astype(np_dt)
    else:
        arr = np.empty(len(vals), dtype=object) if dt.is_string else np.array(vals, dtype=np_dt)
        if dt.is_string:
            arr[:] = vals
    if arr.size < size:
        fill = arr[-1] if arr.size else (b"" if dt.is_string else 0)
        arr = np.concatenate([arr, np.full(size - arr.size, fill, dtype=np_dt)])
    return arr


def _parse_tensor_fwd(serialized, out_type):
    from google.protobuf.message import DecodeError  # noqa: PLC0415
    try:
        proto = _tensor_proto_class().FromString(serialized[()])
    except (DecodeError, TypeError):
        raise errors.InvalidArgumentError(None, None, "Could not parse `serialized` as "
                                          "TensorProto; was it written by "
                                          "tf.io.serialize_tensor?") from None
    want = dtypes.as_dtype(out_type)
    dt = _DT_BY_NUMBER.get(proto.dtype)
    if dt is not want:
        got = dt.name if dt is not None else f"DataType {proto.dtype}"
        raise errors.InvalidArgumentError(None, None, f"Type mismatch between parsed tensor "
                                          f"({got}) and dtype ({want.name})")
    shape = tuple(int(d.size) for d in proto.tensor_shape.dim)
    nbytes, itemsize = _claimed_bytes(shape, dt)
    if proto.tensor_content:
        if dt.is_string:
            raise errors.InvalidArgumentError(None, None, "Could not parse `serialized` as "
                                              "TensorProto: a string tensor's values are in "
                                              "string_val, never tensor_content")
        if len(proto.tensor_content) != nbytes:
            raise errors.InvalidArgumentError(
                None, None, f"TensorProto holds {len(proto.tensor_content)} bytes of "
                            f"tensor_content for shape {list(shape)} of {dt.name} "
                            f"({nbytes} bytes)")
        np_dt = np.dtype(dt.as_numpy_dtype)
        arr = np.frombuffer(proto.tensor_content, dtype=np_dt.newbyteorder("<"))
        return arr.astype(np_dt).reshape(shape)
    # Values repeated from a typed field's last value expand a few bytes into the whole
    # tensor: capped like any decompression before anything is allocated.
    size_limits.check_inflated(nbytes, f"tensor of shape {list(shape)} ({dt.name})",
                               "parse_tensor")
    size = nbytes // itemsize
    return _values_from_fields(proto, dt, size)[:size].reshape(shape)


def _claimed_bytes(shape, dt):
    """(bytes, itemsize) of a parsed shape, in Python ints (a crafted shape cannot
    overflow); negative dimensions are refused as TF's FromProto refuses them."""
    if any(d < 0 for d in shape):
        raise errors.InvalidArgumentError(None, None, f"Could not parse `serialized` as "
                                          f"TensorProto: negative dimension in shape "
                                          f"{list(shape)}")
    itemsize = 8 if dt.is_string else np.dtype(dt.as_numpy_dtype).itemsize
    n = 1
    for d in shape:
        n *= d
    return n * itemsize, itemsize


SERIALIZE_TENSOR = register(
    "SerializeTensor", _serialize_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda x: Spec((), dtypes.string), unsupported="tf onnx tflite batch tf_import")
PARSE_TENSOR = register(
    "ParseTensor", _parse_tensor_fwd, grad=NOT_DIFFERENTIABLE,
    unsupported="tf onnx tflite batch tf_import")


def serialize_tensor(tensor, name=None):
    """`tf.io.serialize_tensor`: a tensor as a serialized TensorProto (scalar tf.string),
    byte-identical to TensorFlow's."""
    t = convert_to_tensor(tensor)
    if t.dtype not in _DT_NUMBER or (t.dtype == dtypes.bfloat16 and t.dtype._np is None):
        raise TypeError(f"serialize_tensor: dtype {t.dtype.name} cannot be serialized")
    return execute(SERIALIZE_TENSOR, (t,), None)


def parse_tensor(serialized, out_type, name=None):
    """`tf.io.parse_tensor`: the tensor of a serialized TensorProto; `out_type` must match."""
    s = _serialized(serialized, "parse_tensor")
    if s.shape.rank != 0:
        raise invalid("ParseTensor", f"parse_tensor: `serialized` must be a scalar string, "
                      f"got shape {s.shape}")
    dt = dtypes.as_dtype(out_type)
    if dt not in _DT_NUMBER:
        raise TypeError(f"parse_tensor: out_type {dt.name} is not supported")
    return execute(PARSE_TENSOR, (s,), {"out_type": dt.name})


# -- whole files ----------------------------------------------------------------------------------
def _read_file_fwd(filename):
    path = os.fsdecode(filename[()])
    try:
        with open(path, "rb") as f:
            return np.array(f.read(), dtype=object)
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    except PermissionError:
        raise errors.PermissionDeniedError(None, None, f"{path}; Permission denied") from None


def _write_file_fwd(filename, contents):
    path = os.fsdecode(filename[()])
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)  # as TF's WriteFile
        with open(path, "wb") as f:
            f.write(contents[()])
    except PermissionError:
        raise errors.PermissionDeniedError(None, None, f"{path}; Permission denied") from None
    except OSError as e:
        raise errors.FailedPreconditionError(None, None, f"{path}: {e}") from None
    return np.zeros(0, dtype=np.float32)


# "io": they touch the file system, so a graph runs them on every call and a loaded
# model may not call them (registry.EFFECTS)
READ_FILE = register("ReadFile", _read_file_fwd, grad=NOT_DIFFERENTIABLE,
                     shape=lambda f: Spec((), dtypes.string), effects="io",
                     tf=lambda attrs, specs: ("ReadFile", {"T": None}), tf_outputs="contents",
                     tf_import=lambda ins, attrs: READ_FILE(ins[0]),
                     unsupported="onnx tflite batch")
WRITE_FILE = register("WriteFile", _write_file_fwd, grad=NOT_DIFFERENTIABLE,
                      shape=lambda f, c: Spec((0,), dtypes.float32), effects="io",
                      unsupported="tf onnx tflite batch tf_import")


def _scalar_string(x, op_name, arg):
    if isinstance(x, os.PathLike):
        x = os.fspath(x)
    t = _serialized(x, op_name)
    if t.shape.rank != 0:
        raise invalid(op_name, f"{op_name}: `{arg}` must be a scalar string, got shape "
                      f"{t.shape}")
    return t


def read_file(filename, name=None):
    """`tf.io.read_file`: the whole contents of a file as a scalar tf.string."""
    return execute(READ_FILE, (_scalar_string(filename, "ReadFile", "filename"),), None)


def write_file(filename, contents, name=None):
    """`tf.io.write_file`: writes a scalar string to a file (creating its directory)."""
    execute(WRITE_FILE, (_scalar_string(filename, "WriteFile", "filename"),
                         _scalar_string(contents, "WriteFile", "contents")), None)
