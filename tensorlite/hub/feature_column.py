"""`hub.text_embedding_column(key, module_spec)` (TF 1's TF Hub API): a dense feature column
whose value for a batch of sentences (the string feature `key`, one sentence per example) is
a text-embedding module's [batch, dim] output.

The module is loaded once per column, on first use (in a thread of its own, see _load), with
hub.load (a local directory or a URL, see resolver.py), and called on the sentences as a
[batch] tf.string tensor. Its variables are not trained (trainable=False).

Example:
    >>> col = hub.text_embedding_column("sentence", module_spec="/models/nnlm-en-dim128")
    >>> tf.feature_column.input_layer({"sentence": np.array(["a film"])}, [col]).shape
    TensorShape([1, 128])
"""
import concurrent.futures

import numpy as np


class TextEmbeddingColumn:
    """The dense column text_embedding_column returns (input_layer calls `dense`)."""

    def __init__(self, key, module_spec):
        self.key, self.module_spec = key, module_spec
        self.name = f"{key}_hub_module_embedding"
        self._module = None

    def _load(self):
        if self._module is None:
            from tensorlite.hub import load  # noqa: PLC0415 - hub/__init__ imports us
            # Loaded in a thread of its own: the caller may be inside an Estimator's
            # variable-creator scope or a graph (both thread-local), which must not capture
            # the module's variables: they are created once, here, and kept eager.
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                module = pool.submit(load, self.module_spec).result()
            if not callable(module):
                raise ValueError(f"text_embedding_column: module {self.module_spec!r} is not "
                                 f"callable; it must map a [batch] string tensor to "
                                 f"[batch, dim] embeddings")
            self._module = module
        return self._module

    def dense(self, features, state):
        """The module's embeddings of the sentences, as float32 [batch, dim]."""
        from tensorlite.feature_column import _raw  # noqa: PLC0415
        from tensorlite.framework import dtypes  # noqa: PLC0415
        from tensorlite.framework.convert import constant  # noqa: PLC0415
        from tensorlite.ops import math_ops  # noqa: PLC0415
        raw = _raw(features, self.key)
        if raw.dtype.kind not in "OSU":
            raise ValueError(f"text_embedding_column {self.key!r}: the feature must hold "
                             f"strings (one sentence per example), got dtype {raw.dtype}")
        sentences = np.array([v if isinstance(v, bytes) else str(v).encode()
                              for v in raw.reshape(-1)], dtype=object)
        out = self._load()(constant(sentences, dtype=dtypes.string))
        return math_ops.cast(out, dtypes.float32)


def text_embedding_column(key, module_spec, trainable=False):
    """A dense column embedding the string feature `key` with the text module at
    `module_spec` (a handle hub.load resolves). trainable=True (fine-tuning the module's
    variables inside an Estimator) is not implemented."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"text_embedding_column: key must be a feature name, got {key!r}")
    if trainable:
        raise NotImplementedError("hub.text_embedding_column(trainable=True): fine-tuning the "
                                  "module inside a canned Estimator is not implemented in "
                                  "tensorlite; use trainable=False, or hub.KerasLayer("
                                  "trainable=True) in a Keras model")
    return TextEmbeddingColumn(key, module_spec)
