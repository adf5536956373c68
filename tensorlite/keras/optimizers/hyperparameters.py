"""The optimizer's hyperparameters (OptimizerV2's `_set_hyper` / `_get_hyper`), read and
assigned as attributes (`opt.learning_rate`, alias `opt.lr`), and their value at the current
step: Python floats eagerly, tensors inside a trace.
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.variables import Variable
from tensorlite.graph.tracing import is_tracing
from tensorlite.keras.optimizers import schedules as _schedules
from tensorlite.keras.optimizers.schedules import LearningRateSchedule
from tensorlite.ops import math_ops


def is_schedule(v):
    """True for a LearningRateSchedule (a hyperparameter called with the step)."""
    return isinstance(v, LearningRateSchedule)


def _as_float(v):
    if type(v) is Variable:
        return float(v._t._value)
    if isinstance(v, (int, float)):
        return float(v)
    return float(np.asarray(v))


class HyperparameterMixin:
    """Optimizer's hyperparameters: a host class sets `_hyper` (name -> value),
    `_hypers_created`, `_name` and `_initial_decay` and has `iterations` and `_step()`."""

    # -- hyperparameters as attributes ---------------------------------------------------
    def __getattr__(self, name):
        if name == "lr":
            name = "learning_rate"
        hyper = self.__dict__.get("_hyper")
        if hyper is not None and name in hyper:
            return self._get_hyper(name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name == "lr":
            name = "learning_rate"
        hyper = self.__dict__.get("_hyper")
        # a subclass's `self.lr = lr` (or `self.learning_rate = ...`) makes the rate a
        # hyperparameter, as OptimizerV2's `lr` property does: one value under both names
        if hyper is not None and (name in hyper or name == "learning_rate"):
            self._set_hyper(name, value)
        else:
            object.__setattr__(self, name, value)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.__dict__.get("_hyper", {})) | {"lr"})

    def _set_hyper(self, name, value):
        """Sets a hyperparameter; an existing variable is assigned in place (so a value
        changed by a callback reaches the next update), anything else is replaced."""
        prev = self._hyper.get(name)
        if isinstance(prev, Variable) and not callable(value) and not is_schedule(value) \
                and not isinstance(value, Variable):
            prev.assign(np.asarray(value, dtype=prev.dtype.as_numpy_dtype))
        else:
            self._hyper[name] = value

    def _get_hyper(self, name, dtype=None):
        if not self._hypers_created:
            self._create_hypers()
        value = self._hyper[name]
        if is_schedule(value):
            return value
        if callable(value) and not isinstance(value, Variable):
            value = value()
        if dtype is not None:
            from tensorlite.ops.math_ops import cast  # noqa: PLC0415
            return cast(value, dtype)
        return value

    def _create_hypers(self):
        if self._hypers_created:
            return
        self._hypers_created = True
        for name, value in sorted(self._hyper.items()):
            if isinstance(value, (Tensor, Variable)) or callable(value) or is_schedule(value):
                continue
            self._hyper[name] = Variable(np.asarray(value, dtype=np.float32),
                                         name=f"{self._name}/{name}", trainable=False)

    def _hyper_float(self, name):
        """A hyperparameter's current value as a Python float (schedules at `iterations`)."""
        value = self._hyper[name]
        if type(value) is Variable:
            return float(value._t._value)
        if is_schedule(value):
            return _as_float(value(self._step()))
        if callable(value):
            value = value()
        return _as_float(value)

    def _serialize_hyperparameter(self, name):
        value = self._hyper[name]
        if is_schedule(value):
            return _schedules.serialize(value)
        if callable(value) and not isinstance(value, Variable):
            value = value()
        if isinstance(value, (Tensor, Variable)):
            return float(np.asarray(value))
        return value

    def _hyper_config(self):
        """get_config's entries of every hyperparameter (`decay` as given), for the
        built-in optimizers' configs."""
        return {name: self._initial_decay if name == "decay" else
                self._serialize_hyperparameter(name) for name in self._hyper}

    # -- the learning rate of this step ---------------------------------------------------
    def _decayed_lr(self, var_dtype):
        """`_decayed_lr` of OptimizerV2: the learning rate for this step as a Tensor (inside
        a trace, computed in the graph from the hyperparameter and `iterations`)."""
        dt = dtypes.as_dtype(var_dtype)
        lr = self._lr_now(dt)
        return lr if is_tracing() else wrap(np.asarray(lr, dtype=dt.as_numpy_dtype))

    # Coefficients for `_prepare_local`: Python floats eagerly (fast scalar math), tensors of
    # the variables' dtype inside a trace, so one formula serves both.
    def _hyper_value(self, name, var_dtype):
        """A hyperparameter's value for this step (a schedule at `iterations`)."""
        if not is_tracing():
            return self._hyper_float(name)
        value = self._hyper[name]
        if is_schedule(value):
            value = value(self.iterations)
        elif callable(value) and not isinstance(value, Variable):
            value = value()
        return coefficient_tensor(value, var_dtype)

    def _step_value(self, var_dtype, offset=0):
        """`iterations` + offset: an int eagerly, a tensor of var_dtype in a trace."""
        if not is_tracing():
            return self._step() + offset
        return math_ops.cast(self.iterations, var_dtype) + offset

    def _lr_now(self, var_dtype):
        """The learning rate of this step, with the legacy `decay` applied."""
        lr = self._hyper_value("learning_rate", var_dtype)
        if self._initial_decay > 0:
            decay = self._hyper_value("decay", var_dtype) if "decay" in self._hyper \
                else self._initial_decay
            lr = lr / (1.0 + decay * self._step_value(var_dtype))
        return lr


def coefficient_tensor(value, dtype):
    """A coefficient as a tensor of `dtype` (a variable is read, in the graph)."""
    t = convert_to_tensor(value, dtype_hint=dtype)
    return t if t._dtype is dtype else math_ops.cast(t, dtype)
