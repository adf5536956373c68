"""A bounded fuzz harness over the binary readers (issue 29 item 5): TFRecord, cache and
snapshot records, tf.io.parse_tensor, the tensor bundle, `.tflite` and `.keras`.

Each target starts from a small valid file tensorlite writes and feeds hypothesis-driven
mutations of it (byte flips, overwrites, truncations, insertions, deletions, and length
fields set to boundary values with their checksums fixed, so the claim reaches the size
checks) to the reader. Only tensorlite's errors (errors.OpError) may escape, plus
ValueError/TypeError where TensorFlow raises those (named per target). Each target has a
fixed budget of examples (derandomized, so CI runs the same inputs) and prints how many
inputs it tried.

Allocations are guarded three ways while fuzzing: the decompression cap is 1 MiB, the
address space is limited to what the process had plus 1 GiB (so a runaway allocation is a
MemoryError, a failure here, instead of an out-of-memory kill), and the traced peak
(tracemalloc, which NumPy reports to) must stay below 64 MiB.
"""
import contextlib
import copy
import gzip
import io
import json
import os
import re
import resource
import struct
import tempfile
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorlite as tf
from tensorlite.framework import errors, size_limits

_CAP = 1 << 20
_PEAK = 64 << 20
_BOUNDARY = [0, 1, 7, 8, 255, 256, 1 << 20, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32,
             1 << 62, (1 << 63) - 1, (1 << 64) - 1]


def _settings(n):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


# -- mutations --------------------------------------------------------------------------
_EDIT = st.tuples(st.sampled_from(["flip", "set", "truncate", "insert", "delete"]),
                  st.integers(0, 1 << 16), st.binary(min_size=1, max_size=8))


def mutate(data, edits):
    """`data` with each (kind, position, bytes) edit applied; positions wrap around."""
    out = bytearray(data)
    for kind, pos, blob in edits:
        pos = pos % (len(out) + 1)
        if kind == "flip" and pos < len(out):
            out[pos] ^= blob[0] or 1
        elif kind == "set":
            out[pos:pos + len(blob)] = blob
        elif kind == "truncate":
            del out[pos:]
        elif kind == "insert":
            out[pos:pos] = blob
        elif kind == "delete":
            del out[pos:pos + len(blob)]
    return bytes(out)


@contextlib.contextmanager
def guarded_allocations():
    """The cap at 1 MiB, the address space at its current size plus 1 GiB, and allocations
    traced (each input's peak is checked by Tally.run)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        vsize = int(f.read().split()[0]) * resource.getpagesize()
    limit = vsize + (1 << 30)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    size_limits.set_decompression_cap(_CAP)
    tracemalloc.start()
    try:
        yield  # Tally.run checks each input's traced peak
    finally:
        tracemalloc.stop()
        size_limits.set_decompression_cap(None)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


class Tally:
    """Counts the inputs tried and the error classes they ended in; checks each escape."""

    def __init__(self, name, allowed=(), allowed_message=None):
        self.name, self.allowed, self.allowed_message = name, allowed, allowed_message
        self.tried, self.outcomes = 0, {}

    def run(self, call):
        self.tried += 1
        # each input's own allocations: the peak above what was live before it
        tracing = tracemalloc.is_tracing()
        if tracing:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
        try:
            call()
            kind = "loaded"
        except errors.OpError as e:
            if "failed on inputs (" in str(e):  # the dispatcher wrapping a raw exception
                raise AssertionError(f"{self.name}: a raw exception inside the op: {e}") \
                    from e
            kind = type(e).__name__
        except self.allowed as e:
            if self.allowed_message and not re.search(self.allowed_message, str(e)):
                raise AssertionError(f"{self.name}: a raw {type(e).__name__} escaped: "
                                     f"{e}") from e
            kind = type(e).__name__
        except Exception as e:  # noqa: BLE001 - a raw exception is what the fuzzer hunts
            raise AssertionError(f"{self.name}: a raw {type(e).__name__} escaped: {e!r}") \
                from e
        finally:
            if tracing:
                grew = tracemalloc.get_traced_memory()[1] - before
                assert grew < _PEAK, (f"{self.name}: input {self.tried} made the reader "
                                      f"allocate {grew} bytes")
        self.outcomes[kind] = self.outcomes.get(kind, 0) + 1

    def report(self, capsys):
        with capsys.disabled():
            print(f"\nfuzz {self.name}: {self.tried} inputs tried; outcomes {self.outcomes}")
        assert self.tried > 0
        assert len(self.outcomes) > 1, "every input ended the same way: mutations too weak"


@pytest.fixture
def workdir(canary):
    """A directory for the fuzzed files: nothing but those files may appear in it."""
    with tempfile.TemporaryDirectory(dir=canary.parent) as d:
        yield d
        assert not canary.exists()
        # beside the fuzzed files' own directory nothing was created (or removed)
        assert os.listdir(canary.parent) == [os.path.basename(d)]


def _only(directory, names):
    assert set(os.listdir(directory)) <= set(names), os.listdir(directory)


# -- TFRecord -----------------------------------------------------------------------------
def _tfrecord_bytes(directory):
    path = os.path.join(directory, "valid.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for record in (b"first", b"", b"x" * 40):
            w.write(record)
    with open(path, "rb") as f:
        data = f.read()
    os.remove(path)
    return data


def _set_length(data, value):
    """The first record's length field set to `value`, its header CRC fixed."""
    from tensorlite.data.tfrecord import masked_crc32c  # noqa: PLC0415
    head = struct.pack("<Q", value)
    return head + struct.pack("<I", masked_crc32c(head)) + data[12:]


def test_fuzz_tfrecord(workdir, capsys):
    valid = _tfrecord_bytes(workdir)
    path = os.path.join(workdir, "f.tfrecord")
    tally = Tally("TFRecord")

    def read(compression):
        list(tf.compat.v1.io.tf_record_iterator(path, compression))

    @_settings(120)
    @given(st.lists(_EDIT, max_size=4), st.none() | st.sampled_from(_BOUNDARY),
           st.sampled_from([None, "GZIP", "GZIP-raw"]))
    def one(edits, length, compression):
        data = mutate(valid if length is None else _set_length(valid, length), edits)
        if compression == "GZIP":
            data = gzip.compress(data)
        elif compression == "GZIP-raw":  # the compressed stream itself is damaged
            data = mutate(gzip.compress(valid), edits)
        with open(path, "wb") as f:
            f.write(data)
        tally.run(lambda: read("GZIP" if compression else None))

    with guarded_allocations():
        one()
    tally.report(capsys)
    _only(workdir, ["f.tfrecord"])


# -- cache and snapshot records -------------------------------------------------------------
def _element_records():
    from tensorlite.data import element_io  # noqa: PLC0415
    elements = [{"a": tf.constant([1.5, 2.5]), "b": (tf.constant(b"xy"), tf.constant(3))},
                {"a": tf.constant([0.0, 1.0]), "b": (tf.constant(b""), tf.constant(-1))}]
    return b"".join(element_io.encode(e) for e in elements)


def _reframe(records, edits):
    """The first record with its payload mutated and its length and CRC fixed, so the
    mutation reaches the payload's parser."""
    _, length, _ = struct.unpack_from("<4sQI", records, 0)
    payload = mutate(records[16:16 + length], edits)
    return struct.pack("<4sQI", b"TLE1", len(payload), zlib.crc32(payload)) + payload


def test_fuzz_cache_and_snapshot_records(workdir, capsys):
    from tensorlite.data import element_io  # noqa: PLC0415
    valid = _element_records()
    path = os.path.join(workdir, "c.tlcache")
    tally = Tally("cache/snapshot records")

    def read(gz):
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
            list(element_io.read_records(f, path))

    @_settings(150)
    @given(st.lists(_EDIT, max_size=4), st.sampled_from(["raw", "payload", "length"]),
           st.sampled_from(_BOUNDARY), st.booleans())
    def one(edits, where, length, gz):
        if where == "raw":
            data = mutate(valid, edits)
        elif where == "payload":
            data = _reframe(valid, edits)
        else:
            data = valid[:4] + struct.pack("<Q", length) + valid[12:]
        with open(path, "wb") as f:
            f.write(gzip.compress(data) if gz else data)
        tally.run(lambda: read(gz))

    with guarded_allocations():
        one()
    tally.report(capsys)
    _only(workdir, ["c.tlcache"])


# -- tf.io.parse_tensor ---------------------------------------------------------------------
_PROTO = st.fixed_dictionaries({
    "dtype": st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 17, 18, 19, 22, 23, 99]),
    "dims": st.lists(st.sampled_from(
        [-1, 0, 1, 2, 3, 80000, 1 << 31, 1 << 62]), max_size=4),
    "content": st.none() | st.binary(max_size=24),
    "field": st.sampled_from(["float_val", "double_val", "int_val", "int64_val", "bool_val",
                              "string_val", "half_val", "scomplex_val", "dcomplex_val",
                              "uint32_val", "uint64_val"]),
    "count": st.integers(0, 5)})
_FIELD_VALUE = {"float_val": 1.5, "double_val": -2.5, "int_val": 70000, "int64_val": -3,
                "bool_val": True, "string_val": b"ab", "half_val": 70000,
                "scomplex_val": 1.0, "dcomplex_val": 2.0, "uint32_val": 7, "uint64_val": 9}


def _crafted_proto(fields):
    """A TensorProto built field by field: a well-formed message holding wrong values."""
    from tensorlite.train.example import TensorProto  # noqa: PLC0415
    proto = TensorProto(dtype=fields["dtype"])
    for d in fields["dims"]:
        proto.tensor_shape.dim.add(size=d)
    if fields["content"] is not None:
        proto.tensor_content = fields["content"]
    from tensorlite.ops.parsing_ops import _VAL_FIELD  # noqa: PLC0415
    field = _VAL_FIELD.get(fields["dtype"], fields["field"]) if fields["count"] % 2 else \
        fields["field"]  # mostly the dtype's own field, sometimes another
    getattr(proto, field).extend([_FIELD_VALUE[field]] * fields["count"])
    return proto.SerializeToString()


def test_fuzz_parse_tensor(capsys):
    values = [tf.constant([[1.0, 2.0]]), tf.constant([b"ab", b"c"]), tf.constant(7)]
    valid = [(tf.io.serialize_tensor(v).numpy(), v.dtype) for v in values]
    dtypes = [tf.float32, tf.float64, tf.int32, tf.uint8, tf.int64, tf.string, tf.bool,
              tf.float16, tf.complex64, tf.uint32]
    tally = Tally("parse_tensor")

    @_settings(200)
    @given(st.sampled_from(valid), st.lists(_EDIT, max_size=4), st.booleans(), _PROTO,
           st.sampled_from(dtypes))
    def one(source, edits, structured, fields, dtype):
        data, out_type = source
        if structured:  # mostly the proto's own dtype, so parsing goes past the check
            from tensorlite.ops.parsing_ops import _DT_BY_NUMBER  # noqa: PLC0415
            data = _crafted_proto(fields)
            out_type = _DT_BY_NUMBER.get(fields["dtype"], dtype) if fields["count"] % 4 \
                else dtype
        else:
            data = mutate(data, edits)
        tally.run(lambda: tf.io.parse_tensor(data, out_type))

    with guarded_allocations():
        one()
    tally.report(capsys)


# -- tensor bundle ---------------------------------------------------------------------------
def _bundle_files(prefix):
    from tensorlite.checkpoint.bundle import write_bundle  # noqa: PLC0415
    write_bundle(prefix, [("f", np.arange(6, dtype=np.float32).reshape(2, 3)),
                          ("i", np.array([1, -2], np.int64)),
                          ("s", np.array([b"ab", b"", b"xyz"], dtype=object))])
    out = {}
    for suffix in (".index", ".data-00000-of-00001"):
        with open(prefix + suffix, "rb") as f:
            out[suffix] = f.read()
    return out


_ENTRY = st.fixed_dictionaries({
    "dtype": st.sampled_from([0, 1, 2, 3, 7, 9, 10, 14, 20, 99]),
    "dims": st.lists(st.sampled_from([-1, 0, 1, 2, 3, 80000, 1 << 40]), max_size=3),
    "offset": st.sampled_from([-8, 0, 4, 24, 1 << 40]),
    "size": st.sampled_from([-1, 0, 8, 12, 24, 1 << 40]),
    "shard_id": st.sampled_from([0, 1, -1])})


def _with_entry(index, name, fields):
    """The index with entry `name` rewritten from `fields` (a valid table again, so the
    claim reaches the reader's checks)."""
    from tensorlite.checkpoint.protos import BundleEntryProto  # noqa: PLC0415
    from tensorlite.checkpoint.table import read_table, write_table  # noqa: PLC0415
    items = []
    for key, value in read_table(index, "index"):
        if key == name:
            entry = BundleEntryProto.FromString(value)
            entry.dtype, entry.offset = fields["dtype"], fields["offset"]
            entry.size, entry.shard_id = fields["size"], fields["shard_id"]
            del entry.shape.dim[:]
            for d in fields["dims"]:
                entry.shape.dim.add(size=d)
            value = entry.SerializeToString()
        items.append((key, value))
    return write_table(items)


def test_fuzz_tensor_bundle(workdir, capsys):
    from tensorlite.checkpoint.reader import CheckpointReader  # noqa: PLC0415
    prefix = os.path.join(workdir, "ckpt")
    valid = _bundle_files(prefix)
    tally = Tally("tensor bundle")

    def read():
        reader = CheckpointReader(prefix)
        reader.get_variable_to_shape_map()
        for key in sorted(reader.get_variable_to_shape_map()):
            reader.get_tensor(key)

    @_settings(150)
    @given(st.sampled_from([".index", ".data-00000-of-00001", "entry"]),
           st.lists(_EDIT, max_size=4), st.sampled_from([b"f", b"i", b"s"]), _ENTRY)
    def one(target, edits, name, fields):
        files = dict(valid)
        if target == "entry":
            files[".index"] = _with_entry(valid[".index"], name, fields)
        else:
            files[target] = mutate(valid[target], edits)
        for suffix, data in files.items():
            with open(prefix + suffix, "wb") as f:
                f.write(data)
        tally.run(read)

    with guarded_allocations():
        one()
    tally.report(capsys)
    _only(workdir, ["ckpt.index", "ckpt.data-00000-of-00001"])


# -- .tflite -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tflite_model():
    tf.random.set_seed(1)
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(2, 3, activation="relu", input_shape=(6, 6, 1)),
        tf.keras.layers.MaxPooling2D(2), tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(3, activation="softmax")])
    return tf.lite.TFLiteConverter.from_keras_model(model).convert()


def _run_tflite(data):
    from tensorlite.lite.interpreter import Interpreter  # noqa: PLC0415
    interpreter = Interpreter(model_content=data)
    interpreter.allocate_tensors()
    for detail in interpreter.get_input_details():
        interpreter.set_tensor(detail["index"], np.zeros(detail["shape"], detail["dtype"]))
    interpreter.invoke()
    for detail in interpreter.get_output_details():
        interpreter.get_tensor(detail["index"])


_INTS = st.sampled_from([-2, -1, 0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 12, 99, 80000, 1 << 20,
                         (1 << 31) - 1])


def _edit_model(model, kind, k, j, value, dims):
    """A copy of a decoded Model with one field of operator/tensor `k` set (to `value`, or
    the shape to `dims`): a well-formed file whose content is wrong, which reaches the
    interpreter's checks and kernels past the FlatBuffer decoder."""
    model = copy.deepcopy(model)
    graph = model["subgraphs"][0]
    op = graph["operators"][k % len(graph["operators"])]
    tensor = graph["tensors"][k % len(graph["tensors"])]
    if kind in ("inputs", "outputs"):
        indices = list(op[kind]) or [0]
        indices[j % len(indices)] = value
        op[kind] = np.array(indices, np.int32)
    elif kind == "opcode_index":
        op["opcode_index"] = value
    elif kind == "option" and op["builtin_options"] is not None:
        name, options = op["builtin_options"]
        keys = sorted(options)
        options = dict(options, **{keys[j % len(keys)]: value}) if keys else options
        op["builtin_options"] = (name, options)
    elif kind == "shape":
        tensor["shape"] = np.array(dims, np.int32)
    elif kind in ("buffer", "type"):
        tensor[kind] = value
    elif kind == "buffer data":
        buffer = model["buffers"][k % len(model["buffers"])]
        if buffer.get("data") is not None:
            buffer["data"] = buffer["data"][:value % (len(buffer["data"]) + 1)]
    elif kind == "builtin_code":
        code = model["operator_codes"][k % len(model["operator_codes"])]
        code["builtin_code"] = code["deprecated_builtin_code"] = value % 128
    elif kind == "graph io":
        graph["inputs" if j % 2 else "outputs"] = np.array([value], np.int32)
    return model


def test_fuzz_tflite(tflite_model, capsys):
    from tensorlite.lite import flatbuf  # noqa: PLC0415
    # TF Lite raises ValueError for a model with an op or type it has no kernel for;
    # tensorlite's kernels raise NotImplementedError naming a case they do not cover
    tally = Tally(".tflite", allowed=(ValueError, NotImplementedError),
                  allowed_message=r"Didn't find op|unresolved custom op|does not support|"
                                  r"not implemented in tensorlite")
    _run_tflite(tflite_model)  # the valid model runs
    decoded = flatbuf.decode(tflite_model)

    @_settings(220)
    @given(st.booleans(), st.lists(_EDIT, min_size=1, max_size=4),
           st.sampled_from(["inputs", "outputs", "opcode_index", "option", "shape", "buffer",
                            "type", "buffer data", "builtin_code", "graph io"]),
           st.integers(0, 20), st.integers(0, 3), _INTS, st.lists(_INTS, max_size=4))
    def one(raw, edits, kind, k, j, value, dims):
        if raw:
            data = mutate(tflite_model, edits)
        else:
            try:
                data = flatbuf.encode(_edit_model(decoded, kind, k, j, value, dims))
            except (ValueError, TypeError, OverflowError, struct.error):
                return  # a value the field cannot hold: no file to read
        tally.run(lambda: _run_tflite(data))

    with guarded_allocations():
        one()
    tally.report(capsys)


# -- .keras -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def keras_members(tmp_path_factory):
    path = tmp_path_factory.mktemp("keras") / "m.keras"
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model(np.zeros((1, 3), np.float32))
    model.save(str(path))
    with zipfile.ZipFile(path) as z:
        return path.read_bytes(), {n: z.read(n) for n in z.namelist()}


def _zip(members, compression):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


# Integers stay small: a config may legitimately ask for a big layer, whose variables are
# built before any weight is read (see the report on issue 29: not capped yet).
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2, 64) |
                     st.floats(allow_nan=True) | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=3) |
                     st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def _json_edit(obj, steps, value):
    """`obj` with the node reached by `steps` (each an index into the keys or items
    there) replaced by `value`: a well-formed config holding a wrong value."""
    if not steps or not isinstance(obj, (dict, list)) or not obj:
        return value
    keys = list(obj) if isinstance(obj, dict) else list(range(len(obj)))
    key = keys[steps[0] % len(keys)]
    out = dict(obj) if isinstance(obj, dict) else list(obj)
    out[key] = _json_edit(obj[key], steps[1:], value)
    return out


def test_fuzz_keras_archive(workdir, keras_members, capsys):
    valid, members = keras_members
    config = json.loads(members["config.json"])
    path = os.path.join(workdir, "m.keras")
    # Keras raises ValueError/TypeError for a config naming unknown or mistyped settings
    tally = Tally(".keras", allowed=(ValueError, TypeError))

    @_settings(60)
    @given(st.sampled_from(["zip", "config.json", "config value", "model.weights.h5"]),
           st.lists(_EDIT, min_size=1, max_size=4),
           st.lists(st.integers(0, 50), max_size=8), _JSON,
           st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    def one(target, edits, steps, value, compression):
        if target == "zip":
            data = mutate(valid, edits)
        elif target == "config value":
            edited = json.dumps(_json_edit(config, steps, value)).encode()
            data = _zip(dict(members, **{"config.json": edited}), compression)
        else:
            data = _zip(dict(members, **{target: mutate(members[target], edits)}),
                        compression)
        with open(path, "wb") as f:
            f.write(data)
        tally.run(lambda: tf.keras.models.load_model(path))

    with guarded_allocations():
        one()
    tally.report(capsys)
    _only(workdir, ["m.keras"])


def test_fuzz_npz_weights(capsys):
    """The `.npz` weights of earlier tensorlite archives, read without numpy.load."""
    from tensorlite.keras.saving.keras_archive import read_npz  # noqa: PLC0415
    buf = io.BytesIO()
    np.savez(buf, np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 2], np.int64))
    valid = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(valid)) as z:
        members = {n: z.read(n) for n in z.namelist()}
    tally = Tally(".npz weights")

    @_settings(120)
    @given(st.sampled_from(["zip", "arr_0.npy", "arr_1.npy"]),
           st.lists(_EDIT, min_size=1, max_size=4))
    def one(target, edits):
        if target == "zip":
            data = mutate(valid, edits)
        else:
            data = _zip(dict(members, **{target: mutate(members[target], edits)}),
                        zipfile.ZIP_STORED)
        tally.run(lambda: read_npz(data, "old.keras"))

    with guarded_allocations():
        one()
    tally.report(capsys)


def test_allocation_guard_fails_a_runaway_reader():
    """The guard itself can fail: an allocation past the address-space limit is a
    MemoryError inside it, a large traced one fails the input that made it."""
    refused = []
    with contextlib.suppress(AssertionError):  # the traced peak may count the attempt too
        with guarded_allocations():
            try:
                np.ones(3 << 30, np.uint8)
            except MemoryError:
                refused.append(True)
    assert refused, "a 3 GiB allocation got past the address-space limit"
    with pytest.raises(AssertionError, match="allocate"):
        with guarded_allocations():
            Tally("guard").run(lambda: np.ones(_PEAK + (1 << 20), np.uint8))


def test_mutate_applies_each_kind():
    assert mutate(b"abcd", [("flip", 0, b"\x01")]) == b"`bcd"
    assert mutate(b"abcd", [("set", 1, b"XY")]) == b"aXYd"
    assert mutate(b"abcd", [("truncate", 2, b"?")]) == b"ab"
    assert mutate(b"abcd", [("insert", 4, b"Z")]) == b"abcdZ"
    assert mutate(b"abcd", [("delete", 0, b"??")]) == b"cd"
    assert json.loads(mutate(b'{"a": 1}', [])) == {"a": 1}
