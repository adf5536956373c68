"""Run on 2 MPI ranks by test_distribute_multi_worker: BucketAllReducer.sum's results are
sums against NumPy, reused receive buffers never overwrite a result the caller still holds
(directly or through a view), inputs are never written unless donated (then reduced in
place), and the overlapped bucket path keeps a held step's gradients intact."""
import numpy as np
from mpi4py import MPI

from tensorlite.distribute import overlap
from tensorlite.distribute.mpi_comm import BucketAllReducer

comm = MPI.COMM_WORLD
reducer = BucketAllReducer(comm, bucket_bytes=64)
size = comm.Get_size()
# (above PersistentSums.MAX_BYTES_TWO_COPIES: these go into the pool's receive buffers)
a = np.full(4000, comm.rank + 1.0, np.float32)
a_before = a.copy()
total = sum(range(1, size + 1))

# small arrays go through persistent requests' buffers: correct sums, held results intact,
# one request per shape, a donated array summed in place
small = np.full((4, 8), comm.rank + 1.0, np.float32)
small_before = small.copy()
s1 = reducer.sum([small])[0]
s2 = reducer.sum([small * 2])[0]
s3 = reducer.sum([np.arange(5.0)])[0]
assert s1.shape == (4, 8) and (s1 == total).all() and (s2 == 2 * total).all(), (s1, s2)
np.testing.assert_array_equal(s3, np.arange(5.0) * size)
np.testing.assert_array_equal(small, small_before)
donated_small = small * 3
assert reducer.sum([donated_small], donate=True)[0] is donated_small
assert (donated_small == 3 * total).all()
assert len(reducer._persistent._entries) == 2   # (float32, (4, 8)) and (float64, (5,))

x = reducer.sum([a])[0]
y = reducer.sum([a * 2])[0]
assert x[0] == total and y[0] == 2 * total, (x[0], y[0])   # x still held: y is elsewhere
np.testing.assert_array_equal(a, a_before)
del x, y
z = reducer.sum([a])[0]
address = z.__array_interface__["data"][0]
del z
w = reducer.sum([a])[0]
assert w.__array_interface__["data"][0] == address, "a dropped result's buffer is reused"
view = w[:10]
del w
u = reducer.sum([a * 3])[0]
assert view[0] == total and u[0] == 3 * total, (view[0], u[0])

# several buckets (64-byte buckets), mixed dtypes
def parts_of(rank):
    return [np.arange(5, dtype=np.float32) + rank, np.arange(30, dtype=np.float32),
            np.full((2, 3), rank, np.float64), np.ones(7, np.float32)]


parts = parts_of(comm.rank)
wanted = [sum(p) for p in zip(*[parts_of(r) for r in range(size)])]
first = reducer.sum(parts)
second = reducer.sum([p * 10 for p in parts])
for p, f, s, want in zip(parts, first, second, wanted):
    np.testing.assert_allclose(f, want)
    np.testing.assert_allclose(s, 10 * want)
    assert f.shape == p.shape and f.dtype == p.dtype
# donated: reduced in place, the input itself comes back
donated = a * 4
out = reducer.sum([donated], donate=True)[0]
assert out is donated and out[0] == 4 * total, out[0]
np.testing.assert_array_equal(a, a_before)

# fit's bucket path: one step's gradients held while the next step reduces
# (a one-bucket plan of at most PersistentSums.MAX_BYTES sums through a persistent request)
for n in (4000, 40000):
    big = np.full(n, comm.rank + 1.0, np.float32)
    plan = overlap.BucketPlan([(2, n // 2)], [np.float32], bucket_bytes=1 << 20)
    step1, _ = overlap.OverlappedReduction(comm, plan, 0.5).finish([big.reshape(2, -1)])
    step2, _ = overlap.OverlappedReduction(comm, plan, 0.5).finish([2 * big.reshape(2, -1)])
    assert (step1[0] == total / 2).all() and (step2[0] == total).all(), (step1, step2)
    assert not np.shares_memory(step1[0], step2[0])
    assert (plan.bound[2] is not None) == (n * 4 <= 64 << 10), plan.bound
print("ok", comm.rank, flush=True)
