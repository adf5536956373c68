"""`tf.data.experimental.AutoShardPolicy`, `DistributeOptions` (`Options().experimental_distribute`)
and `ExternalStatePolicy`.

What each auto-shard policy does in tensorlite: `strategy.experimental_distribute_dataset`
splits every global batch along its first axis among all replicas of all workers, each
worker keeping its replicas' parts — the element-level sharding TF's DATA policy gives, with
every worker running the whole pipeline. That is what happens for AUTO, DATA and HINT alike;
FILE (one worker per input file) and OFF (every worker sees every element) are recorded on the
options but not acted on: tensorlite's distributed input does not read this option yet.
"""
import enum

from tensorlite.data.options import _OptionGroup

SHARD_HINT = -1  # tf.data.experimental.SHARD_HINT: the `num_shards` placeholder of HINT


class AutoShardPolicy(enum.IntEnum):
    """How a multi-worker strategy shards a dataset (TF's values)."""
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    """What checkpointing does with a pipeline whose functions hold external state (a plain
    Enum, as TF's: not an int)."""
    WARN = 0
    IGNORE = 1
    FAIL = 2


class DistributeOptions(_OptionGroup):
    """`tf.data.experimental.DistributeOptions`: `auto_shard_policy` (default AUTO) and
    `num_devices`."""
    _fields = {"auto_shard_policy": AutoShardPolicy.AUTO, "num_devices": None}

    def __setattr__(self, key, value):
        if key == "auto_shard_policy":
            try:
                value = AutoShardPolicy(value)
            except ValueError:
                raise ValueError(f"auto_shard_policy must be a "
                                 f"tf.data.experimental.AutoShardPolicy, got {value!r}") from None
        super().__setattr__(key, value)

