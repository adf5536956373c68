"""Dataset.save / tf.data.Dataset.load (and tf.data.experimental.save, load, snapshot):
elements and element_spec round-trip, sharding and reader_func as TensorFlow documents
them, and a save that fails or is killed never leaves a mixed directory."""
import json
import os

import pytest

import tensorlite as tf


def _dataset(n=10):
    return tf.data.Dataset.range(n).map(
        lambda x: {"a": x, "b": (tf.strings.as_string(x), tf.cast(x, tf.float32) * 0.5)})


def _values(ds):
    return [(int(e["a"]), e["b"][0].numpy(), float(e["b"][1])) for e in ds]


def test_round_trip_keeps_elements_order_and_spec(tmp_path):
    path = str(tmp_path / "saved")
    _dataset().save(path)
    loaded = tf.data.Dataset.load(path)
    assert loaded.element_spec == _dataset().element_spec
    assert int(loaded.cardinality()) == 10
    assert _values(loaded) == _values(_dataset())
    assert _values(loaded) == _values(loaded)  # re-iterable


def test_gzip_shard_func_and_reader_func(tmp_path):
    path = str(tmp_path / "saved")
    tf.data.experimental.save(_dataset(), path, compression="GZIP",
                              shard_func=lambda e: e["a"] % 3)
    assert sorted(os.listdir(path)) == ["dataset_spec.json", "shard_00000.tlrec.gz",
                                        "shard_00001.tlrec.gz", "shard_00002.tlrec.gz"]
    in_shards = tf.data.experimental.load(
        path, reader_func=lambda shards: shards.interleave(lambda x: x, cycle_length=1))
    assert [v[0] for v in _values(in_shards)] == [0, 3, 6, 9, 1, 4, 7, 2, 5, 8]
    assert sorted(_values(tf.data.Dataset.load(path))) == _values(_dataset())
    with pytest.raises(tf.errors.InvalidArgumentError, match="shard_func"):
        _dataset().save(str(tmp_path / "bad"), shard_func=lambda e: -1)
    assert not os.path.exists(tmp_path / "bad")


def test_failed_save_leaves_the_old_directory_whole(tmp_path):
    path = str(tmp_path / "saved")
    tf.data.Dataset.range(3).save(path)

    def boom(x):
        if x == 5:
            raise ValueError("boom")
        return x
    failing = tf.data.Dataset.range(10).map(
        lambda x: tf.numpy_function(boom, [x], tf.int64))
    with pytest.raises(Exception, match="boom"):
        failing.save(path)
    assert list(tf.data.Dataset.load(path).as_numpy_iterator()) == [0, 1, 2]
    assert sorted(os.listdir(tmp_path)) == ["saved"]  # no temporary directory left


def test_save_over_a_directory_it_did_not_make_is_refused(tmp_path):
    mine = tmp_path / "results"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(tf.errors.AlreadyExistsError, match="not a saved dataset"):
        tf.data.Dataset.range(3).save(str(mine))
    assert (mine / "notes.txt").read_text() == "keep me"
    assert sorted(os.listdir(tmp_path)) == ["results"]


def test_crafted_directories_are_data_loss(tmp_path):
    path = tmp_path / "saved"
    tf.data.Dataset.range(3).save(str(path))
    meta = json.loads((path / "dataset_spec.json").read_text())
    for shards in (["../../etc/passwd"], ["shard_00009.tlrec"]):
        (path / "dataset_spec.json").write_text(json.dumps({**meta, "shards": shards}))
        with pytest.raises(tf.errors.DataLossError):
            tf.data.Dataset.load(str(path))
    (path / "dataset_spec.json").write_text("{not json")
    with pytest.raises(tf.errors.DataLossError, match="malformed"):
        tf.data.Dataset.load(str(path))
    (path / "dataset_spec.json").write_text(json.dumps({**meta, "element_spec": {"shape": [-5],
                                                                               "dtype": "int64"}}))
    with pytest.raises(tf.errors.DataLossError, match="element_spec"):
        tf.data.Dataset.load(str(path))
    with pytest.raises(tf.errors.NotFoundError):
        tf.data.Dataset.load(str(tmp_path / "nothing"))


def test_truncated_shard_is_data_loss(tmp_path):
    path = tmp_path / "saved"
    tf.data.Dataset.range(50).map(lambda x: tf.fill([100], x)).save(str(path))
    shard = path / "shard_00000.tlrec"
    shard.write_bytes(shard.read_bytes()[:-7])
    with pytest.raises(tf.errors.DataLossError):
        list(tf.data.Dataset.load(str(path)))


def test_unsupported_arguments_say_so(tmp_path):
    with pytest.raises(NotImplementedError, match="checkpoint_args"):
        tf.data.Dataset.range(3).save(str(tmp_path / "x"), checkpoint_args={})
    with pytest.raises(tf.errors.InvalidArgumentError, match="compression"):
        tf.data.Dataset.range(3).save(str(tmp_path / "x"), compression="ZSTD")


def test_experimental_snapshot_applies(tmp_path):
    ds = tf.data.Dataset.range(4).apply(tf.data.experimental.snapshot(str(tmp_path)))
    assert list(ds.as_numpy_iterator()) == [0, 1, 2, 3]
    assert list(ds.as_numpy_iterator()) == [0, 1, 2, 3]  # read back
