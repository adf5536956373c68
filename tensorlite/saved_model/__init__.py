"""`tf.saved_model`: TensorFlow's SavedModel directories.

`load(dir)` restores a SavedModel written by TensorFlow (load.py): its objects, variables,
functions and signatures, run on tensorlite. `python -m tensorlite.saved_model show --dir DIR
--all` prints what a SavedModel holds, as `saved_model_cli show` does (show.py).

Writing SavedModels is not built yet: `save` raises NotImplementedError saying so.
"""
from tensorlite.saved_model.load import load  # noqa: F401

SERVING = "serve"
TRAINING = "train"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


def save(obj, export_dir, signatures=None, options=None):
    """`tf.saved_model.save`: not built yet in tensorlite."""
    raise NotImplementedError(
        "tf.saved_model.save is not implemented in tensorlite yet: exporting needs "
        "FunctionDefs in TensorFlow's op names and attrs for every op (tf rules are declared "
        "for MatMul/BatchMatMulV2 and ReadVariableOp only), a SavedObjectGraph with the "
        "concrete functions' signatures, and the serving_default SignatureDef. Save weights "
        "with tf.train.Checkpoint or model.save('m.keras'), which TensorFlow reads.")


__all__ = ["load", "save", "SERVING", "TRAINING", "DEFAULT_SERVING_SIGNATURE_DEF_KEY"]
