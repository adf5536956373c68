"""`tf.experimental.Optional`: a value that may be absent, as
`iterator.get_next_as_optional()` returns at the end of a dataset.

Example (the TF API doc's):
    >>> optional = tf.experimental.Optional.from_value(42)
    >>> optional.has_value().numpy(), optional.get_value().numpy()
    (True, 42)
    >>> tf.experimental.Optional.empty(tf.TensorSpec([], tf.int32)).has_value().numpy()
    False
"""
import numpy as np

from tensorlite.framework import errors, nest
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_spec import TensorSpec


def _is_composite(x):
    return type(x).__name__ in ("SparseTensor", "RaggedTensor")


def _spec(t):
    """The spec of one component: TensorSpec, SparseTensorSpec or RaggedTensorSpec."""
    if type(t).__name__ == "SparseTensor":
        from tensorlite.framework.sparse_tensor import SparseTensorSpec  # noqa: PLC0415
        return SparseTensorSpec(t.shape, t.dtype)
    if type(t).__name__ == "RaggedTensor":
        from tensorlite.ragged import RaggedTensorSpec  # noqa: PLC0415
        return RaggedTensorSpec(t.shape, t.dtype, t.ragged_rank)
    return TensorSpec(t.shape, t.dtype)


def _normalize(value):
    """Tensors in the value's structure (dicts and tuples nest; a list is one tensor, as
    tf.data treats it)."""
    if isinstance(value, Tensor) or _is_composite(value):
        return value
    if isinstance(value, dict):
        return type(value)((k, _normalize(v)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [_normalize(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return convert_to_tensor(value)


class Optional:
    """Either holds a (nested) value of tensors or is empty; `element_spec` is the value's
    structure of TensorSpecs either way."""

    def __init__(self, value, element_spec, has_value):
        self._value, self._element_spec, self._has = value, element_spec, has_value

    @staticmethod
    def from_value(value):
        """An Optional holding `value` (a tensor, or nested structure of tensor-likes)."""
        value = _normalize(value)
        return Optional(value, nest.map_structure(_spec, value), True)

    @staticmethod
    def empty(element_spec):
        """An empty Optional whose value would have the structure `element_spec`."""
        return Optional(None, element_spec, False)

    @property
    def element_spec(self):
        return self._element_spec

    def has_value(self, name=None):
        """A scalar tf.bool: whether the Optional holds a value."""
        return wrap(np.array(self._has))

    def get_value(self, name=None):
        """The value; an empty Optional raises InvalidArgumentError, as TF does."""
        if not self._has:
            raise errors.InvalidArgumentError(
                None, None, "The optional does not have a value. Check has_value() first.")
        return self._value

    def __repr__(self):
        return f"<tf.experimental.Optional has_value={self._has} spec={self._element_spec}>"


class OptionalSpec:
    """`tf.OptionalSpec`: the type of an Optional with values of `element_spec`."""

    def __init__(self, element_spec):
        self.element_spec = element_spec

    value_type = property(lambda self: Optional)

    def __eq__(self, other):
        return isinstance(other, OptionalSpec) and other.element_spec == self.element_spec

    def __repr__(self):
        return f"OptionalSpec({self.element_spec!r})"


Optional._type_spec = property(lambda self: OptionalSpec(self._element_spec))
