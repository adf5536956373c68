"""`tf.types.experimental.TraceType`: how a Python argument of a tf.function decides which
traced graph serves it. An argument whose class defines `__tf_tracing_type__(context)`
is keyed by the TraceType that returns (equal TraceTypes share one graph); others by
value (hashable) or identity, as tensorlite's graph/function.py keys them.

Example:
    >>> class Fruit:
    ...     def __tf_tracing_type__(self, context):
    ...         return FruitTraceType(self)   # equal for fruits of one class
"""
import abc


class TraceType(abc.ABC):
    """The base of a tracing type: equality and hashing decide graph reuse."""

    @abc.abstractmethod
    def is_subtype_of(self, other):
        """Whether values of this type may use a graph traced for `other`."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others):
        """A type every one of self and `others` is a subtype of, or None."""

    def placeholder_value(self, placeholder_context=None):
        """TensorFlow traces with this value; tensorlite traces on the real argument
        (graph/tracing.py), so it never asks. Subclasses may define it for TensorFlow."""
        raise NotImplementedError(f"{type(self).__name__}.placeholder_value is not defined")

    @abc.abstractmethod
    def __eq__(self, other):
        ...

    @abc.abstractmethod
    def __hash__(self):
        ...


class _Experimental:
    TraceType = TraceType

    @property
    def AtomicFunction(self):  # noqa: N802 - TensorFlow's class name
        from tensorlite.graph.function import AtomicFunction  # noqa: PLC0415
        return AtomicFunction

    @property
    def ConcreteFunction(self):  # noqa: N802
        from tensorlite.graph.function import ConcreteFunction  # noqa: PLC0415
        return ConcreteFunction


experimental = _Experimental()

__all__ = ["experimental"]
