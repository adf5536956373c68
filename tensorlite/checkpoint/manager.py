"""`tf.train.CheckpointManager`: numbered saves in one directory, the newest `max_to_keep`
kept, recorded in the directory's `checkpoint` state file (TensorFlow's text form).

Example:
    >>> manager = tf.train.CheckpointManager(ckpt, "/tmp/ckpts", max_to_keep=3)
    >>> manager.save()
    '/tmp/ckpts/ckpt-1'
    >>> ckpt.restore(manager.latest_checkpoint)
"""
import os
import time

from tensorlite.checkpoint.state import get_checkpoint_state, update_state


class CheckpointManager:
    """Saves `checkpoint` as `directory/checkpoint_name-N`, deleting old ones."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None,
                 init_fn=None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"max_to_keep must be None or positive, got {max_to_keep}")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter, self._interval = step_counter, checkpoint_interval
        self._init_fn = init_fn
        self._last_step = None
        state = get_checkpoint_state(self._directory)
        self._kept, self._last_preserved = [], time.time()
        if state is not None:
            times = list(state.all_model_checkpoint_timestamps)
            paths = list(state.all_model_checkpoint_paths)
            times = times if len(times) == len(paths) else [time.time()] * len(paths)
            self._kept = [(p, t) for p, t in zip(paths, times)
                          if os.path.exists(p + ".index")]
            self._last_preserved = state.last_preserved_timestamp or time.time()

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoints(self):
        """The kept checkpoints' prefixes, oldest first."""
        return [p for p, _ in self._kept]

    @property
    def latest_checkpoint(self):
        return self._kept[-1][0] if self._kept else None

    @property
    def checkpoint_interval(self):
        return self._interval

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Saves a new checkpoint; returns its prefix (None when skipped by the interval)."""
        if self._interval is not None and check_interval:
            step = int(self._step_counter.numpy())
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        if checkpoint_number is None:
            checkpoint_number = int(counter.numpy())
        elif hasattr(checkpoint_number, "numpy"):
            checkpoint_number = int(checkpoint_number.numpy())
        path = self._checkpoint.write(f"{self._prefix}-{int(checkpoint_number)}")
        now = time.time()
        self._kept = [(p, t) for p, t in self._kept if p != path] + [(path, now)]
        self._sweep()
        update_state(self._directory, path, self.checkpoints, [t for _, t in self._kept],
                     self._last_preserved)
        return path

    def _sweep(self):
        """Deletes the oldest checkpoints beyond max_to_keep (those kept by
        keep_checkpoint_every_n_hours survive on disk, unrecorded, as in TF)."""
        if self._max_to_keep is None:
            return
        while len(self._kept) > self._max_to_keep:
            path, stamp = self._kept.pop(0)
            if self._keep_hours and stamp - self._last_preserved > self._keep_hours * 3600:
                self._last_preserved = stamp
                continue
            _delete(path)

    def restore_or_initialize(self):
        """Restores the latest checkpoint, or runs `init_fn` when there is none; returns
        the restored path or None."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None


def _delete(prefix):
    directory = os.path.dirname(prefix) or "."
    base = os.path.basename(prefix)
    names = sorted(os.listdir(directory), key=lambda n: not n.endswith(".index"))
    for name in names:  # the index first: without it the checkpoint is simply gone
        if name == base + ".index" or name.startswith(base + ".data-"):
            try:
                os.remove(os.path.join(directory, name))
            except FileNotFoundError:
                pass
