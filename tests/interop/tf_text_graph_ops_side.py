"""TensorFlow's side of test_text_graph_ops_interop.py: run under real TensorFlow by
conftest.run_tf(..., script=this file), never imported by tensorlite or pytest.

    python tf_text_graph_ops_side.py write DIR   saves text_graph_ops_cases' module to
                                                 DIR/tf_ops; reports its outputs
    python tf_text_graph_ops_side.py load DIR    loads tensorlite's DIR/tl_ops; reports its
                                                 outputs

The last line printed is a JSON object of facts the test compares.
"""
import json
import os
import sys

import tensorflow as tf
import text_graph_ops_cases as cases  # (this directory is on sys.path)


def write(directory):
    m = cases.module(tf)
    tf.saved_model.save(m, os.path.join(directory, "tf_ops"))
    return cases.run(tf, m)


def load(directory):
    return cases.run(tf, tf.saved_model.load(os.path.join(directory, "tl_ops")))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps({"write": write, "load": load}[sys.argv[1]](sys.argv[2])))
