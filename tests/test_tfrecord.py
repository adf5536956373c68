"""TFRecord files: byte-exact framing, CRC32C, compression, the reader dataset (sequential
and parallel), iterator checkpoints, corruption and missing files, and seed pipelines."""
import gzip
import os
import struct
import zlib

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.io  # noqa: F401 - attaches tf.io
from tensorlite.framework import checksums
from tensorlite.data import tfrecord
from tensorlite.data.tfrecord import TFRecordDataset


# -- an independent CRC32C (bit by bit, no table) for building expected bytes ---------------
def bitwise_crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 * (crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) % (1 << 32)


def expected_frame(record):
    length = struct.pack("<Q", len(record))
    return (length + struct.pack("<I", masked(bitwise_crc32c(length))) + record
            + struct.pack("<I", masked(bitwise_crc32c(record))))


# RFC 3720 (iSCSI) CRC32C test vectors, and the classic check value.
CRC_VECTORS = [(b"123456789", 0xE3069283), (b"", 0x0), (bytes(32), 0x8A9136AA),
               (b"\xff" * 32, 0x62A8AB43), (bytes(range(32)), 0x46DD794E),
               (bytes(range(31, -1, -1)), 0x113FDB5C)]


def records_of(ds):
    return [r.numpy() for r in ds]


def write(path, records, options=None):
    with tf.io.TFRecordWriter(str(path), options) as w:
        for r in records:
            w.write(r)
    return str(path)


# -- CRC32C ---------------------------------------------------------------------------------
@pytest.mark.parametrize("data,crc", CRC_VECTORS)
def test_crc32c_known_vectors_python_and_library(data, crc):
    assert tfrecord.crc32c_python(data) == crc
    assert bitwise_crc32c(data) == crc
    assert tfrecord.crc32c(data) == crc
    if tfrecord.crc32c_library is not None:
        assert tfrecord.crc32c_library(data) == crc


def test_crc32c_library_and_python_agree_on_random_data():
    if tfrecord.crc32c_library is None:
        pytest.skip("no CRC32C package installed: only the Python version is in use")
    rng = np.random.default_rng(0)
    for n in (1, 7, 8, 9, 63, 64, 65, 1000, 4099):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert tfrecord.crc32c_library(data) == tfrecord.crc32c_python(data)


def test_masked_crc_matches_tf_formula():
    for data, _ in CRC_VECTORS:
        assert tfrecord.masked_crc32c(data) == masked(bitwise_crc32c(data))


# -- byte-exact writing ---------------------------------------------------------------------
def test_writer_bytes_match_documented_layout(tmp_path):
    records = [b"hello", b"", b"x" * 300]
    path = write(tmp_path / "a.tfrecord", records)
    with open(path, "rb") as f:
        assert f.read() == b"".join(expected_frame(r) for r in records)


def test_writer_with_python_crc_fallback_is_identical(tmp_path, monkeypatch):
    records = [b"abc", bytes(range(256)) * 3]
    fast = open(write(tmp_path / "fast", records), "rb").read()
    monkeypatch.setattr(checksums, "crc32c", checksums.crc32c_python)
    slow = open(write(tmp_path / "slow", records), "rb").read()
    assert fast == slow == b"".join(expected_frame(r) for r in records)
    assert records_of(TFRecordDataset(str(tmp_path / "slow"))) == records


def test_reader_reads_independently_built_file(tmp_path):
    records = [b"first", b"\x00\x01\x02", b"third" * 50]
    path = tmp_path / "handmade.tfrecord"
    path.write_bytes(b"".join(expected_frame(r) for r in records))
    ds = TFRecordDataset(str(path))
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    out = list(ds)
    assert [r.numpy() for r in out] == records
    assert all(r.dtype == tf.string and r.shape == () for r in out)
    assert list(tfrecord.tf_record_iterator(str(path))) == records


def test_writer_accepts_str_and_string_tensors_and_rejects_others(tmp_path):
    path = str(tmp_path / "s.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        w.write("text")
        w.write(tf.constant(b"tensor"))
        with pytest.raises(TypeError, match="bytes"):
            w.write(3)
        with pytest.raises(TypeError, match="scalar tf.string"):
            w.write(tf.constant([b"a", b"b"]))
    assert records_of(TFRecordDataset(path)) == [b"text", b"tensor"]


def test_write_after_close_and_flush(tmp_path):
    path = str(tmp_path / "f.tfrecord")
    w = tf.io.TFRecordWriter(path)
    w.write(b"one")
    w.flush()
    assert open(path, "rb").read() == expected_frame(b"one")  # visible before close
    w.close()
    w.close()  # idempotent
    with pytest.raises(tf.errors.FailedPreconditionError, match="closed"):
        w.write(b"two")


def test_writer_missing_directory_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.TFRecordWriter(str(tmp_path / "no" / "such" / "dir" / "x.tfrecord"))


# -- compression ----------------------------------------------------------------------------
@pytest.mark.parametrize("options", ["GZIP", "ZLIB", tfrecord.TFRecordOptions(
    compression_type="GZIP", compression_level=9), tfrecord.TFRecordOptions("ZLIB")])
def test_compressed_files_are_standard_streams(tmp_path, options):
    records = [b"r%d" % i * i for i in range(100)]
    path = write(tmp_path / "c.tfrecord", records, options)
    kind = tf.io.TFRecordOptions.get_compression_type_string(options)
    raw = open(path, "rb").read()
    plain = gzip.decompress(raw) if kind == "GZIP" else zlib.decompress(raw)
    assert plain == b"".join(expected_frame(r) for r in records)
    assert records_of(TFRecordDataset(path, compression_type=kind)) == records
    assert list(tfrecord.tf_record_iterator(path, options)) == records


def test_reads_gzip_written_by_other_tools_including_multi_member(tmp_path):
    records = [b"alpha", b"beta", b"gamma"]
    frames = [expected_frame(r) for r in records]
    path = tmp_path / "m.tfrecord.gz"
    path.write_bytes(gzip.compress(frames[0]) + gzip.compress(b"".join(frames[1:])))
    assert records_of(TFRecordDataset(str(path), compression_type="GZIP")) == records
    zpath = tmp_path / "z.tfrecord"
    zpath.write_bytes(zlib.compress(b"".join(frames), 1))
    assert records_of(TFRecordDataset(str(zpath), "ZLIB", buffer_size=7)) == records


def test_compression_options_validation(tmp_path):
    assert tf.io.TFRecordOptions.get_compression_type_string(None) == ""
    assert tf.io.TFRecordOptions.get_compression_type_string("GZIP") == "GZIP"
    with pytest.raises(ValueError, match="compression_type"):
        tf.io.TFRecordOptions(compression_type="BZ2")
    with pytest.raises(ValueError, match="compression_type"):
        tf.io.TFRecordWriter(str(tmp_path / "x"), options="LZ4")
    with pytest.raises(tf.errors.InvalidArgumentError, match="compression_type"):
        TFRecordDataset(str(tmp_path / "x"), compression_type="SNAPPY")


def test_reading_uncompressed_file_as_gzip_is_data_loss(tmp_path):
    path = write(tmp_path / "u.tfrecord", [b"a", b"b"])
    with pytest.raises(tf.errors.DataLossError, match="u.tfrecord"):
        records_of(TFRecordDataset(path, compression_type="GZIP"))


# -- many files, sources of filenames -------------------------------------------------------
def make_files(tmp_path, sizes, options=None):
    files = []
    for k, n in enumerate(sizes):
        files.append(write(tmp_path / f"part-{k}.tfrecord",
                           [b"f%d-r%d" % (k, i) for i in range(n)], options))
    return files


def test_many_files_in_order_from_list_tensor_and_dataset(tmp_path):
    files = make_files(tmp_path, [3, 0, 2])
    expected = [b"f0-r0", b"f0-r1", b"f0-r2", b"f2-r0", b"f2-r1"]
    assert records_of(TFRecordDataset(files)) == expected
    assert records_of(TFRecordDataset(tf.constant(files))) == expected
    assert records_of(TFRecordDataset(np.array(files))) == expected
    names = tf.data.Dataset.from_tensor_slices(files)
    assert records_of(TFRecordDataset(names)) == expected
    listed = tf.data.Dataset.list_files(str(tmp_path / "part-*.tfrecord"), shuffle=False)
    assert records_of(TFRecordDataset(listed)) == expected
    assert records_of(TFRecordDataset(files[0])) == expected[:3]
    assert records_of(TFRecordDataset([])) == []


def test_filename_type_errors():
    with pytest.raises(TypeError, match="tf.string"):
        TFRecordDataset([1, 2])
    with pytest.raises(TypeError, match="scalar `tf.string`"):
        TFRecordDataset(tf.data.Dataset.range(3))
    with pytest.raises(ValueError, match="rank 0 or 1"):
        TFRecordDataset(tf.constant([["a"]]))


def test_parallel_reads_interleave_one_record_per_file_in_turn(tmp_path):
    files = make_files(tmp_path, [2, 2])
    ds = TFRecordDataset(files, num_parallel_reads=2)
    assert records_of(ds) == [b"f0-r0", b"f1-r0", b"f0-r1", b"f1-r1"]


@pytest.mark.parametrize("n", [1, 2, 3, tf.data.AUTOTUNE])
def test_parallel_reads_match_sequential_interleave(tmp_path, n):
    files = make_files(tmp_path, [5, 1, 0, 4, 3, 2])
    reference = tf.data.Dataset.from_tensor_slices(files).interleave(
        lambda f: TFRecordDataset(f), cycle_length=n, block_length=1)
    got = records_of(TFRecordDataset(files, num_parallel_reads=n))
    assert got == records_of(reference)
    assert sorted(got) == sorted(records_of(TFRecordDataset(files)))
    assert records_of(TFRecordDataset(files, num_parallel_reads=n)) == got  # deterministic


# -- iterator checkpoints -------------------------------------------------------------------
@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
@pytest.mark.parametrize("parallel", [None, 2])
def test_save_and_restore_mid_file(tmp_path, compression, parallel):
    files = make_files(tmp_path, [4, 3, 5], compression)
    ds = TFRecordDataset(files, compression_type=compression, num_parallel_reads=parallel)
    full = records_of(ds)
    for stop in (0, 2, 5, len(full)):
        it = iter(ds)
        head = [next(it).numpy() for _ in range(stop)]
        state = it.save_state()
        rest = [r.numpy() for r in it]
        assert head + rest == full
        again = iter(ds)
        again.restore_state(state)
        assert [r.numpy() for r in again] == rest


def test_saved_state_holds_file_and_byte_offset(tmp_path):
    files = make_files(tmp_path, [2, 2])
    it = iter(TFRecordDataset(files))
    next(it), next(it), next(it)  # the first record of the second file
    from tensorlite.data import iterator_state
    state = iterator_state.loads(it.save_state())
    file_state, (path, offset) = state
    assert file_state == 2 and path == files[1]
    assert offset == len(expected_frame(b"f1-r0"))


# -- corruption and missing files -------------------------------------------------------------
def corrupt(path, position, truncate=False):
    data = bytearray(open(path, "rb").read())
    if truncate:
        del data[position:]
    else:
        data[position] ^= 0x40
    open(path, "wb").write(bytes(data))


@pytest.mark.parametrize("delta,what", [(1, "length checksum"),  # in the length
                                         (9, "length checksum"),  # in the length's CRC
                                         (13, "data checksum"),  # in the data
                                         (19, "data checksum")])  # in the data's CRC
def test_flipped_byte_is_data_loss_naming_file_and_offset(tmp_path, delta, what):
    path = write(tmp_path / "bad.tfrecord", [b"first", b"second", b"third"])
    start = len(expected_frame(b"first"))  # the second record's offset
    corrupt(path, start + delta)
    it = iter(TFRecordDataset(path))
    assert next(it).numpy() == b"first"
    with pytest.raises(tf.errors.DataLossError) as e:
        next(it)
    assert "bad.tfrecord" in str(e.value) and f"offset {start}" in str(e.value)
    assert what in str(e.value)


@pytest.mark.parametrize("cut", [3, 12, 14, 20])
def test_truncated_file_is_data_loss(tmp_path, cut):
    path = write(tmp_path / "cut.tfrecord", [b"keep", b"lost-record"])
    start = len(expected_frame(b"keep"))
    corrupt(path, start + cut, truncate=True)
    it = iter(TFRecordDataset(path))
    assert next(it).numpy() == b"keep"
    with pytest.raises(tf.errors.DataLossError, match=f"offset {start} in file .*cut.tfrecord"):
        next(it)


def test_truncated_compressed_file_is_data_loss(tmp_path):
    path = write(tmp_path / "cut.gz", [b"x" * 1000, bytes(range(256)) * 40], "GZIP")
    corrupt(path, os.path.getsize(path) // 2, truncate=True)
    with pytest.raises(tf.errors.DataLossError, match="cut.gz"):
        records_of(TFRecordDataset(path, compression_type="GZIP"))


def test_corrupted_file_is_abandoned_so_ignore_errors_continues(tmp_path):
    files = make_files(tmp_path, [3, 2])
    corrupt(files[0], len(expected_frame(b"f0-r0")) + 14)
    assert records_of(TFRecordDataset(files).ignore_errors()) == [b"f0-r0", b"f1-r0", b"f1-r1"]


def test_missing_file_is_not_found(tmp_path):
    good = make_files(tmp_path, [1])[0]
    missing = str(tmp_path / "missing.tfrecord")
    ds = TFRecordDataset([good, missing])
    it = iter(ds)
    assert next(it).numpy() == b"f0-r0"
    with pytest.raises(tf.errors.NotFoundError, match="missing.tfrecord"):
        next(it)
    with pytest.raises(tf.errors.NotFoundError, match="list_files"):
        records_of(TFRecordDataset(str(tmp_path / "*.tfrecord")))
    with pytest.raises(tf.errors.NotFoundError):
        records_of(TFRecordDataset([missing], num_parallel_reads=2))


# -- pipelines from the seeds -----------------------------------------------------------------
def example_files(tmp_path, n_files=3, per_file=40):
    pytest.importorskip("google.protobuf")
    from tensorlite.train import example as train
    files = []
    for k in range(n_files):
        records = []
        for i in range(per_file):
            ex = train.Example(features=train.Features(feature={
                "image": train.Feature(float_list=train.FloatList(
                    value=np.full(4, k * 1000 + i, dtype=np.float32))),
                "label": train.Feature(int64_list=train.Int64List(value=[i % 3]))}))
            records.append(ex.SerializeToString())
        files.append(write(tmp_path / f"train-{k}.tfrecord", records))
    return files


FEATURES = {"image": tf.io.FixedLenFeature([4], tf.float32),
            "label": tf.io.FixedLenFeature([], tf.int64)}


def expensive_preprocess(record):
    parsed = tf.io.parse_single_example(record, FEATURES)
    return parsed["image"] / 255.0, parsed["label"]


def test_seed_000_pipeline(tmp_path):
    files = example_files(tmp_path)
    dataset = TFRecordDataset(files)
    dataset = dataset.map(expensive_preprocess)
    dataset = dataset.shuffle(buffer_size=1024)
    dataset = dataset.batch(batch_size=32)
    dataset = dataset.prefetch(tf.data.AUTOTUNE)
    batches = list(dataset)
    assert [int(b[0].shape[0]) for b in batches] == [32, 32, 32, 24]
    images = np.concatenate([b[0].numpy() for b in batches])
    labels = np.concatenate([b[1].numpy() for b in batches])
    assert images.dtype == np.float32 and labels.dtype == np.int64
    ids = np.round(images[:, 0] * 255.0).astype(int)
    assert sorted(ids.tolist()) == sorted(k * 1000 + i for k in range(3) for i in range(40))
    assert np.array_equal(labels, (ids % 1000) % 3)


def test_seed_004_input_fn_with_parallel_reads(tmp_path):
    example_files(tmp_path, n_files=4, per_file=10)
    files = tf.data.Dataset.list_files(str(tmp_path / "train-*.tfrecord"))
    dataset = TFRecordDataset(files, num_parallel_reads=40)
    dataset = dataset.shuffle(buffer_size=10000)
    dataset = dataset.repeat(2)
    dataset = dataset.map(expensive_preprocess, num_parallel_calls=40)
    dataset = dataset.batch(16)
    dataset = dataset.prefetch(buffer_size=1)
    sizes = [int(x.shape[0]) for x, _ in dataset]
    assert sum(sizes) == 80 and sizes[:-1] == [16] * 4
