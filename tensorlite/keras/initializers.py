"""`tf.keras.initializers`: callables `init(shape, dtype)` with Keras's names and defaults.

Example:
    >>> tf.keras.initializers.get("zeros")([2]).numpy()
    array([0., 0.], dtype=float32)
"""
import math

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.tensor import wrap


def _rng(seed):
    from tensorlite.ops.random_ops import next_rng  # noqa: PLC0415
    return next_rng(seed, kind="KerasInitializer") if seed is None else \
        np.random.default_rng(seed)


def _fans(shape):
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _out(self, arr, dtype):
        dt = dtypes.as_dtype(dtype or "float32")
        return wrap(np.asarray(arr).astype(dt.as_numpy_dtype))


class Zeros(Initializer):
    def __call__(self, shape, dtype=None, **kwargs):
        return self._out(np.zeros(tuple(shape)), dtype)


class Ones(Initializer):
    def __call__(self, shape, dtype=None, **kwargs):
        return self._out(np.ones(tuple(shape)), dtype)


class Constant(Initializer):
    def __init__(self, value=0):
        self.value = value

    def __call__(self, shape, dtype=None, **kwargs):
        return self._out(np.broadcast_to(np.asarray(self.value), tuple(shape)), dtype)

    def get_config(self):
        return {"value": self.value}


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, **kwargs):
        return self._out(_rng(self.seed).normal(self.mean, self.stddev, tuple(shape)), dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(Initializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, **kwargs):
        return self._out(_rng(self.seed).uniform(self.minval, self.maxval, tuple(shape)), dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class TruncatedNormal(Initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, **kwargs):
        return self._out(self.mean + self.stddev * _truncated(_rng(self.seed), tuple(shape)),
                         dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


def _truncated(rng, shape):
    out = rng.standard_normal(shape)
    bad = np.abs(out) > 2
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(out) > 2
    return out


class VarianceScaling(Initializer):
    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if scale <= 0:
            raise ValueError(f"`scale` must be positive, got {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, **kwargs):
        fan_in, fan_out = _fans(tuple(shape))
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        scale = self.scale / max(1.0, n)
        rng = _rng(self.seed)
        if self.distribution == "truncated_normal":
            arr = _truncated(rng, tuple(shape)) * math.sqrt(scale) / 0.87962566103423978
        elif self.distribution == "untruncated_normal":
            arr = rng.standard_normal(tuple(shape)) * math.sqrt(scale)
        else:
            limit = math.sqrt(3.0 * scale)
            arr = rng.uniform(-limit, limit, tuple(shape))
        return self._out(arr, dtype)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed}


def _vs(name, scale, mode, distribution):
    def __init__(self, seed=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed)

    def get_config(self):
        return {"seed": self.seed}
    return type(name, (VarianceScaling,), {"__init__": __init__, "get_config": get_config})


GlorotUniform = _vs("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _vs("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeNormal = _vs("HeNormal", 2.0, "fan_in", "truncated_normal")
HeUniform = _vs("HeUniform", 2.0, "fan_in", "uniform")
LecunNormal = _vs("LecunNormal", 1.0, "fan_in", "truncated_normal")
LecunUniform = _vs("LecunUniform", 1.0, "fan_in", "uniform")


class Orthogonal(Initializer):
    def __init__(self, gain=1.0, seed=None):
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, **kwargs):
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        flat = _rng(self.seed).standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(flat)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self._out(self.gain * q[:rows, :cols].reshape(shape), dtype)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs):
        if len(shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        return self._out(self.gain * np.eye(*shape), dtype)


_ALIASES = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling, "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal, "he_normal": HeNormal, "he_uniform": HeUniform,
    "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform, "orthogonal": Orthogonal,
    "identity": Identity, "uniform": RandomUniform, "normal": RandomNormal,
}
for _cls in list(_ALIASES.values()):
    _ALIASES[_cls.__name__] = _cls
zeros, ones, constant, glorot_uniform, glorot_normal = Zeros, Ones, Constant, GlorotUniform, \
    GlorotNormal
he_normal, he_uniform, orthogonal, random_normal, random_uniform = HeNormal, HeUniform, \
    Orthogonal, RandomNormal, RandomUniform


def serialize(initializer):
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


def deserialize(config):
    return get(config)


def get(identifier):
    """An initializer from a name, a config dict, a class, or a callable."""
    if identifier is None:
        return None
    if isinstance(identifier, str):
        cls = _ALIASES.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown initializer: '{identifier}'. Please ensure you are using "
                             f"a `keras.utils.custom_object_scope` and that this object is "
                             f"included in the scope. Known: {sorted(k for k in _ALIASES if k.islower())}")
        return cls()
    if isinstance(identifier, dict):
        cls = _ALIASES.get(identifier.get("class_name"))
        if cls is None:
            raise ValueError(f"Unknown initializer config: {identifier}")
        return cls.from_config(identifier.get("config", {}))
    if isinstance(identifier, type):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")
