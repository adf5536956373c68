"""`v[0, 0].assign(3.)`: a slice of a Variable that can be assigned, as TensorFlow's.

TensorFlow's `Variable.__getitem__` returns the slice's tensor with `assign` (and, in TF 2,
`assign_add`/`assign_sub` through `scatter_nd_*`) attached. Here `v[key]` is the ordinary
differentiable slice, whose class becomes `VariableSlice` (a Tensor subclass with no new
fields, so the tensor a tf.function trace knows is the same object); its `assign*` methods
write the selected elements of the variable as one `tensor_scatter_nd_*` of the whole value
followed by `v.assign`, so they run eagerly and inside tf.function alike.

Example:
    >>> v = tf.Variable([[0., 0.], [0., 0.]])
    >>> v[0, 1].assign(3.)
    >>> v[:, 0].assign_add([1., 2.])
    >>> v.numpy()
    array([[1., 3.],
           [2., 0.]], dtype=float32)
"""
import weakref

import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.tensor import Tensor
from tensorlite.ops import array_ops, control_flow_ops, gather_ops, math_ops
from tensorlite.ops.slice_ops import getitem as _getitem

_SOURCE = {}  # id of a live slice tensor -> (variable, key); tensors are unhashable


class VariableSlice(Tensor):
    """The tensor `v[key]` of a Variable `v`, with TF's slice assignment methods."""

    __slots__ = ()

    def _source(self):
        try:
            return _SOURCE[id(self)]
        except KeyError:
            raise AttributeError("this tensor is no longer a view of a variable") from None

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Writes `value` (broadcast to the slice's shape) into the variable's slice."""
        return _write(self, value, gather_ops.tensor_scatter_nd_update, read_value)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return _write(self, delta, gather_ops.tensor_scatter_nd_add, read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return _write(self, delta, gather_ops.tensor_scatter_nd_sub, read_value)


def getitem(variable, key):
    """`variable[key]`: the slice of its current value, assignable (see the module doc)."""
    t = _getitem(variable._read(), key)
    if type(t) is Tensor:
        t.__class__ = VariableSlice
        _SOURCE[id(t)] = (variable, key)
        weakref.finalize(t, _SOURCE.pop, id(t), None)
    return t


def _indices(shape, key):
    """The [n, rank] element indices that `key` selects in an array of `shape`, and the
    selection's shape; static, from the key alone."""
    if any(d is None for d in shape):
        raise errors.InvalidArgumentError(
            None, None, f"slice assignment needs the variable's full shape; it is {shape}")
    positions = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    try:
        chosen = positions[_static_key(key)]
    except IndexError as e:
        raise errors.InvalidArgumentError(
            None, None, f"slice assignment: index {key!r} is out of range for shape "
                        f"{list(shape)}: {e}") from None
    flat = np.ravel(chosen)
    return np.stack(np.unravel_index(flat, shape), axis=-1).astype(np.int64), np.shape(chosen)


def _static_key(key):
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for k in parts:
        if isinstance(k, Tensor) or getattr(k, "_is_variable", False):
            if control_flow_ops.graph_tracing():
                raise NotImplementedError(
                    "slice assignment inside tf.function with a tensor index is not "
                    "supported; use Python integers and slices, or "
                    "tf.tensor_scatter_nd_update and v.assign")
            value = np.asarray(k)
            if value.dtype == bool or value.ndim:
                raise NotImplementedError(
                    "slice assignment with a boolean or array index is not supported; use "
                    "tf.tensor_scatter_nd_update and v.assign")
            k = int(value)
        out.append(k)
    return tuple(out)


def _write(view, value, scatter, read_value):
    variable, key = view._source()
    indices, shape = _indices(tuple(variable.shape.as_list()), key)
    value = math_ops.cast(value, variable.dtype)
    updates = array_ops.reshape(array_ops.broadcast_to(value, shape), [-1])
    new = scatter(variable._read(), indices, updates)
    return variable.assign(new, read_value=read_value)
