"""OpenBLAS environment settings made at import (they only work before NumPy loads)."""
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
_PROBE = ("import os, sys\n{first}\nimport tensorlite\n"
          "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'), "
          "tensorlite.framework.blas_tuning.APPLIED)")


def _probe(first="", **env):
    full = {k: v for k, v in os.environ.items()
            if k not in ("OPENBLAS_THREAD_TIMEOUT", "TENSORLITE_BLAS_TUNING")}
    full.update(env, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", _PROBE.format(first=first)], env=full,
                         capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.strip().splitlines()[-1]


def test_idle_openblas_threads_stop_spinning_quickly():
    timeout, applied = _probe().split(" ", 1)
    assert timeout == "4" and "OPENBLAS_THREAD_TIMEOUT" in applied


def test_a_users_setting_is_kept():
    assert _probe(OPENBLAS_THREAD_TIMEOUT="20").startswith("20 ")


def test_nothing_is_set_once_numpy_is_loaded_or_when_switched_off():
    assert _probe(first="import numpy") == "None []"
    assert _probe(TENSORLITE_BLAS_TUNING="0") == "None []"
