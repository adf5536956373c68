"""`tf.distribute`: distribution strategies.

- the default strategy (`get_strategy()` outside any scope): one replica, this process;
- `OneDeviceStrategy`, `MirroredStrategy`: replicas inside one process (mirrored.py);
- `MultiWorkerMirroredStrategy`: one replica per MPI rank, gradients all-reduced over MPI
  (`mpiexec -n 2 python train.py` or `tensorlite-launch -n 2 train.py`; multi_worker.py);
- `ParameterServerStrategy` with `coordinator.ClusterCoordinator` (parameter_server.py).

Example:
    >>> strategy = tf.distribute.get_strategy()
    >>> with strategy.scope():
    ...     v = tf.Variable(1.0)
    >>> strategy.num_replicas_in_sync
    1
"""
import types as _types

from tensorlite.distribute import cluster_resolver
from tensorlite.distribute.distribute_lib import (InputContext, ReplicaContext, Strategy,
                                                  get_replica_context, get_strategy,
                                                  has_strategy, in_cross_replica_context,
                                                  get_cross_replica_context)
from tensorlite.distribute.mirrored import MirroredStrategy, OneDeviceStrategy
from tensorlite.distribute.reduce_op import ReduceOp
from tensorlite.distribute.values import DistributedValues


def __getattr__(name):
    # The MPI and parameter-server strategies load on first use (they import mpi4py/dask).
    if name == "MultiWorkerMirroredStrategy":
        from tensorlite.distribute.multi_worker import MultiWorkerMirroredStrategy  # noqa
        return MultiWorkerMirroredStrategy
    if name == "ParameterServerStrategy":
        from tensorlite.distribute.parameter_server import ParameterServerStrategy  # noqa
        return ParameterServerStrategy
    if name == "experimental":
        return _experimental()
    if name == "coordinator":
        import importlib  # noqa: PLC0415
        return importlib.import_module("tensorlite.distribute.coordinator")
    raise AttributeError(f"module 'tensorlite.distribute' has no attribute {name!r}")


class TPUStrategy(Strategy):
    """TPUs are not supported: constructing one raises NotImplementedError."""

    def __init__(self, tpu_cluster_resolver=None, device_assignment=None):
        raise NotImplementedError("TPUStrategy: tensorlite has no TPU support; use "
                                  "MirroredStrategy or MultiWorkerMirroredStrategy")


class _Experimental(_types.ModuleType):
    """`tf.distribute.experimental`: names resolve on use (some import MPI or Dask)."""

    def __getattr__(self, name):
        import sys  # noqa: PLC0415
        simple = {"TPUStrategy": TPUStrategy,
                  "CommunicationImplementation": _CommunicationImplementation,
                  "CollectiveCommunication": _CommunicationImplementation,
                  "CommunicationOptions": _CommunicationOptions}
        if name in simple:
            return simple[name]
        if name in ("MultiWorkerMirroredStrategy", "ParameterServerStrategy", "coordinator"):
            return getattr(sys.modules[__name__], name)
        raise AttributeError(f"module 'tensorlite.distribute.experimental' has no "
                             f"attribute {name!r}")


_EXPERIMENTAL = _Experimental("tensorlite.distribute.experimental")


def _experimental():
    return _EXPERIMENTAL


class _CommunicationImplementation:
    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


class _CommunicationOptions:
    def __init__(self, bytes_per_pack=0, timeout_seconds=None, implementation="AUTO"):
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation
