"""`tf.keras.regularizers`: L1, L2 (`L2(0.04)` as in the notes "Structure of
Deep Learning Frameworks"), L1L2 and their aliases.

Example:
    >>> float(tf.keras.regularizers.L2(0.04)(tf.ones((2, 2))))
    0.16
"""
import numpy as np

from tensorlite.ops import math_ops
from tensorlite.ops.common import to_tensor


class Regularizer:
    def __call__(self, x):
        return 0.0

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        x = to_tensor(x)
        total = None
        if self.l1:
            total = math_ops.multiply(math_ops.reduce_sum(math_ops.abs(x)),
                                      np.asarray(self.l1, x.dtype.as_numpy_dtype))
        if self.l2:
            term = math_ops.multiply(math_ops.reduce_sum(math_ops.square(x)),
                                     np.asarray(self.l2, x.dtype.as_numpy_dtype))
            total = term if total is None else math_ops.add(total, term)
        if total is None:
            return math_ops.reduce_sum(math_ops.multiply(x, 0.0))
        return total

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1=0.01, **kwargs):
        super().__init__(l1=kwargs.pop("l", l1))

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2=0.01, **kwargs):
        super().__init__(l2=kwargs.pop("l", l2))

    def get_config(self):
        return {"l2": self.l2}


def l1_l2(l1=0.01, l2=0.01):
    return L1L2(l1, l2)


l1 = L1
l2 = L2
_ALIASES = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2}


def serialize(reg):
    return {"class_name": type(reg).__name__, "config": reg.get_config()}


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, str):
        if identifier not in _ALIASES:
            raise ValueError(f"Unknown regularizer: '{identifier}'; use one of "
                             f"{sorted(_ALIASES)}")
        return _ALIASES[identifier]()
    if isinstance(identifier, dict):
        return _ALIASES[identifier["class_name"]].from_config(identifier.get("config", {}))
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
