"""A write killed at any moment leaves the old or the new complete state, and the next
writer removes what the killed one left: checkpoints (the data/index pair commits as one),
file caches (a dead writer's lock is reclaimed), model.save and save_weights (temp files)."""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.checkpoint import Checkpoint
from tensorlite.framework import errors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Makes the child SIGKILL itself on the N-th call of atomic_files.publish (a rename).
_KILL_AT_PUBLISH = """
import os, signal
from tensorlite.framework import atomic_files
_calls = [0]
_publish = atomic_files.publish
def publish(tmp, path):
    _calls[0] += 1
    if _calls[0] == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)
    _publish(tmp, path)
atomic_files.publish = publish
"""


def _run_child(code, kill_at=None, timeout=60):
    prologue = "import tensorlite as tf\nimport numpy as np\n"
    if kill_at is not None:
        prologue += _KILL_AT_PUBLISH.replace("KILL_AT", str(kill_at))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", prologue + textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    return proc


def _temps(directory):
    return sorted(n for n in os.listdir(directory) if ".tmp-" in n)


def _write_in_child(prefix, values, kill_at):
    proc = _run_child(f"""
        from tensorlite.checkpoint import Checkpoint
        Checkpoint(v=tf.Variable(np.array({values!r}, np.float32))).write({prefix!r})
    """, kill_at=kill_at)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return proc


def _restore(prefix, size):
    v = tf.Variable(np.zeros(size, np.float32))
    Checkpoint(v=v).restore(prefix)
    return v.numpy().tolist()


def test_kill_between_data_and_index_renames_leaves_new_complete_state(tmp_path):
    prefix = str(tmp_path / "ck")
    Checkpoint(v=tf.Variable([1.0, 1.0])).write(prefix)
    _write_in_child(prefix, [2.0, 2.0, 2.0], kill_at=2)  # data renamed, index not
    assert _temps(tmp_path), "the killed writer's temporary index should be left"
    assert _restore(prefix, 3) == [2.0, 2.0, 2.0]  # its commit is finished by the reader
    assert _temps(tmp_path) == []


def test_kill_before_first_rename_leaves_old_state_and_next_write_cleans_up(tmp_path):
    prefix = str(tmp_path / "ck")
    Checkpoint(v=tf.Variable([1.0, 1.0])).write(prefix)
    _write_in_child(prefix, [2.0, 2.0, 2.0], kill_at=1)
    assert len(_temps(tmp_path)) == 2
    assert _restore(prefix, 2) == [1.0, 1.0]
    Checkpoint(v=tf.Variable([3.0])).write(prefix)
    assert _temps(tmp_path) == []
    assert _restore(prefix, 1) == [3.0]


def test_inconsistent_pair_is_data_loss_naming_both_files(tmp_path):
    prefix = str(tmp_path / "ck")
    Checkpoint(v=tf.Variable([1.0, 1.0])).write(prefix)
    with open(prefix + ".data-00000-of-00001", "wb") as f:
        f.write(np.array([5.0, 5.0, 5.0], np.float32).tobytes())
    with pytest.raises(errors.DataLossError) as info:
        _restore(prefix, 2)
    assert prefix + ".index" in str(info.value)
    assert prefix + ".data-00000-of-00001" in str(info.value)


def test_random_kills_of_checkpoint_saves_never_tear(tmp_path):
    """A child saves checkpoints of changing size in a loop; it is killed at random moments.
    Each time, the latest checkpoint restores completely (all values equal, as written)."""
    rng = random.Random(0)
    directory = str(tmp_path)
    code = f"""
        import itertools
        from tensorlite.checkpoint import Checkpoint
        for i in itertools.count():
            n = 1000 + (i % 7) * 5000
            Checkpoint(v=tf.Variable(np.full(n, float(i), np.float32))).write(
                {os.path.join(directory, "ck")!r})
    """
    env = dict(os.environ, PYTHONPATH=ROOT)
    prologue = "import tensorlite as tf\nimport numpy as np\n"
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-c", prologue + textwrap.dedent(code)],
                                env=env)
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(directory, "ck.index")):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        time.sleep(rng.uniform(0.05, 0.4))
        proc.kill()
        proc.wait(timeout=30)
        for size in {1000 + k * 5000 for k in range(7)}:
            v = tf.Variable(np.zeros(size, np.float32))
            try:
                Checkpoint(v=v).restore(os.path.join(directory, "ck"))
            except errors.InvalidArgumentError:
                continue  # another size was committed
            values = v.numpy()
            assert (values == values[0]).all(), "a torn checkpoint was read"
            break
        else:
            pytest.fail("no complete checkpoint after a kill")


def test_killed_file_cache_writer_does_not_block_reruns(tmp_path):
    cache = str(tmp_path / "cache")
    proc = _run_child(f"""
        import os, signal
        ds = tf.data.Dataset.range(100).cache({cache!r})
        for i, _ in enumerate(ds):
            if i == 10:
                os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert os.path.exists(cache + ".lockfile")
    for _ in range(3):  # every rerun succeeds, in a fresh process each time
        proc = _run_child(f"""
            ds = tf.data.Dataset.range(100).cache({cache!r})
            assert [int(x) for x in ds] == list(range(100))
            assert [int(x) for x in ds] == list(range(100))
        """)
        assert proc.returncode == 0, proc.stderr
    assert not os.path.exists(cache + ".lockfile")
    assert _temps(tmp_path) == []


def test_live_cache_writer_still_blocks_a_second_writer(tmp_path):
    cache = str(tmp_path / "cache")
    it = iter(tf.data.Dataset.range(10).cache(cache))
    next(it)
    with pytest.raises(errors.AlreadyExistsError, match="concurrent caching iterator"):
        next(iter(tf.data.Dataset.range(10).cache(cache)))


def _model_code(write):
    return ("model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])\n"
            "model(np.zeros((1, 3), np.float32))\n" + write + "\n")


@pytest.mark.parametrize("write", ["model.save({path!r})", "model.save_weights({path!r})",
                                   "tf.train.Checkpoint(model=model).save({path!r})"])
def test_temp_files_of_killed_saves_are_removed_by_the_next_save(tmp_path, write):
    path = str(tmp_path / ("m.keras" if "model.save(" in write else "w"))
    proc = _run_child(_model_code(write.format(path=path)), kill_at=1)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert _temps(tmp_path), "the killed save should have left a temporary file"
    proc = _run_child(_model_code(write.format(path=path)))
    assert proc.returncode == 0, proc.stderr
    assert _temps(tmp_path) == []
