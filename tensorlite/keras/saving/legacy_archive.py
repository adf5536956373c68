"""Loading `.keras` archives written by earlier tensorlite versions (format
`tensorlite-keras-1`: `config.json` with the model entry and compile settings, and
`weights.npz` with the weights in `model.weights` order). New archives are Keras 3's.

Example:
    >>> model = tf.keras.models.load_model("old.keras")   # dispatched here by its format
"""
from tensorlite.framework import errors
from tensorlite.keras.saving.keras_archive import read_member, read_npz


def load(z, config, path, custom_objects=None, compile=True):  # noqa: A002
    """The model of an open tensorlite-keras-1 archive."""
    from tensorlite.keras.saving.registry import get_class, instantiate  # noqa: PLC0415
    try:
        weights = read_npz(read_member(z, "weights.npz", path), path)
        arrays = [weights[f"arr_{i}"] for i in range(len(weights))]
        entry = config["model"]
    except (KeyError, ValueError) as e:
        raise errors.DataLossError(None, None, f"{path} is not a complete tensorlite model "
                                   f"archive: {e}") from None
    cls = get_class(entry["class_name"], custom_objects)
    model = instantiate(cls, entry["config"], custom_objects) \
        if entry.get("config") is not None and hasattr(cls, "from_config") else cls()
    if not model.built:
        if entry.get("build_input_shape") is None:
            raise ValueError(f"Cannot rebuild {entry['class_name']}: its input shape was not "
                             f"recorded")
        model.build(entry["build_input_shape"])
    model.set_weights(arrays)
    if compile and config.get("compile_config"):
        from tensorlite.keras.saving.keras_config import compile_from_keras  # noqa: PLC0415
        compile_from_keras(model, config["compile_config"], custom_objects)
    return model
