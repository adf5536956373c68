"""All-reduce bandwidth and data-parallel training throughput on 2 MPI ranks.

    python bench/allreduce.py            # launches itself under this venv's mpiexec
    python bench/allreduce.py --overlap  # 3. only

Interrupted (Ctrl-C, SIGTERM), it ends the ranks it launched and removes the MPICH
shared memory (/dev/shm/mpich_shm_*) they had mapped (bench/_cleanup.py).

1. Bandwidth: tensorlite's all-reduce paths vs mpi4py's own comm.Allreduce on the same
   float32 buffers, 1 KB .. 100 MB, medians of calls interleaved one by one (rotating the
   order, so a swing in the neighbours' load hits every path alike), like with like:
   - BucketAllReducer.sum([buf]) (strategy.reduce, all_reduce, custom steps; the input left
     alone, the result in a receive buffer the reducer reuses once the caller drops it) vs
     comm.Allreduce(buf, out) into one `out` allocated before timing and reused;
   - sum([buf], donate=True) (fresh gradients the strategy gives up: reduced in place) vs
     comm.Allreduce(MPI.IN_PLACE, buf); both sum a zero buffer into itself;
   - OverlappedReduction (the bucket path fit takes: the gradient scaled by the replica's
     weight into the bucket's buffer, reused across steps; one bucket, which has nothing to
     overlap with, is reduced in place by a blocking Allreduce in finish, more buckets by
     Iallreduce + Waitall) vs the same two calls written in mpi4py (np.multiply by a Python
     float into a reused buffer, Allreduce(MPI.IN_PLACE, ...)). Ours multiplies by a cached
     0-d array of the bucket's dtype (NumPy resolves a Python float's type on every call:
     ~0.5 us of the ~5 us at 1 KB). Small sums and buckets (up to 8 KB and 64 KB) go
     through MPI-4 persistent requests (mpi_comm.PersistentSums) and a copy, which at 1 KB
     pays for the per-step Python;
   Like with like: every receive buffer of the references (`out`, `out2`, the scaled
   bucket) is allocated as the reducer's pool allocates its own (buffer_pool.allocate: on
   a 2 MiB boundary from 2 MiB up), and `out` and the scaled bucket right after ours. Where
   a 4 MB buffer lands moves a call by up to 1.5x in one process here: a plain
   comm.Allreduce into an array allocated after the reducer's buffers took 1.13-1.45x the
   time of one into an array allocated before them (3 runs, load ~1.4), the same as
   BucketAllReducer.sum into its own buffer; and a 4 MB in-place Allreduce took ~320 us
   into a 2 MiB-aligned buffer vs ~440 us into np.empty's. So a reference allocated
   earlier, or by np.empty, would flatter or handicap ours by that much from 4 MB up (3
   runs with the references reducing into the very pool buffers ours use put the 4 MB
   bucket path at 0.64-1.04x, against 1.24-1.34x here, and the 256 KB paths at 1.19-1.22x,
   against 1.02-1.13x: caches shared between the two then weigh in instead). The
   donated pair both reduce the caller's own np.zeros array.
   and a model-like list of 40 small tensors fused vs one Allreduce each.
   Goal: within 1.2x of Allreduce at every size.
2. Training: Keras fit of an MLP, samples/s on 1 process (global batch) vs 2 MPI ranks
   (MultiWorkerMirroredStrategy, same global batch: the default 25 MB buckets, one for this
   2.7 MB model, so the compiled step and one all-reduce after it; 1 MB buckets, three,
   overlapped with the eager backward pass (forced: by default ranks of one host do not
   overlap, multi_worker._overlap_pays); and the same three buckets reduced after the
   compiled step, the default here) vs the machine's two-process ceiling
   measured in the same run (two independent processes, each fitting its half-batch, no
   communication). Goal: 2 ranks at least 0.8x of the ceiling.
3. `--overlap`: the overlapped bucket path vs the same buckets after the compiled step, for
   MLPs of 2.6, 11 and 38 MB of gradients (the measurement behind multi_worker._overlap_pays).
The machine is shared: figures swing with the neighbours' load; read the ratios.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.abspath(__file__)
sys.path.insert(0, os.path.dirname(HERE))
from _cleanup import exit_on_signals, run_mpi  # noqa: E402
SIZES = [1 << 10, 16 << 10, 256 << 10, 4 << 20, 32 << 20, 100 << 20]
RANK_MODES = {"mwms": "25 MB buckets", "mwms_1mb": "1 MB, overlap",
              "mwms_1mb_after": "1 MB, after"}


def _interleaved(fns, comm, repeats):
    """Each fn's median time over `repeats` calls, the fns called in turn (their order
    rotated every round) after a barrier; one untimed call each first (buffers allocated)."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for r in range(repeats):
        for k in range(len(fns)):
            j = (k + r) % len(fns)
            comm.Barrier()
            t0 = time.perf_counter()
            fns[j]()
            times[j].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def bandwidth():
    from mpi4py import MPI
    from tensorlite.distribute.buffer_pool import allocate
    from tensorlite.distribute.mpi_comm import BucketAllReducer
    from tensorlite.distribute.overlap import BucketPlan, OverlappedReduction
    comm = MPI.COMM_WORLD
    reducer = BucketAllReducer(comm)
    rows = []
    for nbytes in SIZES:
        buf = np.ones(nbytes // 4, np.float32)
        plan = BucketPlan([buf.shape], [buf.dtype], reducer.bucket_bytes)
        # Like with like (see the docstring): the references' receive buffers are placed
        # as the pool places its own, and allocated right after ours (each path's first
        # call allocates its buffers); `out2` before ours, so its column shows what
        # placement alone does
        out2 = allocate(buf.shape, buf.dtype)
        reducer.sum([buf])
        OverlappedReduction(comm, plan, 1.0).finish([buf])
        out, scaled = (allocate(buf.shape, buf.dtype) for _ in range(2))
        ref_zeros, our_zeros = np.zeros_like(buf), np.zeros_like(buf)

        def by_hand():   # what OverlappedReduction does for one bucket, in plain mpi4py
            np.multiply(buf, 1.0, out=scaled)
            comm.Allreduce(MPI.IN_PLACE, scaled, op=MPI.SUM)
        repeats = 60 if nbytes < (4 << 20) else 15 if nbytes < (32 << 20) else 9
        rows.append([nbytes] + _interleaved([
            lambda: comm.Allreduce(buf, out, op=MPI.SUM),
            lambda: reducer.sum([buf]),
            lambda: comm.Allreduce(MPI.IN_PLACE, ref_zeros, op=MPI.SUM),
            lambda: reducer.sum([our_zeros], donate=True),
            by_hand,
            lambda: OverlappedReduction(comm, plan, 1.0).finish([buf]),
            # mpi4py beside itself: the same call into a second reused array, allocated
            # before ours. From 4 MB up where an array lands alone moved a call by up to
            # 1.5x here: the spread any ratio in this row carries.
            lambda: comm.Allreduce(buf, out2, op=MPI.SUM)], comm, repeats))
    small = [np.ones(n, np.float32) for n in ([64, 64 * 64, 64] * 13 + [10])]
    outs = [np.empty_like(a) for a in small]

    def each():
        for a, o in zip(small, outs):
            comm.Allreduce(a, o, op=MPI.SUM)
    fused_ref, fused_ours = _interleaved([each, lambda: reducer.sum(small)], comm, 30)
    if comm.Get_rank() == 0:
        print(f"{'bytes':>10} {'Allreduce(buf,out)':>18} {'sum':>10} {'ratio':>6} "
              f"{'Allreduce(IN_PLACE)':>19} {'donated':>10} {'ratio':>6} "
              f"{'scale+Allreduce':>16} {'bucket':>10} {'ratio':>6} {'GB/s (sum)':>10} "
              f"{'mpi4py/itself':>13}")
        for nbytes, ref_t, our_t, ref_ip, our_ip, ref_ov, ov_t, ref_t2 in rows:
            print(f"{nbytes:>10} {ref_t * 1e6:>15.1f} us {our_t * 1e6:>7.1f} us "
                  f"{our_t / ref_t:>5.2f}x {ref_ip * 1e6:>16.1f} us {our_ip * 1e6:>7.1f} us "
                  f"{our_ip / ref_ip:>5.2f}x {ref_ov * 1e6:>13.1f} us {ov_t * 1e6:>7.1f} us "
                  f"{ov_t / ref_ov:>5.2f}x "
                  f"{nbytes / our_t / 1e9:>10.3f} {ref_t2 / ref_t:>12.2f}x")
        print(f"40 small tensors ({sum(a.nbytes for a in small)} bytes): one Allreduce each "
              f"{fused_ref * 1e6:.0f} us, fused {fused_ours * 1e6:.0f} us "
              f"({fused_ref / fused_ours:.1f}x faster fused)")
        print(json.dumps({"bandwidth": rows}))


def train(mode, global_batch, steps, width=512, layers=2, pack_mb=1):
    """One training run; prints samples/s over the timed steps (after one warm-up epoch).
    Modes: single, half (half the batch, no strategy), mwms (default buckets), mwms_1mb
    (pack_mb buckets, overlap forced on), mwms_1mb_after (the same, overlap forced off)."""
    import tensorlite as tf
    if mode.startswith("mwms"):
        pack = pack_mb << 20 if mode.startswith("mwms_1mb") else 0
        strategy = tf.distribute.MultiWorkerMirroredStrategy(
            communication_options=tf.distribute.experimental.CommunicationOptions(pack))
        if mode.startswith("mwms_1mb"):   # forced either way: the bench compares the two
            strategy._overlap = mode == "mwms_1mb"
        scope = strategy.scope()
    else:
        scope = tf.distribute.get_strategy().scope()
    batch = global_batch // 2 if mode == "half" else global_batch
    with scope:
        model = tf.keras.Sequential(
            [tf.keras.layers.Dense(width, activation="relu", input_shape=(784,))] +
            [tf.keras.layers.Dense(width, activation="relu") for _ in range(layers - 1)] +
            [tf.keras.layers.Dense(10)])
        model.compile(tf.keras.optimizers.SGD(0.01),
                      tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch * steps, 784)).astype("float32")
    y = rng.integers(0, 10, batch * steps)
    model.fit(x[:batch * 2], y[:batch * 2], batch_size=batch, epochs=1, verbose=0)
    t0 = time.perf_counter()
    model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
    dt = time.perf_counter() - t0
    if not mode.startswith("mwms") or strategy.cluster_resolver.task_id == 0:
        print(json.dumps({"mode": mode, "samples_per_s": batch * steps / dt}), flush=True)


def _samples(outputs):
    return sum(json.loads(line)["samples_per_s"] for out in outputs
               for line in out.splitlines() if line.startswith('{"mode"'))


def training_comparison(mpiexec, global_batch=256, steps=30, rounds=5):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    base = [sys.executable, HERE, "--train"]
    one, ceiling = [], []
    ranks = {mode: [] for mode in RANK_MODES}
    for _ in range(rounds):
        out = subprocess.run(base + ["single", str(global_batch), str(steps)], env=env,
                             capture_output=True, text=True, check=True).stdout
        one.append(_samples([out]))
        procs = [subprocess.Popen(base + ["half", str(global_batch), str(steps)], env=env,
                                  stdout=subprocess.PIPE, text=True) for _ in range(2)]
        try:
            ceiling.append(_samples([p.communicate()[0] for p in procs]))
        finally:   # interrupted: no half-batch process left running
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
        for mode in RANK_MODES:
            out = run_mpi([mpiexec, "-n", "2"] + base + [mode, str(global_batch),
                                                          str(steps)],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            ranks[mode].append(_samples([out]))
    one, ceiling = statistics.median(one), statistics.median(ceiling)
    print(f"training (MLP 784-512-512-10, global batch {global_batch}, medians of {rounds}):")
    print(f"  1 process              {one:9.0f} samples/s")
    print(f"  2 independent procs    {ceiling:9.0f} samples/s  (the two-process ceiling, "
          f"{ceiling / one:.2f}x of 1)")
    for mode, label in RANK_MODES.items():
        r = statistics.median(ranks[mode])
        print(f"  2 ranks, {label:<13} {r:9.0f} samples/s  ({r / one:.2f}x of 1, "
              f"{r / ceiling:.2f}x of the ceiling; goal >= 0.8x)")


# (width, layers, bucket MB, global batch, steps): gradients of 2.6, 11 and 38 MB
OVERLAP_MODELS = [(512, 2, 1, 256, 30), (1024, 3, 4, 128, 12), (2048, 3, 8, 128, 8)]


def overlap_by_size(mpiexec, rounds=3):
    """`--overlap`: where overlapping the all-reduce with the (eager) backward pass beats
    reducing the same buckets after the compiled step, on 2 ranks of this host, by gradient
    size (multi_worker._overlap_pays). Medians of interleaved rounds."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    for width, layers, pack_mb, batch, steps in OVERLAP_MODELS:
        grad_mb = 4 * (784 * width + (layers - 1) * width * width + 10 * width) / 2 ** 20
        got = {"mwms_1mb": [], "mwms_1mb_after": []}
        for _ in range(rounds):
            for mode in got:
                out = run_mpi(
                    [mpiexec, "-n", "2", sys.executable, HERE, "--train", mode, str(batch),
                     str(steps), str(width), str(layers), str(pack_mb)],
                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                got[mode].append(_samples([out]))
        over, after = (statistics.median(got[m]) for m in got)
        print(f"{grad_mb:5.1f} MB of gradients in {pack_mb} MB buckets: overlapped "
              f"{over:7.0f} samples/s, after the compiled step {after:7.0f} "
              f"(overlap {over / after:.2f}x)", flush=True)


def _parser():
    p = argparse.ArgumentParser(
        description="All-reduce bandwidth and data-parallel training throughput on 2 MPI "
                    "ranks (launches itself under mpiexec; needs the distributed extra).")
    p.add_argument("--overlap", action="store_true",
                   help="only 3.: overlapped vs after-the-step bucket reduction by "
                        "gradient size")
    return p


def main():
    # the bench's own re-entries, under mpiexec or as a child process
    if len(sys.argv) > 1 and sys.argv[1] == "--bandwidth":
        return bandwidth()
    if len(sys.argv) > 1 and sys.argv[1] == "--train":
        return train(sys.argv[2], *map(int, sys.argv[3:]))
    args = _parser().parse_args()
    exit_on_signals()
    from tensorlite.distribute.launch import find_mpiexec
    mpiexec = find_mpiexec()
    if mpiexec is None:
        sys.exit("no mpiexec: pip install mpich mpi4py")
    if args.overlap:
        return overlap_by_size(mpiexec)
    run_mpi([mpiexec, "-n", "2", sys.executable, HERE, "--bandwidth"])
    training_comparison(mpiexec)


if __name__ == "__main__":
    main()
