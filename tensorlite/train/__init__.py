"""`tf.train`: Example protocol buffers and checkpoints.

The Example messages need the optional `protobuf` package; they load on first use, so
`import tensorlite` stays fast and works without it.
"""
from tensorlite.checkpoint import (Checkpoint, CheckpointManager,  # noqa: F401
                                   CheckpointReader, get_checkpoint_state, latest_checkpoint,
                                   list_variables, load_checkpoint, load_variable)

_EXAMPLE_MESSAGES = ("BytesList", "FloatList", "Int64List", "Feature", "Features",
                     "FeatureList", "FeatureLists", "Example", "SequenceExample")


# TF 1.x's `tf.train.AdagradOptimizer(...)` and the other TF1 optimizers: in
# TensorFlow 2 they live in tf.compat.v1.train, which TF1-era code reaches as tf.train.
_TF1_OPTIMIZERS = ("Optimizer", "GradientDescentOptimizer", "MomentumOptimizer",
                   "AdamOptimizer", "AdagradOptimizer")


def __getattr__(name):
    if name in _TF1_OPTIMIZERS:
        from tensorlite.compat.v1 import optimizers  # noqa: PLC0415 - the TF1 facade
        return getattr(optimizers, name)
    if name in _EXAMPLE_MESSAGES:
        from tensorlite.protos import example  # noqa: PLC0415 - optional dependency, lazily
        return getattr(example, name)
    raise AttributeError(f"module 'tensorlite.train' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_EXAMPLE_MESSAGES))


__all__ = ["Checkpoint", "CheckpointManager", "CheckpointReader", "get_checkpoint_state",
           "latest_checkpoint", "list_variables", "load_checkpoint", "load_variable",
           *_EXAMPLE_MESSAGES]
