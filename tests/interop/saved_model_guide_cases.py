"""The "Using the SavedModel format" guide's CustomModule (a tf.function reading a variable,
and a mutating method with an input_signature that returns None), written once for both
libraries: each saves it, and each loads every file of the two that exists so far.
Run under tensorlite by the test and under real TensorFlow by tf_cases_side.py."""
import os

import numpy as np


def custom_module(tf):
    """The guide's module, called once so that `__call__` has a trace to save."""
    class CustomModule(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(1.)

        @tf.function
        def __call__(self, x):
            return x * self.v

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def mutate(self, new_v):
            self.v.assign(new_v)

    module = CustomModule()
    module(tf.constant(0.))
    return module


def use(tf, path):
    """The guide's cells on a loaded file: call, mutate, call again."""
    imported = tf.saved_model.load(path)
    before = imported(tf.constant(3.)).numpy()
    returned = imported.mutate(tf.constant(2.))
    return {"signatures": np.array(len(imported.signatures)), "before": before,
            "mutate_returns_none": np.array(returned is None),
            "after": imported(tf.constant(3.)).numpy(), "v": imported.v.numpy()}


def run_all(tf, inputs):
    directory = str(inputs["directory"])
    mine = "tensorlite" if tf.__name__ == "tensorlite" else "tensorflow"
    tf.saved_model.save(custom_module(tf), os.path.join(directory, mine))
    out = {}
    for lib in ("tensorlite", "tensorflow"):
        path = os.path.join(directory, lib)
        if os.path.exists(path):
            out.update({f"{lib}_file_{k}": v for k, v in use(tf, path).items()})
    return out
