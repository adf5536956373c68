"""`tf.compat.v1.train`: TF1 optimizers and the global step (optimizers.py); everything
else comes from `tf.train`."""
from tensorlite.compat.v1.optimizers import (AdamOptimizer, GradientDescentOptimizer,
                                             MomentumOptimizer, Optimizer, get_global_step,
                                             get_or_create_global_step)
from tensorlite.compat.v1.saver import Saver

__all__ = ["AdamOptimizer", "GradientDescentOptimizer", "MomentumOptimizer", "Optimizer", "Saver",
           "get_global_step", "get_or_create_global_step"]


def __getattr__(name):
    import tensorlite.train  # noqa: PLC0415
    try:
        return getattr(tensorlite.train, name)
    except AttributeError:
        raise AttributeError(f"module 'tensorlite.compat.v1.train' has no attribute "
                             f"{name!r}") from None
