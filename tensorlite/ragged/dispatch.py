"""Registers RaggedTensor with the ops layer's composite dispatch
(`tensorlite.ops.common.COMPOSITES`) and gives it Python operators.

Example:
    >>> (tf.ragged.constant([[1], [2, 3]]) + 10).to_list()
    [[11], [12, 13]]
"""
from tensorlite.ops import common
from tensorlite.ops import tensor_operators
from tensorlite.ragged import ragged_math
from tensorlite.ragged.ragged_tensor import RaggedTensor


class _RaggedHandler:
    functions = ragged_math.FUNCTIONS

    @staticmethod
    def elementwise(fn, args):
        return ragged_math.elementwise(fn, args)


def install():
    common.COMPOSITES[RaggedTensor] = _RaggedHandler()
    getitem = RaggedTensor.__getitem__
    tensor_operators._install(RaggedTensor, lambda s: s)
    RaggedTensor.__getitem__ = getitem
    RaggedTensor.__bool__ = _no_bool
    RaggedTensor.__hash__ = _no_hash


def _no_bool(self):
    raise TypeError("RaggedTensor may not be used as a boolean.")


def _no_hash(self):
    raise TypeError("RaggedTensor is unhashable.")


install()
