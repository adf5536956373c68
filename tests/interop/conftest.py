"""Interop tests run real TensorFlow in a subprocess of its own virtual environment (made by
tests/interop/setup_tf_venv.sh, which .ci/run calls): TensorFlow writes files that
tensorlite must read, and reads files that tensorlite wrote.

The TensorFlow interpreter is $TENSORLITE_TF_PYTHON, else .venv-tf/bin/python in the
repository. Without one these tests skip, saying how to make it; under CI (CI=true) a
missing TensorFlow is a failure, not a skip.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TF_SIDE = Path(__file__).with_name("tf_side.py")
TF_TIMEOUT_S = 400


def tf_python():
    path = os.environ.get("TENSORLITE_TF_PYTHON") or str(ROOT / ".venv-tf" / "bin" / "python")
    return path if os.path.exists(path) else None


_MISSING = ("real TensorFlow is not installed: run tests/interop/setup_tf_venv.sh (or set "
            "TENSORLITE_TF_PYTHON to a Python that has tensorflow-cpu and tf-keras)")


def pytest_collection_modifyitems(config, items):
    if tf_python() is not None or os.environ.get("CI") == "true":
        return  # under CI a missing TensorFlow fails in run_tf, never silently skips
    for item in items:
        if "interop" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=_MISSING))


def run_tf(command, directory, legacy_keras=True, script=TF_SIDE):
    """Runs `tf_side.py COMMAND DIRECTORY` (or another `script` of this directory) under real
    TensorFlow, with tf.keras 2 (tf_keras) or Keras 3 as tf.keras; returns the JSON object it
    prints last."""
    if tf_python() is None:
        raise AssertionError(_MISSING)
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1" if legacy_keras else "0",
               TF_CPP_MIN_LOG_LEVEL="3",
               CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")
    env.pop("PYTHONPATH", None)  # TensorFlow's side must not import tensorlite
    proc = subprocess.run([tf_python(), str(script), command, str(directory)],
                          capture_output=True, text=True, timeout=TF_TIMEOUT_S, env=env,
                          cwd=str(directory))
    if proc.returncode != 0:
        raise AssertionError(f"TensorFlow side failed ({command}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def tf_run():
    return run_tf

