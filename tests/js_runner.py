"""Runs the real TensorFlow.js (npm, pinned by js/package-lock.json) in Node for the TF.js
tests: `run_node("script.js", request)` runs tests/js/script.js with the JSON request on stdin
and returns the JSON it prints.

Without `node` the tests skip, saying so; with node but without js/node_modules they fail
with the command that installs it (`cd js && npm ci`, which .ci/run does).
"""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JS_DIR = Path(__file__).resolve().with_name("js")
NODE_TIMEOUT_S = 300

needs_node = pytest.mark.skipif(shutil.which("node") is None,
                                reason="node is not installed: the TF.js tests run the real "
                                       "@tensorflow/tfjs in Node (apt-get install nodejs npm)")


def run_node(script, request):
    """Runs tests/js/<script> under node with `request` as JSON on stdin; returns its JSON."""
    if not (ROOT / "js" / "node_modules" / "@tensorflow" / "tfjs").is_dir():
        raise AssertionError("@tensorflow/tfjs is not installed: run `cd js && npm ci` "
                             "(the committed package-lock.json pins it)")
    proc = subprocess.run(["node", str(JS_DIR / script)], input=json.dumps(request),
                          capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
    if proc.returncode != 0:
        raise AssertionError(f"node {script} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)
