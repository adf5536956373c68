"""TensorFlow's side of test_ragged_savedmodel_interop.py: run under real TensorFlow by
conftest.run_tf(..., script=this file), never imported by tensorlite or pytest.

    python tf_ragged_savedmodel_side.py write DIR   saves ragged_savedmodel_cases' modules
                                                    to DIR/tf_ragged and DIR/tf_sparse;
                                                    reports their outputs
    python tf_ragged_savedmodel_side.py load DIR    loads tensorlite's DIR/tl_ragged;
                                                    reports its outputs

The last line printed is a JSON object of facts the test compares.
"""
import json
import os
import sys

import tensorflow as tf
import ragged_savedmodel_cases as cases  # (this directory is on sys.path)


def write(directory):
    m, s = cases.module(tf), cases.sparse_module(tf)
    tf.saved_model.save(m, os.path.join(directory, "tf_ragged"),
                        signatures=cases.signatures(m))
    tf.saved_model.save(s, os.path.join(directory, "tf_sparse"))
    return {"ragged": cases.run(tf, tf.saved_model.load(os.path.join(directory,
                                                                     "tf_ragged"))),
            "sparse": cases.run_sparse(tf, s)}


def load(directory):
    return cases.run(tf, tf.saved_model.load(os.path.join(directory, "tl_ragged")))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    print(json.dumps({"write": write, "load": load}[sys.argv[1]](sys.argv[2])))
