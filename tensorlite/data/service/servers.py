"""`DispatchServer` and `WorkerServer` with TensorFlow's names, on Dask: the dispatcher is a
Dask scheduler (running in this process) with the dispatcher plugin; a worker is a Dask
nanny here supervising a worker process (restarted if it dies) that joins the dispatcher.

Both speak mutual TLS (credentials.py): a DispatchServer makes new credentials for its
cluster unless given some, and WorkerServers and consumers in this process find them by the
dispatcher's address; other processes are given them (`security=`, a credentials file). Both
listen on 127.0.0.1 unless `host=` names another interface. The nanny hands its worker
process the credentials through multiprocessing's pipe, never on a command line.

Example:
    >>> dispatcher = tf.data.experimental.service.DispatchServer()
    >>> worker = tf.data.experimental.service.WorkerServer(
    ...     tf.data.experimental.service.WorkerConfig(dispatcher_address=dispatcher.target))
    >>> dispatcher.target.startswith("tls://127.0.0.1:")
    True
"""
import dataclasses
import threading

from tensorlite.data.service import credentials
from tensorlite.data.service import dispatcher as dispatcher_lib
from tensorlite.framework import errors

_BLAS_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# Dask's diagnostics sample every worker's threads (the profiler every 10 ms, the GIL
# monitor every 1 ms): measured, they cost a service worker ~6% of its CPU per element and
# 45 ms/s when idle (14 ms/s without). The service never reads them.
QUIET_DASK = {"distributed.worker.profile.enabled": False,
              "distributed.admin.system-monitor.gil.enabled": False,
              "distributed.admin.system-monitor.interval": "2s",
              "distributed.admin.tick.interval": "200ms"}
# Dask's schedulers and workers serve HTTP (cluster state as JSON, Prometheus metrics, a
# proxy) on a listener of their own, outside the cluster's TLS: only the health check stays.
HEALTH_ONLY_HTTP = {"distributed.scheduler.http.routes": ["distributed.http.health"],
                    "distributed.worker.http.routes": ["distributed.http.health"]}
SERVICE_DASK = {**QUIET_DASK, **HEALTH_ONLY_HTTP}


def quiet_dask():
    """A context in which Dask schedulers, nannies and workers start without diagnostics
    and without HTTP routes beyond the health check."""
    import dask  # noqa: PLC0415
    return dask.config.set(SERVICE_DASK)


@dataclasses.dataclass
class DispatcherConfig:
    """TF's fields; ours: `host`, the interface to listen on (127.0.0.1 by default;
    "0.0.0.0" for every interface), and `security`, the cluster's credentials (a Dask
    `Security` or a credentials file's path; None: new ones, see DispatchServer.security)."""
    port: int = 0
    protocol: str = None
    work_dir: str = None
    fault_tolerant_mode: bool = False
    worker_addresses: list = None
    job_gc_check_interval_ms: int = None
    job_gc_timeout_ms: int = None
    host: str = "127.0.0.1"
    security: object = None


@dataclasses.dataclass
class WorkerConfig:
    """TF's fields; ours: `host` (as DispatcherConfig's) and `security`, the dispatcher's
    credentials (None: those of a DispatchServer in this process at that address, else the
    file named by $TENSORLITE_DATA_SERVICE_CREDENTIALS, else Dask's TLS configuration)."""
    dispatcher_address: str = None
    worker_address: str = None
    port: int = 0
    protocol: str = None
    heartbeat_interval_ms: int = None
    dispatcher_timeout_ms: int = None
    host: str = "127.0.0.1"
    security: object = None


class DispatchServer:
    """The service's dispatcher: a Dask scheduler plus the dispatcher state."""

    def __init__(self, config=None, start=True):
        self._config = config or DispatcherConfig()
        self._cluster = None
        self._stopped = threading.Event()
        if start:
            self.start()

    def start(self):
        if self._cluster is not None:
            return
        from distributed import LocalCluster  # noqa: PLC0415
        config = self._config
        self._security = (credentials.resolve(config.security) if config.security is not None
                          else credentials.generate())
        with quiet_dask():
            # no dashboard; Dask's HTTP listener stays (on `host`, outside TLS), serving
            # only its health check (quiet_dask)
            self._cluster = LocalCluster(n_workers=0, processes=True, host=config.host,
                                         scheduler_port=config.port, protocol="tls://",
                                         security=self._security, dashboard_address=None,
                                         silence_logs=40)
        credentials.remember(self.target, self._security)
        plugin = dispatcher_lib.install(self._cluster.scheduler)
        if self._config.job_gc_timeout_ms:
            plugin.state.lease_timeout = self._config.job_gc_timeout_ms / 1000.0

    @property
    def target(self):
        """The address consumers and workers use (tls://host:port)."""
        return self._cluster.scheduler_address

    @property
    def security(self):
        """The cluster's credentials (a Dask `Security`): what a consumer or worker in
        another process needs, e.g. written with `credentials.write(security, path)`."""
        return self._security

    def join(self):
        self._stopped.wait()

    def stop(self):
        if self._cluster is not None:
            credentials.forget(self.target)
            self._cluster.close()
            self._cluster = None
        self._stopped.set()

    _stop = stop

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class WorkerServer:
    """A service worker: a Dask nanny in this process and its worker process."""

    def __init__(self, config, start=True):
        if config is None or not config.dispatcher_address:
            raise ValueError("WorkerServer needs WorkerConfig(dispatcher_address=...)")
        self._config = config
        self._runner = self._nanny = None
        if start:
            self.start()

    def start(self):
        if self._nanny is not None:
            return
        from distributed import Nanny  # noqa: PLC0415
        from distributed.utils import LoopRunner, sync  # noqa: PLC0415
        from tensorlite.data.service.connection import (  # noqa: PLC0415
            check_protocol, normalize_address)
        security = credentials.resolve(self._config.security,
                                       self._config.dispatcher_address)
        address = normalize_address(self._config.dispatcher_address, security is not None)
        check_protocol(self._config.dispatcher_address, address, security)
        timeout = (self._config.dispatcher_timeout_ms or 30000) / 1000.0
        self._runner = LoopRunner(asynchronous=False)
        self._runner.start()

        async def start_nanny():
            return await Nanny(address, nthreads=1, host=self._config.host,
                               port=self._config.port or None, dashboard=False,
                               silence_logs=40, env=dict(_BLAS_ENV), death_timeout=timeout,
                               config=dict(SERVICE_DASK), security=security,
                               protocol="tls://" if security is not None else None)
        try:
            with quiet_dask():
                self._nanny = sync(self._runner.loop, start_nanny)
        except RuntimeError as e:
            self._runner.stop()
            refused = _refused(e, self._config.dispatcher_address)
            if refused is e:
                raise
            raise refused from e

    @property
    def worker_address(self):
        return self._nanny.worker_address

    def join(self):
        threading.Event().wait()

    def stop(self):
        if self._nanny is not None:
            from distributed.utils import sync  # noqa: PLC0415
            sync(self._runner.loop, self._nanny.close)
            self._runner.stop()
            self._nanny = None

    _stop = stop

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _refused(error, dispatcher_address):
    """UnauthenticatedError for a nanny the dispatcher refused (Dask says only that it
    failed to start; the TLS failure is its cause), else `error` itself."""
    cause = error
    while cause is not None:
        text = str(cause)
        if "certificate" in text.lower() or "SSL" in text:
            return errors.UnauthenticatedError(
                None, None, f"tf.data service: the dispatcher at {dispatcher_address!r} "
                f"refused this worker's credentials, or this worker refused the "
                f"dispatcher's ({type(cause).__name__}: {text}); give WorkerConfig("
                f"security=) the cluster's credentials")
        cause = cause.__cause__ or cause.__context__
    return error
