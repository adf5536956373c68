"""`TF_CONFIG`: the cluster and this task's place in it, as TensorFlow reads it.

Example:
    >>> cfg = parse('{"cluster": {"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]},'
    ...             ' "task": {"type": "worker", "index": 1}}')
    >>> cfg.task_type, cfg.task_id, cfg.num_workers, cfg.is_chief
    ('worker', 1, 2, False)
"""
import json
import os

_TASK_TYPES = ("chief", "worker", "ps", "evaluator")


class TFConfig:
    """The parsed cluster spec ({job: [addresses]}) and task (type, index)."""

    def __init__(self, cluster, task_type, task_id, rpc_layer=None):
        self.cluster = cluster
        self.task_type = task_type
        self.task_id = task_id
        self.rpc_layer = rpc_layer

    @property
    def num_workers(self):
        return len(self.cluster.get("chief", [])) + len(self.cluster.get("worker", []))

    @property
    def is_chief(self):
        if "chief" in self.cluster:
            return self.task_type == "chief"
        return self.task_type in (None, "worker") and (self.task_id or 0) == 0


def parse(text=None):
    """Parses TF_CONFIG (the environment variable when `text` is None). An unset or empty
    TF_CONFIG is a one-task local cluster."""
    if text is None:
        text = os.environ.get("TF_CONFIG", "")
    if not text.strip():
        return TFConfig({}, None, None)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON ({e.msg} at position {e.pos}): set it "
                         f"to e.g. '{{\"cluster\": {{\"worker\": [\"host:port\"]}}, "
                         f"\"task\": {{\"type\": \"worker\", \"index\": 0}}}}'") from None
    if not isinstance(data, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object, got {type(data).__name__}")
    cluster = data.get("cluster", {}) or {}
    if not isinstance(cluster, dict) or not all(
            isinstance(v, list) and all(isinstance(a, str) for a in v)
            for v in cluster.values()):
        raise ValueError(f"TF_CONFIG['cluster'] must map job names to lists of 'host:port' "
                         f"strings, got {cluster!r}")
    task = data.get("task", {}) or {}
    task_type, task_id = task.get("type"), task.get("index")
    if task_type is not None:
        if task_type not in cluster:
            raise ValueError(f"TF_CONFIG task type {task_type!r} is not a job of the cluster "
                             f"{sorted(cluster)}")
        if not isinstance(task_id, int) or not 0 <= task_id < len(cluster[task_type]):
            raise ValueError(f"TF_CONFIG task index {task_id!r} is out of range for job "
                             f"{task_type!r} with {len(cluster[task_type])} task(s)")
    return TFConfig(cluster, task_type, task_id, data.get("rpc_layer"))
