"""`tf.math`: the math namespace."""
from tensorlite.ops.math_ops import *  # noqa: F401,F403
from tensorlite.ops.math_ops import (clip_by_norm, global_norm, reduce_std,  # noqa: F401
                                     reduce_variance, top_k_internal)
from tensorlite.ops.math_ops import truediv as divide  # noqa: F401
from tensorlite.ops.complex_ops import angle  # noqa: F401 - tf.complex is top-level only
from tensorlite.ops.segment_ops import *  # noqa: F401,F403
from tensorlite.ops.nn_ops import (in_top_k, l2_normalize, log_softmax, softmax,  # noqa: F401
                                   softplus, softsign, top_k, zero_fraction)

from tensorlite.framework.symbolic_dispatch import expose as _expose  # noqa: E402
_expose(globals(), "math.")  # ops on Keras symbolic tensors become layers
