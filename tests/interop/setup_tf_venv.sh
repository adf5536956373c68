#!/usr/bin/env bash
# Creates the second virtual environment that the interop tests (pytest -m interop) run real
# TensorFlow in, as a subprocess: tensorflow-cpu, tf-keras (tf.keras 2's checkpoint and
# SavedModel layouts under TF_USE_LEGACY_KERAS=1) and h5py. tensorlite itself never
# imports TensorFlow. Usage: tests/interop/setup_tf_venv.sh [VENV_DIR] (default .venv-tf).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${1:-.venv-tf}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import tensorflow, tf_keras, h5py" \
        >/dev/null 2>&1; then
    exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q "tensorflow-cpu>=2.16,<3" h5py
# tf-keras requires the `tensorflow` package by name; tensorflow-cpu provides the same
# module, so tf-keras of the same minor version goes in without its dependencies.
minor=$("$venv/bin/python" -c "import tensorflow as t; print('.'.join(t.__version__.split('.')[:2]))")
"$venv/bin/pip" install -q --no-deps "tf-keras~=${minor}.0"
