"""Loading a file never runs code from it: crafted files for every loader try to import a
module, call a function, unpickle an object or write outside the target directory; each is
a clear error and the canary file is never created."""
import io
import json
import os
import pickle
import sys
import zipfile

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.checkpoint import Checkpoint
from tensorlite.data import element_io
from tensorlite.framework import errors


class _Canary:
    """Unpickling it creates the canary file: proof that a loader ran file data as code."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _small_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,)),
                                 tf.keras.layers.Dense(2)])
    model(np.zeros((1, 4), np.float32))
    return model


def _rewrite_archive(path, config=None, weights=None, extra=()):
    """Rewrites a Keras 3 archive (config.json, metadata.json, model.weights.h5)."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    if config is not None:
        members["config.json"] = config
    if weights is not None:
        members["model.weights.h5"] = weights
    with zipfile.ZipFile(path, "w") as z:
        for name, data in [*members.items(), *extra]:
            z.writestr(name, data)


def _saved_config(path):
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("config.json"))


def _layers(config):
    return config["config"]["layers"]


# -- .keras archives ----------------------------------------------------------------------

def test_module_field_is_never_imported_or_called(tmp_path, canary):
    path = str(tmp_path / "m.keras")
    _small_model().save(path)
    config = _saved_config(path)
    _layers(config)[1] = {"class_name": "system", "module": "os", "registered_name": None,
                          "config": {"command": f"touch {canary}"}}
    _rewrite_archive(path, config=json.dumps(config))
    with pytest.raises(ValueError, match=r"Unknown layer: 'system'.*custom_objects"):
        tf.keras.models.load_model(path)


def test_module_with_import_side_effects_is_not_imported(tmp_path, canary, monkeypatch):
    (tmp_path / "evil_module.py").write_text(f"open({str(canary)!r}, 'w').close()\n"
                                             f"class Evil: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = str(tmp_path / "m.keras")
    _small_model().save(path)
    config = _saved_config(path)
    _layers(config)[2].update(class_name="Evil", module="evil_module",
                              registered_name="evil_module>Evil")
    _rewrite_archive(path, config=json.dumps(config))
    with pytest.raises(ValueError, match="Unknown layer: 'Evil"):
        tf.keras.models.load_model(path)
    assert "evil_module" not in sys.modules


def test_model_class_from_module_field_is_refused(tmp_path, canary):
    path = str(tmp_path / "m.keras")
    _small_model().save(path)
    config = {"module": "subprocess", "class_name": "Popen", "registered_name": None,
              "config": {"args": ["touch", str(canary)]}}
    _rewrite_archive(path, config=json.dumps(config))
    with pytest.raises((ValueError, tf.errors.DataLossError), match="Popen"):
        tf.keras.models.load_model(path)


def test_pickled_legacy_weights_are_refused(tmp_path, canary):
    """An archive in tensorlite's earlier format whose weights.npz holds a pickle."""
    path = str(tmp_path / "m.keras")
    model = _small_model()
    buf = io.BytesIO()
    arrays = [w.numpy() for w in model.weights]
    arrays[0] = np.array([_Canary(canary)], dtype=object)
    np.savez(buf, *arrays)
    config = {"format": "tensorlite-keras-1", "model": {
        "class_name": "Sequential", "config": model.get_config()}, "compile_config": None}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.json", json.dumps(config))
        z.writestr("weights.npz", buf.getvalue())
    with pytest.raises(tf.errors.DataLossError):
        tf.keras.models.load_model(path)


def test_path_traversal_member_is_never_written(tmp_path):
    target = tmp_path / "models"
    target.mkdir()
    path = str(target / "m.keras")
    model = _small_model()
    model.save(path)
    _rewrite_archive(path, extra=[("../escaped.txt", b"x"), ("/tmp/abs_escape.txt", b"x")])
    try:
        loaded = tf.keras.models.load_model(path)
    except (ValueError, tf.errors.DataLossError):
        pass  # refusing such an archive is as good as ignoring the members
    else:
        x = np.ones((2, 4), np.float32)
        np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy())
    assert not (tmp_path / "escaped.txt").exists()
    assert sorted(os.listdir(target)) == ["m.keras"]


@pytest.mark.parametrize("config", [b"{not json", b"[]", b'{"config": 3}', b"{}",
                                    b"[" * 100000])
def test_malformed_config_json_is_data_loss(tmp_path, config):
    path = str(tmp_path / "m.keras")
    _small_model().save(path)
    _rewrite_archive(path, config=config)
    with pytest.raises((tf.errors.DataLossError, ValueError), match="m.keras|config"):
        tf.keras.models.load_model(path)


def test_truncated_archive_is_data_loss(tmp_path):
    path = tmp_path / "m.keras"
    _small_model().save(str(path))
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(errors.DataLossError):
        tf.keras.models.load_model(str(path))


def _lambda_model(fn):
    inputs = tf.keras.Input(shape=(3,))
    outputs = tf.keras.layers.Lambda(fn)(tf.keras.layers.Dense(2)(inputs))
    return tf.keras.Model(inputs, outputs)


def _lambda_entries(config):
    return [layer for layer in _layers(config) if layer["class_name"] == "Lambda"]


def test_lambda_code_is_refused_in_safe_mode(tmp_path, canary):
    model = _lambda_model(lambda x: x * 2.0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    config = _saved_config(path)
    where = str(canary)
    evil = tf.keras.layers.Lambda(lambda x: open(where, "w")).get_config()["function"]
    (entry,) = _lambda_entries(config)
    entry["config"]["function"] = evil
    _rewrite_archive(path, config=json.dumps(config))
    with pytest.raises(ValueError, match="safe_mode=False"):
        tf.keras.models.load_model(path)


def test_lambda_loads_with_safe_mode_false(tmp_path):
    def double(x):
        return x * 2.0
    model = _lambda_model(double)
    path = str(tmp_path / "m.keras")
    model.save(path)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    unsafe = tf.keras.models.load_model(path, safe_mode=False)
    np.testing.assert_allclose(unsafe(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_registered_and_scoped_custom_layers_load(tmp_path):
    @tf.keras.utils.register_keras_serializable(package="SecurityTest")
    class Scale(tf.keras.layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x):
            return x * self.factor

        def get_config(self):
            return {**super().get_config(), "factor": self.factor}

    class Shift(tf.keras.layers.Layer):
        def call(self, x):
            return x + 1.0

    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,)), Scale(3.0),
                                 Shift()])
    x = np.ones((2, 3), np.float32)
    path = str(tmp_path / "m.keras")
    model.save(path)
    names = [layer.get("registered_name") for layer in _layers(_saved_config(path))]
    assert "SecurityTest>Scale" in names
    with pytest.raises(ValueError, match="Unknown layer: 'Shift'.*register_keras_serializable"):
        tf.keras.models.load_model(path)
    with tf.keras.utils.custom_object_scope({"Shift": Shift}):
        loaded = tf.keras.models.load_model(path)
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)


# -- checkpoints --------------------------------------------------------------------------

def test_checkpoint_iterator_state_is_never_unpickled(tmp_path, canary, monkeypatch):
    """A checkpoint whose iterator state is a pickle (as tensorlite once wrote them, or as
    an attacker writes them): restoring reads it as JSON and arrays only."""
    from tensorlite.data.iterator import OwnedIterator
    it = iter(tf.data.Dataset.range(10).shuffle(4, seed=1))
    next(it)
    payload = pickle.dumps({"version": 1, "state": _Canary(canary)})
    monkeypatch.setattr(OwnedIterator, "save_state", lambda self: payload)
    prefix = Checkpoint(iterator=it).write(str(tmp_path / "ck"))
    monkeypatch.undo()
    fresh = iter(tf.data.Dataset.range(10).shuffle(4, seed=1))
    with pytest.raises(errors.DataLossError, match="iterator checkpoint state"):
        Checkpoint(iterator=fresh).restore(prefix)
    with pytest.raises(errors.DataLossError):
        Checkpoint(iterator=fresh).read(prefix)


def test_load_weights_of_crafted_checkpoint_is_data_loss(tmp_path):
    model = _small_model()
    prefix = str(tmp_path / "w")
    model.save_weights(prefix)
    with open(prefix + ".index", "wb") as f:
        f.write(b"\x80\x04not an index" * 10)
    with pytest.raises(errors.DataLossError, match=r"w\.index"):
        _small_model().load_weights(prefix)


# -- cache and snapshot files ---------------------------------------------------------------

def _object_record():
    """A well-formed record (valid CRC) whose component claims an object dtype."""
    header = json.dumps(0).encode()
    meta = json.dumps({"dtype": "|O", "shape": [1]}).encode()
    body = pickle.dumps(np.array([1], dtype=object))
    payload = (len(header).to_bytes(4, "little") + header + len(meta).to_bytes(4, "little")
               + len(body).to_bytes(8, "little") + meta + body)
    return element_io._record(payload)


def test_crafted_cache_file_is_data_loss(tmp_path):
    cache = str(tmp_path / "c")
    list(tf.data.Dataset.range(3).cache(cache))
    with open(cache + ".tlcache", "wb") as f:
        f.write(_object_record())
    with pytest.raises(errors.DataLossError, match="not a tensor dtype"):
        list(tf.data.Dataset.range(3).cache(cache))


def test_crafted_snapshot_shard_is_data_loss(tmp_path):
    path = str(tmp_path / "snap")
    ds = tf.data.Dataset.range(4).snapshot(path)
    list(ds)
    shards = [os.path.join(root, f) for root, _, files in os.walk(path) for f in files
              if f.startswith("shard_")]
    for shard in shards:
        with open(shard, "wb") as f:
            f.write(_object_record())
    with pytest.raises(errors.DataLossError):
        list(tf.data.Dataset.range(4).snapshot(path))


def test_cifar10_loader_says_it_unpickles():
    from tensorlite.keras.datasets import cifar10
    assert "pickle" in (cifar10.load_data.__doc__ or "").lower()


def test_cifar10_batch_with_other_callables_is_refused(tmp_path, canary):
    from tensorlite.keras.datasets import cifar10
    good = tmp_path / "good"
    with open(good, "wb") as f:
        pickle.dump({b"data": np.zeros((2, 3072), np.uint8), b"labels": [1, 2]}, f)
    data, labels = cifar10.load_batch(str(good))
    assert data.shape == (2, 3, 32, 32) and labels.tolist() == [1, 2]
    evil = tmp_path / "evil"
    with open(evil, "wb") as f:
        pickle.dump({b"data": _Canary(canary), b"labels": []}, f)
    with pytest.raises(errors.DataLossError, match="refusing to load"):
        cifar10.load_batch(str(evil))


def test_crafted_snapshot_metadata_is_data_loss(tmp_path):
    path = str(tmp_path / "snap")
    list(tf.data.Dataset.range(4).snapshot(path))
    metas = [os.path.join(root, "snapshot.metadata") for root, _, files in os.walk(path)
             if "snapshot.metadata" in files]
    with open(metas[0], "w") as f:
        json.dump({"num_elements": 4, "num_shards": -1, "gzip": "yes", "pipeline": []}, f)
    with pytest.raises(errors.DataLossError, match="snapshot metadata"):
        list(tf.data.Dataset.range(4).snapshot(path))
