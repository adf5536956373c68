"""A write killed at any moment leaves the old or the new complete state, and the next
writer removes what the killed one left: file caches (a dead writer's lock is reclaimed),
model.save, save_weights and Checkpoint.save (temp files). The checkpoint pair's own kill
tests (the torn rename window, random kills) are in test_checkpoint_crash.py."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import tensorlite as tf
from tensorlite.framework import errors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Makes the child SIGKILL itself at its first rename (os.replace) of a finished temp file.
_KILL_AT_RENAME = """
import os, signal
_replace = os.replace
_calls = [0]
def replace(src, dst):
    _calls[0] += 1
    if _calls[0] == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)
    _replace(src, dst)
os.replace = replace
"""


def _run_child(code, kill_at=None, timeout=60):
    prologue = "import tensorlite as tf\nimport numpy as np\n"
    if kill_at is not None:
        prologue += _KILL_AT_RENAME.replace("KILL_AT", str(kill_at))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", prologue + textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    return proc


def _temps(directory):
    return sorted(n for n in os.listdir(directory) if ".tmp-" in n)


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
