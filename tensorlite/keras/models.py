"""`tf.keras.models`."""
from tensorlite.keras.engine.functional import Functional  # noqa: F401
from tensorlite.keras.engine.sequential import Sequential  # noqa: F401
from tensorlite.keras.engine.training import Model  # noqa: F401
from tensorlite.keras.saving.save import load_model  # noqa: F401


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model with the same architecture and freshly initialised weights."""
    from tensorlite.keras.saving.registry import get_class  # noqa: PLC0415
    config = model.get_config()
    return get_class("Functional" if isinstance(model, Functional) else
                     type(model).__name__).from_config(config)


def model_from_config(config, custom_objects=None):
    from tensorlite.keras.saving.registry import layer_from_config  # noqa: PLC0415
    return layer_from_config(config, custom_objects)


def model_from_json(json_string, custom_objects=None):
    """`tf.keras.models.model_from_json`: the model of `model.to_json()` (a Keras
    config: tensorlite's, Keras 3's or tf.keras 2's), with fresh weights."""
    import json  # noqa: PLC0415
    from tensorlite.keras.saving.keras_config import from_keras  # noqa: PLC0415
    from tensorlite.keras.saving.object_registration import custom_object_scope  # noqa: PLC0415
    with custom_object_scope(custom_objects):
        return from_keras(json.loads(json_string), custom_objects)
