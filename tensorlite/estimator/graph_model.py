"""One mode of a graph-mode Estimator: model_fn built once in a fresh `tf.Graph()`, as
TensorFlow's Estimator does, and a Session over it whose variables come from model_dir.

Features and labels become placeholders shaped like input_fn's first batch with the batch
dimension left None (TF feeds its input pipeline's tensors instead; a placeholder per leaf
is how tensorlite's v1 graphs take outside data). model_fn sees them in the structure
input_fn gave (a dict of tensors, or one tensor).

Example:
    >>> model = GraphModel(estimator, ModeKeys.TRAIN, features, labels)
    >>> sess = model.session(estimator.model_dir)
    >>> sess.run(model.spec.loss, feed_dict=model.feed(features, labels))
"""
import contextlib
import re

import numpy as np

from tensorlite.compat.v1 import graph as v1_graph
from tensorlite.compat.v1.optimizers import get_or_create_global_step
from tensorlite.compat.v1.placeholder import placeholder
from tensorlite.compat.v1.session import Session
from tensorlite.compat.v1.variables import (global_variables, global_variables_initializer,
                                            local_variables_initializer)
from tensorlite.estimator import graph_checkpoint
from tensorlite.estimator import warm_start as warm_start_lib
from tensorlite.framework import dtypes, nest
from tensorlite.framework.tensor import Tensor


def as_numpy(value):
    """A batch leaf (tensorlite Tensor, array, list) as a NumPy array."""
    if isinstance(value, Tensor):
        return np.asarray(value._value)
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def is_graph_train_op(train_op):
    """True for TF1's train_op (a graph Operation or tensor); False for the eager path's
    Keras optimizer (or its name)."""
    return not (isinstance(train_op, str) or hasattr(train_op, "apply_gradients"))


def _placeholder_for(value, name):
    arr = as_numpy(value)
    if arr.ndim == 0:
        raise ValueError(f"input_fn must give batches (a leading batch dimension); "
                         f"{name!r} is a scalar")
    clean = re.sub(r"[^A-Za-z0-9_.\-/]", "_", name) or "input"
    return placeholder(dtypes.as_dtype(arr.dtype), [None] + list(arr.shape[1:]), name=clean)


def _placeholders(structure, prefix):
    if isinstance(structure, dict):
        return {k: _placeholder_for(v, str(k)) for k, v in structure.items()}
    flat = nest.flatten(structure)
    phs = [_placeholder_for(v, prefix if len(flat) == 1 else f"{prefix}_{i}")
           for i, v in enumerate(flat)]
    return nest.pack_like(structure, phs)


@contextlib.contextmanager
def fresh_graph(graph):
    """`graph` as the default graph, with Keras layer names counted afresh inside it: TF
    numbers Keras layers per graph, so model_fn's `dense`, `dense_1` (and the checkpoint
    keys they give) are the same in every graph an Estimator builds, in any process."""
    from tensorlite.keras import backend  # noqa: PLC0415 - Keras only when model_fn uses it
    saved = getattr(backend._state, "names", None)
    backend._state.names = None
    try:
        with graph.as_default():
            yield graph
    finally:
        backend._state.names = saved


class GraphModel:
    """model_fn's graph for one mode: placeholders, the EstimatorSpec, the global step."""

    def __init__(self, estimator, mode, features, labels):
        self.mode, self.graph = mode, v1_graph.Graph()
        seed = estimator.config.tf_random_seed
        if seed is not None:
            # TF seeds each graph it builds; tensorlite has no graph-level seed, so this is
            # tf.random.set_seed(seed), which also restarts the process's seeded streams
            from tensorlite.ops.random_ops import set_seed  # noqa: PLC0415
            set_seed(seed)
        with fresh_graph(self.graph):
            self.features = _placeholders(features, "feature")
            self.labels = None if labels is None else _placeholders(labels, "label")
            self.global_step = get_or_create_global_step()
            self.spec = estimator._invoke_model_fn(self.features, self.labels, mode)
        self.variables = None   # fixed by session(), after hooks' begin() may add some

    def feed(self, features, labels=None):
        """feed_dict of one batch for this graph's placeholders."""
        out = {}
        for ph, value in zip(nest.flatten(self.features), nest.flatten(features)):
            out[ph] = as_numpy(value)
        if self.labels is not None:
            if labels is None:
                raise ValueError("input_fn gave no labels, but model_fn was built with them")
            for ph, value in zip(nest.flatten(self.labels), nest.flatten(labels)):
                out[ph] = as_numpy(value)
        return out

    def session(self, model_dir, checkpoint_path=None, require_checkpoint=False,
                warm_start=None):
        """A Session with initialized variables, restored from `checkpoint_path` or
        model_dir's latest checkpoint when there is one (else warm-started from
        `warm_start`, WarmStartSettings, when given). Called after the hooks' begin(),
        as TF finalizes its Scaffold then: variables a hook made are saved too."""
        with self.graph.as_default():
            self.variables = global_variables()
            init = [global_variables_initializer(), local_variables_initializer()]
        sess = Session(graph=self.graph)
        sess.run(init)
        prefix = checkpoint_path or graph_checkpoint.latest(model_dir)
        if prefix is None and require_checkpoint:
            raise ValueError(f"Could not find trained model in model_dir: {model_dir}. "
                             f"Train the Estimator first (or pass checkpoint_path)")
        if prefix is not None:
            graph_checkpoint.restore(sess, self.variables, prefix)
        elif warm_start is not None:
            warm_start_lib.apply(sess, self.variables, warm_start)
        return sess
