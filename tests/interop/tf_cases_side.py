"""TensorFlow's side of the interop tests whose cases are written once for both libraries
(a `*_cases.py` module of this directory with `run_all(tf, inputs)`): run under real
TensorFlow by conftest.run_tf(MODULE, DIR, script=this file), never imported by tensorlite
or pytest.

    python tf_cases_side.py ctc_cases DIR   runs ctc_cases.run_all(tf, DIR/inputs.npz) and
                                            writes DIR/tf_out.npz

The last line printed is a JSON object of facts the test compares (the outputs' names).
"""
import importlib
import json
import os
import sys

import numpy as np
import tensorflow as tf


def values(module_name, directory):
    if not module_name.endswith("_cases") or not module_name.isidentifier():
        raise SystemExit(f"not a cases module of this directory: {module_name!r}")
    cases = importlib.import_module(module_name)  # (this directory is on sys.path)
    out = cases.run_all(tf, dict(np.load(os.path.join(directory, "inputs.npz"))))
    np.savez(os.path.join(directory, "tf_out.npz"), **out)
    return {"names": sorted(out)}


if __name__ == "__main__":
    print(json.dumps(values(sys.argv[1], sys.argv[2])))
