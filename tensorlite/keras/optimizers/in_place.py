"""Writing an optimizer's variables in place: the built-in optimizers update the raw NumPy
arrays of `tf.Variable`s, in place only when nothing else refers to the array (so a tensor
read from a variable earlier never changes), else by installing a new array.
"""
import sys

import numpy as np

from tensorlite.framework.tensor import wrap
from tensorlite.framework.variables import Variable

_rc = sys.getrefcount
# On a free-threaded build another thread may take a reference between check and write.
_NO_INPLACE = hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled()


# -- writing variables in place ------------------------------------------------------------
def _ref_counts(var):
    t = var._t
    a = t._value
    return _rc(t), _rc(a)


def _baseline():
    probe = type.__call__(Variable, np.zeros(1))
    probe._t = wrap(np.zeros(1))
    return _ref_counts(probe)


_BASELINE = _baseline()


def exclusive_array(var):
    """The NumPy array of a `tf.Variable`'s value when nothing but the variable refers to it
    (its tensor and the array have no other holders, the array owns its memory), so an
    in-place write is invisible to everyone else; None otherwise."""
    if _NO_INPLACE or type(var) is not Variable or _ref_counts(var) != _BASELINE:
        return None
    a = var._t._value
    return a if a.base is None and a.flags.writeable else None


def writable_array(var):
    """The value array of a `tf.Variable` (a slot), safe to update in place: when it is
    shared it is copied first and the copy becomes the variable's value (copy on write)."""
    a = exclusive_array(var)
    if a is None:
        a = np.array(var._t._value, copy=True)
        var._t = wrap(a)
    return a


def _in_place(var, ufunc, operand, fallback):
    """var = ufunc(var, operand): in place when the variable's array is exclusive, else by
    installing a new array; `fallback()` for variable-like objects that are not Variables."""
    if type(var) is not Variable:
        fallback()
        return
    a = exclusive_array(var)
    if a is None:
        var._t = wrap(ufunc(var._t._value, operand))
    else:
        ufunc(a, operand, out=a)


def subtract_from(var, delta):
    """var -= delta for a NumPy `delta` of var's dtype: in place when exclusive, else by
    installing a new array (plain `assign_sub` for variable-like objects)."""
    _in_place(var, np.subtract, delta,
              lambda: var.assign_sub(wrap(np.array(delta, copy=True))))


def add_to(var, delta):
    """var += delta, like `subtract_from`."""
    _in_place(var, np.add, delta, lambda: var.assign_add(wrap(np.array(delta, copy=True))))


def multiply_by(var, factor):
    """var *= factor (a scalar), like `subtract_from`."""
    _in_place(var, np.multiply, factor, lambda: var.assign(var * factor))


def value_array(var):
    """The current value of a variable or tensor as a NumPy array (no copy)."""
    if type(var) is Variable:
        return var._t._value
    return np.asarray(var)
