"""Registers SparseTensor with the ops layer's composite dispatch (`ops.common.COMPOSITES`),
as TensorFlow dispatches its sparse API: `tf.cast` and the zero-preserving unary math
functions (`tf.math.abs`, `sqrt`, `tanh`, `sign`, ...; f(0) == 0, so the implicit zeros stay
zeros) take a SparseTensor and give one, applied to its values. Any other elementwise
function refuses it with a TypeError naming the ways to proceed, since f(0) != 0 would
make every implicit zero a value.

Example:
    >>> st = tf.sparse.SparseTensor([[0, 1]], [-4.0], [2, 2])
    >>> tf.math.abs(st).values.numpy().tolist()
    [4.0]
"""
from tensorlite.framework import registry
from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.ops import common, math_ops


def _zero_preserving(fn):
    """Whether `fn` is the function of an op declaring `zero_preserving` (those TensorFlow
    applies to a SparseTensor: checked against TF 2.21, every tf.math function given one)."""
    op = registry.REGISTRY.get(fn.__name__)
    return op is not None and op.zero_preserving


def _cast(x, dtype, name=None):
    """`tf.cast` of a SparseTensor: its values cast, indices and dense shape kept."""
    return x.with_values(math_ops.cast(x.values, dtype))


class _SparseHandler:
    functions = {"cast": _cast}

    @staticmethod
    def elementwise(fn, args):
        if len(args) == 1 and _zero_preserving(fn):
            sp = args[0]
            return sp.with_values(fn(sp.values))
        raise TypeError(
            f"{fn.__name__} does not take a SparseTensor: TensorFlow applies only "
            f"zero-preserving unary functions ({', '.join(_names())}) and "
            "tf.cast to one. Use tf.sparse.map_values(fn, sp_input) for its values or "
            "tf.sparse.to_dense(sp_input) first")


def _names():
    return sorted(n for n, op in registry.REGISTRY.items() if op.zero_preserving)


def install():
    common.COMPOSITES[SparseTensor] = _SparseHandler()


install()
