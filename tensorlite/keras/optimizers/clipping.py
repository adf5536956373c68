"""Gradient checks and clipping (`clipvalue`, `clipnorm`, `global_clipnorm`) before an
optimizer's update: NumPy eagerly, graph ops inside a trace (so the norms are each run's).
"""
import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.variables import Variable
from tensorlite.ops import math_ops


class ClippingMixin:
    """Optimizer's clipping settings and gradient transformation: a host class sets
    `_clipnorm`, `_global_clipnorm`, `_clipvalue`, `_name` and `gradient_transformers`."""

    # -- clipping settings ---------------------------------------------------------------
    @property
    def clipnorm(self):
        return self._clipnorm

    @clipnorm.setter
    def clipnorm(self, value):
        if value is not None and self._global_clipnorm is not None:
            raise ValueError("Cannot accept both `clipnorm` and `global_clipnorm`. Received: "
                             f"`clipnorm`={value}, `global_clipnorm`={self._global_clipnorm}.")
        self._clipnorm = value

    @property
    def global_clipnorm(self):
        return self._global_clipnorm

    @global_clipnorm.setter
    def global_clipnorm(self, value):
        if value is not None and self._clipnorm is not None:
            raise ValueError("Cannot accept both `clipnorm` and `global_clipnorm`. Received: "
                             f"`clipnorm`={self._clipnorm}, `global_clipnorm`={value}.")
        self._global_clipnorm = value

    @property
    def clipvalue(self):
        return self._clipvalue

    @clipvalue.setter
    def clipvalue(self, value):
        self._clipvalue = value

    # -- clipping -------------------------------------------------------------------------
    def _transform_gradients(self, pairs, graph=False):
        """Converts gradients to tensors of their variable's shape and dtype, then clips
        (with graph ops inside a trace: the norms are those of each run's gradients)."""
        pairs = [(_checked_gradient(self._name, g, v), v) for g, v in pairs]
        if graph:
            pairs = self._clip_in_graph(pairs)
        else:
            pairs = self._clip_eagerly(pairs)
        for fn in self.gradient_transformers:
            pairs = list(fn(pairs))
        return pairs

    def _clip_eagerly(self, pairs):
        if self._clipvalue is not None:
            c = float(self._clipvalue)
            pairs = [(wrap(np.clip(g._value, -c, c)), v) for g, v in pairs]
        if self._clipnorm is not None:
            c = float(self._clipnorm)
            pairs = [(_scaled(g, c, _norm(g._value)), v) for g, v in pairs]
        if self._global_clipnorm is not None:
            c = float(self._global_clipnorm)
            total = float(np.sqrt(sum(_norm(g._value) ** 2 for g, _ in pairs)))
            pairs = [(_scaled(g, c, total), v) for g, v in pairs]
        return pairs

    def _clip_in_graph(self, pairs):
        if self._clipvalue is not None:
            c = float(self._clipvalue)
            pairs = [(math_ops.clip_by_value(g, -c, c), v) for g, v in pairs]
        if self._clipnorm is not None:
            pairs = [(math_ops.clip_by_norm(g, float(self._clipnorm)), v) for g, v in pairs]
        if self._global_clipnorm is not None:
            clipped, _ = math_ops.clip_by_global_norm([g for g, _ in pairs],
                                                      float(self._global_clipnorm))
            pairs = [(g, v) for g, (_, v) in zip(clipped, pairs)]
        return pairs


def _checked_gradient(opt_name, grad, var):
    g = grad if type(grad) is Tensor else convert_to_tensor(grad, dtype_hint=var.dtype)
    vshape = var._t._value.shape if type(var) is Variable else tuple(var.shape.as_list())
    if g._value.shape != vshape:
        raise errors.InvalidArgumentError(
            None, None, f"{opt_name}: the gradient for variable {var.name} has shape "
            f"{list(g._value.shape)} but the variable has shape {list(vshape)}; each gradient "
            f"must match its variable (zip(grads, vars) in the same order)")
    if g._dtype is not var.dtype:
        raise errors.InvalidArgumentError(
            None, None, f"{opt_name}: the gradient for variable {var.name} has dtype "
            f"{g._dtype.name} but the variable has dtype {var.dtype.name}; tf.cast the gradient")
    return g



def _norm(a):
    return float(np.sqrt(np.vdot(a, a).real)) if a.size else 0.0


def _scaled(g, clip, norm):
    if norm <= clip:
        return g
    return wrap(g._value * (clip / norm))
