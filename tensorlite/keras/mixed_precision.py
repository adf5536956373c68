"""`tf.keras.mixed_precision`: layers that compute in float16 or bfloat16 and keep their
variables in float32, and the loss scaling that keeps float16 gradients from underflowing.

A dtype policy ("mixed_float16", "mixed_bfloat16", or a plain dtype name) gives a layer its
compute dtype and its variable dtype. Under a mixed policy a layer casts its floating inputs
to the compute dtype, creates its weights in float32, and reads them cast to the compute
dtype inside its `call` (Keras's AutoCastVariable): the cast is an ordinary op, so the
gradient reaches the float32 variable, and assignments cast back. `compile()` under
"mixed_float16" wraps the optimizer in a `LossScaleOptimizer`, as Keras does; fit scales
the loss, unscales the gradients, and the optimizer skips a step whose gradients are not
finite (halving the scale) and doubles the scale after `dynamic_growth_steps` good steps.

NumPy has no float16 or bfloat16 BLAS: on a CPU mixed precision saves memory but runs
slower than float32 (bfloat16 comes from the `ml_dtypes` package).

Example:
    >>> tf.keras.mixed_precision.set_global_policy("mixed_float16")
    >>> layer = tf.keras.layers.Dense(4)
    >>> layer.compute_dtype, layer.variable_dtype
    ('float16', 'float32')
    >>> tf.keras.mixed_precision.set_global_policy("float32")
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.keras import backend

_MIXED = {"mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}
_GLOBAL = [None]


class Policy:
    """`tf.keras.mixed_precision.Policy(name)`: "mixed_float16", "mixed_bfloat16", or a
    dtype name ("float32", "float16", "float64") for both compute and variables."""

    def __init__(self, name):
        if isinstance(name, dtypes.DType):
            name = name.name
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, not a {type(name).__name__}")
        if name in _MIXED:
            compute, variable = _MIXED[name], "float32"
        elif name == "_infer":
            compute = variable = None
        else:
            try:
                compute = variable = dtypes.as_dtype(name).name
            except (TypeError, ValueError, KeyError):
                raise ValueError(f"Cannot convert value {name!r} to a mixed precision Policy, "
                                 f"which must be a dtype name or 'mixed_float16' / "
                                 f"'mixed_bfloat16'") from None
        if compute == "bfloat16":
            _require_bfloat16()
        self._name, self._compute_dtype, self._variable_dtype = name, compute, variable

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        return self._compute_dtype

    @property
    def variable_dtype(self):
        return self._variable_dtype

    @property
    def mixed(self):
        """Whether variables are read cast to another dtype (a mixed policy)."""
        return self._compute_dtype != self._variable_dtype

    def __repr__(self):
        return f'<Policy "{self._name}">'

    def __eq__(self, other):
        return isinstance(other, Policy) and other._name == self._name

    def __hash__(self):
        return hash(self._name)

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


def _require_bfloat16():
    try:
        dtypes.as_dtype("bfloat16")
    except (TypeError, ValueError, KeyError):
        raise NotImplementedError("the mixed_bfloat16 policy needs a bfloat16 dtype, which "
                                  "tensorlite does not provide yet (NumPy has none); use "
                                  "mixed_float16") from None


def global_policy():
    """The policy layers get when they are given no dtype: `set_global_policy`'s, else
    the float dtype of `tf.keras.backend.floatx()`."""
    return _GLOBAL[0] if _GLOBAL[0] is not None else Policy(backend.floatx())


def set_global_policy(policy):
    """Sets the policy of layers created from now on (None: back to floatx)."""
    if policy is None:
        _GLOBAL[0] = None
        return
    policy = policy if isinstance(policy, Policy) else Policy(policy)
    if policy.compute_dtype is not None and \
            not dtypes.as_dtype(policy.compute_dtype).is_floating:
        raise ValueError(f"set_global_policy requires a floating point policy, got {policy}")
    _GLOBAL[0] = policy


def policy_of(dtype):
    """A layer's policy from its `dtype` argument (None, a dtype, a name or a Policy)."""
    if dtype is None:
        return global_policy()
    if isinstance(dtype, Policy):
        return dtype
    if isinstance(dtype, dict) and dtype.get("class_name") in ("Policy", "DTypePolicy"):
        return Policy(dtype["config"]["name"])
    return Policy(dtype)


def autocast_reader(compute_dtype):
    """The read transform a mixed layer installs while its `call` runs: float weights it
    created are read cast to the compute dtype."""
    from tensorlite.ops.math_ops import cast  # noqa: PLC0415 - ops load after keras starts
    target = dtypes.as_dtype(compute_dtype)

    def read(variable, tensor):
        if tensor.dtype.is_floating and tensor.dtype is not target:
            return cast(tensor, target)
        return tensor
    return read


# -- loss scaling ------------------------------------------------------------------------
class LossScaleOptimizer:
    """`tf.keras.mixed_precision.LossScaleOptimizer(inner_optimizer, dynamic=True,
    initial_scale=2**15, dynamic_growth_steps=2000)`: multiplies the loss by a scale before
    differentiation and divides the gradients by it before the inner optimizer applies
    them; a dynamic scale halves on non-finite gradients (that step is skipped) and
    doubles after `dynamic_growth_steps` finite ones."""

    def __init__(self, inner_optimizer, dynamic=True, initial_scale=None,
                 dynamic_growth_steps=None):
        from tensorlite.framework.variables import Variable  # noqa: PLC0415
        from tensorlite.keras.optimizers import Optimizer, get  # noqa: PLC0415
        inner_optimizer = get(inner_optimizer)
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"LossScaleOptimizer wraps a Keras optimizer, got "
                            f"{type(inner_optimizer).__name__}")
        if isinstance(inner_optimizer, LossScaleOptimizer):
            raise TypeError("LossScaleOptimizer cannot wrap another LossScaleOptimizer")
        if not dynamic and initial_scale is None:
            raise ValueError("When dynamic=False, initial_scale must be given")
        if not dynamic and dynamic_growth_steps is not None:
            raise ValueError("dynamic_growth_steps cannot be given when dynamic=False")
        self._inner = inner_optimizer
        self._dynamic = bool(dynamic)
        self._initial_scale = float(2 ** 15 if initial_scale is None else initial_scale)
        self._growth_steps = int(2000 if dynamic_growth_steps is None else dynamic_growth_steps)
        self._scale = Variable(np.float32(self._initial_scale), trainable=False,
                               name="loss_scale")
        self._good = Variable(np.int64(0), trainable=False, name="good_steps")

    # the inner optimizer's attributes (learning_rate, iterations, variables, ...)
    def __getattr__(self, name):
        if name.startswith("__") or name in ("_inner",):
            raise AttributeError(name)
        return getattr(self.__dict__["_inner"], name)

    def __setattr__(self, name, value):
        if "_inner" in self.__dict__ and name in ("learning_rate", "lr"):
            setattr(self._inner, name, value)
        else:
            object.__setattr__(self, name, value)

    @property
    def inner_optimizer(self):
        return self._inner

    @property
    def dynamic(self):
        return self._dynamic

    @property
    def loss_scale(self):
        """The current loss scale, a float32 scalar tensor."""
        return self._scale.value()

    @property
    def initial_scale(self):
        return self._initial_scale

    @property
    def dynamic_growth_steps(self):
        return self._growth_steps if self._dynamic else None

    @property
    def dynamic_counter(self):
        return self._good.value() if self._dynamic else None

    def get_scaled_loss(self, loss):
        """`loss * loss_scale` (a callable loss gives a callable)."""
        from tensorlite.ops import math_ops  # noqa: PLC0415
        if callable(loss):
            return lambda: self.get_scaled_loss(loss())
        return math_ops.multiply(loss, math_ops.cast(self._scale, loss.dtype))

    def get_unscaled_gradients(self, grads):
        """Each gradient divided by the loss scale (None stays None)."""
        from tensorlite.ops import math_ops  # noqa: PLC0415
        out = []
        for g in grads:
            if g is None:
                out.append(None)
                continue
            values = getattr(g, "values", None)
            if values is not None and hasattr(g, "indices"):  # IndexedSlices
                out.append(type(g)(math_ops.divide(values, math_ops.cast(self._scale,
                                                                           values.dtype)),
                                   g.indices, getattr(g, "dense_shape", None)))
                continue
            out.append(math_ops.divide(g, math_ops.cast(self._scale, g.dtype)))
        return out

    def minimize(self, loss, var_list, grad_loss=None, name=None, tape=None):
        """Scales the loss, differentiates, unscales and applies (Keras's minimize)."""
        from tensorlite.autodiff.tape import GradientTape  # noqa: PLC0415
        from tensorlite.framework import nest  # noqa: PLC0415
        if callable(loss):
            tape = GradientTape() if tape is None else tape
            with tape:
                if callable(var_list):
                    loss_value = loss()
                    var_list = var_list()
                else:
                    tape.watch(var_list)
                    loss_value = loss()
                scaled = self.get_scaled_loss(loss_value)
        else:
            if tape is None:
                raise ValueError("`tape` is required when a `Tensor` loss is passed")
            with tape:
                scaled = self.get_scaled_loss(loss)
        var_list = nest.flatten(var_list)
        grads = self.get_unscaled_gradients(tape.gradient(scaled, var_list, grad_loss))
        return self.apply_gradients(list(zip(grads, var_list)), name=name)

    def apply_gradients(self, grads_and_vars, name=None, experimental_aggregate_gradients=True):
        """Applies the (unscaled) gradients when all are finite; with a dynamic scale, a
        step with an inf or NaN gradient is skipped and the scale halved. Inside a
        tf.function the check, the skip and the scale's update are graph ops (a tf.cond),
        so every call of the graph decides afresh."""
        from tensorlite.graph.tracing import is_tracing  # noqa: PLC0415
        pairs = list(grads_and_vars)
        if not self._dynamic:
            return self._inner.apply_gradients(pairs, name=name)
        if is_tracing():
            return self._graph_apply(pairs, name)
        finite = all(np.all(np.isfinite(np.asarray(getattr(g, "values", g))))
                     for g, _ in pairs if g is not None)
        if not finite:
            self._scale.assign(np.float32(max(float(self._scale.numpy()) / 2, 1.0)))
            self._good.assign(np.int64(0))
            return None
        result = self._inner.apply_gradients(pairs, name=name)
        good = int(self._good.numpy()) + 1
        if good >= self._growth_steps:
            scale = float(self._scale.numpy()) * 2
            if np.isfinite(np.float32(scale)):
                self._scale.assign(np.float32(scale))
            good = 0
        self._good.assign(np.int64(good))
        return result

    def _graph_apply(self, pairs, name):
        from tensorlite.ops import array_ops, control_flow_ops, math_ops  # noqa: PLC0415
        grads = [getattr(g, "values", g) for g, _ in pairs if g is not None]
        finite = math_ops.reduce_all(array_ops.stack(
            [math_ops.reduce_all(math_ops.is_finite(g)) for g in grads]))
        self._inner._create_all_weights([v for g, v in pairs if g is not None])

        def apply():
            self._inner.apply_gradients(pairs, name=name)
            return array_ops.identity(finite)
        control_flow_ops.cond(finite, apply, lambda: array_ops.identity(finite))
        scale = self._scale.value()
        good = math_ops.add(self._good.value(), np.int64(1))
        grow = math_ops.greater_equal(good, np.int64(self._growth_steps))
        doubled = math_ops.multiply(scale, np.float32(2))
        grown = math_ops.where(math_ops.logical_and(grow, math_ops.is_finite(doubled)),
                               doubled, scale)
        halved = math_ops.maximum(math_ops.divide(scale, np.float32(2)), np.float32(1))
        self._scale.assign(math_ops.where(finite, grown, halved))
        self._good.assign(math_ops.where(math_ops.logical_and(finite, math_ops.logical_not(
            grow)), good, np.int64(0)))
        return None

    def get_config(self):
        from tensorlite.keras.optimizers import serialize  # noqa: PLC0415
        return {"inner_optimizer": serialize(self._inner), "dynamic": self._dynamic,
                "initial_scale": self._initial_scale,
                "dynamic_growth_steps": self._growth_steps if self._dynamic else None}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tensorlite.keras.optimizers import deserialize  # noqa: PLC0415
        config = dict(config)
        config["inner_optimizer"] = deserialize(config["inner_optimizer"])
        return cls(**config)


class experimental:  # noqa: N801 - tf.keras.mixed_precision.experimental (TF 2.3's names)
    """`tf.keras.mixed_precision.experimental`: TF 2.3's spellings."""
    Policy = Policy
    LossScaleOptimizer = LossScaleOptimizer
    global_policy = staticmethod(global_policy)
    set_policy = staticmethod(set_global_policy)
