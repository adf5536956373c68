"""The Metric base class (variables, graph-aware update/result/reset, result tensors
remembered for `add_metric`), Sum/Mean and MeanMetricWrapper, with the NumPy helpers
every metric family uses.
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.module import Module, camel_to_snake
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_notes import TensorNotes
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.variables import Variable
from tensorlite.keras import backend
from tensorlite.keras.host_state import graph_aware
from tensorlite.keras import losses as _losses


def _np(x):
    """A value as a NumPy array without going through Tensor.numpy (no tape hooks)."""
    if type(x) is Tensor:
        return x._value
    if type(x) is Variable:
        return x._t._value
    return np.asarray(x)


def _set(var, value):
    if type(var) is Variable:
        var._t = wrap(np.asarray(value, dtype=var._t._value.dtype))
    else:
        var.assign(np.asarray(value, dtype=var.dtype.as_numpy_dtype))


def _add(var, value):
    _set(var, _np(var) + value)


def _divide_no_nan(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b == 0, 0.0, a / np.where(b == 0, 1.0, b))


def _squeeze_or_expand(y_pred, y_true=None, sample_weight=None):
    """Keras's rank matching on NumPy arrays (see losses.squeeze_or_expand_dimensions)."""
    if y_true is not None:
        if y_pred.ndim - y_true.ndim == 1 and y_pred.shape[-1] == 1:
            y_pred = y_pred[..., 0]
        elif y_true.ndim - y_pred.ndim == 1 and y_true.shape[-1] == 1:
            y_true = y_true[..., 0]
    if sample_weight is None:
        return y_pred, y_true, None
    if sample_weight.ndim and sample_weight.ndim - y_pred.ndim == 1 and \
            sample_weight.shape[-1] == 1:
        sample_weight = sample_weight[..., 0]
    elif sample_weight.ndim and y_pred.ndim - sample_weight.ndim == 1:
        sample_weight = sample_weight[..., None]
    return y_pred, y_true, sample_weight


def _broadcast_weights(name, weights, values):
    try:
        return np.broadcast_to(weights, values.shape)
    except ValueError:
        raise ValueError(f"{name}: sample_weight of shape {weights.shape} cannot be broadcast "
                         f"to the values of shape {values.shape}; give one weight per sample "
                         f"(shape [batch])") from None


_RESULTS = TensorNotes()  # a metric's result tensor -> the metric


def remember_result(result, metric):
    """Marks `result` as `metric`'s: `layer.add_metric(metric(y, p))` then tracks that
    metric itself (already updated), as tf.keras 2 does through the tensor's _metric_obj."""
    _RESULTS.set(result, metric)


def metric_of_result(value):
    """The metric whose __call__ returned `value`, or None."""
    return _RESULTS.get(value)


class Metric(Module):
    """Base class of stateful metrics: subclasses create variables with `add_weight` and
    implement `update_state` and `result`.

    The built-in metrics keep NumPy state: inside a tf.function their update_state, result
    and reset_state each become one host callback node (keras/host_state.py), so every run
    of the graph updates and reads the real state. A user's subclass written with tf ops and
    `assign_add` traces op by op as usual."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith(__package__ + "."):  # the built-ins (keras/metrics/)
            _make_graph_aware(cls)

    def __init__(self, name=None, dtype=None, **kwargs):
        if name is None:
            name = backend.unique_object_name(camel_to_snake(type(self).__name__))
        self._name = name
        self._scope_name = name + "/"
        self._dtype = dtypes.as_dtype(dtype or backend.floatx())
        self._metric_vars = []
        self.stateful = True
        self.built = True

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype.name

    def add_weight(self, name, shape=(), aggregation=None, synchronization=None,
                   initializer=None, dtype=None):
        """A non-trainable state variable (zeros unless `initializer` says otherwise)."""
        dt = dtypes.as_dtype(dtype or self._dtype)
        shape = tuple(TensorShape(shape).as_list())
        if initializer is None:
            value = np.zeros(shape, dt.as_numpy_dtype)
        else:
            from tensorlite.keras import initializers  # noqa: PLC0415
            value = initializers.get(initializer)(shape, dtype=dt)
        v = Variable(value, name=name, dtype=dt, trainable=False)
        self._metric_vars.append(v)
        return v

    @property
    def variables(self):
        extra = [v for v in Module.variables.fget(self)
                 if all(v is not w for w in self._metric_vars)]
        return list(self._metric_vars) + extra

    @property
    def weights(self):
        return self.variables

    @property
    def trainable_weights(self):
        return []

    @property
    def non_trainable_weights(self):
        return self.variables

    @property
    def trainable_variables(self):
        return ()

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("Must be implemented in subclasses.")

    def result(self):
        raise NotImplementedError("Must be implemented in subclasses.")

    def reset_state(self):
        """Sets every state variable back to zeros."""
        for v in self.variables:
            _set(v, np.zeros(_np(v).shape))

    def reset_states(self):
        return self.reset_state()

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        result = self.result()
        remember_result(result, self)
        return result

    def _out(self, value):
        return wrap(np.asarray(value, dtype=self._dtype.as_numpy_dtype))

    def get_config(self):
        return {"name": self._name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<tf.keras.metrics.{type(self).__name__} name={self._name!r}>"


def _make_graph_aware(cls):
    for name in ("update_state", "result", "reset_state"):
        fn = cls.__dict__.get(name)
        if fn is not None and not getattr(fn, "_graph_aware", False):
            dtype = (lambda self: self._dtype) if name == "result" else None
            setattr(cls, name, graph_aware(fn, "KerasMetric", dtype))


_make_graph_aware(Metric)


# -- Sum / Mean ------------------------------------------------------------------------------
class _Reduce(Metric):
    _weighted_mean = True

    def __init__(self, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_weight("total")
        if self._weighted_mean:
            self.count = self.add_weight("count")

    def update_state(self, values, sample_weight=None):
        """Adds `values` (weighted, if `sample_weight` is given) to the state."""
        v = np.asarray(_np(values), dtype=np.float64)
        if sample_weight is None:
            n = v.size
        else:
            w = np.asarray(_np(sample_weight), dtype=np.float64)
            v, _, w = _squeeze_or_expand(v, None, w)
            if w.ndim and w.ndim < v.ndim:
                # Weights of lower rank (TF broadcasts weights only at equal rank): reduce
                # the values down to the weights' rank.
                axes = tuple(range(w.ndim, v.ndim))
                v = v.sum(axis=axes) if not self._weighted_mean else v.mean(axis=axes)
            w = _broadcast_weights(self._name, w, v)
            v = v * w
            n = w.sum()
        _add(self.total, v.sum())
        if self._weighted_mean:
            _add(self.count, n)

    def result(self):
        total = float(_np(self.total))
        if not self._weighted_mean:
            return self._out(total)
        count = float(_np(self.count))
        return self._out(total / count if count else 0.0)


class Sum(_Reduce):
    """`tf.keras.metrics.Sum`: the (weighted) sum of the values."""

    _weighted_mean = False

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)


class Mean(_Reduce):
    """`tf.keras.metrics.Mean`: the (weighted) mean of the values."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)


def _float_arrays(y_true, y_pred):
    y_pred = _np(y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = y_pred.astype(np.float32)
    return _np(y_true).astype(y_pred.dtype, copy=False), y_pred


class MeanMetricWrapper(Mean):
    """`tf.keras.metrics.MeanMetricWrapper`: the mean of `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        np_fn = getattr(self._fn, "_numpy_fn", None)
        if np_fn is not None:
            t, p = (_float_arrays(y_true, y_pred) if self._fn._cast_true
                    else (_np(y_true), _np(y_pred)))
            p, t, _ = _squeeze_or_expand(p, t)
            values = np_fn(t, p, **self._fn_kwargs)
        else:
            t, p = convert_to_tensor(y_true), convert_to_tensor(y_pred)
            p, t = _losses.squeeze_or_expand_dimensions(p, t)
            values = _np(self._fn(t, p, **self._fn_kwargs))
        super().update_state(values, sample_weight)

    def get_config(self):
        config = {k: (float(_np(v)) if isinstance(v, (Tensor, Variable)) else v)
                  for k, v in self._fn_kwargs.items()}
        if type(self) is MeanMetricWrapper:
            config["fn"] = self._fn
        config.update(super().get_config())
        return config
