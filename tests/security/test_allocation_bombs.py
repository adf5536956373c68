"""Allocation bombs (issue 29 item 5): a small file whose header claims a huge size is
refused with DataLossError (the claim exceeds the bytes present) or ResourceExhaustedError
(an expansion beyond the cap) naming the file, before anything that size is allocated.
Structural corruption of a `.tflite` file is DataLossError, never a raw IndexError.

Each load runs under tracemalloc (NumPy's buffers are traced too): its peak must stay far
below what the file claims, so a loader that allocated first and checked after fails."""
import gzip
import json
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.data.tfrecord import masked_crc32c
from tensorlite.framework import errors
from tensorlite.lite import flatbuf
from tensorlite.lite.interpreter import Interpreter

from .conftest import tree_state

_PEAK = 64 << 20  # no crafted input below may make a load allocate more than this


def refused(error, root, call, *names):
    """Runs `call`, which must raise `error` whose message names each of `names`, without
    allocating more than _PEAK bytes or changing anything under `root`."""
    before = tree_state(root)
    tracemalloc.start()
    try:
        with pytest.raises(error) as info:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < _PEAK, f"the load allocated {peak} bytes before refusing"
    for name in names:
        assert str(name) in str(info.value), (name, str(info.value))
    assert tree_state(root) == before
    return info.value


def _framed_header(length):
    head = struct.pack("<Q", length)
    return head + struct.pack("<I", masked_crc32c(head))


# -- TFRecord ---------------------------------------------------------------------------
def test_tfrecord_length_field_claiming_2_62(tmp_path, canary):
    path = tmp_path / "bomb.tfrecord"
    path.write_bytes(_framed_header(1 << 62) + b"12345678")  # 20 bytes in all
    e = refused(errors.DataLossError, tmp_path,
                lambda: list(tf.data.TFRecordDataset(str(path))), path, 1 << 62)
    assert "offset 0" in str(e)


def test_gzip_tfrecord_length_beyond_the_cap(tmp_path, canary):
    path = tmp_path / "bomb.tfrecord.gz"
    path.write_bytes(gzip.compress(_framed_header(1 << 62) + b"12345678"))
    refused(errors.ResourceExhaustedError, tmp_path,
            lambda: list(tf.data.TFRecordDataset(str(path), compression_type="GZIP")),
            path, "TENSORLITE_MAX_DECOMPRESSED_BYTES")


def test_tfrecord_iterator_refuses_too(tmp_path):
    path = tmp_path / "bomb.tfrecord"
    path.write_bytes(_framed_header(1 << 40))
    refused(errors.DataLossError, tmp_path,
            lambda: list(tf.compat.v1.io.tf_record_iterator(str(path))), path)


# -- cache and snapshot files -----------------------------------------------------------
def _element_header(length):
    return struct.pack("<4sQI", b"TLE1", length, 0)


def test_cache_file_length_claiming_2_62(tmp_path, canary):
    prefix = str(tmp_path / "c")
    ds = tf.data.Dataset.range(3).cache(prefix)
    assert [int(x) for x in ds] == [0, 1, 2]
    (tmp_path / "c.tlcache").write_bytes(_element_header(1 << 62) + b"1234")
    refused(errors.DataLossError, tmp_path, lambda: list(ds), "c.tlcache", 1 << 62)


def test_gzip_snapshot_shard_length_beyond_the_cap(tmp_path, canary):
    ds = tf.data.Dataset.range(4).snapshot(str(tmp_path / "snap"), compression="GZIP")
    assert sorted(int(x) for x in ds) == [0, 1, 2, 3]
    shards = sorted((tmp_path / "snap").glob("*/run/shard_*.tlsnap.gz"))
    assert shards
    for shard in shards:
        shard.write_bytes(gzip.compress(_element_header(1 << 62) + b"1234"))
    refused(errors.ResourceExhaustedError, tmp_path, lambda: list(ds), "shard_00000")


def test_snapshot_metadata_beyond_the_config_cap(tmp_path, monkeypatch):
    ds = tf.data.Dataset.range(2).snapshot(str(tmp_path / "snap"))
    assert sorted(int(x) for x in ds) == [0, 1]
    (meta,) = (tmp_path / "snap").glob("*/run/snapshot.metadata")
    meta.write_text(json.dumps({"pad": " " * 5000}))
    monkeypatch.setenv("TENSORLITE_MAX_CONFIG_BYTES", "4096")
    refused(errors.ResourceExhaustedError, tmp_path, lambda: list(ds), "snapshot.metadata",
            "TENSORLITE_MAX_CONFIG_BYTES")


def _element_payload(shape, body):
    """element_io.pack's bytes for one float32 array whose meta claims `shape`."""
    head = json.dumps(0).encode()
    meta = json.dumps({"dtype": "<f4", "shape": shape}).encode()
    return struct.pack("<I", len(head)) + head + struct.pack("<IQ", len(meta), len(body)) \
        + meta + body


def test_element_record_shape_larger_than_its_bytes():
    from tensorlite.data import element_io  # noqa: PLC0415
    body = np.zeros(2, np.float32).tobytes()
    assert element_io.unpack(_element_payload([2], body), "ok")[1][0].shape == (2,)
    with pytest.raises(errors.DataLossError, match="needs"):
        element_io.unpack(_element_payload([1 << 62, 4], body), "crafted record")
    with pytest.raises(errors.DataLossError, match="negative"):
        element_io.unpack(_element_payload([-2], body), "crafted record")


# -- tf.io.parse_tensor -----------------------------------------------------------------
def _tensor_proto(shape, **fields):
    from tensorlite.train.example import TensorProto  # noqa: PLC0415
    proto = TensorProto(dtype=1, **fields)  # DT_FLOAT
    for d in shape:
        proto.tensor_shape.dim.add(size=d)
    return proto


def test_parse_tensor_small_proto_claiming_24_gb(tmp_path):
    proto = _tensor_proto([80000, 80000, 1])
    proto.float_val.append(1.0)  # one value, repeated over the whole shape
    data = proto.SerializeToString()
    assert len(data) <= 60
    refused(errors.ResourceExhaustedError, tmp_path,
            lambda: tf.io.parse_tensor(data, tf.float32), "25600000000")


def test_parse_tensor_negative_dimension_is_an_error(tmp_path):
    data = _tensor_proto([0, -80000]).SerializeToString()
    refused(errors.InvalidArgumentError, tmp_path,
            lambda: tf.io.parse_tensor(data, tf.float32), "negative dimension")


def test_parse_tensor_content_shorter_than_its_shape(tmp_path):
    # 2**31 * 2**31 * 4 overflows int64 to 0: the check must use exact integers
    data = _tensor_proto([2 ** 31, 2 ** 31, 4], tensor_content=b"").SerializeToString()
    proto = _tensor_proto([2 ** 31, 2 ** 31, 4], tensor_content=b"abcd").SerializeToString()
    refused(errors.InvalidArgumentError, tmp_path,
            lambda: tf.io.parse_tensor(proto, tf.float32), "4 bytes of tensor_content")
    refused(errors.ResourceExhaustedError, tmp_path,
            lambda: tf.io.parse_tensor(data, tf.float32))


# -- .tflite ----------------------------------------------------------------------------
def _tflite(shape, data=None, op=None, codes=("ADD",)):
    op = {"opcode_index": 0, "inputs": [0, 0], "outputs": [1]} if op is None else op
    return flatbuf.encode({
        "version": 3,
        "operator_codes": [{"builtin_code": c, "version": 1} for c in codes],
        "subgraphs": [{"tensors": [
            {"shape": shape, "type": "FLOAT32", "buffer": 1 if data is not None else 0,
             "name": "a"},
            {"shape": shape, "type": "FLOAT32", "buffer": 0, "name": "b"}],
            "inputs": [0], "outputs": [1], "operators": [op]}],
        "buffers": [{}] + ([{"data": data}] if data is not None else [])})


def test_tflite_valid_model_still_runs():
    interpreter = Interpreter(model_content=_tflite([2, 3]))
    interpreter.allocate_tensors()
    interpreter.set_tensor(0, np.ones((2, 3), np.float32))
    interpreter.invoke()
    np.testing.assert_array_equal(interpreter.get_tensor(1), np.full((2, 3), 2, np.float32))


def test_tflite_activation_of_80000_by_80000(tmp_path, canary):
    path = tmp_path / "big.tflite"
    path.write_bytes(_tflite([80000, 80000]))
    interpreter = Interpreter(model_path=str(path))
    e = refused(errors.ResourceExhaustedError, tmp_path, interpreter.allocate_tensors,
                path, "[80000, 80000]", "TENSORLITE_MAX_DECOMPRESSED_BYTES")
    assert isinstance(e, ValueError)  # TF Lite's class for a model it cannot load, too


def test_tflite_constant_larger_than_its_buffer(tmp_path, canary):
    path = tmp_path / "const.tflite"
    path.write_bytes(_tflite([80000, 80000], data=np.zeros(16, np.uint8)))
    refused(errors.DataLossError, tmp_path, lambda: Interpreter(model_path=str(path)),
            path, "16 bytes")


def test_tflite_negative_dimension(tmp_path):
    refused(errors.DataLossError, tmp_path,
            lambda: Interpreter(model_content=_tflite([2, -3])), "negative dimension")


@pytest.mark.parametrize("op, codes, what", [
    ({"opcode_index": 0, "inputs": [0, 7], "outputs": [1]}, ("ADD",), "refers to tensors"),
    ({"opcode_index": 5, "inputs": [0, 0], "outputs": [1]}, ("ADD",), "opcode index 5"),
    ({"opcode_index": 0, "inputs": [0], "outputs": [1]}, ("MAX_POOL_2D",), "failed to prepare"),
    ({"opcode_index": 0, "inputs": [0], "outputs": [9]}, ("ADD",), "refers to tensors"),
])
def test_tflite_mutated_operator_is_data_loss(tmp_path, op, codes, what):
    path = tmp_path / "mutated.tflite"
    path.write_bytes(_tflite([1, 4, 4, 1], op=op, codes=codes))

    def load():
        Interpreter(model_path=str(path)).allocate_tensors()
    refused(errors.DataLossError, tmp_path, load, path, what)


def _shared_table_bomb(n):
    """A .tflite file whose `subgraphs` vector holds n references to one subgraph whose
    `tensors` vector holds n references to one tensor: about 8n bytes that decode into n*n
    tensors unless the decoder refuses shared tables beyond the file's size."""
    import flatbuffers  # noqa: PLC0415
    from tensorlite.lite import schema  # noqa: PLC0415

    def slot(table, field):
        return [f[0] for f in flatbuf._layout(table) if f[1] == field][0]

    def refs(builder, target, count):
        builder.StartVector(4, count, 4)
        for _ in range(count):
            builder.PrependUOffsetTRelative(target)
        return builder.EndVector()

    def table(builder, name, fields):
        builder.StartObject(max(f[0] for f in flatbuf._layout(name)) + 1)
        for field, value in fields.items():
            builder.PrependUOffsetTRelativeSlot(slot(name, field), value, 0)
        return builder.EndObject()

    b = flatbuffers.Builder(1024)
    tensor = flatbuf._table(b, "Tensor", {"shape": [1], "name": "t"})
    subgraph = table(b, "SubGraph", {"tensors": refs(b, tensor, n)})
    model = table(b, schema.ROOT_TYPE, {"subgraphs": refs(b, subgraph, n)})
    b.Finish(model, file_identifier=schema.FILE_IDENTIFIER.encode())
    return bytes(b.Output())


def test_tflite_shared_tables_cannot_multiply(tmp_path):
    small = flatbuf.decode(_shared_table_bomb(3))  # the construction is a valid model
    assert len(small["subgraphs"]) == 3 and len(small["subgraphs"][0]["tensors"]) == 3
    bomb = _shared_table_bomb(4000)  # 32 kB claiming 16 million tensors
    assert len(bomb) < 40000
    refused(errors.DataLossError, tmp_path, lambda: Interpreter(model_content=bomb),
            "shared more times than the file's size allows")


def test_tflite_schema_has_no_recursive_tables():
    """The decoder recurses once per nested table: bounded only while no table of the
    schema can contain itself (a crafted file cannot then nest deeper than the schema)."""
    from tensorlite.lite import schema  # noqa: PLC0415

    def children(table):
        for _, ftype, *_ in schema.TABLES[table]:
            inner = ftype[1:-1] if ftype.startswith("[") else ftype
            yield from schema.UNIONS.get(inner, [inner] if inner in schema.TABLES else [])

    def walk(table, path):
        assert table not in path, f"recursive tables: {path + [table]}"
        for child in children(table):
            walk(child, path + [table])
    walk(schema.ROOT_TYPE, [])


# -- .keras archives --------------------------------------------------------------------
def _patch_declared_size(path, member, size):
    """Rewrites a stored member's declared uncompressed size in the local header and the
    central directory (what zip bombs lie about)."""
    raw = bytearray(path.read_bytes())
    name = member.encode()
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        pos = 0
        while (pos := raw.find(sig, pos)) != -1:
            name_at = pos + (30 if sig == b"PK\x03\x04" else 46)
            if raw[name_at:name_at + len(name)] == name:
                struct.pack_into("<I", raw, pos + off, size)
            pos += 4
    path.write_bytes(bytes(raw))


def _small_archive(path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model(np.zeros((1, 3), np.float32))
    model.save(str(path))


def test_keras_config_declared_1_gb(tmp_path, canary):
    path = tmp_path / "m.keras"
    _small_archive(path)
    _patch_declared_size(path, "config.json", 1 << 30)
    assert path.stat().st_size < 1 << 20
    refused(errors.ResourceExhaustedError, tmp_path,
            lambda: tf.keras.models.load_model(str(path)), path, "config.json",
            "TENSORLITE_MAX_CONFIG_BYTES")


def test_keras_weights_declared_beyond_the_cap(tmp_path, canary):
    path = tmp_path / "m.keras"
    _small_archive(path)
    _patch_declared_size(path, "model.weights.h5", 0xFFFFFFFF)
    from tensorlite.framework import size_limits  # noqa: PLC0415
    size_limits.set_decompression_cap(1 << 20)
    try:
        refused(errors.ResourceExhaustedError, tmp_path,
                lambda: tf.keras.models.load_model(str(path)), path, "model.weights.h5")
    finally:
        size_limits.set_decompression_cap(None)


def test_keras_member_larger_than_declared(tmp_path, canary):
    """A deflated member that inflates past its declared size stops at the declaration."""
    path = tmp_path / "m.keras"
    config = json.dumps({"class_name": "Sequential", "pad": " " * 200000}).encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("config.json", config)
        z.writestr("metadata.json", "{}")
    _patch_declared_size(path, "config.json", 100)
    refused(errors.DataLossError, tmp_path,
            lambda: tf.keras.models.load_model(str(path)), path, "config.json")


def test_legacy_archive_npz_header_claiming_25_gb(tmp_path, canary):
    import io  # noqa: PLC0415
    npz = io.BytesIO()
    np.savez(npz, np.zeros(4, np.float32))
    npz2 = io.BytesIO()  # the same arrays, the .npy header now claiming 80000 x 80000
    with zipfile.ZipFile(io.BytesIO(npz.getvalue())) as src, \
            zipfile.ZipFile(npz2, "w") as dst:
        for name in src.namelist():
            raw = src.read(name)
            crafted = raw.replace(b"'shape': (4,), ", b"'shape': (80000, 80000), ")
            assert crafted != raw
            dst.writestr(name, crafted)
    path = tmp_path / "old.keras"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.json", json.dumps({"format": "tensorlite-keras-1", "model": {
            "class_name": "Sequential", "config": None}}))
        z.writestr("weights.npz", npz2.getvalue())
    refused(errors.DataLossError, tmp_path,
            lambda: tf.keras.models.load_model(str(path)), path, "[80000, 80000]")


# -- tensor bundle (checkpoints) --------------------------------------------------------
def _rewrite_entry(prefix, name, change):
    from tensorlite.checkpoint.protos import BundleEntryProto  # noqa: PLC0415
    from tensorlite.checkpoint.table import read_table, write_table  # noqa: PLC0415
    index = f"{prefix}.index"
    items = []
    with open(index, "rb") as f:
        for key, value in read_table(f.read(), index):
            if key == name.encode():
                entry = BundleEntryProto.FromString(value)
                change(entry)
                value = entry.SerializeToString()
            items.append((key, value))
    with open(index, "wb") as f:
        f.write(write_table(items))


def _bundle(tmp_path):
    from tensorlite.checkpoint.bundle import write_bundle  # noqa: PLC0415
    prefix = str(tmp_path / "ckpt")
    write_bundle(prefix, [("w", np.ones(3, np.float32))])
    return prefix


def test_bundle_entry_shape_claiming_25_gb(tmp_path, canary):
    prefix = _bundle(tmp_path)

    def bigger(entry):
        del entry.shape.dim[:]
        entry.shape.dim.add(size=80000)
        entry.shape.dim.add(size=80000)
    _rewrite_entry(prefix, "w", bigger)
    refused(errors.DataLossError, tmp_path,
            lambda: tf.train.load_checkpoint(prefix).get_tensor("w"), "ckpt", "80000")


def test_bundle_entry_negative_offset(tmp_path):
    prefix = _bundle(tmp_path)

    def back(entry):
        entry.offset = -8
    _rewrite_entry(prefix, "w", back)
    refused(errors.DataLossError, tmp_path,
            lambda: tf.train.load_checkpoint(prefix).get_tensor("w"), "offset -8")
