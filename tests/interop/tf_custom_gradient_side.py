"""TensorFlow's side of test_custom_gradient_savedmodel_interop.py: run under real
TensorFlow by conftest.run_tf(..., script=this file), never imported by tensorlite or pytest.

    python tf_custom_gradient_side.py write DIR   saves custom_gradient_cases' modules to
                                                  DIR/tf_clip, DIR/tf_clip_off
                                                  (experimental_custom_gradients=False) and
                                                  DIR/tf_two, DIR/tf_variable and
                                                  DIR/tf_two_outputs
    python tf_custom_gradient_side.py load DIR    loads tensorlite's DIR/tl_* of these;
                                                  reports their gradients
    python tf_custom_gradient_side.py load_tf DIR loads TensorFlow's DIR/tf_*; reports
                                                  their gradients

TensorFlow's own files are loaded in a process of their own: in the writing process the
custom gradients stay registered, and a file saved without them would still use them.

The last line printed is a JSON object of facts the test compares.
"""
import json
import os
import sys

import tensorflow as tf
import custom_gradient_cases as cases  # (this directory is on sys.path)


def write(directory):
    path = lambda name: os.path.join(directory, name)  # noqa: E731
    tf.saved_model.save(cases.clip_module(tf), path("tf_clip"), options=tf.saved_model.
                        SaveOptions(experimental_custom_gradients=True))
    tf.saved_model.save(cases.clip_module(tf), path("tf_clip_off"), options=tf.saved_model.
                        SaveOptions(experimental_custom_gradients=False))
    tf.saved_model.save(cases.two_input_module(tf), path("tf_two"))
    tf.saved_model.save(cases.variable_gradient_module(tf), path("tf_variable"))
    tf.saved_model.save(cases.two_output_module(tf), path("tf_two_outputs"))
    return {"written": sorted(os.listdir(directory))}


def load(directory, prefix="tl_"):
    path = lambda name: os.path.join(directory, prefix + name)  # noqa: E731
    facts = {"clip": cases.clip_gradient(tf, tf.saved_model.load(path("clip"))),
             "two": cases.two_input_gradients(tf, tf.saved_model.load(path("two"))),
             "variable": cases.vector_gradient(tf, tf.saved_model.load(path("variable"))),
             "two_outputs": cases.vector_gradient(tf, tf.saved_model.load(
                 path("two_outputs")))}
    if os.path.exists(path("clip_off")):  # no gradient saved: TensorFlow raises
        try:
            facts["clip_off"] = cases.clip_gradient(tf, tf.saved_model.load(path("clip_off")))
        except LookupError as e:
            facts["clip_off"] = f"LookupError: {str(e)[:40]}"
    return facts


if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    commands = {"write": write, "load": load,
                "load_tf": lambda directory: load(directory, prefix="tf_")}
    print(json.dumps(commands[command](directory)))
