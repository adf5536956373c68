"""BackupAndRestore: a fit killed mid-epoch (SIGKILL, in a subprocess) resumes at the exact
epoch and step, and ends with the weights an uninterrupted fit gives."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf

SCRIPT = r'''
import json, os, signal, sys
import numpy as np
import tensorlite as tf

backup_dir, kill_at, log_path, freq = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
kill_at = tuple(int(v) for v in kill_at.split(",")) if kill_at != "-" else None
freq = "epoch" if freq == "epoch" else int(freq)

def build():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh", input_shape=(3,)),
                                 tf.keras.layers.Dense(1)])
    model.set_weights([np.linspace(-1, 1, w.size).reshape(w.shape).astype("float32")
                       for w in model.get_weights()])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse")
    return model

class Log(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch
    def on_train_batch_end(self, batch, logs=None):
        with open(log_path, "a") as f:
            f.write(json.dumps([self.epoch, batch]) + "\n")
        if kill_at == (self.epoch, batch):
            os.kill(os.getpid(), signal.SIGKILL)

rng = np.random.default_rng(0)
x = rng.standard_normal((40, 3)).astype("float32")
y = (x @ np.array([[1.0], [-2.0], [0.5]], "float32"))
model = build()
backup = tf.keras.callbacks.BackupAndRestore(backup_dir, save_freq=freq)
model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, callbacks=[backup, Log()])
np.save(os.path.join(os.path.dirname(log_path), "final.npy"),
        np.concatenate([w.ravel() for w in model.get_weights()]))
'''


def _run(tmp_path, kill_at, freq):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    log = tmp_path / "steps.log"
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    return subprocess.run([sys.executable, str(script), str(tmp_path / "backup"), kill_at,
                           str(log), freq], env=env, capture_output=True, timeout=120)


def _steps(tmp_path):
    return [tuple(json.loads(line)) for line in (tmp_path / "steps.log").read_text().splitlines()]


@pytest.mark.parametrize("freq, resumes_at", [("1", (1, 3)), ("epoch", (1, 0))])
def test_killed_fit_resumes_at_the_exact_step(tmp_path, freq, resumes_at):
    reference = tmp_path / "ref"
    reference.mkdir()
    assert _run(reference, "-", freq).returncode == 0
    expected = np.load(reference / "final.npy")
    assert _steps(reference) == [(e, b) for e in range(3) for b in range(5)]

    killed = _run(tmp_path, "1,2", freq)
    assert killed.returncode == -9, killed.stderr.decode()[-2000:]
    assert (tmp_path / "backup").is_dir()
    before = _steps(tmp_path)
    assert before[-1] == (1, 2)
    done = _run(tmp_path, "-", freq)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    after = _steps(tmp_path)[len(before):]
    assert after[0] == resumes_at
    assert after[-1] == (2, 4)
    np.testing.assert_allclose(np.load(tmp_path / "final.npy"), expected, rtol=1e-5,
                               atol=1e-6)
    assert not (tmp_path / "backup").exists()  # deleted after a finished fit


def test_backup_needs_a_built_model(tmp_path):
    class Sub(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(1)

        def call(self, x):
            return self.d(x)

    x, y = np.ones((4, 2), "float32"), np.ones((4, 1), "float32")
    model = Sub()
    model.compile(optimizer="sgd", loss="mse")
    cb = tf.keras.callbacks.BackupAndRestore(str(tmp_path / "b"), delete_checkpoint=False)
    model.fit(x, y, epochs=1, verbose=0, callbacks=[cb])
    fresh = Sub()
    fresh.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="not built"):
        fresh.fit(x, y, epochs=2, verbose=0, callbacks=[cb])
