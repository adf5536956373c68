"""`tf.compat.v1.train`: TF1 optimizers and the global step (optimizers.py); everything
else comes from `tf.train`."""
from tensorlite.compat.v1.forwarding import forward_to
from tensorlite.compat.v1.optimizers import (AdagradOptimizer, AdamOptimizer,
                                             GradientDescentOptimizer, MomentumOptimizer,
                                             Optimizer, get_global_step,
                                             get_or_create_global_step)
from tensorlite.compat.v1.saver import Saver

__all__ = ["AdagradOptimizer", "AdamOptimizer", "GradientDescentOptimizer", "MomentumOptimizer",
           "Optimizer", "Saver", "get_global_step", "get_or_create_global_step"]


__getattr__ = forward_to("tensorlite.train", __name__)
