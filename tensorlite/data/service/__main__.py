"""`python -m tensorlite.data.service --workers 2`: a dispatcher and N workers on this
machine (a Dask LocalCluster of worker processes, mutual TLS, 127.0.0.1 unless --host says
otherwise); prints the address and the credentials file clients need, and serves until
interrupted. `--write-credentials PATH` only writes new credentials (for a cluster started
by hand with `dask scheduler`/`dask worker`, see docs/distributed.md) and exits."""
import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading


def build_parser():
    """The argparse parser of `python -m tensorlite.data.service` (every flag described)."""
    p = argparse.ArgumentParser(
        prog="python -m tensorlite.data.service",
        description="Start a tf.data service on this machine: a dispatcher and worker "
                    "processes (a Dask LocalCluster over mutual TLS); prints the address and "
                    "the credentials file clients need, and serves until interrupted.",
        epilog="Example: python -m tensorlite.data.service --workers 2 (needs the "
               "distributed extra)")
    p.add_argument("--workers", type=int, default=2,
                   help="worker processes to start (default %(default)s)")
    p.add_argument("--port", type=int, default=0,
                   help="the dispatcher's port (default 0: any free one)")
    p.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on (default 127.0.0.1; 0.0.0.0: every one)")
    p.add_argument("--credentials", metavar="PATH",
                   help="use this credentials file (0600) instead of making new ones")
    p.add_argument("--write-credentials", metavar="PATH",
                   help="write new credentials to PATH (0600) and exit")
    return p


def main(argv=None):
    """Runs the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    from tensorlite.data.service import credentials  # noqa: PLC0415
    if args.write_credentials:
        path = credentials.write(credentials.generate(), args.write_credentials)
        print(f"wrote the cluster's credentials to {path} (readable by you only)")
        return 0
    if args.workers < 0:
        build_parser().error("--workers must be >= 0")
    security = (credentials.load(args.credentials) if args.credentials
                else credentials.generate())
    made = tempfile.mkdtemp(prefix="tensorlite-data-service-")   # 0700
    _scratch_in(os.path.join(made, "dask"))
    try:
        if args.credentials:
            return _serve(args, security, args.credentials)
        path = os.path.join(made, "credentials.pem")
        return _serve(args, security, credentials.write(security, path))
    finally:           # remove only what this run made
        shutil.rmtree(made, ignore_errors=True)


def _scratch_in(directory):
    """Dask's scratch space (lock files it leaves behind) in `directory`, removed with this
    run's own, unless the user chose one: here and, through the environment, in the worker
    processes."""
    import dask  # noqa: PLC0415 - the distributed extra
    if dask.config.get("temporary-directory", None) is None:
        dask.config.set({"temporary-directory": directory})
        os.environ["DASK_TEMPORARY_DIRECTORY"] = directory


def _serve(args, security, path):
    from distributed import LocalCluster  # noqa: PLC0415
    from tensorlite.data.service import credentials, dispatcher  # noqa: PLC0415
    from tensorlite.data.service.servers import _BLAS_ENV, quiet_dask  # noqa: PLC0415
    os.environ.update(_BLAS_ENV)
    with quiet_dask():
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               host=args.host, scheduler_port=args.port, protocol="tls://",
                               security=security, dashboard_address=None, silence_logs=40)
    dispatcher.install(cluster.scheduler)
    address = cluster.scheduler_address
    # before the address is printed: a SIGTERM sent as soon as it is read stops cleanly
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    print(f"tf.data service dispatcher at {address} with {args.workers} worker(s); "
          f"credentials in {path}", flush=True)
    print(f"use dataset.apply(tf.data.experimental.service.distribute('distributed_epoch', "
          f"{address!r}, security={path!r})) or set {credentials.ENV_VAR}={path}", flush=True)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
