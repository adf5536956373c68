"""Run under `mpiexec -n 2` by test_distribute_multi_worker.py: BucketAllReducer.sum's
buffer ownership on real ranks. Rank r contributes (r + 1) * x. Saves, per rank, what each
call returned and what the caller still held afterwards."""
import sys

import numpy as np

from tensorlite.distribute import mpi_comm, overlap


def main(out_path):
    comm = mpi_comm.comm_world()
    scale = comm.Get_rank() + 1
    reducer = mpi_comm.BucketAllReducer(comm, bucket_bytes=64)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    mine = x * scale
    first = reducer.sum([mine])[0]             # one buffer, not donated
    held = first.copy()
    second = reducer.sum([mine * 2])[0]        # `first` is still held: must survive
    first_after = first.copy()
    view = second[1]                           # only a view of it is held
    del second
    third = reducer.sum([mine * 3])[0]
    donated = mine * 4
    donated_out = reducer.sum([donated], donate=True)[0]
    # several buckets: two fused small ones (float32) and one float64 alone
    parts = [np.full(4, scale, np.float32), np.full(4, 2 * scale, np.float32),
             np.full(20, scale, np.float32), np.full(3, scale, np.float64)]
    fused = reducer.sum(parts)
    fused_copy = [f.copy() for f in fused]
    reducer.sum([p * 10 for p in parts])       # the next step's buckets: `fused` survives
    # the overlapped path: one step's gradients held while the next step reduces
    plan = overlap.BucketPlan([(2, 3)], [np.float32], bucket_bytes=1 << 20)
    step1, _ = overlap.OverlappedReduction(comm, plan, 0.5).finish([mine])
    step2, _ = overlap.OverlappedReduction(comm, plan, 0.5).finish([mine * 2])
    np.savez(out_path.format(rank=comm.Get_rank()), mine=mine, first=held,
             first_after=first_after, first_end=first, view=view, third=third,
             donated_is_input=donated_out is donated, donated=donated_out,
             inputs_untouched=np.array_equal(mine, x * scale),
             fused=np.concatenate(fused_copy), fused_end=np.concatenate(fused),
             fused_shapes=np.array([f.shape[0] for f in fused]),
             step1=step1[0], step2=step2[0], step_shared=np.shares_memory(step1[0], step2[0]))


if __name__ == "__main__":
    main(sys.argv[1])
