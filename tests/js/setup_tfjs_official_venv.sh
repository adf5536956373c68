#!/usr/bin/env bash
# Creates a virtual environment with the official `tensorflowjs` pip converter
# (tensorflowjs_converter), for tests/test_tfjs_official_converter.py. It is NOT the interop
# venv: tensorflowjs 4.22 needs tensorflow-decision-forests, whose newest release pins
# tensorflow==2.19, so pip downgrades TensorFlow to 2.19 (and tf-keras to 2.19) here; ydf is
# held at 0.11 because newer ydf wheels need protobuf 6 gencode that TF 2.19's protobuf 5
# cannot load. Usage: tests/js/setup_tfjs_official_venv.sh [VENV_DIR]
# (default .venv-tfjs-official). About 1.5 GB; .ci/run makes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${1:-.venv-tfjs-official}"
if [ -x "$venv/bin/tensorflowjs_converter" ] && "$venv/bin/tensorflowjs_converter" --version \
        >/dev/null 2>&1; then
    exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q "tensorflowjs==4.22.0"
"$venv/bin/pip" install -q "ydf==0.11.0"
"$venv/bin/tensorflowjs_converter" --version
