"""BufferPool (distribute/buffer_pool.py): all-reduce receive buffers are reused only once
nothing refers to them, so a result the caller still holds is never overwritten."""
import weakref

import numpy as np
import pytest

from tensorlite.distribute import buffer_pool
from tensorlite.distribute.buffer_pool import BufferPool
from tensorlite.framework.tensor import wrap


# 8 elements, and 2 MiB + 8 (allocated on a 2 MiB boundary, a view of a larger block)
SIZES = [8, (buffer_pool.HUGE_PAGE >> 2) + 8]


@pytest.mark.parametrize("n", SIZES)
def test_a_released_buffer_is_reused(n):
    pool = BufferPool()
    a = pool.take(0, (n,), np.float32)
    ref = weakref.ref(a)   # the same object, not merely memory malloc handed out again
    del a
    b = pool.take(0, (n,), np.float32)
    assert b is ref()
    assert b.shape == (n,) and b.dtype == np.float32 and b.flags.c_contiguous


@pytest.mark.parametrize("n", SIZES)
def test_a_held_result_is_never_handed_out_again(n):
    pool = BufferPool()
    for hold in (lambda buf: buf, lambda buf: buf.reshape(2, -1)[1:],
                 lambda buf: memoryview(buf), lambda buf: wrap(buf.reshape(2, -1))):
        first = pool.take(0, (n,), np.float32)
        first[:] = 7
        held = hold(first)
        del first
        for _ in range(3):   # later steps write their results
            pool.take(0, (n,), np.float32)[:] = -1
        np.testing.assert_array_equal(np.asarray(held).ravel(), 7)
        del held


def test_slots_sizes_and_dtypes_do_not_share_and_the_pool_stays_bounded():
    pool = BufferPool(per_slot=2)
    a = pool.take(0, (4,), np.float32)
    b = pool.take(1, (4,), np.float32)
    c = pool.take(0, (4,), np.float64)
    assert not np.shares_memory(a, b) and not np.shares_memory(a, c)
    held = [pool.take(2, (4,), np.float32) for _ in range(5)]   # all still held
    assert len({h.__array_interface__["data"][0] for h in held}) == 5
    assert len(pool._slots[2]) == 2


def test_large_buffers_start_on_a_huge_page_boundary():
    buf = BufferPool().take(0, (3, buffer_pool.HUGE_PAGE >> 2), np.float32)
    assert buf.ctypes.data % buffer_pool.HUGE_PAGE == 0
    assert buf.shape == (3, buffer_pool.HUGE_PAGE >> 2) and buf.flags.c_contiguous


def test_a_slot_list_asked_for_before_any_take_is_the_one_take_fills():
    pool = BufferPool()
    slot = pool.slot(0)          # BucketAllReducer.sum inlines take's first check on it
    assert slot == []
    a = pool.take(0, (4,), np.float32)
    assert pool.slot(0) is slot and slot[-1] is a
