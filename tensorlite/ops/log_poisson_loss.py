"""`tf.nn.log_poisson_loss`: the negative log-likelihood of `targets` under a Poisson
distribution of log-rate `log_input`, up to the terms constant in `log_input`.

    exp(log_input) - targets * log_input
    (+ Stirling's approximation of log(targets!) for targets > 1 with compute_full_loss:
       targets * log(targets) - targets + 0.5 * log(2 * pi * targets))

Example:
    >>> tf.nn.log_poisson_loss([1.0], [0.0]).numpy()
    array([1.], dtype=float32)
"""
import math

from tensorlite.ops.common import FLOAT, tensor_args
from tensorlite.ops.creation_ops import ones_like, zeros_like
from tensorlite.ops.math_ops import (add, exp, greater, less, log, logical_or, multiply,
                                     subtract, where)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """`tf.nn.log_poisson_loss`: see the module docstring. `targets` and `log_input` have
    the same shape; the loss is elementwise, the same shape."""
    log_input, targets = tensor_args("LogPoissonLoss", (log_input, targets), FLOAT,
                                     ("log_input", "targets"))
    if log_input.shape.as_list() != targets.shape.as_list():
        raise ValueError(f"log_input and targets must have the same shape "
                         f"({log_input.shape} vs {targets.shape})")
    result = subtract(exp(log_input), multiply(log_input, targets))
    if not compute_full_loss:
        return result
    # as TF: added where targets are outside [0, 1] (a negative target gives NaN there);
    # evaluated on 1 inside it, so the unused branch stays finite for the gradient
    outside = logical_or(less(targets, 0.0), greater(targets, 1.0))
    safe = where(outside, targets, ones_like(targets))
    stirling = add(subtract(multiply(safe, log(safe)), safe),
                   multiply(0.5, log(multiply(2 * math.pi, safe))))
    return add(result, where(outside, stirling, zeros_like(targets)))
