"""Helpers shared by the `tf.strings` modules: string-tensor arguments, the elementwise
wrapper that maps a function over a RaggedTensor's flat values, and ragged results.

Example:
    >>> _strings(["a"], "StringLower").dtype
    tf.string
"""
import functools

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.dispatch import invalid
from tensorlite.framework.tensor import Tensor
from tensorlite.ragged import RaggedTensor


def _strings(x, op_name, arg="input"):
    t = x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=dtypes.string) \
        if not getattr(x, "_is_variable", False) else convert_to_tensor(x)
    if not t.dtype.is_string:
        raise invalid(op_name, f"{op_name}: `{arg}` must be a tf.string tensor, got "
                      f"{t.dtype.name}; convert numbers with tf.strings.as_string")
    return t


def _text(v):
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def elementwise(fn):
    """A function of one string tensor that also maps over a RaggedTensor's flat values."""
    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):  # noqa: A002 - TF's argument name
        if isinstance(input, RaggedTensor):
            return input.with_flat_values(fn(input.flat_values, *args, **kwargs))
        return fn(input, *args, **kwargs)
    return wrapper


def _ragged(values, splits, shape):
    """Flat values + row splits of a flat input of `shape` as TensorFlow returns them: a
    scalar input gives a dense vector, a rank-N input a ragged tensor of ragged_rank N."""
    if not shape:
        return values
    rt = RaggedTensor.from_row_splits(values, splits, validate=False)
    for n in reversed(shape[1:]):
        rt = RaggedTensor.from_uniform_row_length(rt, n, validate=False)
    return rt
