"""`tf.keras.optimizers.schedules`: learning rates as functions of the optimizer step.

A schedule is called with the step (an int, a Tensor or the optimizer's `iterations`
variable) and returns a float32 scalar Tensor. Optimizers evaluate it at `iterations`
before each update, so step 0 is the first update. Each formula is written once over a
small math namespace: Python floats for an eager step (cheap scalar math), tensorlite ops
when the step is a tensor inside a `tf.function` trace, so the schedule is part of the
graph and follows the traced `iterations` on every run.

Example:
    >>> s = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    >>> round(float(s(10)), 6)
    0.05
"""
import math

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.graph.tracing import is_tracing
from tensorlite.ops import math_ops


class _HostMath:
    """Scalar math on Python floats."""
    floor, ceil, cos, log = math.floor, math.ceil, math.cos, math.log
    minimum, maximum = min, max

    @staticmethod
    def step(step):
        return float(np.asarray(step))

    @staticmethod
    def where(cond, a, b):
        return a if cond else b

    @staticmethod
    def out(value):
        return wrap(np.asarray(value, dtype=np.float32))


class _GraphMath:
    """The same scalar math as float32 tensorlite ops (recorded by a trace)."""
    floor, ceil, cos = math_ops.floor, math_ops.ceil, math_ops.cos
    log, minimum, maximum = math_ops.log, math_ops.minimum, math_ops.maximum

    @staticmethod
    def step(step):
        return math_ops.cast(convert_to_tensor(step), dtypes.float32)

    @staticmethod
    def where(cond, a, b):
        return math_ops.where(cond, _GraphMath.out(a), _GraphMath.out(b))

    @staticmethod
    def out(value):
        return math_ops.cast(convert_to_tensor(value, dtype_hint=dtypes.float32),
                             dtypes.float32)


class _ArrayMath:
    """The same math elementwise on NumPy arrays, for an eager vector of steps (the
    overfitting tutorial plots `lr_schedule(np.linspace(0, 100000))`)."""
    floor, ceil, cos, log = np.floor, np.ceil, np.cos, np.log
    minimum, maximum, where = np.minimum, np.maximum, np.where

    @staticmethod
    def step(step):
        return np.asarray(step, dtype=np.float64)

    @staticmethod
    def out(value):
        return wrap(np.asarray(value, dtype=np.float32))


def _math(step):
    """Graph math for a tensor step inside a trace, elementwise math for an eager step
    with dimensions, host math for an eager scalar."""
    if is_tracing() and (isinstance(step, Tensor) or getattr(step, "_is_variable", False)):
        return _GraphMath
    if len(getattr(step, "shape", None) or np.shape(step)):
        return _ArrayMath
    return _HostMath


class LearningRateSchedule:
    """Base class: subclasses implement `__call__(step)` and `get_config()`."""

    def __call__(self, step):
        raise NotImplementedError(f"Learning rate schedule {type(self).__name__} must "
                                  f"override __call__(self, step).")

    def get_config(self):
        raise NotImplementedError(f"Learning rate schedule {type(self).__name__} must "
                                  f"override get_config(self).")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class _StepDecay(LearningRateSchedule):
    """What ExponentialDecay and InverseTimeDecay share: their arguments, the progress
    step / decay_steps (floored when staircase) and the config."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name=None):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0, received: {decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def _progress(self, m, step):
        p = m.step(step) / self.decay_steps
        return m.floor(p) if self.staircase else p

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_StepDecay):
    """initial_learning_rate * decay_rate ** (step / decay_steps), floored if staircase."""

    def __call__(self, step):
        m = _math(step)
        return m.out(float(self.initial_learning_rate) *
                     float(self.decay_rate) ** self._progress(m, step))

class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] while step <= boundaries[0], values[i] while step <= boundaries[i], then
    values[-1]."""

    def __init__(self, boundaries, values, name=None):
        if len(boundaries) != len(values) - 1:
            raise ValueError(f"The length of boundaries should be 1 less than the length of "
                             f"values. Received: boundaries={list(boundaries)} of length "
                             f"{len(boundaries)}, and values={list(values)} of length "
                             f"{len(values)}.")
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def __call__(self, step):
        m = _math(step)
        s = m.step(step)
        out = float(np.asarray(self.values[-1]))
        for b, v in reversed(list(zip(self.boundaries, self.values))):
            out = m.where(s <= float(b), float(np.asarray(v)), out)
        return m.out(out)

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """(initial - end) * (1 - step / decay_steps) ** power + end; with `cycle`, the decay
    restarts from a multiple of decay_steps instead of holding at `end`."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001,
                 power=1.0, cycle=False, name=None):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0, received: {decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step):
        m = _math(step)
        s, steps = m.step(step), float(self.decay_steps)
        if self.cycle:
            steps = steps * m.maximum(m.ceil(s / steps), 1.0)
        else:
            s = m.minimum(s, steps)
        start, end = float(self.initial_learning_rate), float(self.end_learning_rate)
        return m.out((start - end) * (1 - s / steps) ** self.power + end)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


class InverseTimeDecay(_StepDecay):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps), floored if staircase."""

    def __call__(self, step):
        m = _math(step)
        return m.out(float(self.initial_learning_rate) /
                     (1 + float(self.decay_rate) * self._progress(m, step)))

class CosineDecay(LearningRateSchedule):
    """Optional linear warmup from initial_learning_rate to warmup_target over warmup_steps,
    then a half cosine from the peak down to alpha * peak over decay_steps."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name=None,
                 warmup_target=None, warmup_steps=0):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        m = _math(step)
        s = m.step(step)
        start = float(self.initial_learning_rate)
        peak = start if self.warmup_target is None else float(self.warmup_target)
        decayed = m.minimum(s - self.warmup_steps if self.warmup_steps else s,
                            float(self.decay_steps))
        cosine = 0.5 * (1 + m.cos(math.pi * decayed / self.decay_steps))
        out = peak * ((1 - self.alpha) * cosine + self.alpha)
        if self.warmup_target is not None and self.warmup_steps:
            out = m.where(s < float(self.warmup_steps),
                          start + (peak - start) * s / self.warmup_steps, out)
        return m.out(out)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): period i lasts first_decay_steps * t_mul**i
    and starts at initial_learning_rate * m_mul**i."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name=None):
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step):
        m = _math(step)
        frac = m.step(step) / self.first_decay_steps
        t_mul, m_mul = float(self._t_mul), float(self._m_mul)
        if t_mul == 1.0:
            i = m.floor(frac)
            frac = frac - i
        else:
            i = m.floor(m.log(1 - frac * (1 - t_mul)) / math.log(t_mul))
            done = (1 - t_mul ** i) / (1 - t_mul)
            frac = (frac - done) / t_mul ** i
        cosine = 0.5 * m_mul ** i * (1 + m.cos(math.pi * frac))
        return m.out(float(self.initial_learning_rate) *
                     ((1 - self.alpha) * cosine + self.alpha))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul,
                "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


_CLASSES = {c.__name__: c for c in (ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay,
                                    InverseTimeDecay, CosineDecay, CosineDecayRestarts)}


def serialize(learning_rate_schedule):
    """`tf.keras.optimizers.schedules.serialize`: {'class_name', 'config'}."""
    return {"class_name": type(learning_rate_schedule).__name__,
            "config": learning_rate_schedule.get_config()}


def deserialize(config, custom_objects=None):
    """`tf.keras.optimizers.schedules.deserialize`."""
    classes = dict(_CLASSES, **(custom_objects or {}))
    cls = classes.get(config.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown learning rate schedule: {config.get('class_name')!r}; "
                         f"known: {sorted(_CLASSES)}")
    return cls.from_config(config.get("config", {}))
