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
from tensorlite.distribute import launch, mpi_comm
from tests.distribute_fixtures import WeightRecorder, small_classifier

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = launch.find_mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec: pip install mpich mpi4py")


def _run_ranks(n, data_path, out_dir, shuffle):
    cmd = [sys.executable, "-m", "tensorlite.distribute.launch", "-n", str(n),
           os.path.join(HERE, "mpi_fit_worker.py"), str(data_path), str(out_dir),
           "shuffle" if shuffle else "ordered"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
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
