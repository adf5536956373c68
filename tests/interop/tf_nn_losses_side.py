"""TensorFlow's side of test_nn_losses_interop.py: run under real TensorFlow by
conftest.run_tf(..., script=this file), never imported by tensorlite or pytest.

    python tf_nn_losses_side.py values DIR   runs nn_losses_cases.run_all on DIR/inputs.npz,
                                             writes DIR/tf_out.npz

The last line printed is a JSON object of facts the test compares.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf
import nn_losses_cases  # (this directory is on sys.path)


def values(directory):
    out = nn_losses_cases.run_all(tf, dict(np.load(os.path.join(directory, "inputs.npz"))))
    np.savez(os.path.join(directory, "tf_out.npz"), **out)
    return {"names": sorted(out)}


if __name__ == "__main__":
    print(json.dumps({"values": values}[sys.argv[1]](sys.argv[2])))
