"""`tensorflow_hub` for tensorlite (`import tensorlite.hub as hub`): models by handle.

`hub.load(handle)` resolves a handle (a directory, or a URL downloaded once into
`TFHUB_CACHE_DIR`, see resolver.py) and loads the SavedModel there with
`tf.saved_model.load`; `hub.KerasLayer` wraps it as a Keras layer; `hub.Module` is seed
004's TF1-style module object and `hub.text_embedding_column` its feature column for
canned Estimators; `hub.resolve` gives the local directory.

Example:
    >>> layer = hub.KerasLayer("https://example.org/models/embedder/1", trainable=True)
"""
from tensorlite.hub.feature_column import text_embedding_column
from tensorlite.hub.keras_layer import KerasLayer
from tensorlite.hub.resolver import resolve


def load(handle, tags=None, options=None):
    """`hub.load`: the SavedModel of a handle, loaded with tf.saved_model.load."""
    from tensorlite.saved_model.load import load as load_saved_model  # noqa: PLC0415
    return load_saved_model(resolve(handle), tags=tags)


class Module:
    """TF 1's `hub.Module(handle, trainable=True, tags={"train"})`: calling it runs the
    module's `__call__` (or a named signature); `variables` are its weights."""

    def __init__(self, spec, trainable=False, name="module", tags=None):
        self._loaded = load(spec, tags=tags if tags is None else sorted(tags))
        self.trainable = trainable
        self.name = name
        self.variable_map = {v.name: v for v in KerasLayer(self._loaded).weights}

    @property
    def variables(self):
        return list(self.variable_map.values())

    def __call__(self, inputs=None, signature=None, as_dict=False):
        if signature in (None, "default") and callable(self._loaded):
            return self._loaded(inputs)
        out = self._loaded.signatures[signature](**(inputs if isinstance(inputs, dict)
                                                     else {"inputs": inputs}))
        return out if as_dict else next(iter(out.values()))

    def get_signature_names(self):
        return sorted(getattr(self._loaded, "signatures", {}))


__all__ = ["load", "resolve", "KerasLayer", "Module", "text_embedding_column"]
