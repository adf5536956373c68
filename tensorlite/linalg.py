"""`tf.linalg`: linear algebra (see ops/linalg_ops.py)."""
from tensorlite.ops.linalg_ops import (adjoint, band_part, cholesky, cholesky_solve,  # noqa: F401
                                       cross, det, diag, diag_part, eigh, eigvalsh, eye, inv,
                                       logdet, lstsq, matrix_rank, matrix_transpose, matvec,
                                       norm, normalize, pinv, qr, set_diag, slogdet, solve, svd,
                                       tensor_diag, tensor_diag_part, trace, triangular_solve)
from tensorlite.ops.math_ops import einsum, global_norm, matmul, tensordot  # noqa: F401

try:  # nn owns l2_normalize; TF also lists it here
    from tensorlite.ops.nn_ops import l2_normalize  # noqa: F401
except ImportError:  # pragma: no cover - until nn_ops defines it
    pass

from tensorlite.framework.symbolic_dispatch import expose as _expose  # noqa: E402
_expose(globals(), "linalg.")  # ops on Keras symbolic tensors become layers
