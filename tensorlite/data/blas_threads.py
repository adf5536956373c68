"""Limits BLAS threads inside worker processes: N processes each running a multi-threaded
OpenBLAS on a few cores collapse throughput (measured 0.07-0.14x on 2 cores)."""
import os

from tensorlite.framework import blas_threads


def limit_blas_threads(n=1):
    """Best effort: the environment for BLAS libraries loaded later, and OpenBLAS's own
    setting (through tensorlite's run-time thread control) for the one already loaded."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    blas_threads.set_intra_op(n)
    # MKL, OpenMP and other BLAS builds too, only those not at `n` already: in a forked
    # child (where the parent set them to 1 before the fork) nothing then restarts a
    # library's spinning threads (see blas_threads.set_threads and safe_to_fork)
    blas_threads.limit_others(n)
    return blas_threads.set_threads(n, force=True)
