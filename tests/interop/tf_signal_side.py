"""TensorFlow's side of test_signal_interop.py: run under real TensorFlow by
conftest.run_tf(..., script=this file), never imported by tensorlite or pytest.

    python tf_signal_side.py values DIR   runs signal_cases.run_all on DIR/inputs.npz and
                                          writes DIR/tf_out.npz
    python tf_signal_side.py load DIR     loads the SavedModel tensorlite wrote to DIR/model,
                                          calls its serving signature on DIR/pcm.npy and
                                          writes DIR/tf_load.npz

The last line printed is a JSON object of facts the test compares.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf
import signal_cases  # (this directory is on sys.path)


def values(directory):
    inputs = dict(np.load(os.path.join(directory, "inputs.npz")))
    out = signal_cases.run_all(tf, inputs)
    np.savez(os.path.join(directory, "tf_out.npz"), **out)
    return {"names": sorted(out)}


def load(directory):
    model = tf.saved_model.load(os.path.join(directory, "model"))
    serve = model.signatures["serving_default"]
    result = serve(pcm=tf.constant(np.load(os.path.join(directory, "pcm.npy"))))
    np.savez(os.path.join(directory, "tf_load.npz"), **{k: v.numpy() for k, v in result.items()})
    return {"outputs": sorted(result)}


if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    print(json.dumps({"values": values, "load": load}[command](directory)))
