"""Dataset elements: nested structures (tuples, dicts, namedtuples) of Tensors, and their
`element_spec` (the same structure of `tf.TensorSpec`).
"""
import numpy as np

from tensorlite.data import composite
from tensorlite.framework import dtypes, errors, nest
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_spec import TensorSpec


def to_element(value, where="dataset element"):
    """Converts a (nested) value to the same structure of Tensors. Lists are tensors, as
    in tf.data (a Python list is one component, not a structure)."""
    if isinstance(value, Tensor) or composite.is_composite(value):
        return value
    if isinstance(value, dict):
        return type(value)((k, to_element(v, where)) for k, v in value.items())
    if isinstance(value, tuple):
        if hasattr(value, "_fields"):
            return type(value)(*[to_element(v, where) for v in value])
        return tuple(to_element(v, where) for v in value)
    if value is None:
        raise TypeError(f"{where}: None is not a valid component; return a tensor, an array "
                        f"or a number")
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{where}: cannot convert {type(value).__name__} to a Tensor: {e}") \
            from None


def flatten(element):
    return nest.flatten(element)


def pack(like, flat):
    return nest.pack_like(like, flat)


def spec_of(element):
    """element_spec of a concrete element."""
    return nest.map_structure(composite.spec_for, element)


def relax(spec_a, spec_b):
    """The most specific spec compatible with both (dims that differ become None)."""
    return nest.map_structure(lambda a, b: a.most_specific_compatible_type(b), spec_a, spec_b)


def check_matches(element, spec, stage, index):
    """Raises InvalidArgumentError naming the stage and element index when `element` does
    not have `spec`'s structure, dtypes and (compatible) shapes."""
    try:
        flat_e, flat_s = nest.flatten(element), nest.flatten(spec)
        same_structure = len(flat_e) == len(flat_s) and \
            _structure_key(element) == _structure_key(spec)
    except (TypeError, ValueError):
        same_structure = False
    if not same_structure:
        raise errors.InvalidArgumentError(
            None, None, f"{stage}: element {index} has structure {_describe(element)} but the "
            f"dataset declares {_describe(spec)}; return the same structure for every element")
    for e, s in zip(flat_e, flat_s):
        if e.dtype is not s.dtype:
            raise errors.InvalidArgumentError(
                None, None, f"{stage}: element {index} has a component of dtype {e.dtype.name} "
                f"but {s.dtype.name} was declared; tf.cast it or fix the declared signature")
        if not s.shape.is_compatible_with(e.shape):
            raise errors.InvalidArgumentError(
                None, None, f"{stage}: element {index} has a component of shape {e.shape} but "
                f"{s.shape} was declared")


def _structure_key(x):
    if isinstance(x, dict):
        return ("dict", tuple(sorted((k, _structure_key(v)) for k, v in x.items())))
    if isinstance(x, tuple):
        return ("tuple", tuple(_structure_key(v) for v in x))
    return "leaf"


def _describe(x):
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in x.items()) + "}"
    if isinstance(x, tuple):
        return "(" + ", ".join(_describe(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, (Tensor, TensorSpec)):
        return f"{x.dtype.name}{list(x.shape.as_list()) if x.shape.rank is not None else '?'}"
    return type(x).__name__


def call_with_element(fn, element):
    """tf.data calling convention: a tuple element is unpacked into positional arguments."""
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        return fn(*element)
    return fn(element)


def to_numpy_element(element):
    """Arrays for moving an element between processes (a RaggedTensor keeps its shape,
    with arrays as components)."""
    return nest.map_structure(lambda t: t._value, element, expand_composites=True)


def from_numpy_element(element):
    return nest.map_structure(lambda a: wrap(np.asarray(a)), element, expand_composites=True)


def spec_dtype_shape(spec):
    return dtypes.as_dtype(spec.dtype), spec.shape
