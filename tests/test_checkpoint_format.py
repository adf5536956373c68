"""TensorFlow's checkpoint format, tensorlite's side: the table, the bundle's tensors of
every dtype, the object graph's keys, CheckpointManager, and crafted or damaged files
(each a clear DataLossError, never a NumPy or protobuf traceback). What TensorFlow itself
reads and writes is tested in tests/interop/test_checkpoint_interop.py."""
import os

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.checkpoint.bundle import BundleReader, write_bundle
from tensorlite.checkpoint.protos import BundleEntryProto, BundleHeaderProto
from tensorlite.checkpoint.table import read_table, write_table


def test_table_round_trip_across_blocks_and_restarts():
    items = [(b"", b"header")] + [(b"key/%05d" % i, os.urandom(i % 37)) for i in range(500)]
    data = write_table(items, block_size=512)
    assert list(read_table(data)) == items


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "empty"])
def test_damaged_table_is_data_loss(damage):
    data = bytearray(write_table([(b"", b"h"), (b"a", b"1" * 100)]))
    if damage == "flip":
        data[10] ^= 0xFF
    elif damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "magic":
        data[-1] ^= 1
    else:
        data = bytearray()
    with pytest.raises(tf.errors.DataLossError, match="x.index"):
        list(read_table(bytes(data), "x.index"))


@pytest.mark.parametrize("value", [
    np.float32(3.5), np.arange(6, dtype=np.float16).reshape(2, 3), np.array([True, False]),
    np.arange(4, dtype=np.int8), np.array([1 + 2j], np.complex64), np.zeros((0, 3)),
    np.array([2 ** 40], np.int64), np.arange(3, dtype=np.uint16),
    np.array([[b"a", b""], [b"\x00\xff", b"z" * 300]], dtype=object)], ids=repr)
def test_bundle_round_trips_every_dtype(tmp_path, value):
    write_bundle(tmp_path / "b", [("t", value)])
    got = BundleReader(tmp_path / "b").tensor("t")
    assert got.shape == np.shape(value) and got.dtype == np.asarray(value).dtype
    assert got.tolist() == np.asarray(value).tolist()


class Net(tf.Module):
    def __init__(self, scale=1.0):
        super().__init__()
        self.dense = tf.Variable(np.full((2, 2), scale, np.float32))
        self.layers = [tf.Variable(scale), {"inner.name/x": tf.Variable([scale])}]


def test_keys_follow_tensorflow_object_graph_naming(tmp_path):
    path = tf.train.Checkpoint(net=Net()).write(str(tmp_path / "c"))
    keys = [k for k, _ in tf.train.list_variables(path)]
    # "." doubled and "/" as ".S" in a local name, as TensorFlow escapes them
    assert keys == ["_CHECKPOINTABLE_OBJECT_GRAPH", "net/dense/.ATTRIBUTES/VARIABLE_VALUE",
                    "net/layers/0/.ATTRIBUTES/VARIABLE_VALUE",
                    "net/layers/1/inner..name.Sx/.ATTRIBUTES/VARIABLE_VALUE"]


def test_restore_matches_objects_not_key_spelling(tmp_path):
    """A restore walks the saved object graph, so the same objects under a different
    attribute path (here the root itself) still match."""
    net = Net(2.0)
    path = tf.train.Checkpoint(net=net).write(str(tmp_path / "c"))
    other = Net(0.0)
    status = tf.train.Checkpoint(net=other).read(path)
    status.assert_consumed()
    np.testing.assert_array_equal(other.layers[1]["inner.name/x"].numpy(), [2.0])
    with pytest.raises(AssertionError, match="objects without a saved value"):
        tf.train.Checkpoint(net=Net(), extra=tf.Variable(1.0)).read(path).assert_consumed()


def test_restored_variables_share_no_memory(tmp_path):
    """A restore adopts the array it read instead of copying it: two restores of the same
    checkpoint, and the variable after later assigns, must still be independent."""
    path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).write(str(tmp_path / "c"))
    a, b = tf.Variable([0.0, 0.0]), tf.Variable([0.0, 0.0])
    tf.train.Checkpoint(v=a).read(path)
    tf.train.Checkpoint(v=b).read(path)
    a.assign_add([10.0, 10.0])
    np.testing.assert_array_equal(b.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(a.numpy(), [11.0, 12.0])
    assert not np.shares_memory(a.numpy(), b.numpy())


def test_shape_mismatch_names_the_key(tmp_path):
    path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).write(str(tmp_path / "c"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="v/.ATTRIBUTES.*shape"):
        tf.train.Checkpoint(v=tf.Variable([1.0])).read(path)


def test_checkpoint_manager_keeps_newest_and_reopens(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(0.0))
    manager = tf.train.CheckpointManager(ckpt, tmp_path, max_to_keep=2)
    for i in range(4):
        ckpt.v.assign(float(i))
        manager.save()
    assert manager.checkpoints == [str(tmp_path / "ckpt-3"), str(tmp_path / "ckpt-4")]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-3.data-00000-of-00001",
                                            "ckpt-3.index", "ckpt-4.data-00000-of-00001",
                                            "ckpt-4.index"]
    again = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(9.0)), tmp_path, 2)
    assert again.latest_checkpoint == str(tmp_path / "ckpt-4")
    assert tf.train.load_variable(tmp_path, "v/.ATTRIBUTES/VARIABLE_VALUE") == 3.0
    assert again.restore_or_initialize() == str(tmp_path / "ckpt-4")


def test_restore_none_and_missing_prefix(tmp_path):
    tf.train.Checkpoint(v=tf.Variable(1.0)).restore(None).assert_consumed()
    with pytest.raises(tf.errors.NotFoundError, match="latest_checkpoint"):
        tf.train.Checkpoint(v=tf.Variable(1.0)).restore(str(tmp_path / "nope"))
    assert tf.train.latest_checkpoint(tmp_path) is None


def _entry_index(tmp_path, entry):
    header = BundleHeaderProto(num_shards=1)
    header.version.producer = 1
    (tmp_path / "c.index").write_bytes(write_table(
        [(b"", header.SerializeToString()), (b"t", entry)]))


@pytest.mark.parametrize("crafted", ["huge_shape", "past_end", "bad_proto", "bad_crc",
                                     "bad_shards"])
def test_crafted_index_is_a_clear_error(tmp_path, crafted):
    (tmp_path / "c.data-00000-of-00001").write_bytes(b"\0" * 16)
    entry = BundleEntryProto(dtype=1, offset=0, size=16)
    entry.shape.dim.add(size=4)
    if crafted == "huge_shape":
        entry.shape.dim[0].size = 10 ** 15
    elif crafted == "past_end":
        entry.size = 10 ** 9
    elif crafted == "bad_crc":
        entry.crc32c = 12345
    raw = b"\x0a\xff\xff" if crafted == "bad_proto" else entry.SerializeToString()
    _entry_index(tmp_path, raw)
    if crafted == "bad_shards":
        header = BundleHeaderProto(num_shards=0)
        (tmp_path / "c.index").write_bytes(write_table([(b"", header.SerializeToString())]))
    with pytest.raises(tf.errors.DataLossError):
        BundleReader(tmp_path / "c").tensor("t")


def test_earlier_json_index_is_a_clear_error(tmp_path):
    (tmp_path / "c.index").write_bytes(b'{"format": "tensorlite-ckpt-1", "entries": {}}')
    (tmp_path / "c.data-00000-of-00001").write_bytes(b"")
    with pytest.raises(tf.errors.DataLossError, match="earlier JSON checkpoint format"):
        tf.train.Checkpoint(v=tf.Variable(1.0)).read(str(tmp_path / "c"))


def test_malformed_object_graph_is_data_loss(tmp_path):
    write_bundle(tmp_path / "c", [("_CHECKPOINTABLE_OBJECT_GRAPH", b"\x0a\xff\xff\xff"),
                                  ("v/.ATTRIBUTES/VARIABLE_VALUE", np.float32(1))])
    with pytest.raises(tf.errors.DataLossError, match="TrackableObjectGraph"):
        tf.train.Checkpoint(v=tf.Variable(0.0)).read(str(tmp_path / "c"))


@pytest.mark.parametrize("flip", [None, 5, 4099, 9000])
def test_chunked_read_checksums_every_chunk(tmp_path, monkeypatch, flip):
    """Large tensors are read in chunks checksummed by a second thread: the values are
    exact and a flipped byte in any chunk (first, a middle one, the short last one) is
    DataLossError."""
    from tensorlite.checkpoint import bundle
    monkeypatch.setattr(bundle, "_PIPELINE_BYTES", 1024)
    monkeypatch.setattr(bundle, "_CHUNK_BYTES", 1024)
    m = tf.Module()
    m.w = tf.Variable(np.arange(2500, dtype=np.float32))   # 10000 bytes: 10 chunks
    ckpt = tf.train.Checkpoint(model=m)
    path = ckpt.write(str(tmp_path / "c"))
    if flip is None:
        m.w.assign(tf.zeros([2500]))
        ckpt.read(path)
        np.testing.assert_array_equal(m.w.numpy(), np.arange(2500, dtype=np.float32))
        return
    data = path + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    offset = bundle.BundleReader(path)._entry("model/w/.ATTRIBUTES/VARIABLE_VALUE").offset
    raw[offset + flip] ^= 1
    open(data, "wb").write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match="checksum"):
        ckpt.read(path)
