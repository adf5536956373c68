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
    try:  # MKL, OpenMP and other BLAS builds too: only those not at `n` already (setting
        # OpenBLAS's count in a forked child restarts its spinning threads: see set_threads)
        from threadpoolctl import threadpool_info, threadpool_limits  # noqa: PLC0415
        limits = {i["prefix"]: n for i in threadpool_info() if i.get("num_threads") != n}
        if limits:
            threadpool_limits(limits)
    except ImportError:
        pass
    return blas_threads.set_threads(n, force=True)
