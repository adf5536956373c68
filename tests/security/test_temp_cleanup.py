"""Writers remove only the temporaries they provably made: this host's tag in the name and
a dead process id. A user's files that merely look like temporaries, and another host's
(a shared file system), survive every writer's cleanup."""
import os
import subprocess
import sys

import numpy as np

import tensorlite as tf
from tensorlite.framework import atomic_files


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _plant(directory, names):
    for name in names:
        path = os.path.join(directory, name)
        if name.endswith("/"):
            os.makedirs(path)
            with open(os.path.join(path, "inside.txt"), "w") as f:
                f.write("keep")
        else:
            with open(path, "w") as f:
                f.write("keep")


def test_checkpoint_and_keras_writers_keep_what_is_not_theirs(tmp_path):
    pid, other_host = _dead_pid(), atomic_files.host_tag("another-host")
    user = ["notes.tmp-999999", "ckpt-1.index.tmp-12", f"ckpt-1.index.tmp-{pid}-{other_host}",
            "my_results.tmp-999999/"]
    ours = f"ckpt-1.index.tmp-{pid}-{atomic_files.host_tag()}"
    _plant(str(tmp_path), user + [ours])
    v = tf.Variable([1.0, 2.0])
    tf.train.Checkpoint(v=v).write(str(tmp_path / "ckpt-1"))
    names = set(os.listdir(tmp_path))
    assert {n.rstrip("/") for n in user} <= names, names
    assert ours not in names  # a dead writer of this host: reclaimed
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.save(str(tmp_path / "m.keras"))
    assert {n.rstrip("/") for n in user} <= set(os.listdir(tmp_path))


def test_saved_model_and_snapshot_writers_keep_what_is_not_theirs(tmp_path):
    pid, other_host = _dead_pid(), atomic_files.host_tag("another-host")
    user = ["sm.tmp-saved_model-999999/", f"sm.tmp-saved_model-{pid}-{other_host}-1/"]
    ours = f"sm.tmp-saved_model-{pid}-{atomic_files.host_tag()}-7"
    _plant(str(tmp_path), user + [ours + "/"])
    module = tf.Module()
    module.v = tf.Variable(1.0)
    module.f = tf.function(lambda x: x * module.v, input_signature=[tf.TensorSpec([], tf.float32)])
    tf.saved_model.save(module, str(tmp_path / "sm"))
    names = set(os.listdir(tmp_path))
    assert {n.rstrip("/") for n in user} <= names and ours not in names
    from tensorlite.data.snapshot import fingerprint
    snap = tmp_path / "snap"
    ds = tf.data.Dataset.range(3)
    fp_dir = snap / fingerprint(ds)
    fp_dir.mkdir(parents=True)
    planted = [f".tmp-999999-{other_host}-1/", ".tmp-12-1/"]
    own = f".tmp-{pid}-{atomic_files.host_tag()}-5"
    _plant(str(fp_dir), planted + [own + "/"])
    np.testing.assert_array_equal(list(ds.snapshot(str(snap)).as_numpy_iterator()), [0, 1, 2])
    left = set(os.listdir(fp_dir))
    assert {n.rstrip("/") for n in planted} <= left and own not in left, left
