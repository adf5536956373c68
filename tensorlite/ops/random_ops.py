"""Random ops (`tf.random.*`) and TensorFlow's global/op seed semantics.

Seeds, as `tf.random.set_seed` documents them:
- no global and no op seed: every call draws from one nondeterministic stream;
- global seed only: every call draws on from one stream of that seed, so a program's
  sequence of draws repeats after `set_seed` with the same value (TF picks a fresh op seed
  per call instead; either way the sequence is deterministic per program, not bit-equal);
- op seed (with or without a global seed; a default global seed stands in): the pair
  (global, op) names a stream that *persists* across calls, like TF's cached kernel, so two
  calls with `seed=1` differ and `set_seed` restarts them.

Every stream is a NumPy `Generator(Philox)`. Other families (dropout) get one through
`next_rng(seed, kind)`. Stateful ops take the generator as an attribute; stateless ops take
the seed pair as an input and are pure functions of it. Draws are not differentiable; where
TF's sample depends differentiably on a parameter (normal's mean/stddev, uniform's bounds,
gamma's beta) the public function composes `param + scale * standard_sample`.
"""
import enum
import threading
import zlib

import numpy as np

from tensorlite.framework import dtypes, random_context
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.module import Module
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.variables import Variable
from tensorlite.ops import math_ops
from tensorlite.ops.common import to_tensor

__all__ = []  # TF 2 exports no random op at top level

DEFAULT_GLOBAL_SEED = 87654321
_MASK64 = (1 << 64) - 1
_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_INTS = (dtypes.int32, dtypes.int64)


# -- seeds -------------------------------------------------------------------------------------
class _Seeds:
    """Process-wide seed state: the global seed, the persistent streams keyed by
    (global seed, op seed, op kind), and the nondeterministic stream."""

    def __init__(self):
        self.lock = threading.Lock()
        self.streams = {}
        # nothing to reproduce here: SFC64, the fastest of NumPy's bit generators (raw
        # words 2.1x Philox's rate: dropout masks draw them)
        self.nondeterministic = np.random.Generator(np.random.SFC64())


    # The global seed lives below the ops layer so tf.data (shuffle, per-element map seeds)
    # reads the same value.
    global_seed = property(lambda self: random_context.global_seed(),
                           lambda self, v: random_context.set_global_seed(v))


_SEEDS = _Seeds()


def set_seed(seed):
    """`tf.random.set_seed`: sets the global seed and restarts every seeded stream."""
    if seed is not None:
        seed = _int_seed(seed, "seed")
    with _SEEDS.lock:
        _SEEDS.global_seed = seed
        _SEEDS.streams.clear()


def _int_seed(seed, what):
    if isinstance(seed, Tensor) or getattr(seed, "_is_variable", False):
        seed = np.asarray(seed)
    if isinstance(seed, np.ndarray) and seed.ndim == 0 and seed.dtype.kind in "iu":
        seed = int(seed)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{what} must be a Python integer, got {seed!r}")
    return int(seed)


def _philox(*words):
    """A generator keyed by a hash of integer words (nearby seeds give unrelated streams)."""
    entropy = [int(w) & _MASK64 for w in words]
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(entropy)))


def next_rng(seed=None, kind=""):
    """The NumPy Generator one random op call draws from, honouring TF's seed rules.

    `seed` is the op seed (int or None); `kind` names the op (e.g. "Dropout") so that two
    different ops given the same seed keep separate streams, as TF's per-kernel state does.
    With an op seed the same Generator object comes back on every call (it advances), until
    `tf.random.set_seed` restarts it. With only a global seed, all unseeded calls share one
    stream of that seed: a deterministic sequence per program, restarted by `set_seed`.
    """
    element_rng = random_context.override()
    if element_rng is not None:  # inside a tf.data map: per-element stream
        return element_rng
    g = _SEEDS.global_seed
    if seed is None:
        if g is None:
            return _SEEDS.nondeterministic
        key = (g, None, "")
    else:
        key = (DEFAULT_GLOBAL_SEED if g is None else g, _int_seed(seed, "seed"), kind)
    rng = _SEEDS.streams.get(key)
    if rng is None:
        with _SEEDS.lock:
            rng = _SEEDS.streams.get(key)
            if rng is None:
                tag = 0 if key[1] is None else 1 + zlib.crc32(kind.encode())
                rng = _SEEDS.streams[key] = _philox(key[0], key[1] or 0, tag)
    return rng


def _pair_rng(seed):
    """The Generator of a stateless op: a pure function of the seed pair."""
    s = np.asarray(seed).astype(np.int64).reshape(-1)
    return np.random.Generator(np.random.Philox(key=s.view(np.uint64)))


# -- samplers (NumPy) --------------------------------------------------------------------------
def _np_float(dtype):
    """NumPy draws float32/float64 natively; narrower floats are drawn in float32."""
    return np.float64 if dtype is dtypes.float64 else np.float32


# The largest value below 1 in the narrow floats, where float32 draws can round up to 1.
_BELOW_ONE = {"float16": 1 - 2.0 ** -11, "bfloat16": 1 - 2.0 ** -8}


def _uniform01(rng, shape, dtype):
    out = rng.random(shape, dtype=_np_float(dtype)).astype(dtype.as_numpy_dtype, copy=False)
    if dtype.name in _BELOW_ONE:
        out[out >= 1] = _BELOW_ONE[dtype.name]
    return out


def _standard_normal(rng, shape, dtype):
    return rng.standard_normal(shape, dtype=_np_float(dtype)).astype(dtype.as_numpy_dtype,
                                                                    copy=False)


def _truncated(rng, shape, dtype):
    nt = _np_float(dtype)
    out = rng.standard_normal(shape, dtype=nt)
    bad = np.abs(out) > 2
    while bad.any():  # rejects are ~4.6%: a few vectorised rounds
        out[bad] = rng.standard_normal(int(bad.sum()), dtype=nt)
        bad = np.abs(out) > 2
    return out.astype(dtype.as_numpy_dtype, copy=False)


def _uniform_int(rng, minval, maxval, shape, dtype):
    lo, hi = int(minval), int(maxval)
    if lo >= hi:
        raise invalid("RandomUniformInt", f"Need minval < maxval: {lo} >= {hi}")
    return rng.integers(lo, hi, size=shape, dtype=dtype.as_numpy_dtype)


def _uniform_full_int(rng, shape, dtype):
    info = np.iinfo(dtype.as_numpy_dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype.as_numpy_dtype,
                        endpoint=True)


def _multinomial(rng, logits, num_samples, dtype):
    batch, classes = logits.shape
    if classes == 0:
        raise invalid("Multinomial", "categorical: logits must have at least one class")
    z = logits.astype(np.float64)
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z)
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    # One searchsorted for all rows: row i's CDF and draws are shifted into [i, i + 1].
    rows = np.arange(batch, dtype=np.float64)[:, None]
    u = rng.random((batch, num_samples)) + rows
    idx = np.searchsorted((cdf + rows).ravel(), u.ravel(), side="right").reshape(u.shape)
    idx = np.minimum(idx - (np.arange(batch) * classes)[:, None], classes - 1)
    return idx.astype(dtype.as_numpy_dtype)


def _shuffle(rng, value):
    return rng.permutation(value) if value.ndim else value.copy()


def _gamma(rng, alpha, shape, dtype):
    a = np.broadcast_to(alpha, tuple(shape) + alpha.shape)
    return rng.standard_gamma(a).astype(dtype.as_numpy_dtype, copy=False)


def _poisson(rng, lam, shape, dtype):
    lam = np.broadcast_to(lam.astype(np.float64), tuple(shape) + lam.shape)
    return rng.poisson(lam).astype(dtype.as_numpy_dtype, copy=False)


def _binomial(rng, counts, probs, shape, dtype):
    n = np.broadcast_to(counts, shape).astype(np.int64)
    return rng.binomial(n, np.broadcast_to(probs, shape)).astype(dtype.as_numpy_dtype)


# -- registration ------------------------------------------------------------------------------
def _shape_only(*specs, shape, dtype, **_):
    return Spec(tuple(shape), dtype)


def _param_shape(param, *rest, shape, dtype, **_):
    return Spec(tuple(shape) + tuple(param.shape), dtype)


def _multinomial_shape(logits, num_samples, dtype, **_):
    return Spec((logits.shape[0], num_samples), dtype)


def _same_shape(value, **_):
    return value


_NOT_EXPORTED = "tf onnx tflite batch tf_import"


def _def_random(name, stateless_name, sample, shape_rule, grad=NOT_DIFFERENTIABLE):
    """Registers the stateful op (generator as the `rng` attribute) and, if named, its
    stateless twin (seed pair as the first input). Draws have no gradient; `grad=None`
    marks one TF differentiates and we do not (a loud LookupError if reached)."""
    def forward(*inputs, rng, **attrs):
        return sample(rng, *inputs, **attrs)

    def shape(*specs, rng, **attrs):
        return shape_rule(*specs, **attrs)
    # unsupported: random draws are not exported (an inference graph holds none) and
    # vectorized_map draws per example
    stateful = register(name, forward, grad=grad, shape=shape, effects="state",
                        unsupported=_NOT_EXPORTED)
    if stateless_name is None:
        return stateful, None

    def stateless_forward(seed, *inputs, **attrs):
        return sample(_pair_rng(seed), *inputs, **attrs)

    stateless = register(stateless_name, stateless_forward, grad=grad,
                         shape=lambda seed, *specs, **attrs: shape_rule(*specs, **attrs),
                         unsupported=_NOT_EXPORTED)
    return stateful, stateless


UNIFORM, STATELESS_UNIFORM = _def_random("RandomUniform", "StatelessRandomUniformV2",
                                         _uniform01, _shape_only)
NORMAL, STATELESS_NORMAL = _def_random("RandomStandardNormal", "StatelessRandomNormalV2",
                                       _standard_normal, _shape_only)
TRUNCATED, STATELESS_TRUNCATED = _def_random("TruncatedNormal", "StatelessTruncatedNormalV2",
                                             _truncated, _shape_only)
UNIFORM_INT, STATELESS_UNIFORM_INT = _def_random(
    "RandomUniformInt", "StatelessRandomUniformIntV2", _uniform_int, _shape_only)
FULL_INT, STATELESS_FULL_INT = _def_random(
    "RandomUniformFullInt", "StatelessRandomUniformFullIntV2", _uniform_full_int, _shape_only)
MULTINOMIAL, STATELESS_MULTINOMIAL = _def_random("Multinomial", "StatelessMultinomial",
                                                 _multinomial, _multinomial_shape)
# As in TF, shuffle has no gradient: differentiating through it is a LookupError.
SHUFFLE, _ = _def_random("RandomShuffle", None, _shuffle, _same_shape, grad=None)
# TF differentiates gamma samples w.r.t. alpha (implicit reparameterisation); we do not yet.
GAMMA, STATELESS_GAMMA = _def_random("RandomGamma", "StatelessRandomGammaV2", _gamma,
                                     _param_shape, grad=None)
POISSON, STATELESS_POISSON = _def_random("RandomPoissonV2", "StatelessRandomPoisson",
                                         _poisson, _param_shape)
BINOMIAL, STATELESS_BINOMIAL = _def_random("RandomBinomial", "StatelessRandomBinomial",
                                           _binomial, _shape_only)


# -- argument checks ---------------------------------------------------------------------------
def _shape_arg(op_name, shape):
    """A shape as a tuple of non-negative ints; TF wants a 1-D integer vector."""
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    arr = np.asarray(shape._value if isinstance(shape, Tensor) else shape)
    if arr.dtype == object or (arr.size and arr.dtype.kind not in "iu") or arr.ndim != 1:
        if arr.ndim == 0 and arr.dtype.kind in "iu":
            raise invalid(op_name, f"{op_name}: shape must be a vector of int32/int64, got the "
                          f"scalar {arr[()]}; write [{arr[()]}]")
        raise invalid(op_name, f"{op_name}: shape must be a fully known 1-D list of "
                      f"integers, got {shape!r}")
    dims = tuple(int(d) for d in arr)
    if any(d < 0 for d in dims):
        raise invalid(op_name, f"{op_name}: shape {list(dims)} has a negative dimension")
    return dims


def _dtype_arg(op_name, dtype, allowed, error=TypeError):
    dt = dtypes.as_dtype(dtype)
    if dt not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise error(f"{op_name}: dtype {dt.name} is not supported; use one of {names}")
    return dt


def _param(value, dtype, op_name, arg):
    """A float parameter converted to the op's dtype; a tensor of another dtype is an
    error (as in TF) rather than a silent cast."""
    t = to_tensor(value) if isinstance(value, Tensor) or getattr(value, "_is_variable", False) \
        else to_tensor(value, dtype)
    if t._dtype is not dtype:
        raise invalid(op_name, f"{op_name}: `{arg}` has dtype {t._dtype.name} but the op's "
                      f"dtype is {dtype.name}; tf.cast it or pass dtype={t._dtype.name}")
    return t


def _is_default(v, default):
    return type(v) in (int, float) and v == default


def _scale_shift(sample, scale, shift, dtype, op_name, names):
    """shift + scale * sample, skipping the identity parts (the common, fast case)."""
    if not _is_default(scale, 1):
        sample = math_ops.multiply(sample, _param(scale, dtype, op_name, names[0]))
    if not _is_default(shift, 0):
        sample = math_ops.add(sample, _param(shift, dtype, op_name, names[1]))
    return sample


def _check_seed_pair(op_name, seed):
    s = to_tensor(seed)
    if s._dtype.kind not in "iu":
        raise invalid(op_name, f"{op_name}: seed must be an integer tensor, got "
                      f"{s._dtype.name}")
    if s._value.shape != (2,):
        raise invalid(op_name, f"{op_name}: seed must have shape [2], not "
                      f"{list(s._value.shape)}")
    return s


OP_SEED, STATELESS, GENERATOR = "op_seed", "stateless", "generator"


def _run(op, stateless_op, inputs, attrs, seed, mode, kind):
    """Runs a draw from one of three sources: an op seed (TF's seed rules), a stateless seed
    pair, or a `tf.random.Generator` (then `seed` is the generator)."""
    if mode is STATELESS:
        s = _check_seed_pair(stateless_op.name, seed)
        return execute(stateless_op, (s,) + tuple(inputs), attrs)
    if mode is GENERATOR:
        return seed._draw(op, tuple(inputs), attrs)
    return execute(op, tuple(inputs), dict(attrs, rng=next_rng(seed, kind)))


# -- public ops --------------------------------------------------------------------------------
def _uniform(shape, minval, maxval, dtype, seed, mode, full_range_ok=False):
    dims = _shape_arg("RandomUniform", shape)
    allowed = _FLOATS + _INTS + ((dtypes.uint32, dtypes.uint64) if full_range_ok else ())
    dt = _dtype_arg("uniform", dtype, allowed, ValueError)
    if dt.is_integer:
        if full_range_ok and minval is None and maxval is None:
            return _run(FULL_INT, STATELESS_FULL_INT, (), {"shape": dims, "dtype": dt}, seed,
                        mode, "RandomUniformFullInt:" + dt.name)
        if maxval is None or minval is None or dt.is_unsigned:
            raise ValueError(f"Must specify maxval for integer dtype {dt!r} (for full-range "
                             f"integers of a stateless op or tf.random.Generator pass "
                             f"minval=None and maxval=None)")
        lo = _param(minval, dt, "RandomUniformInt", "minval")
        hi = _param(maxval, dt, "RandomUniformInt", "maxval")
        for t, arg in ((lo, "minval"), (hi, "maxval")):
            if t._value.ndim:
                raise invalid("RandomUniformInt", f"RandomUniformInt: {arg} must be 0-D, got "
                              f"shape {list(t._value.shape)}")
        return _run(UNIFORM_INT, STATELESS_UNIFORM_INT, (lo, hi), {"shape": dims, "dtype": dt},
                    seed, mode, "RandomUniformInt:" + dt.name)
    maxval = 1 if maxval is None else maxval
    sample = _run(UNIFORM, STATELESS_UNIFORM, (), {"shape": dims, "dtype": dt}, seed, mode,
                  "RandomUniform:" + dt.name)
    if _is_default(minval, 0) and _is_default(maxval, 1):
        return sample
    lo = _param(minval, dt, "RandomUniform", "minval")
    hi = _param(maxval, dt, "RandomUniform", "maxval")
    return math_ops.add(math_ops.multiply(sample, math_ops.subtract(hi, lo)), lo)


def scalar_uniform(minval, maxval, seed=None):
    """One float32 draw in [minval, maxval) (Python numbers) for eager code that nothing
    observes (check dispatch.OBSERVERS first): the value `uniform([], minval, maxval,
    seed=seed)` gives, from the same stream by the same float32 arithmetic, without its
    four ops and the bounds' conversions (a tf.data map's augmentation draws several per
    element, all of it under the GIL). Returns a 0-d float32 array."""
    u = next_rng(seed, "RandomUniform:float32").random((), dtype=np.float32)
    if _is_default(minval, 0) and _is_default(maxval, 1):
        return u
    lo, hi = np.float32(minval), np.float32(maxval)
    return np.asarray(u * (hi - lo) + lo, np.float32)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random.uniform`: values in [minval, maxval); integer dtypes need `maxval`.

    >>> tf.random.uniform([2], seed=1).shape
    TensorShape([2])
    """
    return _uniform(shape, minval, maxval, dtype, seed, OP_SEED)


def _normal(op, stateless_op, shape, mean, stddev, dtype, seed, mode):
    dims = _shape_arg(op.name, shape)
    dt = _dtype_arg(op.name, dtype, _FLOATS)
    sample = _run(op, stateless_op, (), {"shape": dims, "dtype": dt}, seed, mode,
                  f"{op.name}:{dt.name}")
    return _scale_shift(sample, stddev, mean, dt, op.name, ("stddev", "mean"))


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random.normal`: mean + stddev * N(0, 1) (differentiable in mean and stddev)."""
    return _normal(NORMAL, STATELESS_NORMAL, shape, mean, stddev, dtype, seed, OP_SEED)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random.truncated_normal`: normal draws beyond 2 stddev are re-drawn."""
    return _normal(TRUNCATED, STATELESS_TRUNCATED, shape, mean, stddev, dtype, seed, OP_SEED)


def _categorical(logits, num_samples, dtype, seed, mode):
    x = to_tensor(logits)
    if not (x._dtype.is_floating or x._dtype.is_integer):
        raise invalid("Multinomial", f"categorical: logits must be a real tensor, got "
                      f"{x._dtype.name}")
    if x._value.ndim != 2:
        raise invalid("Multinomial", f"categorical: logits should be a matrix [batch_size, "
                      f"num_classes], got shape {list(x._value.shape)}")
    n = _int_seed(num_samples, "num_samples")
    if n < 0:
        raise invalid("Multinomial", f"categorical: num_samples should be nonnegative, got {n}")
    dt = _dtype_arg("categorical", dtypes.int64 if dtype is None else dtype, _INTS)
    return _run(MULTINOMIAL, STATELESS_MULTINOMIAL, (x,), {"num_samples": n, "dtype": dt},
                seed, mode, "Multinomial:" + dt.name)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`tf.random.categorical`: [batch, num_samples] class indices drawn from
    softmax(logits) row by row (int64 by default)."""
    return _categorical(logits, num_samples, dtype, seed, OP_SEED)


def shuffle(value, seed=None, name=None):
    """`tf.random.shuffle`: a random permutation along the first dimension."""
    return _run(SHUFFLE, None, (to_tensor(value),), {}, seed, OP_SEED, "RandomShuffle")


def _gamma(shape, alpha, beta, dtype, seed, mode):
    dims = _shape_arg("RandomGamma", shape)
    dt = _dtype_arg("gamma", dtype, (dtypes.float16, dtypes.float32, dtypes.float64))
    a = _param(alpha, dt, "RandomGamma", "alpha")
    if beta is not None:
        b = _param(beta, dt, "RandomGamma", "beta")
        a = math_ops.add(a, math_ops.zeros_like_t(b))
    if np.any(a._value <= 0):
        raise invalid("RandomGamma", f"gamma: alpha must be positive, got {a._value.min()}")
    sample = _run(GAMMA, STATELESS_GAMMA, (a,), {"shape": dims, "dtype": dt}, seed, mode,
                  "RandomGamma:" + dt.name)
    if beta is not None:
        sample = math_ops.divide(sample, b)
    # As TF: never exactly zero, so log(sample) stays finite.
    tiny = np.array(np.finfo(dt.as_numpy_dtype).tiny, dt.as_numpy_dtype)
    return math_ops.maximum(sample, wrap(tiny))


def gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random.gamma`: shape `shape + broadcast(alpha, beta).shape`; `beta` is the
    inverse scale. The sample has a gradient w.r.t. beta but none w.r.t. alpha."""
    return _gamma(shape, alpha, beta, dtype, seed, OP_SEED)


def _poisson(shape, lam, dtype, seed, mode):
    dims = _shape_arg("RandomPoissonV2", shape)
    dt = _dtype_arg("poisson", dtype, (dtypes.float16, dtypes.float32, dtypes.float64) + _INTS)
    lam_t = to_tensor(lam)
    if not (lam_t._dtype.is_floating or lam_t._dtype.is_integer):
        raise invalid("RandomPoissonV2", f"poisson: lam must be real, got {lam_t._dtype.name}")
    if np.any(lam_t._value < 0):
        raise invalid("RandomPoissonV2", "poisson: lam must be nonnegative")
    return _run(POISSON, STATELESS_POISSON, (lam_t,), {"shape": dims, "dtype": dt}, seed, mode,
                "RandomPoissonV2:" + dt.name)


def poisson(shape, lam, dtype=dtypes.float32, seed=None, name=None):
    """`tf.random.poisson`: shape `shape + lam.shape`."""
    return _poisson(shape, lam, dtype, seed, OP_SEED)


def _binomial(shape, counts, probs, dtype, seed, mode):
    dims = _shape_arg("RandomBinomial", shape)
    dt = _dtype_arg("binomial", dtype, (dtypes.float16, dtypes.float32, dtypes.float64) + _INTS)
    c, p = to_tensor(counts), to_tensor(probs)
    try:
        if np.broadcast_shapes(c._value.shape, p._value.shape, dims) != dims:
            raise ValueError
    except ValueError:
        raise invalid("RandomBinomial", f"binomial: counts {list(c._value.shape)} and probs "
                      f"{list(p._value.shape)} must broadcast to shape {list(dims)}") from None
    if np.any((p._value < 0) | (p._value > 1)) or np.any(c._value < 0):
        raise invalid("RandomBinomial", "binomial: need counts >= 0 and 0 <= probs <= 1")
    return _run(BINOMIAL, STATELESS_BINOMIAL, (c, p), {"shape": dims, "dtype": dt}, seed, mode,
                "RandomBinomial:" + dt.name)


# -- stateless ---------------------------------------------------------------------------------
def _check_alg(alg):
    name = getattr(alg, "name", alg)
    if isinstance(name, str):
        name = name.lower()
    if name not in (None, 1, 2, 3, "philox", "threefry", "auto_select"):
        raise ValueError(f"Unsupported random algorithm {alg!r}; use 'philox', 'threefry' or "
                         f"'auto_select'")
    return {None: 1, 1: 1, 2: 2, 3: 1, "philox": 1, "threefry": 2, "auto_select": 1}[name]


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None,
                      alg="auto_select"):
    """`tf.random.stateless_uniform`: a deterministic function of `shape` and the seed pair
    (full-range integers with minval=None, maxval=None)."""
    _check_alg(alg)
    return _uniform(shape, minval, maxval, dtype, seed, STATELESS, full_range_ok=True)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                     alg="auto_select"):
    """`tf.random.stateless_normal`."""
    _check_alg(alg)
    return _normal(NORMAL, STATELESS_NORMAL, shape, mean, stddev, dtype, seed, STATELESS)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                               name=None, alg="auto_select"):
    """`tf.random.stateless_truncated_normal`."""
    _check_alg(alg)
    return _normal(TRUNCATED, STATELESS_TRUNCATED, shape, mean, stddev, dtype, seed, STATELESS)


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """`tf.random.stateless_categorical`."""
    return _categorical(logits, num_samples, dtype, seed, STATELESS)


def stateless_gamma(shape, seed, alpha, beta=None, dtype=dtypes.float32, name=None):
    """`tf.random.stateless_gamma`."""
    return _gamma(shape, alpha, beta, dtype, seed, STATELESS)


def stateless_poisson(shape, seed, lam, dtype=dtypes.int32, name=None):
    """`tf.random.stateless_poisson`."""
    return _poisson(shape, lam, dtype, seed, STATELESS)


def stateless_binomial(shape, seed, counts, probs, output_dtype=dtypes.int32, name=None):
    """`tf.random.stateless_binomial`: counts and probs broadcast to `shape`."""
    return _binomial(shape, counts, probs, output_dtype, seed, STATELESS)


def stateless_split(seed, num=2, alg="auto_select"):
    """`tf.random.experimental.stateless_split`: `num` new seed pairs, shape [num, 2]."""
    s = _check_seed_pair("StatelessSplit", seed)
    draws = _pair_rng(s._value).integers(-2**31, 2**31, size=(int(num), 2), dtype=np.int64)
    return wrap(draws.astype(s._value.dtype))


def stateless_fold_in(seed, data, alg="auto_select"):
    """`tf.random.experimental.stateless_fold_in`: a new seed pair from a seed and an int."""
    s = _check_seed_pair("StatelessFoldIn", seed)
    base = _pair_rng(s._value).integers(0, 2**63, size=2, dtype=np.int64)
    mixed = _philox(int(base[0]), int(base[1]), _int_seed(data, "data"))
    return wrap(mixed.integers(-2**31, 2**31, size=2, dtype=np.int64).astype(s._value.dtype))


# -- tf.random.Generator -----------------------------------------------------------------------
class Algorithm(enum.Enum):
    """`tf.random.Algorithm`."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def create_rng_state(seed, alg):
    """`tf.random.create_rng_state`: the int64 state [counter_lo, counter_hi, key] for a seed
    (an int or a list of ints); how a seed maps to a key is unspecified, as in TF."""
    _check_alg(alg)
    words = [int(w) & _MASK64 for w in np.asarray(seed, dtype=object).reshape(-1)]
    key = np.random.SeedSequence(words).generate_state(1, np.uint64)
    return np.array([0, 0, _wrap64(int(key[0]))], dtype=np.int64)


class Generator(Module):
    """`tf.random.Generator`: a random stream whose state lives in a tf.Variable (int64
    [counter_lo, counter_hi, key]); every draw advances the counter."""

    def __init__(self, copy_from=None, state=None, alg=None):
        super().__init__(name="generator")
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("When copy_from is given, state and alg must be None")
            state, alg = copy_from.state.numpy(), copy_from.algorithm
        elif state is None:
            raise ValueError("Generator needs `copy_from` or `state`; to start from a seed use "
                             "tf.random.Generator.from_seed(seed)")
        self._alg = _check_alg(alg)
        self._lock = threading.Lock()
        st = np.asarray(state._value if isinstance(state, Tensor) else state).astype(np.int64)
        if st.shape != (3,):
            raise ValueError(f"Generator state must have shape [3] (counter_lo, counter_hi, "
                             f"key), got {list(st.shape)}")
        self._state_var = Variable(st, trainable=False, name="StateVar")

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator determined by `seed` (an int or a list of ints)."""
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from the operating system's entropy."""
        return cls.from_seed(list(np.random.SeedSequence().generate_state(4)), alg)

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        """From a key (int) and a counter (2 ints)."""
        c = np.asarray(counter, dtype=np.int64).reshape(-1)
        return cls(state=np.array([c[0], c[1] if c.size > 1 else 0, int(key)], np.int64),
                   alg=alg)

    # -- state ---------------------------------------------------------------------------------
    @property
    def state(self):
        return self._state_var

    @property
    def algorithm(self):
        return self._alg

    @property
    def key(self):
        return wrap(self._state_var.numpy()[-1:].reshape(()).copy())

    def reset(self, state):
        self._state_var.assign(np.asarray(state, dtype=np.int64))

    def reset_from_seed(self, seed):
        self.reset(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key, counter):
        c = np.asarray(counter, dtype=np.int64).reshape(-1)
        self.reset(np.array([c[0], c[1] if c.size > 1 else 0, int(key)], np.int64))

    def skip(self, delta):
        """Advances the counter by `delta` blocks."""
        with self._lock:
            st = self._state_var.numpy().view(np.uint64)
            c = ((int(st[1]) << 64) | int(st[0])) + int(delta)
            self._state_var.assign(np.array([_wrap64(c), _wrap64(c >> 64), _wrap64(int(st[2]))],
                                            np.int64))

    def _draw(self, op, inputs, attrs):
        """Runs a stateful op on this generator's stream and advances the state."""
        with self._lock:
            st = self._state_var.numpy().view(np.uint64)
            bits = np.random.Philox(counter=np.array([st[0], st[1], 0, 0], np.uint64),
                                    key=np.array([st[2], self._alg], np.uint64))
            out = execute(op, inputs, dict(attrs, rng=np.random.Generator(bits)))
            counter = bits.state["state"]["counter"]
            self._state_var.assign(np.array([counter[0], counter[1], st[2]],
                                            np.uint64).view(np.int64))
        return out

    # -- draws ---------------------------------------------------------------------------------
    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        """Values in [minval, maxval); full-range integers with minval=maxval=None."""
        return _uniform(shape, minval, maxval, dtype, self, GENERATOR, full_range_ok=True)

    def uniform_full_int(self, shape, dtype=dtypes.uint64, name=None):
        """Integers over the dtype's whole range."""
        return _uniform(shape, None, None, dtype, self, GENERATOR, full_range_ok=True)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        return _normal(NORMAL, STATELESS_NORMAL, shape, mean, stddev, dtype, self, GENERATOR)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        return _normal(TRUNCATED, STATELESS_TRUNCATED, shape, mean, stddev, dtype, self,
                       GENERATOR)

    def binomial(self, shape, counts, probs, dtype=dtypes.int32, name=None):
        return _binomial(shape, counts, probs, dtype, self, GENERATOR)

    def make_seeds(self, count=1):
        """Seeds for stateless ops: int64 [2, count] (use column i as one seed pair)."""
        keys = self.uniform_full_int([int(count)], dtypes.int64)
        return wrap(np.stack([keys._value, np.zeros_like(keys._value)]))

    def split(self, count=1):
        """`count` new generators, independent of this one and of each other."""
        keys = self.uniform_full_int([int(count)], dtypes.int64)._value
        return [Generator(state=np.array([0, 0, k], np.int64), alg=self._alg) for k in keys]


def _wrap64(v):
    v &= _MASK64
    return v - (1 << 64) if v >= 1 << 63 else v


_GLOBAL_GENERATOR = []


def get_global_generator():
    """`tf.random.get_global_generator`: created from nondeterministic state on first use."""
    if not _GLOBAL_GENERATOR:
        _GLOBAL_GENERATOR.append(Generator.from_non_deterministic_state())
    return _GLOBAL_GENERATOR[0]


def set_global_generator(generator):
    """`tf.random.set_global_generator`: replaces the global generator."""
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator expects a tf.random.Generator, got "
                        f"{type(generator).__name__}")
    _GLOBAL_GENERATOR[:] = [generator]
