"""Keras models as serving SavedModels, in TensorFlow's layout (tensorlite/saved_model/writer.py).

- `model.export(dir)` (Keras 3): a SavedModel whose root holds the model's variables
  (`variables`, `trainable_variables`, `non_trainable_variables`) and a `serve` tf.function
  (inference mode: no dropout, batch-norm moving statistics) with a None batch dimension,
  also the `serving_default` signature; TensorFlow's `tf.saved_model.load(dir).serve(x)`
  and TensorFlow Serving-style signature calls run it.
- `model.save(dir)` without a `.keras`/`.h5` suffix (tf.keras 2's SavedModel format): the same
  SavedModel, with the model's `.keras` archive inside as `model.keras`, so that
  `tf.keras.models.load_model(dir)` rebuilds the Keras model; both appear at once.

Example:
    >>> model.export("/tmp/exported")
    >>> tf.saved_model.load("/tmp/exported").serve(x)
"""
import os



class ExportArchive:
    """The root object of an exported model: its variables and the `serve` endpoint (a
    plain object: tf.Module's `variables` is a property, here it is a saved list)."""

    def __init__(self, model, input_signature=None, callable_root=False):
        from tensorlite.saved_model.writer import inference_function  # noqa: PLC0415
        self.variables = list(model.variables)
        self.trainable_variables = list(model.trainable_variables)
        self.non_trainable_variables = list(model.non_trainable_variables)
        self.serve = inference_function(model, input_signature)
        if callable_root:  # tf.keras 2's model.save(dir): tf.saved_model.load(dir)(x) runs
            self.__call__ = self.serve


def export(model, filepath, input_signature=None, extra=None, callable_root=False):
    """Writes `model` as a serving SavedModel at `filepath`; `extra(tmp_dir)` may add files
    before the directory appears; `callable_root`: the loaded object is callable too (its
    `__call__` is `serve`), as tf.keras 2's model.save(dir) writes it."""
    from tensorlite.saved_model.writer import build, write  # noqa: PLC0415
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling "
                         "`build()` or by calling the model on a batch of data.")
    archive = ExportArchive(model, input_signature, callable_root)
    meta, tensors = build(archive, {"serving_default": archive.serve})
    write(os.fspath(filepath), meta, tensors, extra=extra)


__all__ = ["export", "ExportArchive"]
