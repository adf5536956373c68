"""tf.data service throughput on this machine: local vs the service with 1 and 2 Dask
workers, beside the two-process ceiling measured in the same run, and the service path's
overhead per element.

    python bench/data_service.py

1. A CPU-bound pure-Python pipeline (range -> map(py_function burning ~1 ms)): elements/s
   locally (one process), through the service (distributed_epoch) with 1 and with 2 workers,
   and the ceiling: two independent processes each running half the pipeline locally at the
   same time. Goal: 2 workers at least 0.85x of the ceiling. Beside it, the CPU seconds per
   element summed over every process (consumer, dispatcher, workers) against one local
   process: what the service costs, which the neighbours' load moves far less than
   wall-time ratios. Also the fixed cost of an
   epoch over the service (a 64-element epoch of a trivial pipeline: job, leases, splits).
2. Overhead: 1 KB elements (float32[256]) in batches of 32, a trivial pipeline: the
   consumer's wall time per element through the service minus locally (goal: < 50 us), and
   the consumer process's own CPU time per element on the service path.
Rounds are interleaved and medians quoted; the machine is shared, so read the ratios.
Interrupted (Ctrl-C, SIGTERM), it stops its dispatchers and workers and ends the
processes it started.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.abspath(__file__)
sys.path.insert(0, os.path.dirname(HERE))
from _cleanup import exit_on_signals  # noqa: E402
N = 1200     # ~1.2 s of work: the per-epoch start-up (below) is a small part of it


def burn(x):
    s = 0
    for i in range(25000):
        s += i
    return x


def cpu_pipeline(tf, n=N, shard=None):
    ds = tf.data.Dataset.range(n)
    if shard is not None:
        ds = ds.shard(shard[1], shard[0])
    return ds.map(lambda x: tf.py_function(burn, [x], tf.int64))


def small_pipeline(tf, n):
    return tf.data.Dataset.range(n).map(
        lambda x: tf.fill([256], tf.cast(x, tf.float32))).batch(32)


def _rate(ds, n_elements):
    """(elements/s, wall seconds, this process's CPU seconds) of one pass."""
    t0, c0 = time.perf_counter(), time.process_time()
    count = sum(1 for _ in ds)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert count > 0
    return n_elements / dt, dt, cpu


def _all_cpu(target):
    """CPU seconds used so far by this process (consumer and dispatcher) and the workers of
    the service at `target`."""
    from tensorlite.data.service.connection import connect
    return time.process_time() + sum(connect(target).run(time.process_time).values())


def _cpu_per_element(ds, n_elements, target=None):
    """CPU seconds per element of one pass, over every process involved: a figure that the
    neighbours' load does not move (much), unlike wall-time throughput."""
    c0 = _all_cpu(target) if target else time.process_time()
    _rate(ds, n_elements)
    return ((_all_cpu(target) if target else time.process_time()) - c0) / n_elements


def local_part(k, of):
    import tensorlite as tf
    _, dt, _ = _rate(cpu_pipeline(tf, shard=(k, of)), N // of)
    print(json.dumps({"seconds": dt}), flush=True)


def ceiling():
    """Elements/s of two independent processes each running half of the pipeline."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, HERE, "--local-part", str(k), "2"],
                              stdout=subprocess.PIPE, text=True, env=env) for k in range(2)]
    try:
        seconds = [json.loads(p.communicate()[0].strip().splitlines()[-1])["seconds"]
                   for p in procs]
    finally:   # interrupted: no half-pipeline process left running
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    return N / max(seconds)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--local-part":  # the bench's own children
        return local_part(int(sys.argv[2]), int(sys.argv[3]))
    argparse.ArgumentParser(
        description="tf.data service throughput: local vs 1 and 2 Dask workers vs the "
                    "two-process ceiling, and the service's overhead per element (needs the "
                    "distributed extra; takes minutes).").parse_args()
    exit_on_signals()
    os.environ.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    # Dask's scratch space (its lock files stay after a run) in a directory removed at the
    # end; the worker processes inherit the setting through the environment
    with tempfile.TemporaryDirectory(prefix="tensorlite_bench_dask_") as scratch:
        os.environ["DASK_TEMPORARY_DIRECTORY"] = scratch
        run()


def run():
    """Starts the dispatchers and workers, times every case, prints the figures."""
    import tensorlite as tf
    svc = tf.data.experimental.service
    servers = []
    targets = {}
    for n_workers in (1, 2):
        d = svc.DispatchServer()
        servers.append(d)
        servers += [svc.WorkerServer(svc.WorkerConfig(dispatcher_address=d.target))
                    for _ in range(n_workers)]
        targets[n_workers] = d.target
    try:
        for target in targets.values():   # warm-up: workers import and fetch the pipeline
            sum(1 for _ in cpu_pipeline(tf, 40).distribute(target))
            sum(1 for _ in small_pipeline(tf, 64).distribute(target))
        res = {k: [] for k in ("local", "ceiling", "svc1", "svc2", "ovh_local", "ovh_svc",
                               "cpu_svc", "epoch", "cpu_local_all", "cpu_svc2_all")}
        tiny = tf.data.Dataset.range(64).distribute(targets[2])
        n_small = 32 * 400
        for _ in range(3):
            res["local"].append(_rate(cpu_pipeline(tf), N)[0])
            res["ceiling"].append(ceiling())
            res["svc1"].append(_rate(cpu_pipeline(tf).distribute(targets[1]), N)[0])
            res["svc2"].append(_rate(cpu_pipeline(tf).distribute(targets[2]), N)[0])
            res["ovh_local"].append(_rate(small_pipeline(tf, n_small), n_small)[1] / n_small)
            _, wall, cpu = _rate(small_pipeline(tf, n_small).distribute(targets[2]), n_small)
            res["ovh_svc"].append(wall / n_small)
            res["cpu_svc"].append(cpu / n_small)
            res["epoch"].append(_rate(tiny, 64)[1])
            res["cpu_local_all"].append(_cpu_per_element(cpu_pipeline(tf), N))
            res["cpu_svc2_all"].append(_cpu_per_element(cpu_pipeline(tf).distribute(targets[2]),
                                                        N, targets[2]))
        med = {k: statistics.median(v) for k, v in res.items()}
    finally:
        for s in reversed(servers):
            s.stop()
    print(f"CPU-bound pure-Python pipeline, {N} elements (~1 ms each), medians of 3:")
    print(f"  local, one process       {med['local']:8.0f} elements/s")
    print(f"  two-process ceiling      {med['ceiling']:8.0f} elements/s "
          f"({med['ceiling'] / med['local']:.2f}x local)")
    print(f"  service, 1 Dask worker   {med['svc1']:8.0f} elements/s "
          f"({med['svc1'] / med['local']:.2f}x local)")
    print(f"  service, 2 Dask workers  {med['svc2']:8.0f} elements/s "
          f"({med['svc2'] / med['ceiling']:.2f}x the ceiling; goal >= 0.85x)")
    print(f"  CPU per element, all processes: local {med['cpu_local_all'] * 1e6:.0f} us, "
          f"service with 2 workers {med['cpu_svc2_all'] * 1e6:.0f} us (efficiency "
          f"{med['cpu_local_all'] / med['cpu_svc2_all']:.2f}: the load-independent side of "
          f"the 2-worker figure)")
    print(f"  fixed cost of an epoch over the service (64 trivial elements, 2 workers): "
          f"{med['epoch'] * 1e3:.0f} ms")
    overhead = (med["ovh_svc"] - med["ovh_local"]) * 1e6
    print(f"1 KB elements in batches of 32 ({n_small} elements): local "
          f"{med['ovh_local'] * 1e6:.1f} us/element, service {med['ovh_svc'] * 1e6:.1f} "
          f"us/element: overhead {overhead:.1f} us/element in wall time (goal < 50 us); the "
          f"consumer's own CPU on the service path: {med['cpu_svc'] * 1e6:.1f} us/element")


if __name__ == "__main__":
    main()
