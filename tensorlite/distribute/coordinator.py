"""`tf.distribute.experimental.coordinator`: ClusterCoordinator and its values."""
from tensorlite.distribute.parameter_server import (ClusterCoordinator,  # noqa: F401
                                                    PerWorkerValues, RemoteValue)
