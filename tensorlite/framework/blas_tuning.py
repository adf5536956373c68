"""OpenBLAS settings that must be in the environment before NumPy loads OpenBLAS.

* Its AVX-512 kernels where the CPU has them: NumPy's bundled OpenBLAS (0.3.31,
  DYNAMIC_ARCH) chooses its AVX2 "Haswell" kernels on this project's AVX-512 AMD EPYC
  machines. With OPENBLAS_CORETYPE=SKYLAKEX one CIFAR CNN training step went from 167 ms
  to 126 ms (0.46x to 0.61x PyTorch).
* Short spinning of its idle threads: after each multi-threaded call OpenBLAS's threads
  spin for 2^28 cycles (about 0.1 s) before sleeping, holding a core that the next kernel
  (tensorlite's own intra-op threads, or another process) needs. OPENBLAS_THREAD_TIMEOUT=4
  (2^4 cycles, its minimum) put the CIFAR CNN step at 2 threads from 73-84 ms to 47-53 ms.

The variables are read when OpenBLAS loads, so they only take effect when tensorlite is
imported before NumPy; neither is set when the user set it, when NumPy is already loaded
or with TENSORLITE_BLAS_TUNING=0; the core type only where the CPU has the instructions.
"""
import os
import sys

_NEEDED = {"avx512f", "avx512bw", "avx512dq", "avx512vl"}
THREAD_TIMEOUT = "4"


def _has_avx512():
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="ignore") as f:
            for line in f:
                if line.startswith("flags"):
                    return _NEEDED <= set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return False


def apply():
    """Sets what it can; returns the names of the variables it set."""
    if "numpy" in sys.modules or os.environ.get("TENSORLITE_BLAS_TUNING", "1") == "0":
        return []
    done = []
    if "OPENBLAS_THREAD_TIMEOUT" not in os.environ:
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = THREAD_TIMEOUT
        done.append("OPENBLAS_THREAD_TIMEOUT")
    if "OPENBLAS_CORETYPE" not in os.environ and _has_avx512():
        os.environ["OPENBLAS_CORETYPE"] = "SKYLAKEX"
        done.append("OPENBLAS_CORETYPE")
    return done


APPLIED = apply()
# True where OpenBLAS's idle threads will spin ~0.1 s after each multi-threaded call: the
# timeout could not be cut (NumPy loaded first, as `import numpy as np` before tensorlite
# usually does) and the user did not set it.
THREADS_SPIN = "OPENBLAS_THREAD_TIMEOUT" not in os.environ
