"""MultiWorkerMirroredStrategy on real MPI ranks (pip's MPICH, `mpiexec -n 2`): data-parallel
fit equals single-process fit on the global batch step by step; ranks stay identical with
shuffling; only the chief writes checkpoints; a clear error without MPI; the fused
all-reduce against NumPy."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.distribute import launch, mpi_comm, multi_worker, overlap
from tests.distribute_fixtures import WeightRecorder, small_classifier

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = launch.find_mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec: pip install mpich mpi4py")


def _run_ranks(n, data_path, out_dir, shuffle, bytes_per_pack=0, overlap="auto"):
    cmd = [sys.executable, "-m", "tensorlite.distribute.launch", "-n", str(n),
           os.path.join(HERE, "mpi_fit_worker.py"), str(data_path), str(out_dir),
           "shuffle" if shuffle else "ordered", str(bytes_per_pack)]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               TENSORLITE_OVERLAP_ALLREDUCE=overlap)
    env.pop("TF_CONFIG", None)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [np.load(out_dir / f"rank{r}.npz") for r in range(n)]


def _single_process_steps(data):
    model = small_classifier()
    model.set_weights([data[f"initial_{i}"] for i in range(4)])
    recorder = WeightRecorder()
    hist = model.fit(data["x"], data["y"], batch_size=16, epochs=2, shuffle=False,
                     callbacks=[recorder], verbose=0)
    return np.stack(recorder.steps), hist.history["loss"]


def _data(tmp_path, with_initial=True):
    rng = np.random.default_rng(7)
    arrays = {"x": rng.normal(size=(45, 5)).astype("float32"), "y": rng.integers(0, 3, 45)}
    if with_initial:
        tf.random.set_seed(11)
        probe = tf.keras.Sequential([tf.keras.layers.Dense(6, input_shape=(5,)),
                                     tf.keras.layers.Dense(3)])
        arrays.update({f"initial_{i}": w for i, w in enumerate(probe.get_weights())})
    path = tmp_path / "data.npz"
    np.savez(path, **arrays)
    return path, dict(np.load(path))


@needs_mpi
def test_two_rank_fit_equals_single_process_step_by_step(tmp_path):
    path, data = _data(tmp_path)
    ranks = _run_ranks(2, path, tmp_path, shuffle=False)
    single, loss = _single_process_steps(data)
    assert int(ranks[0]["size"]) == 2
    for r in ranks:   # one 25 MB bucket: the compiled step, its bucket reduced after it
        kinds = list(r["event_kind"])
        assert kinds.count("start") == 1
        assert kinds.index("start") > max(j for j, k in enumerate(kinds) if k == "grad")
    assert ranks[0]["steps"].shape == single.shape == (6, single.shape[1])
    np.testing.assert_array_equal(ranks[0]["steps"], ranks[1]["steps"])
    np.testing.assert_allclose(ranks[0]["steps"], single, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ranks[0]["loss"], loss, rtol=1e-5)
    # collectives: all_reduce 2+4, mean 3, gather [2, 4], this rank's halves of each batch
    np.testing.assert_array_equal(ranks[0]["collectives"], [6, 3, 2, 4, 0, 1, 4, 5])
    np.testing.assert_array_equal(ranks[1]["collectives"], [6, 3, 2, 4, 2, 3, 6, 7])
    # chief-only checkpoint writes
    written = sorted(p for p in os.listdir(tmp_path) if p.startswith("ckpt_"))
    assert written and all(p.startswith("ckpt_rank0") for p in written)


@needs_mpi
def test_bucketed_all_reduce_overlaps_the_backward_pass(tmp_path):
    # 64-byte buckets: each of the 4 variables (Dense(5->6), Dense(6->3)) is its own bucket;
    # overlap forced on (by default it is off where all ranks share one host).
    path, data = _data(tmp_path)
    ranks = _run_ranks(2, path, tmp_path, shuffle=False, bytes_per_pack=64, overlap="1")
    single, _ = _single_process_steps(data)
    np.testing.assert_array_equal(ranks[0]["steps"], ranks[1]["steps"])
    np.testing.assert_allclose(ranks[0]["steps"], single, rtol=1e-5, atol=1e-6)
    for r in ranks:
        kinds, index = list(r["event_kind"]), list(r["event_index"])
        grads = [i for k, i in zip(kinds, index) if k == "grad"]
        assert grads == [3, 2, 1, 0]          # the backward pass: last layer's first
        starts = [i for k, i in zip(kinds, index) if k == "start"]
        assert starts == [0, 1, 2, 3]
        # the first bucket's all-reduce starts before the backward pass ends (the last
        # gradient is produced), and the step waits for all of them at the end
        assert kinds.index("start") < max(j for j, k in enumerate(kinds) if k == "grad")
        assert kinds[-1] == "done"
        assert np.all(np.diff(r["event_time"]) >= 0)


@needs_mpi
def test_on_one_host_buckets_are_reduced_after_the_compiled_step(tmp_path):
    # by default ranks of one host keep the compiled step even with several buckets: every
    # bucket starts after the step produced all gradients
    path, data = _data(tmp_path)
    ranks = _run_ranks(2, path, tmp_path, shuffle=False, bytes_per_pack=64)
    single, _ = _single_process_steps(data)
    np.testing.assert_allclose(ranks[0]["steps"], single, rtol=1e-5, atol=1e-6)
    for r in ranks:
        kinds = list(r["event_kind"])
        assert kinds.count("start") == 4
        assert kinds.index("start") > max(j for j, k in enumerate(kinds) if k == "grad")


def test_overlap_setting_rejects_a_bad_value(monkeypatch):
    monkeypatch.setenv(multi_worker.OVERLAP_ENV, "sometimes")
    with pytest.raises(ValueError, match="TENSORLITE_OVERLAP_ALLREDUCE='sometimes'.*auto"):
        multi_worker._overlap_pays(2, 1)
    monkeypatch.setenv(multi_worker.OVERLAP_ENV, "0")
    assert multi_worker._overlap_pays(2, 1) is False
    monkeypatch.setenv(multi_worker.OVERLAP_ENV, "auto")
    # (size, ranks on this host): overlap only where the ranks span several hosts
    assert [multi_worker._overlap_pays(*c) for c in ((2, 1), (2, 2), (1, 1))] == \
        [True, False, False]


def test_ranks_of_one_host_share_its_cores_unless_the_user_set_threads(monkeypatch):
    from tensorlite.framework import blas_threads
    monkeypatch.setattr(blas_threads, "cpu_count", lambda: 8)
    try:
        tf.config.threading.set_intra_op_parallelism_threads(0)
        multi_worker._share_cores(3)   # 3 ranks on this 8-core host: 2 threads each
        assert tf.config.threading.get_intra_op_parallelism_threads() == 2
        tf.config.threading.set_intra_op_parallelism_threads(0)
        multi_worker._share_cores(1)   # alone on its host: every core, as before
        assert tf.config.threading.get_intra_op_parallelism_threads() == 0
        tf.config.threading.set_intra_op_parallelism_threads(5)   # the user's choice stays
        multi_worker._share_cores(4)
        assert tf.config.threading.get_intra_op_parallelism_threads() == 5
    finally:
        tf.config.threading.set_intra_op_parallelism_threads(0)


@pytest.mark.slow
@needs_mpi
def test_ranks_start_from_chief_weights_and_shuffle_alike(tmp_path):
    path, _ = _data(tmp_path, with_initial=False)   # each rank seeds differently
    ranks = _run_ranks(2, path, tmp_path, shuffle=True)
    np.testing.assert_array_equal(ranks[0]["steps"], ranks[1]["steps"])
    assert np.isfinite(ranks[0]["loss"]).all()


def test_without_mpi_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(tf.errors.UnavailableError, match="pip install mpich mpi4py"):
        tf.distribute.MultiWorkerMirroredStrategy()


def test_launcher_command_line():
    cmd = launch.build_command(["-n", "4", "-f", "hosts", "train.py", "--epochs", "2"],
                               mpiexec="/x/mpiexec")
    assert cmd == ["/x/mpiexec", "-n", "4", "-f", "hosts", sys.executable, "train.py",
                   "--epochs", "2"]
    with pytest.raises(SystemExit):
        launch.build_command(["-n", "0", "train.py"], mpiexec="/x/mpiexec")


class _FakeOneRankComm:
    def Get_size(self):
        return 1

    def Get_rank(self):
        return 0


def test_bucketing_groups_by_dtype_and_size():
    r = mpi_comm.BucketAllReducer(_FakeOneRankComm(), bucket_bytes=100)
    arrays = [np.zeros(10, np.float32), np.zeros(10, np.float32), np.zeros(30, np.float32),
              np.zeros(3, np.int64)]
    buckets = r._buckets(arrays)
    assert buckets == [(np.dtype(np.float32), [0, 1]), (np.dtype(np.float32), [2]),
                       (np.dtype(np.int64), [3])]


def test_bucket_plan_reverses_variables_and_cuts_by_size_and_dtype():
    plan = overlap.BucketPlan([(3, 2), (4,), (2,), (5,)],
                              [np.float32, np.float32, np.float64, np.float64], bucket_bytes=24)
    # reversed: (5,) f64 = 40 bytes alone; (2,) f64 = 16; then the float32s: 16 + 24 > 24
    assert [(d.name, n, m) for d, n, m in plan.buckets] == \
        [("float64", 5, [3]), ("float64", 2, [2]), ("float32", 4, [1]), ("float32", 6, [0])]


def _listened_step(shapes, scales, bucket_bytes, weight):
    """Float32 variables of ones, and the gradient of sum(scale * v) over them taken while
    a recording OverlappedReduction listens: (variables, plan, reduction)."""
    v = [tf.Variable(np.ones(shape, np.float32)) for shape in shapes]
    plan = overlap.BucketPlan(shapes, [np.float32] * len(shapes), bucket_bytes=bucket_bytes)
    reduction = overlap.OverlappedReduction(_FakeOneRankComm(), plan, weight=weight,
                                            record_events=True)
    with reduction.listening():
        with tf.GradientTape() as tape:
            loss = sum(tf.reduce_sum(x * scale) for x, scale in zip(v, scales))
        tape.gradient(loss, v)
    return v, plan, reduction


def test_overlapped_reduction_feeds_buckets_from_the_tape():
    v, _, reduction = _listened_step([(3, 2), (4,)], [2.0, 3.0], bucket_bytes=16, weight=0.25)
    with reduction.listening():
        with tf.GradientTape() as other:      # a second gradient() call is not ours
            tf.reduce_sum(v[1] * 100.0)
            other.gradient(tf.reduce_sum(v[1] * 100.0), v[1])
    grads, scalars = reduction.finish(None, [np.float32(1.5)])
    np.testing.assert_array_equal(grads[0], np.full((3, 2), 0.5, np.float32))
    np.testing.assert_array_equal(grads[1], np.full(4, 0.75, np.float32))
    assert scalars == [1.5]
    assert [(k, i) for k, i, _ in reduction.events] == \
        [("grad", 1), ("start", 0), ("grad", 0), ("start", 1), ("done", -1)]


def test_overlapped_reduction_takes_gradients_it_did_not_see():
    plan = overlap.BucketPlan([(2,), (2,)], [np.float32] * 2, bucket_bytes=1 << 20)
    reduction = overlap.OverlappedReduction(_FakeOneRankComm(), plan, weight=0.5)
    grads, _ = reduction.finish([np.array([2.0, 4.0], np.float32), None])
    np.testing.assert_array_equal(grads[0], [1.0, 2.0])
    np.testing.assert_array_equal(grads[1], [0.0, 0.0])


def test_a_step_result_still_held_is_not_overwritten_and_a_new_weight_is_used():
    # one bucket holding one variable: finish hands out the bucket buffer itself
    plan = overlap.BucketPlan([(2, 2)], [np.float32], bucket_bytes=1 << 20)
    first, _ = overlap.OverlappedReduction(_FakeOneRankComm(), plan, 0.5).finish(
        [np.full((2, 2), 4.0, np.float32)])
    # the last, partial batch of an epoch weighs its replica differently
    second, _ = overlap.OverlappedReduction(_FakeOneRankComm(), plan, 0.25).finish(
        [np.full((2, 2), 4.0, np.float32)])
    np.testing.assert_array_equal(first[0], np.full((2, 2), 2.0, np.float32))
    np.testing.assert_array_equal(second[0], np.full((2, 2), 1.0, np.float32))
    assert not np.shares_memory(first[0], second[0])
    del second
    third, _ = overlap.OverlappedReduction(_FakeOneRankComm(), plan, 0.25).finish([None])
    np.testing.assert_array_equal(first[0], 2.0)   # still held: never reused
    np.testing.assert_array_equal(third[0], 0.0)


def test_one_bucket_starts_only_in_finish_even_when_the_tape_fed_it():
    # nothing to overlap a single bucket with: every rank reduces it in finish (blocking),
    # never from a hook, so ranks whose hooks did and did not fire still match
    _, plan, reduction = _listened_step([(3,), (2,)], [2.0, 4.0], bucket_bytes=1 << 20,
                                        weight=0.5)
    assert not plan.overlaps
    assert [k for k, _, _ in reduction.events] == ["grad", "grad"]
    grads, _ = reduction.finish()
    assert [k for k, _, _ in reduction.events] == ["grad", "grad", "start", "done"]
    np.testing.assert_array_equal(grads[0], [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(grads[1], [2.0, 2.0])


def test_overlapped_reduction_ignores_gradients_of_a_function_being_traced():
    v = [tf.Variable(np.ones(3, np.float32))]
    plan = overlap.BucketPlan([(3,)], [np.float32], bucket_bytes=1 << 20)
    reduction = overlap.OverlappedReduction(_FakeOneRankComm(), plan, weight=0.5,
                                            record_events=True)

    @tf.function
    def grads(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v[0] * x)
        return tape.gradient(loss, v)
    with reduction.listening():
        out = grads(tf.constant(4.0))      # traced here: the tape's values are not final
    assert reduction.events == []
    summed, _ = reduction.finish([out[0].numpy()])
    np.testing.assert_array_equal(summed[0], [2.0, 2.0, 2.0])


@pytest.mark.slow
@needs_mpi
def test_fused_sum_reuses_only_receive_buffers_nobody_holds():
    # and donated arrays are reduced in place; fit's bucket buffers likewise never overwrite
    # a step's gradients the caller still holds (tests/mpi_reduce_worker.py)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("TF_CONFIG", None)
    proc = subprocess.run([sys.executable, "-m", "tensorlite.distribute.launch", "-n", "2",
                           os.path.join(HERE, "mpi_reduce_worker.py")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("ok") == 2, proc.stdout
