"""`DispatchServer` and `WorkerServer` with TensorFlow's names, on Dask: the dispatcher is a
Dask scheduler (running in this process) with the dispatcher plugin; a worker is a Dask
nanny here supervising a worker process (restarted if it dies) that joins the dispatcher.

Example:
    >>> dispatcher = tf.data.experimental.service.DispatchServer()
    >>> worker = tf.data.experimental.service.WorkerServer(
    ...     tf.data.experimental.service.WorkerConfig(dispatcher_address=dispatcher.target))
    >>> dispatcher.target.startswith("tcp://127.0.0.1:")
    True
"""
import dataclasses
import threading

from tensorlite.data.service import dispatcher as dispatcher_lib

_BLAS_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# Dask's diagnostics sample every worker's threads (the profiler every 10 ms, the GIL
# monitor every 1 ms): measured, they cost a service worker ~6% of its CPU per element and
# 45 ms/s when idle (14 ms/s without). The service never reads them.
QUIET_DASK = {"distributed.worker.profile.enabled": False,
              "distributed.admin.system-monitor.gil.enabled": False,
              "distributed.admin.system-monitor.interval": "2s",
              "distributed.admin.tick.interval": "200ms"}


def quiet_dask():
    """A context in which Dask schedulers, nannies and workers start without diagnostics."""
    import dask  # noqa: PLC0415
    return dask.config.set(QUIET_DASK)


@dataclasses.dataclass
class DispatcherConfig:
    """TF's fields; `host` (ours) is the interface to listen on (127.0.0.1 by default)."""
    port: int = 0
    protocol: str = None
    work_dir: str = None
    fault_tolerant_mode: bool = False
    worker_addresses: list = None
    job_gc_check_interval_ms: int = None
    job_gc_timeout_ms: int = None
    host: str = "127.0.0.1"


@dataclasses.dataclass
class WorkerConfig:
    dispatcher_address: str = None
    worker_address: str = None
    port: int = 0
    protocol: str = None
    heartbeat_interval_ms: int = None
    dispatcher_timeout_ms: int = None
    host: str = "127.0.0.1"


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
        with quiet_dask():
            self._cluster = LocalCluster(n_workers=0, processes=True, host=self._config.host,
                                         scheduler_port=self._config.port,
                                         dashboard_address=":0", silence_logs=40)
        plugin = dispatcher_lib.install(self._cluster.scheduler)
        if self._config.job_gc_timeout_ms:
            plugin.state.lease_timeout = self._config.job_gc_timeout_ms / 1000.0

    @property
    def target(self):
        """The address consumers and workers use (tcp://host:port)."""
        return self._cluster.scheduler_address

    def join(self):
        self._stopped.wait()

    def stop(self):
        if self._cluster is not None:
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
        from tensorlite.data.service.consumer import normalize_address  # noqa: PLC0415
        address = normalize_address(self._config.dispatcher_address)
        timeout = (self._config.dispatcher_timeout_ms or 30000) / 1000.0
        self._runner = LoopRunner(asynchronous=False)
        self._runner.start()

        async def start_nanny():
            return await Nanny(address, nthreads=1, host=self._config.host,
                               port=self._config.port or None, dashboard=False,
                               silence_logs=40, env=dict(_BLAS_ENV), death_timeout=timeout,
                               config=dict(QUIET_DASK))
        with quiet_dask():
            self._nanny = sync(self._runner.loop, start_nanny)

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
