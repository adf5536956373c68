"""Iterator checkpoints resume mid-epoch at the exact next element; caches and snapshots
never read back partial data."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.checkpoint import Checkpoint, latest_checkpoint


def _elements(it, n=None):
    out = []
    for e in it:
        out.append(tf.nest.map_structure(lambda t: t.numpy().tolist(), e))
        if n is not None and len(out) == n:
            break
    return out


def _pipeline():
    ds = tf.data.Dataset.range(40).shuffle(10, seed=3).map(
        lambda x: (x, x * x), num_parallel_calls=2).batch(3).prefetch(2)
    return ds


def test_iterator_resumes_at_exact_next_element(tmp_path):
    full = _elements(iter(_pipeline()))
    it = iter(_pipeline())
    first = _elements(it, 4)
    ckpt = Checkpoint(iterator=it, step=tf.Variable(4))
    path = ckpt.save(str(tmp_path / "ckpt"))
    rest_original = _elements(it)
    assert first + rest_original == full

    it2 = iter(_pipeline())
    _elements(it2, 1)  # a different position, overwritten by restore
    ckpt2 = Checkpoint(iterator=it2, step=tf.Variable(0))
    ckpt2.restore(latest_checkpoint(str(tmp_path))).assert_consumed()
    assert int(ckpt2.step) == 4
    assert _elements(it2) == rest_original
    assert os.path.basename(path) == "ckpt-1"


def test_save_state_of_interleave_and_parallel_map():
    def make():
        return tf.data.Dataset.range(6).interleave(
            lambda x: tf.data.Dataset.range(10 * x, 10 * x + 3), cycle_length=2,
            num_parallel_calls=2).map(lambda v: v + 1, num_parallel_calls=2)
    full = _elements(iter(make()))
    it = iter(make())
    head = _elements(it, 5)
    state = it.save_state()
    it2 = iter(make())
    it2.restore_state(state)
    assert head + _elements(it2) == full


def test_checkpoint_restores_variables_and_reports_missing(tmp_path):
    v = tf.Variable([1.0, 2.0])
    path = Checkpoint(v=v).write(str(tmp_path / "w"))
    v2 = tf.Variable([0.0, 0.0])
    Checkpoint(v=v2).restore(path).assert_consumed()
    np.testing.assert_allclose(v2.numpy(), [1.0, 2.0])
    with pytest.raises(AssertionError, match="without a saved value"):
        Checkpoint(v=v2, other=tf.Variable(1.0)).restore(path).assert_consumed()
    with pytest.raises(tf.errors.NotFoundError):
        Checkpoint(v=v2).restore(str(tmp_path / "nope"))


def test_memory_cache_second_epoch_reads_cache():
    calls = []

    def f(x):
        calls.append(int(x))
        return x
    ds = tf.data.Dataset.range(5).map(f).cache()
    assert _elements(ds) == _elements(ds) == list(range(5))
    assert calls == list(range(5))


def test_file_cache_partial_never_used_and_second_writer_refused(tmp_path):
    name = str(tmp_path / "cache")
    calls = []

    def f(x):
        calls.append(int(x))
        return x
    ds = tf.data.Dataset.range(6).map(f).cache(name)
    it = iter(ds)
    next(it)
    with pytest.raises(tf.errors.AlreadyExistsError, match="concurrent caching iterator"):
        next(iter(ds))
    it.close()  # abandoned mid-way: no partial cache may remain
    assert not os.path.exists(name + ".tlcache")
    assert _elements(ds) == list(range(6))
    calls.clear()
    assert _elements(ds) == list(range(6))
    assert calls == []  # read from the complete cache file


def test_snapshot_written_once_read_in_parallel_and_invalidated(tmp_path):
    path = str(tmp_path / "snap")
    calls = []

    def expensive(x):
        calls.append(int(x))
        return x * 10
    ds = tf.data.Dataset.range(20).map(expensive).snapshot(path)
    assert _elements(ds) == [x * 10 for x in range(20)]
    assert len(calls) == 20
    calls.clear()
    assert _elements(ds) == [x * 10 for x in range(20)]
    assert calls == []
    changed = tf.data.Dataset.range(20).map(lambda x: x * 11).snapshot(path, compression="GZIP")
    with pytest.warns(UserWarning, match="different pipeline"):
        assert _elements(changed)[:3] == [0, 11, 22]


def test_snapshot_killed_mid_write_is_rewritten_not_read_partial(tmp_path):
    path = str(tmp_path / "snap")
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {os.getcwd()!r})
        import tensorlite as tf
        def slow(x):
            if os.environ.get("KILL_AT") == str(int(x)):
                os.kill(os.getpid(), 9)
            return x + 100
        ds = tf.data.Dataset.range(30).map(slow).snapshot({path!r})
        print(sum(int(v) for v in ds))
    """)
    env = dict(os.environ, KILL_AT="7")
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60,
                            env=env)
    assert killed.returncode != 0
    leftovers = [d for _, dirs, _ in os.walk(path) for d in dirs if d.startswith(".tmp-")]
    assert leftovers  # the dead writer left its temporary directory ...
    env.pop("KILL_AT")
    again = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60,
                           env=env, text=True)
    assert again.returncode == 0, again.stderr
    assert int(again.stdout) == sum(range(100, 130))  # ... rewritten, never read back partial
    leftovers = [d for _, dirs, _ in os.walk(path) for d in dirs if d.startswith(".tmp-")]
    assert leftovers == []
    third = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60,
                           env=env, text=True)
    assert int(third.stdout) == sum(range(100, 130))


def test_snapshot_of_nested_lambda_map_is_reused_across_processes(tmp_path):
    """Fingerprints hash nested code by bytecode and constants, not by repr (which holds
    addresses and set orders): a second process reuses the first one's snapshot."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = textwrap.dedent(f"""
        import tensorlite as tf
        ds = tf.data.Dataset.range(6).map(
            lambda x: tf.py_function(lambda v: v + (1 if str(v) in {{"a", "b"}} else 2),
                                     [x], tf.int64))
        print([int(v) for v in ds.snapshot({str(tmp_path / "snap")!r})])
    """)
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONPATH=root, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == str([v + 2 for v in range(6)])
    assert len(os.listdir(tmp_path / "snap")) == 1
