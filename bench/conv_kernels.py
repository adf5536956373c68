"""The convolution kernels of the CIFAR CNN of the notes "Structure of Deep
Learning Frameworks", each algorithm on 1 and 2 intra-op
threads, interleaved in one process: milliseconds (median of --repeats rounds) and the
2-thread speedup. Forward and stride-1 input gradients (a convolution of the padded
cotangent) by im2col, Winograd F(2x2, 3x3) with NumPy transforms and with the numba ones,
and Winograd F(4x4, 3x3) (numba); filter gradients by im2col and by both Winograds.

    python bench/conv_kernels.py [--repeats 9]

Single-threaded OpenBLAS throughout (each thread calls it on its own runs of images), as
blas_threads.run(..., split=True) does.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite  # noqa: E402,F401 - sets the OpenBLAS environment before NumPy loads it
from tensorlite.framework import blas_threads, intra_op_pool  # noqa: E402
from tensorlite.ops import conv_kernels, numba_winograd, winograd  # noqa: E402

# (name, input shape, filter shape, pads): the CNN's layers at batch 32, and the
# convolutions its stride-1 input gradients become
LAYERS = [
    ("conv1 fwd", (32, 32, 32, 3), (3, 3, 3, 32), (1, 1, 1, 1)),
    ("conv2 fwd", (32, 32, 32, 32), (3, 3, 32, 32), (0, 0, 0, 0)),
    ("conv2 dx", (32, 30, 30, 32), (3, 3, 32, 32), (2, 2, 2, 2)),
    ("conv3 fwd", (32, 15, 15, 32), (3, 3, 32, 64), (1, 1, 1, 1)),
    ("conv3 dx", (32, 15, 15, 64), (3, 3, 64, 32), (1, 1, 1, 1)),
    ("conv4 fwd", (32, 15, 15, 64), (3, 3, 64, 64), (0, 0, 0, 0)),
    ("conv4 dx", (32, 13, 13, 64), (3, 3, 64, 64), (2, 2, 2, 2)),
]


def kernels(x, w, pads):
    geo = ((1, 1), (1, 1), pads)
    g = conv_kernels._conv_im2col(x, w, *geo)
    out = {"im2col": lambda: conv_kernels._conv_im2col(x, w, *geo),
           "dw im2col": lambda: conv_kernels._conv_bf_fwd(x, g, (3, 3), *geo)}
    if x.shape[-1] >= 8:
        out["winograd numpy"] = lambda: winograd.conv3x3(x, w, pads, jit=False)
        if numba_winograd.available():
            out["winograd numba"] = lambda: winograd.conv3x3(x, w, pads)
            out["winograd4"] = lambda: winograd.conv3x3(x, w, pads, m=4)
            out["dw winograd"] = lambda: winograd.filter_grad3x3(x, g, pads)
            out["dw winograd4"] = lambda: winograd.filter_grad3x3(x, g, pads, m=4)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=9,
                        help="interleaved runs; medians are reported")
    args = parser.parse_args()
    blas_threads.set_threads(1, force=True)
    rng = np.random.default_rng(0)
    print(f"load {os.getloadavg()[0]:.2f}; ms, median of {args.repeats} interleaved rounds")
    for name, xs, ws, pads in LAYERS:
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal(ws).astype(np.float32)
        cases = kernels(x, w, pads)
        times = {(k, n): [] for k in cases for n in (1, 2)}
        for fn in cases.values():  # warm-up: compilation, first-touch scratch
            fn()
        for _ in range(args.repeats):
            for k, fn in cases.items():
                for n in (1, 2):
                    with intra_op_pool.splitting(n):
                        start = time.perf_counter()
                        fn()
                        times[(k, n)].append(time.perf_counter() - start)
        med = {key: statistics.median(v) * 1e3 for key, v in times.items()}
        print(f"{name:9s} " + "  ".join(
            f"{k} {med[(k, 1)]:5.2f}/{med[(k, 2)]:5.2f} ({med[(k, 1)] / med[(k, 2)]:.2f}x)"
            for k in cases))
    print("each entry: 1 thread / 2 threads (2-thread speedup)")


if __name__ == "__main__":
    main()
