"""Exponential moving averages of the trained variables (TF 2.11+'s `use_ema`): after each
update, average = ema_momentum * average + (1 - ema_momentum) * w; with
`ema_overwrite_frequency` N, every N-th step (iterations + 1 divisible by N) the variables
take their averages; `finalize_variable_values` (called by `fit` at the end of training)
gives every variable its average.

The averages are optimizer slots named "average" (saved and restored with the optimizer),
initialised to the variable's value when the optimizer first sees it. Inside a
`tf.function` the updates are graph ops; the overwrite is a select on the traced
`iterations`, so it happens on the right runs of the graph.

Example:
    >>> opt = tf.keras.optimizers.Adam(use_ema=True, ema_momentum=0.9)
"""
import numpy as np

from tensorlite.framework.tensor import wrap
from tensorlite.ops import math_ops


def create_averages(opt, var_list):
    for var in var_list:
        opt.add_slot(var, "average", initializer=np.array(var.numpy(), copy=True))


def update_averages(opt, var_list, graph):
    m = float(opt.ema_momentum)
    freq = opt.ema_overwrite_frequency
    if graph:
        overwrite = None
        if freq:
            overwrite = math_ops.equal((opt.iterations + 1) % int(freq), 0)
        for var in var_list:
            average = opt.get_slot(var, "average")
            new = m * average + (1 - m) * var
            average.assign(new)
            if overwrite is not None:
                var.assign(math_ops.where(overwrite, new, var))
        return
    overwrite = bool(freq) and (opt._step() + 1) % int(freq) == 0
    for var in var_list:
        average = opt.get_slot(var, "average")
        value = np.asarray(var.numpy())
        new = np.add(np.multiply(average.numpy(), m), np.multiply(value, 1 - m)).astype(
            value.dtype, copy=False)
        average._t = wrap(new)  # a slot: a plain Variable, nothing else holds the array
        if overwrite:
            var.assign(np.array(new, copy=True))


def finalize(opt, var_list):
    """Every variable takes its moving average."""
    for var in var_list:
        var.assign(opt.get_slot(var, "average"))
