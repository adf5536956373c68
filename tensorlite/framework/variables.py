"""`tf.Variable`: mutable state whose reads the GradientTape watches.

A variable holds an immutable Tensor and replaces it on every assignment, so a value read
earlier never changes under the reader's feet. Creation goes through the creator stack of
`tf.variable_creator_scope`, so a scope can substitute its own object (the
FactorizedVariable of the TF Dev Summit 2020 talk "Research with TensorFlow").

Example:
    >>> v = tf.Variable(3.0)
    >>> v.assign_add(1.0).numpy()
    4.0
"""
import enum
import threading

import numpy as np

from tensorlite.framework import convert, dtypes, errors
from tensorlite.framework.name_scope import scoped_name
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_shape import TensorShape

_creators = threading.local()
# Tapes that watch variable reads; the autodiff layer appends its hook here.
READ_HOOKS = []
# Graph tracers record assignments: hook(variable, mode, value_tensor), mode set/add/sub.
ASSIGN_HOOKS = []
# Read transforms f(variable, tensor) -> tensor, innermost last: a mixed-precision Keras
# layer's call reads the float weights it made (marked `_autocast`) cast to its compute
# dtype. Empty means no cost beyond the check.
READ_CASTS = []


class VariableSynchronization(enum.Enum):
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


def _creator_stack():
    s = getattr(_creators, "stack", None)
    if s is None:
        s = _creators.stack = []
    return s


class variable_creator_scope:  # noqa: N801 - TensorFlow's name
    """Routes every variable creation inside it through ``creator(next_creator, **kwargs)``."""

    def __init__(self, variable_creator):
        self._creator = variable_creator

    def __enter__(self):
        _creator_stack().append(self._creator)
        return self

    def __exit__(self, *exc):
        _creator_stack().pop()
        return False


class _VariableMeta(type):
    def __call__(cls, *args, **kwargs):
        stack = _creator_stack()
        if cls is not Variable or not stack:
            return super().__call__(*args, **kwargs)
        kwargs = _bind_args(args, kwargs)

        def make(i):
            if i < 0:
                return lambda **kw: type.__call__(Variable, **kw)
            creator, nxt = stack[i], make(i - 1)

            def call(**kw):
                # Variables a creator makes itself skip that creator and those above it,
                # so a scope can build its substitute from plain tf.Variables (FactorizedVariable).
                saved = _creators.stack
                _creators.stack = stack[:i]
                try:
                    return creator(nxt, **kw)
                finally:
                    _creators.stack = saved
            return call
        return make(len(stack) - 1)(**kwargs)


_ARG_NAMES = ("initial_value", "trainable", "validate_shape", "caching_device", "name",
              "variable_def", "dtype", "import_scope", "constraint", "synchronization",
              "aggregation", "shape")


def _bind_args(args, kwargs):
    bound = dict(zip(_ARG_NAMES, args))
    bound.update(kwargs)
    return bound


class Variable(metaclass=_VariableMeta):
    """A mutable tensor-valued state."""

    _is_variable = True
    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None,
                 import_scope=None, constraint=None,
                 synchronization=VariableSynchronization.AUTO,
                 aggregation=VariableAggregation.NONE, shape=None, experimental_enable_variable_lifting=True):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if callable(initial_value):
            # Initialisation is not part of any recorded computation (tape or graph).
            from tensorlite.framework import dispatch  # noqa: PLC0415
            with dispatch.observers_paused():
                initial_value = initial_value()
        value = convert.convert_to_tensor(initial_value, dtype_hint=dtype)
        if dtype is not None and value._dtype is not dtypes.as_dtype(dtype):
            value = wrap(value._value.astype(dtypes.as_dtype(dtype).as_numpy_dtype))
        self._t = value
        self._shape = TensorShape(value._value.shape) if shape is None else TensorShape(shape)
        if synchronization == VariableSynchronization.ON_READ and trainable:
            raise ValueError("Synchronization value can be set to VariableSynchronization.ON_READ "
                             "only for non-trainable variables.")
        self._trainable = (synchronization != VariableSynchronization.ON_READ
                           if trainable is None else bool(trainable))
        self._name = scoped_name(name or "Variable") + ":0"
        self._constraint = constraint
        self._validate_shape = validate_shape
        self.synchronization = synchronization
        self.aggregation = aggregation
        self._initial_value = value

    # -- reading -------------------------------------------------------------------------
    def _read(self):
        """The current value; under an active tape, a fresh tensor the tape links to us."""
        if READ_HOOKS or READ_CASTS:
            t = wrap(self._t._value)
            for hook in READ_HOOKS:
                hook(self, t)
            if READ_CASTS and self.__dict__.get("_autocast"):
                t = READ_CASTS[-1](self, t)
            return t
        return self._t

    def value(self):
        return self._read()

    def read_value(self):
        return self._read()

    def numpy(self):
        return self._t.numpy()

    def __array__(self, dtype=None, copy=None):
        return self._t.__array__(dtype, copy)

    def __float__(self):
        return float(self._t)

    def __format__(self, format_spec):
        return self._t.__format__(format_spec)

    def __int__(self):
        return int(self._t)

    def __bool__(self):
        return bool(self._t)

    def __len__(self):
        return len(self._t)

    def __iter__(self):
        return iter(self._read())

    def __index__(self):
        return self._t.__index__()

    # -- properties ----------------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._t._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def ndim(self):
        return self._t._value.ndim

    @property
    def trainable(self):
        return self._trainable

    @property
    def initial_value(self):
        return self._initial_value

    @property
    def constraint(self):
        return self._constraint

    @property
    def device(self):
        return self._t.device

    def ref(self):
        return _VarRef(self)

    def experimental_ref(self):
        return self.ref()

    def __hash__(self):
        raise TypeError("Variable is unhashable. Instead, use variable.ref() as the key. "
                        f"(Variable: {self!r})")

    # -- writing -------------------------------------------------------------------------
    def _coerce(self, value, op):
        current = self._t._value
        if type(value) is np.ndarray and value.dtype == current.dtype and \
                value.shape == current.shape:
            return value  # the graph executor's case: an array like the current value
        t = convert.convert_to_tensor(value, dtype_hint=self.dtype)
        if t._dtype is not self.dtype and t._dtype.is_floating and self.dtype.is_floating \
                and self.__dict__.get("_autocast"):  # a mixed-precision layer's weight
            t = wrap(t._value.astype(self.dtype.as_numpy_dtype))
        if t._dtype is not self.dtype:
            raise errors.InvalidArgumentError(
                None, None, f"{op} on variable {self._name} of dtype {self.dtype.name} got a "
                f"value of dtype {t._dtype.name}; tf.cast the value first")
        arr = t._value
        if self._validate_shape and not self._shape.is_compatible_with(arr.shape):
            raise ValueError(f"Cannot {op} to variable {self._name}: its shape is "
                             f"{self._shape} but the value's is {TensorShape(arr.shape)}; "
                             f"create it with shape=tf.TensorShape(None) to allow changes")
        return arr

    def _store(self, arr, read_value):
        # the constraint is the optimizer's to apply after its update, as in TensorFlow:
        # assign, set_weights and checkpoint restores store the value as given
        self._t = wrap(arr)
        return self if read_value else None

    def _notify(self, mode, value):
        if ASSIGN_HOOKS:
            t = convert.convert_to_tensor(value, dtype_hint=self.dtype)
            for hook in list(ASSIGN_HOOKS):
                hook(self, mode, t)

    def assign(self, value, use_locking=False, name=None, read_value=True):
        self._notify("set", value)
        return self._store(np.array(self._coerce(value, "assign"), copy=True), read_value)

    def _assign_owned(self, arr):
        """assign() of an array nothing else references (one just read from a checkpoint):
        the defensive copy, a third of a restore's time, is skipped."""
        self._notify("set", arr)
        self._store(self._coerce(arr, "assign"), False)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        self._notify("add", delta)
        return self._store(self._t._value + self._coerce(delta, "assign_add"), read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        self._notify("sub", delta)
        return self._store(self._t._value - self._coerce(delta, "assign_sub"), read_value)

    def __repr__(self):
        return (f"<tf.Variable '{self._name}' shape={self._shape} dtype={self.dtype.name}, "
                f"numpy={Tensor.__repr__(self._t).split('numpy=', 1)[1][:-1]}>")

    def __str__(self):
        return self.__repr__()

    def __reduce__(self):
        return (_rebuild, (self._t._value, self._trainable, self._name[:-2]))

    def __deepcopy__(self, memo):
        v = type.__call__(Variable, self._t._value.copy(), trainable=self._trainable,
                          name=self._name[:-2], constraint=self._constraint)
        return v


def _rebuild(value, trainable, name):
    return type.__call__(Variable, value, trainable=trainable, name=name)


class _VarRef:
    __slots__ = ("_v",)

    def __init__(self, v):
        self._v = v

    def deref(self):
        return self._v

    def __hash__(self):
        return id(self._v)

    def __eq__(self, other):
        return isinstance(other, _VarRef) and other._v is self._v


def _convert_variable(value, dtype=None, name=None, as_ref=False):
    return value._read()
