"""Decoupled weight decay, for every optimizer (TF 2.11+'s `weight_decay` argument; AdamW's
default): before each update, w -= w * weight_decay * learning_rate, for the variables not
excluded with `exclude_from_weight_decay`.

Eagerly the decay writes the arrays in place (when nothing else refers to them); inside a
`tf.function` it is a multiply and an assignment in the graph, with this step's learning
rate (a schedule on the traced `iterations`).

Example:
    >>> opt = tf.keras.optimizers.SGD(0.1, weight_decay=0.01)
    >>> opt.exclude_from_weight_decay(var_names=["bias"])
"""
import re

import numpy as np

from tensorlite.keras.optimizers.in_place import multiply_by


def decays(opt, var):
    """Whether `var` is decayed (not excluded by object or by a name pattern)."""
    if id(var) in opt._exclude_ids:
        return False
    return not any(re.search(p, var.name) for p in opt._exclude_names)


def apply_weight_decay(opt, var_list, apply_state, graph):
    wd = opt.weight_decay
    if wd is None:
        return
    wd = float(np.asarray(wd))
    if wd == 0:
        return
    for var in var_list:
        if not decays(opt, var):
            continue
        c = apply_state.get((var.device, var.dtype))
        lr = c["lr_t"] if c is not None and "lr_t" in c else opt._lr_now(var.dtype)
        keep = 1.0 - wd * lr
        if graph:
            var.assign(var * keep)
        else:
            multiply_by(var, keep)
