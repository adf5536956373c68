"""`tf.distribute.ReduceOp`: how values from replicas combine.

Example:
    >>> tf.distribute.ReduceOp.SUM.value
    'SUM'
"""
import enum


class ReduceOp(enum.Enum):
    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation):
        """The ReduceOp of a `tf.VariableAggregation` (SUM or MEAN)."""
        name = getattr(aggregation, "name", str(aggregation)).upper()
        if name not in ("SUM", "MEAN"):
            raise ValueError(f"Could not convert from `tf.VariableAggregation` {aggregation} "
                             f"to `tf.distribute.ReduceOp` type (only SUM and MEAN do)")
        return ReduceOp[name]


def as_reduce_op(op):
    """A ReduceOp from a ReduceOp or its name ("sum", "MEAN")."""
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str) and op.upper() in ("SUM", "MEAN"):
        return ReduceOp[op.upper()]
    raise ValueError(f"reduce_op must be tf.distribute.ReduceOp.SUM or .MEAN (or their names), "
                     f"got {op!r}")
