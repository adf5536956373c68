"""`tf.bitwise`: bitwise ops on integer tensors."""
from tensorlite.ops.math_ops import (bitwise_and, bitwise_or, bitwise_xor, invert,  # noqa: F401
                                     left_shift, right_shift)

from tensorlite.framework.symbolic_dispatch import expose as _expose  # noqa: E402
_expose(globals(), "bitwise.")  # ops on Keras symbolic tensors become layers
