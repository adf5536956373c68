"""The `checkpoint` state file of a checkpoint directory: a CheckpointState message in
protobuf's text format, as TensorFlow writes it (paths relative to the directory):

    model_checkpoint_path: "ckpt-3"
    all_model_checkpoint_paths: "ckpt-2"
    all_model_checkpoint_paths: "ckpt-3"
    all_model_checkpoint_timestamps: 1700000000.5
    ...

Example:
    >>> update_state("/tmp/ckpts", "/tmp/ckpts/ckpt-1", ["/tmp/ckpts/ckpt-1"])
    >>> latest_checkpoint("/tmp/ckpts")
    '/tmp/ckpts/ckpt-1'
"""
import os
import time

from tensorlite.framework import atomic_files as atomic
from tensorlite.framework import errors

STATE_FILE = "checkpoint"


def _relative(directory, path):
    path = os.fspath(path)
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory):
        return os.path.basename(path)
    return path


def _absolute(directory, path):
    return path if os.path.isabs(path) else os.path.join(directory, path)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """`tf.train.get_checkpoint_state`: the CheckpointState (paths made absolute), or None
    when the directory has no state file."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    path = os.path.join(checkpoint_dir, latest_filename or STATE_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    from google.protobuf import text_format  # noqa: PLC0415
    from tensorlite.checkpoint.protos import CheckpointState  # noqa: PLC0415
    state = CheckpointState()
    try:
        text_format.Parse(text, state)
    except text_format.ParseError as e:
        raise errors.DataLossError(None, None, f"{path} is not a valid checkpoint state file "
                                   f"({e}); remove it or rewrite it with a CheckpointManager"
                                   ) from None
    state.model_checkpoint_path = _absolute(checkpoint_dir, state.model_checkpoint_path)
    paths = [_absolute(checkpoint_dir, p) for p in state.all_model_checkpoint_paths]
    del state.all_model_checkpoint_paths[:]
    state.all_model_checkpoint_paths.extend(paths)
    return state


def update_state(directory, latest, all_paths, timestamps=None, last_preserved=None):
    """Writes `directory/checkpoint` atomically, paths relative to `directory`."""
    from google.protobuf import text_format  # noqa: PLC0415
    from tensorlite.checkpoint.protos import CheckpointState  # noqa: PLC0415
    state = CheckpointState(model_checkpoint_path=_relative(directory, latest))
    state.all_model_checkpoint_paths.extend(_relative(directory, p) for p in all_paths)
    now = time.time()
    state.all_model_checkpoint_timestamps.extend(timestamps or [now] * len(all_paths))
    state.last_preserved_timestamp = now if last_preserved is None else last_preserved
    atomic.write_bytes(os.path.join(directory, STATE_FILE),
                       text_format.MessageToString(state).encode("utf-8"))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """`tf.train.latest_checkpoint`: the prefix of the newest checkpoint recorded in
    `checkpoint_dir/checkpoint`, or None when there is none (or its files are gone)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not state.model_checkpoint_path:
        return None
    path = state.model_checkpoint_path
    return path if os.path.exists(path + ".index") else None
