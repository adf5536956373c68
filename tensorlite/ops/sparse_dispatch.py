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
from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.ops import common, math_ops

# TensorFlow's unary elementwise functions that take a SparseTensor (checked against
# TF 2.21: every tf.math function given one), by the op names tensorlite's functions carry
ZERO_PRESERVING = frozenset({"Abs", "Asin", "Asinh", "Atan", "Atanh", "BesselI0e",
                             "BesselI1e", "Erf", "Neg", "Sign", "Sin", "Sqrt", "Square",
                             "Tan", "Tanh"})


def _cast(x, dtype, name=None):
    """`tf.cast` of a SparseTensor: its values cast, indices and dense shape kept."""
    return x.with_values(math_ops.cast(x.values, dtype))


class _SparseHandler:
    functions = {"cast": _cast}

    @staticmethod
    def elementwise(fn, args):
        if len(args) == 1 and fn.__name__ in ZERO_PRESERVING:
            sp = args[0]
            return sp.with_values(fn(sp.values))
        raise TypeError(
            f"{fn.__name__} does not take a SparseTensor: TensorFlow applies only "
            f"zero-preserving unary functions ({', '.join(sorted(ZERO_PRESERVING))}) and "
            "tf.cast to one. Use tf.sparse.map_values(fn, sp_input) for its values or "
            "tf.sparse.to_dense(sp_input) first")


def install():
    common.COMPOSITES[SparseTensor] = _SparseHandler()


install()
