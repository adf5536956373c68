"""The tf.data service on a real Dask cluster on 127.0.0.1 (a dispatcher in this process,
three worker processes under nannies, all mutual TLS; tests/security has the refusals):
seed 000's pipeline end to end, exactly-once delivery in distributed_epoch with a worker
SIGKILLed mid-epoch (10 trials), parallel_epochs, shared jobs and coordinated reads,
register/from_dataset_id, and the bad-input cases."""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tensorlite as tf

pytest.importorskip("distributed")
service = tf.data.experimental.service


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client
    dispatcher = service.DispatchServer()
    # three workers: while a killed one restarts, the next trial still has two
    workers = [service.WorkerServer(service.WorkerConfig(dispatcher_address=dispatcher.target))
               for _ in range(3)]
    client = Client(dispatcher.target, set_as_default=False, timeout=30,
                    security=dispatcher.security)
    try:
        yield dispatcher, client
    finally:
        client.close()
        for w in workers:
            w.stop()
        dispatcher.stop()


def _wait_workers(client, n, limit=180.0):
    deadline = time.monotonic() + limit
    while len(client.scheduler_info()["workers"]) < n:
        assert time.monotonic() < deadline, "workers did not come back"
        time.sleep(0.1)


def test_seed_000_pipeline_end_to_end(cluster, tmp_path):
    dispatcher, _ = cluster
    for i in range(3):
        with tf.io.TFRecordWriter(str(tmp_path / f"part-{i}.tfrecord")) as w:
            for j in range(40):
                feature = tf.train.Feature(int64_list=tf.train.Int64List(value=[i * 40 + j]))
                example = tf.train.Example(features=tf.train.Features(feature={"v": feature}))
                w.write(example.SerializeToString())

    def randomized_preprocess(record):
        parsed = tf.io.parse_single_example(record, {"v": tf.io.FixedLenFeature([], tf.int64)})
        noise = tf.random.uniform([], 0.0, 1.0)       # randomness: why it cannot be snapshot
        return parsed["v"] + tf.cast(noise * 0.0, tf.int64)
    files = sorted(str(p) for p in tmp_path.glob("*.tfrecord"))
    dataset = tf.data.TFRecordDataset(files)
    dataset = dataset.map(randomized_preprocess)
    dataset = dataset.shuffle(buffer_size=1024)
    dataset = dataset.batch(batch_size=32)
    dataset = dataset.distribute(dispatcher.target)
    dataset = dataset.prefetch(1)
    batches = [b.numpy() for b in dataset]
    assert all(len(b) <= 32 for b in batches)
    assert sorted(np.concatenate(batches).tolist()) == list(range(120))


def test_distributed_epoch_exactly_once_with_a_worker_killed(cluster):
    dispatcher, client = cluster

    def slow(x):
        time.sleep(0.003)
        return x
    for trial in range(10):
        _wait_workers(client, 2)
        ds = tf.data.Dataset.range(240).map(
            lambda x: tf.py_function(slow, [x], tf.int64)).apply(
            service.distribute("distributed_epoch", dispatcher.target))
        got, killed = [], None
        for x in ds:
            got.append(int(x))
            if killed is None and len(got) >= 10:
                busy = [w for w, keys in client.processing().items() if keys]
                victim = busy[0] if busy else sorted(client.scheduler_info()["workers"])[0]
                pid = client.run(os.getpid, workers=[victim])[victim]
                os.kill(pid, signal.SIGKILL)
                killed = victim
        assert killed is not None
        assert sorted(got) == list(range(240)), f"trial {trial}: duplicates or losses"


def test_parallel_epochs_gives_each_worker_a_full_epoch(cluster):
    dispatcher, client = cluster
    _wait_workers(client, 3)
    ds = tf.data.Dataset.range(10).map(lambda x: x + 100).apply(
        service.distribute(processing_mode="parallel_epochs", service=dispatcher.target))
    got = sorted(int(x) for x in ds)
    n = len(client.scheduler_info()["workers"])
    assert got == sorted(list(range(100, 110)) * n)


def test_parallel_epochs_worker_killed_is_a_clear_error(cluster):
    # parallel_epochs keeps each worker's epoch in that worker: a dead worker's epoch cannot
    # be finished elsewhere, so the consumer says so (and points to distributed_epoch)
    dispatcher, client = cluster
    _wait_workers(client, 3)

    def slow(x):
        time.sleep(0.01)
        return x
    ds = tf.data.Dataset.range(400).map(lambda x: tf.py_function(slow, [x], tf.int64)).apply(
        service.distribute("parallel_epochs", dispatcher.target))
    it = iter(ds)
    assert len([int(next(it)) for _ in range(5)]) == 5
    victim = sorted(client.scheduler_info()["workers"])[0]
    os.kill(client.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)
    with pytest.raises(tf.errors.UnavailableError, match="died during a parallel_epochs job"):
        for _ in it:
            pass


def _consume(ds, out, key):
    try:
        out[key] = [int(x) for x in ds]
    except Exception as e:  # noqa: BLE001 - reported by the test's assertion
        out[key] = e


def test_two_consumers_share_a_job_by_name(cluster):
    dispatcher, client = cluster
    _wait_workers(client, 2)
    base = tf.data.Dataset.range(300)
    consumers = [base.apply(service.distribute("distributed_epoch", dispatcher.target,
                                               job_name="shared-job")) for _ in range(2)]
    out = {}
    threads = [threading.Thread(target=_consume, args=(c, out, i)) for i, c in
               enumerate(consumers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert isinstance(out[0], list) and isinstance(out[1], list), out
    assert sorted(out[0] + out[1]) == list(range(300))   # one epoch between them


def test_coordinated_reads_partition_the_splits(cluster):
    dispatcher, client = cluster
    _wait_workers(client, 2)
    ds_id = service.register_dataset(dispatcher.target, tf.data.Dataset.range(64))
    out = {}
    for i in range(2):
        ds = service.from_dataset_id("distributed_epoch", dispatcher.target, ds_id,
                                     job_name="coordinated", consumer_index=i,
                                     num_consumers=2)
        _consume(ds, out, i)
    assert out[0] and out[1] and not set(out[0]) & set(out[1])
    assert sorted(out[0] + out[1]) == list(range(64))


def test_register_dataset_and_from_dataset_id(cluster):
    dispatcher, _ = cluster
    ds = tf.data.Dataset.from_tensor_slices({"a": np.arange(6), "b": np.ones((6, 2))})
    ds_id = service.register_dataset(dispatcher.target, ds)
    assert service.register_dataset(dispatcher.target, ds) == ds_id   # content-addressed
    back = service.from_dataset_id(service.ShardingPolicy.DYNAMIC, dispatcher.target, ds_id)
    assert back.element_spec == ds.element_spec
    rows = sorted((int(e["a"]), e["b"].numpy().tolist()) for e in back)
    assert rows == [(i, [1.0, 1.0]) for i in range(6)]


def test_unserialisable_pipeline_names_stage_and_object(cluster):
    dispatcher, _ = cluster
    lock = threading.Lock()

    def uses_lock(x):
        with lock:
            return x
    ds = tf.data.Dataset.range(3).map(uses_lock)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"stage Map\(uses_lock\) holds lock = .*lock.*cannot be "
                             r"serialised"):
        ds.distribute(dispatcher.target)


def test_bad_service_arguments(cluster):
    dispatcher, _ = cluster
    ds = tf.data.Dataset.range(3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="processing_mode"):
        ds.apply(service.distribute("round_robin", dispatcher.target))
    with pytest.raises(NotImplementedError, match="static sharding"):
        service.distribute(service.ShardingPolicy.FILE, dispatcher.target)
    with pytest.raises(tf.errors.NotFoundError, match="no dataset with id"):
        service.from_dataset_id("parallel_epochs", dispatcher.target, "nope")
    with pytest.raises(tf.errors.InvalidArgumentError, match="job_name"):
        ds.apply(service.distribute("distributed_epoch", dispatcher.target,
                                    consumer_index=0, num_consumers=2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="address"):
        ds.distribute("")


def test_unreachable_dispatcher(monkeypatch):
    import socket
    from tensorlite.data.service import connection
    monkeypatch.setattr(connection, "CONNECT_TIMEOUT_S", 2.0)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]     # bound, never listening: connections are refused
        with pytest.raises(tf.errors.UnavailableError, match="unreachable"):
            tf.data.Dataset.range(3).distribute(f"127.0.0.1:{port}")


@pytest.mark.slow
def test_command_line_starts_a_service():
    proc = subprocess.Popen([sys.executable, "-m", "tensorlite.data.service", "--workers", "1"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "dispatcher at tls://127.0.0.1:" in line
        address = line.split("dispatcher at ")[1].split()[0]
        credentials = line.split("credentials in ")[1].strip()
        assert os.stat(credentials).st_mode & 0o777 == 0o600
        ds = tf.data.Dataset.range(5).apply(
            service.distribute("distributed_epoch", address, security=credentials))
        assert sorted(int(x) for x in ds) == [0, 1, 2, 3, 4]
    finally:
        proc.terminate()
        proc.wait(30)
    assert not os.path.exists(credentials)      # the service removed the file it made


def _dask_cli(args, credentials_file, log):
    """`dask <args>` with the cluster's TLS files (paths, never keys, on the command line),
    logging to the file `log` (a pipe nobody reads could fill up and stall it)."""
    tls = ["--tls-ca-file", credentials_file, "--tls-cert", credentials_file,
           "--tls-key", credentials_file, "--no-dashboard"]
    with open(log, "w") as f:
        return subprocess.Popen([sys.executable, "-m", "dask"] + args + tls, stderr=f)


def _logged_address(log, proc, limit=60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        with open(log) as f:
            for line in f:
                if "Scheduler at:" in line:
                    return line.split("Scheduler at:")[1].strip()
        time.sleep(0.1)
    return None


@pytest.mark.slow
def test_hand_started_dask_cluster_with_a_credentials_file(tmp_path):
    # docs/distributed.md's recipe for a cluster started by hand: one credentials file for
    # `dask scheduler`, `dask worker` and the consumer
    from tensorlite.data.service import credentials
    path = str(tmp_path / "cluster.pem")
    assert subprocess.run([sys.executable, "-m", "tensorlite.data.service",
                           "--write-credentials", path], check=True).returncode == 0
    log = str(tmp_path / "scheduler.log")
    scheduler = _dask_cli(["scheduler", "--host", "127.0.0.1", "--port", "0", "--protocol",
                           "tls"], path, log)
    worker = None
    try:
        address = _logged_address(log, scheduler)
        assert address and address.startswith("tls://127.0.0.1:"), address
        worker = _dask_cli(["worker", address, "--host", "127.0.0.1", "--nthreads", "1"], path,
                           str(tmp_path / "worker.log"))
        ds = tf.data.Dataset.range(6).apply(
            service.distribute("distributed_epoch", address, security=path))
        assert sorted(int(x) for x in ds) == list(range(6))
        with pytest.raises(tf.errors.UnauthenticatedError):
            tf.data.Dataset.range(3).apply(service.distribute(
                "distributed_epoch", address, security=credentials.generate()))
    finally:
        for proc in (worker, scheduler):
            if proc is not None:
                proc.terminate()
                proc.wait(30)


def test_iterator_closed_on_the_dispatchers_event_loop_does_not_deadlock(cluster):
    # the garbage collector may finalize an iterator on any thread, the in-process
    # dispatcher's event loop included: a blocking dispatcher call there would wait on
    # the loop it blocks, and the whole service would hang
    from distributed.utils import sync
    from tensorlite.data.service import dispatcher as dispatcher_lib
    dispatcher, client = cluster
    _wait_workers(client, 2)
    it = iter(tf.data.Dataset.range(400).distribute(dispatcher.target))
    assert int(next(it)) >= 0
    raw = it._raw

    async def close_on_the_loop():
        raw.close()
    sync(dispatcher._cluster.loop, close_on_the_loop, callback_timeout=60)
    for _ in range(200):     # the leases come back once the close has run
        if not dispatcher_lib.call(client, "job_info", job_id=raw._job)["leased"]:
            break
        time.sleep(0.1)
    assert dispatcher_lib.call(client, "job_info", job_id=raw._job)["leased"] == 0


def test_iterator_checkpoint_over_the_service(cluster, tmp_path):
    dispatcher, client = cluster
    _wait_workers(client, 2)
    ds = tf.data.Dataset.range(200).map(lambda x: x * 3).distribute(dispatcher.target)
    it = iter(ds)
    first = [int(next(it)) for _ in range(37)]
    ckpt = tf.train.Checkpoint(iterator=it)
    path = ckpt.write(str(tmp_path / "ckpt"))
    rest_of_old = [int(x) for x in it]          # the old iterator goes on (not counted)
    assert sorted(first + rest_of_old) == list(range(0, 600, 3))
    again = iter(ds)
    tf.train.Checkpoint(iterator=again).read(path)
    resumed = [int(x) for x in again]
    assert sorted(first + resumed) == list(range(0, 600, 3))   # nothing lost or repeated
    shared = iter(tf.data.Dataset.range(4).distribute(dispatcher.target, job_name="ck"))
    with pytest.raises(NotImplementedError, match="shared jobs"):
        shared.save_state()


def test_split_transfer_packing_and_range_shards():
    from tensorlite.data.service import splits, worker_tasks
    same = [{"a": np.full(2, i, np.float32), "b": np.int64(i)} for i in range(3)]
    packed = worker_tasks.pack(same)
    assert packed[0] == "stacked" and packed[2][0].shape == (3, 2)   # one buffer per leaf
    back = worker_tasks.unpack(packed)
    assert [(e["a"].tolist(), int(e["b"]), e["b"].shape) for e in back] == \
        [([i, i], i, ()) for i in range(3)]
    ragged = [np.zeros(2), np.zeros(3)]
    assert worker_tasks.pack(ragged)[0] == "list"
    assert [a.shape for a in worker_tasks.unpack(worker_tasks.pack(ragged))] == [(2,), (3,)]
    for args in [(0, 10, 1), (3, 20, 2), (10, 0, -3)]:
        ds = tf.data.Dataset.range(*args).map(lambda x: x + 1)
        parts = [[int(x) for x in splits.split_pipeline(ds, k, 4)] for k in range(4)]
        assert parts[1] == [x + 1 for x in range(*args)][1::4]
        assert sorted(sum(parts, [])) == sorted(x + 1 for x in range(*args))


def test_short_epochs_get_fewer_splits():
    from tensorlite.data.service.consumer import _num_splits
    assert _num_splits(2, -1) == 8 and _num_splits(4, -2) == 16    # unknown or infinite
    assert _num_splits(2, 64) == 2 and _num_splits(2, 10) == 1     # >= 32 elements each
    assert _num_splits(2, 100_000) == 8
