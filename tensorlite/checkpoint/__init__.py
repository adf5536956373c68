"""Checkpointing in TensorFlow's format: tf.train.Checkpoint, CheckpointManager, readers."""
from tensorlite.checkpoint.checkpoint import Checkpoint  # noqa: F401
from tensorlite.checkpoint.manager import CheckpointManager  # noqa: F401
from tensorlite.checkpoint.reader import (CheckpointReader, list_variables,  # noqa: F401
                                          load_checkpoint, load_variable)
from tensorlite.checkpoint.state import get_checkpoint_state, latest_checkpoint  # noqa: F401
