"""`tf.saved_model`: TensorFlow's SavedModel directories.

`load(dir)` restores a SavedModel written by TensorFlow (load.py): its objects, variables,
functions and signatures, run on tensorlite. `python -m tensorlite.saved_model show --dir DIR
--all` prints what a SavedModel holds, as `saved_model_cli show` does (show.py).

`save(obj, dir, signatures=...)` writes one in TensorFlow's layout (writer.py).
"""
from tensorlite.saved_model.asset import Asset  # noqa: F401
from tensorlite.saved_model.load import load  # noqa: F401
from tensorlite.saved_model.options import LoadOptions, SaveOptions  # noqa: F401


def save(obj, export_dir, signatures=None, options=None):
    """`tf.saved_model.save` (see writer.py).

    Example:
        >>> tf.saved_model.save(module, "/tmp/m", signatures=module.f)  # doctest: +SKIP
    """
    from tensorlite.saved_model.writer import save as _save  # noqa: PLC0415 - protobuf
    return _save(obj, export_dir, signatures, options)


SERVING = "serve"
TRAINING = "train"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


__all__ = ["Asset", "LoadOptions", "SaveOptions", "load", "save", "SERVING", "TRAINING", "DEFAULT_SERVING_SIGNATURE_DEF_KEY"]
