"""Crash safety of checkpoint writes, with real SIGKILLs of a writer subprocess: after a kill
at any moment the old or the new complete checkpoint restores, never a torn pair; a kill
between the data and index renames is completed from the dead writer's index; a pair torn
beyond repair is DataLossError naming both files; dead writers' temporary files go away."""
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tensorlite as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _writer(directory, size, ready):
    """A forked child: saves checkpoints whose variables all hold the save number k, until
    killed; writes to `ready` after the first."""
    try:
        vs = [tf.Variable(np.zeros(size * (i + 1), np.float32)) for i in range(3)]
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(vs=vs), directory, 2)
        for k in range(1, 10 ** 6):
            for v in vs:
                v.assign(np.full(v.shape, k, np.float32))
            manager.save()
            if k == 1:
                os.write(ready, b"1")
    finally:
        os._exit(0)


def _fork_writer(directory, size):
    """The writer in a forked child (fast: tensorlite is already imported); returns its pid
    once its first checkpoint is complete."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _writer(directory, size, write)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.close(read)
    return pid

# Kills itself right after the data file's rename, before the index's: the torn window.
_TORN = r"""
import os, signal, sys, numpy as np, tensorlite as tf
prefix, size = sys.argv[1], int(sys.argv[2])
v = tf.Variable(np.ones(size, np.float32))
tf.train.Checkpoint(v=v).write(prefix)
v.assign(np.full(size, 2.0, np.float32))
real = os.replace
def replace(src, dst):
    real(src, dst)
    if ".data-" in dst:
        os.kill(os.getpid(), signal.SIGKILL)
os.replace = replace
tf.train.Checkpoint(v=v).write(prefix)
"""


def _python(code, *args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], env=env,
                            stdout=subprocess.PIPE, text=True)


def _restore_all_equal(directory):
    vs = [tf.Variable(np.zeros(1000 * (i + 1), np.float32)) for i in range(3)]
    ckpt = tf.train.Checkpoint(vs=vs)
    path = tf.train.latest_checkpoint(directory)
    if path is None:
        return None
    ckpt.restore(path).assert_consumed()
    values = {float(x) for v in vs for x in np.unique(v.numpy())}
    assert len(values) == 1, f"torn checkpoint {path}: values {values}"
    return values.pop()


def test_sigkill_during_checkpoint_saves_leaves_a_complete_one(tmp_path):
    rng = random.Random(0)
    for trial in range(20):
        directory = tmp_path / f"t{trial}"
        pid = _fork_writer(directory, 1000)
        time.sleep(rng.uniform(0.0, 0.03))  # one complete save, then kill at a random moment
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        value = _restore_all_equal(directory)
        assert value is not None and value >= 1
        leftovers = [n for n in os.listdir(directory) if ".tmp-" in n]
        tf.train.Checkpoint(v=tf.Variable(0.0)).write(str(directory / "next"))
        assert all(not os.path.exists(directory / n) or ".index" in n for n in leftovers)
        assert not [n for n in os.listdir(directory) if ".tmp-" in n]


def _torn(tmp_path, size=1000):
    prefix = tmp_path / "c"
    proc = _python(_TORN, prefix, size)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    temps = [n for n in os.listdir(tmp_path) if ".index.tmp-" in n]
    assert len(temps) == 1
    return prefix, tmp_path / temps[0]


def test_kill_between_renames_is_completed_from_the_dead_writers_index(tmp_path):
    prefix, _ = _torn(tmp_path)
    v = tf.Variable(np.zeros(1000, np.float32))
    tf.train.Checkpoint(v=v).read(str(prefix)).assert_consumed()
    np.testing.assert_array_equal(v.numpy(), 2.0)  # the new complete checkpoint
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]


@pytest.mark.parametrize("grow", [False, True])
def test_pair_torn_beyond_repair_names_both_files(tmp_path, grow):
    prefix, temp = _torn(tmp_path)
    os.remove(temp)
    if grow:  # entry sizes changed: the sizes disagree at open
        with open(f"{prefix}.data-00000-of-00001", "ab") as f:
            f.write(b"\0" * 8)
    v = tf.Variable(np.zeros(1000, np.float32))
    with pytest.raises(tf.errors.DataLossError, match=r"c\.index.*c\.data-00000-of-00001"):
        tf.train.Checkpoint(v=v).read(str(prefix))
