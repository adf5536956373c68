"""Names in a saved config -> layer and model classes, without running the file's code.

Only these resolve, in this order: the caller's `custom_objects`, the active
`custom_object_scope`s, registered objects (`object_registration`), and tensorlite's own
Keras classes. A config's `"module"` field is written for TensorFlow's readers and never
imported.
"""
from tensorlite.keras.layers.layer import Layer
from tensorlite.keras.saving.object_registration import lookup


def _known_classes():
    from tensorlite.keras import layers as layers_mod  # noqa: PLC0415
    from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
    from tensorlite.keras.engine.sequential import Sequential  # noqa: PLC0415
    out = {name: obj for name, obj in vars(layers_mod).items()
           if isinstance(obj, type) and issubclass(obj, Layer)}
    out.update({"Sequential": Sequential, "Functional": Functional, "Model": Functional})
    return out


def get_class(class_name, custom_objects=None, registered_name=None):
    """The class saved as `class_name`; an unknown name is a ValueError saying how to
    register it. Nothing named in the file is imported."""
    found = lookup(class_name, registered_name, custom_objects)
    if found is not None:
        return found
    known = _known_classes()
    if class_name in known:
        return known[class_name]
    raise ValueError(
        f"Unknown layer: '{class_name}'"
        + (f" (registered as '{registered_name}')" if registered_name not in (None, class_name)
           else "")
        + ". Please ensure you are using a `keras.utils.custom_object_scope` and that this "
        f"object is included in the scope, pass custom_objects={{'{class_name}': "
        f"{class_name}}} to load_model, or decorate the class with "
        f"@keras.utils.register_keras_serializable(). Class names in a saved file are never "
        f"imported from its 'module' field.")


def layer_from_config(entry, custom_objects=None):
    if not isinstance(entry, dict) or not isinstance(entry.get("class_name"), str) \
            or not isinstance(entry.get("config", {}), dict):
        raise ValueError(f"Malformed layer entry in a model config: {str(entry)[:200]}")
    cls = get_class(entry["class_name"], custom_objects, entry.get("registered_name"))
    return instantiate(cls, dict(entry.get("config") or {}), custom_objects)


def instantiate(cls, config, custom_objects=None):
    """`cls.from_config(config)` (passing custom_objects where it takes them), or
    `cls(**config)` for classes without from_config."""
    if hasattr(cls, "from_config"):
        try:
            return cls.from_config(config, custom_objects=custom_objects)
        except TypeError:
            return cls.from_config(config)
    return cls(**config)
