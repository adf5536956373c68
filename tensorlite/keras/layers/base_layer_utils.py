"""Helpers every Keras layer shares: Keras's input-rank and input-axis messages (what its
`InputSpec` raises) and the config rules of a weight's initializer, regularizer and
constraint (`weight_args` reads them, the `serialize_*` functions write them back).

Kept out of `layer.py`, whose one concern is the `Layer` class itself (building, calling,
tracking weights); these are the argument and config rules its subclasses share.

Example:
    >>> self.kernel_initializer, self.kernel_regularizer, self.kernel_constraint = \
    ...     weight_args("glorot_uniform", "l2", "non_neg")
    >>> serialize_constraint(self.kernel_constraint)
    {'class_name': 'NonNeg', 'config': {}}
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras import constraints, initializers, regularizers


def check_ndim(layer, shape, ndim=None, min_ndim=None, max_ndim=None, index=0):
    """Keras's InputSpec message for an input of the wrong rank."""
    shape = TensorShape(shape)
    rank = shape.rank
    if rank is None:
        return
    bad = ((ndim is not None and rank != ndim) or (min_ndim is not None and rank < min_ndim)
           or (max_ndim is not None and rank > max_ndim))
    if bad:
        want = (f"ndim={ndim}" if ndim is not None else
                f"min_ndim={min_ndim}" if min_ndim is not None and (
                    max_ndim is None or rank < min_ndim) else f"max_ndim={max_ndim}")
        raise ValueError(f'Input {index} of layer "{layer.name}" is incompatible with the '
                         f"layer: expected {want}, found ndim={rank}. Full shape received: "
                         f"{tuple(shape.as_list())}")


def check_axis_value(layer, shape, axis, expected, index=0):
    """Keras's InputSpec message for an input whose channel axis changed since build."""
    got = TensorShape(shape).as_list()[axis]
    if got is not None and expected is not None and got != expected:
        raise ValueError(f'Input {index} of layer "{layer.name}" is incompatible with the '
                         f"layer: expected axis {axis} of input shape to have value "
                         f"{expected}, but received input with shape "
                         f"{tuple(TensorShape(shape).as_list())}")


def kernel_bias_config(layer):
    """The config entries of a layer's kernel and bias arguments (and activity regularizer)."""
    return {"kernel_initializer": serialize_initializer(layer.kernel_initializer),
            "bias_initializer": serialize_initializer(layer.bias_initializer),
            "kernel_regularizer": serialize_regularizer(layer.kernel_regularizer),
            "bias_regularizer": serialize_regularizer(layer.bias_regularizer),
            "activity_regularizer": serialize_regularizer(layer.activity_regularizer),
            "kernel_constraint": serialize_constraint(layer.kernel_constraint),
            "bias_constraint": serialize_constraint(layer.bias_constraint)}


def serialize_initializer(init):
    return initializers.serialize(init) if hasattr(init, "get_config") else None


def serialize_regularizer(reg):
    reg = regularizers.get(reg) if isinstance(reg, (str, dict)) else reg
    return regularizers.serialize(reg) if hasattr(reg, "get_config") else None


def serialize_constraint(con):
    if con is None or not hasattr(con, "get_config"):
        return None
    return {"class_name": type(con).__name__, "config": con.get_config()}


def get_constraint(identifier):
    """constraints.get that also accepts the dicts serialize_constraint writes."""
    if isinstance(identifier, dict):
        cls = getattr(constraints, identifier["class_name"], None)
        if cls is None:
            raise ValueError(f"Unknown constraint: {identifier['class_name']!r}")
        return cls(**identifier.get("config", {}))
    return constraints.get(identifier)


def weight_args(initializer, regularizer, constraint):
    """The (initializer, regularizer, constraint) triple for one weight, from identifiers."""
    return (initializers.get(initializer), regularizers.get(regularizer),
            get_constraint(constraint))


def set_kernel_bias_args(layer, kernel_initializer, kernel_regularizer, kernel_constraint,
                         bias_initializer, bias_regularizer, bias_constraint):
    """Sets a kernel-and-bias layer's six weight attributes from identifiers (what
    `kernel_bias_config` writes back)."""
    layer.kernel_initializer, layer.kernel_regularizer, layer.kernel_constraint = \
        weight_args(kernel_initializer, kernel_regularizer, kernel_constraint)
    layer.bias_initializer, layer.bias_regularizer, layer.bias_constraint = \
        weight_args(bias_initializer, bias_regularizer, bias_constraint)


def check_last_dim(layer, x, expected):
    """Keras's message for an input whose last axis does not match a built layer."""
    got = x.shape[-1] if x.shape.rank else None
    if got is not None and expected is not None and got != expected:
        raise ValueError(f'Input 0 of layer "{layer.name}" is incompatible with the layer: '
                         f"expected axis -1 of input shape to have value {expected}, but "
                         f"received input with shape {tuple(x.shape.as_list())}")


def record_adapt_input(layer, data):
    """As tf.keras 2's `adapt`: a preprocessing layer given no input shape takes the rank of
    the data it adapts on (and, for text, the string dtype), so a Sequential it starts is
    built (the load-text tutorial's `plot_model` of Sequential([int_vectorize_layer, ...]))."""
    if layer._batch_input_shape is not None:
        return
    spec = getattr(data, "element_spec", None)
    if spec is not None:
        shape, dtype = getattr(spec, "shape", None), getattr(spec, "dtype", None)
        if shape is None or getattr(shape, "rank", None) is None:
            return
        rank = shape.rank
    else:
        arr = data if hasattr(data, "shape") and hasattr(data, "dtype") else np.asarray(data)
        rank, dtype = len(arr.shape), arr.dtype
    layer._batch_input_shape = (None,) * rank
    try:
        if dtypes.as_dtype(dtype).is_string:
            layer.adapt_input_dtype = dtypes.string
    except TypeError:
        pass
