"""`tf.distribute.cluster_resolver`: where the cluster's tasks are.

tensorlite runs on CPUs, so `TPUClusterResolver()` always raises ValueError, as TensorFlow
does on a machine without a TPU; the snippet of the TF Dev Summit 2020 talk
"TF 2.x on Kaggle" then falls back to
`tf.distribute.get_strategy()`.

Example:
    >>> try:
    ...     tf.distribute.cluster_resolver.TPUClusterResolver()
    ... except ValueError:
    ...     print("no TPU")
    no TPU
"""
from tensorlite.distribute import tf_config


class ClusterResolver:
    """Base: a cluster spec plus this task's type and index."""

    task_type = None
    task_id = None
    rpc_layer = None

    def cluster_spec(self):
        raise NotImplementedError

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        return ""

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return {}


class TPUClusterResolver(ClusterResolver):
    """Finds a TPU; tensorlite has no TPU support, so this raises ValueError."""

    def __init__(self, tpu=None, zone=None, project=None, job_name="worker",
                 coordinator_name=None, coordinator_address=None, credentials="default",
                 service=None, discovery_url=None):
        where = f"named {tpu!r}" if tpu else "(no TPU name given and none in TPU_NAME)"
        raise ValueError(f"Could not find a TPU {where}: tensorlite runs on CPUs and has no "
                         f"TPU support. Catch ValueError and use tf.distribute.get_strategy() "
                         f"(or MirroredStrategy / MultiWorkerMirroredStrategy) instead.")


class SimpleClusterResolver(ClusterResolver):
    """A resolver over a given cluster spec ({job: [addresses]})."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None,
                 environment="", num_accelerators=None, rpc_layer=None):
        self._spec = dict(cluster_spec.as_dict() if hasattr(cluster_spec, "as_dict")
                          else cluster_spec)
        self._master = master
        self.task_type, self.task_id, self.rpc_layer = task_type, task_id, rpc_layer

    def cluster_spec(self):
        return ClusterSpec(self._spec)

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        return self._master


class TFConfigClusterResolver(ClusterResolver):
    """The cluster described by the TF_CONFIG environment variable."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        cfg = tf_config.parse()
        self._cfg = cfg
        self.task_type = task_type if task_type is not None else cfg.task_type
        self.task_id = task_id if task_id is not None else cfg.task_id
        self.rpc_layer = rpc_layer or cfg.rpc_layer

    def cluster_spec(self):
        return ClusterSpec(self._cfg.cluster)

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        task_type = task_type or self.task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None:
            return ""
        address = self._cfg.cluster[task_type][task_id]
        layer = rpc_layer or self.rpc_layer
        return f"{layer}://{address}" if layer else address


class ClusterSpec:
    """`tf.train.ClusterSpec`: job names to task addresses."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        self._cluster = {job: list(tasks) for job, tasks in dict(cluster).items()}

    def as_dict(self):
        return {job: list(tasks) for job, tasks in self._cluster.items()}

    @property
    def jobs(self):
        return list(self._cluster)

    def num_tasks(self, job_name):
        if job_name not in self._cluster:
            raise ValueError(f"No such job in cluster: {job_name!r}")
        return len(self._cluster[job_name])

    def task_address(self, job_name, task_index):
        return self._cluster[job_name][task_index]

    def __bool__(self):
        return bool(self._cluster)

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and self.as_dict() == other.as_dict()
