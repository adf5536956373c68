"""TensorFlow's side of test_ctc_interop.py: run under real TensorFlow by
conftest.run_tf(..., script=this file), never imported by tensorlite or pytest.

    python tf_ctc_side.py values DIR   runs ctc_cases.run_all on DIR/inputs.npz and writes
                                       DIR/tf_out.npz

The last line printed is a JSON object of facts the test compares.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf
import ctc_cases  # (this directory is on sys.path)


def values(directory):
    out = ctc_cases.run_all(tf, dict(np.load(os.path.join(directory, "inputs.npz"))))
    np.savez(os.path.join(directory, "tf_out.npz"), **out)
    return {"names": sorted(out)}


if __name__ == "__main__":
    print(json.dumps({"values": values}[sys.argv[1]](sys.argv[2])))
