"""`tf.estimator.RunConfig`: where and how an Estimator runs, including
`train_distribute` (the MirroredStrategy of the Google I/O 2018 talk
"Distributed TensorFlow training") and the task from TF_CONFIG.

Example:
    >>> cfg = tf.estimator.RunConfig(model_dir="/tmp/m", save_checkpoints_steps=100)
    >>> cfg.is_chief, cfg.num_worker_replicas
    (True, 1)
"""
from tensorlite.distribute import tf_config


class RunConfig:
    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=None, save_checkpoints_secs=None,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200, checkpoint_save_graph_def=True):
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("RunConfig: give save_checkpoints_steps or save_checkpoints_secs, "
                             "not both")
        self.model_dir = model_dir
        self.tf_random_seed = tf_random_seed
        self.save_summary_steps = save_summary_steps
        self.save_checkpoints_steps = save_checkpoints_steps
        self.save_checkpoints_secs = save_checkpoints_secs
        self.session_config = session_config
        self.keep_checkpoint_max = keep_checkpoint_max
        self.log_step_count_steps = log_step_count_steps
        self.train_distribute = train_distribute
        self.eval_distribute = eval_distribute
        self.device_fn = device_fn
        cfg = tf_config.parse()
        self.cluster_spec = cfg.cluster
        self.task_type = cfg.task_type or "worker"
        self.task_id = cfg.task_id or 0
        self.is_chief = cfg.is_chief if cfg.cluster else True
        self.num_worker_replicas = max(cfg.num_workers, 1)
        self.num_ps_replicas = len(cfg.cluster.get("ps", []))

    def replace(self, **kwargs):
        """A copy with some fields changed."""
        import copy  # noqa: PLC0415
        out = copy.copy(self)
        for k, v in kwargs.items():
            if not hasattr(out, k):
                raise ValueError(f"RunConfig.replace: unknown field {k!r}")
            setattr(out, k, v)
        return out
