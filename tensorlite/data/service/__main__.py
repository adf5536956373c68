"""`python -m tensorlite.data.service --workers 2`: a dispatcher and N workers on this
machine (a Dask LocalCluster of worker processes); prints the address and serves until
interrupted."""
import argparse
import signal
import sys
import threading


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tensorlite.data.service",
                                description="Start a tf.data service (dispatcher + workers).")
    p.add_argument("--workers", type=int, default=2, help="worker processes to start")
    p.add_argument("--port", type=int, default=0, help="dispatcher port (0: any free)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    args = p.parse_args(argv)
    if args.workers < 0:
        p.error("--workers must be >= 0")
    from distributed import LocalCluster  # noqa: PLC0415
    from tensorlite.data.service import dispatcher  # noqa: PLC0415
    from tensorlite.data.service.servers import _BLAS_ENV, quiet_dask  # noqa: PLC0415
    import os  # noqa: PLC0415
    os.environ.update(_BLAS_ENV)
    with quiet_dask():
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               host=args.host, scheduler_port=args.port,
                               dashboard_address=None, silence_logs=40)
    dispatcher.install(cluster.scheduler)
    print(f"tf.data service dispatcher at {cluster.scheduler_address} with {args.workers} "
          f"worker(s); use dataset.distribute({cluster.scheduler_address!r})", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
