"""`tf.keras.callbacks.BackupAndRestore`: fit survives being killed.

The model's variables, the optimizer's (step counter and slots) and the training position
(epoch, step) are saved with `tf.train.Checkpoint` under `backup_dir` at the end of every
epoch (save_freq="epoch") or every `save_freq` batches. A later fit with the same callback
restores them and continues at the exact epoch and step: earlier epochs are not run again,
and within the epoch the batches already trained are skipped. A successful fit deletes the
backup (delete_checkpoint=True).

Each save is a new checkpoint recorded as the latest only once complete (files written to
temporary names, then renamed), so a kill during a save leaves the previous one.

Example:
    >>> backup = tf.keras.callbacks.BackupAndRestore(backup_dir="/tmp/backup")
    >>> model.fit(x, y, epochs=10, callbacks=[backup])  # doctest: +SKIP
"""
import glob
import os
import shutil

import numpy as np

from tensorlite.checkpoint import Checkpoint, latest_checkpoint
from tensorlite.framework.module import Module
from tensorlite.framework.variables import Variable
from tensorlite.keras.callback import Callback

__all__ = ["BackupAndRestore"]


class _TrainingState(Module):
    def __init__(self):
        super().__init__(name="training_state")
        self.epoch = Variable(np.int64(0), trainable=False, name="epoch")
        self.step = Variable(np.int64(0), trainable=False, name="step")


class BackupAndRestore(Callback):
    """Backs up training state to `backup_dir`; restores it when fit starts again."""

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True,
                 save_before_preemption=False):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0):
            raise ValueError(f"Invalid value for argument `save_freq`. Received: "
                             f"save_freq={save_freq}. Expected either 'epoch' or a positive "
                             f"integer")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.delete_checkpoint = delete_checkpoint
        self.save_before_preemption = save_before_preemption
        self._resume_at = None  # (epoch, step) fit continues from, read in on_train_begin
        self._ckpt = None
        self._batches = 0

    def _checkpoint(self):
        model = self.model
        opt = model.optimizer
        state = _TrainingState()
        if opt is not None:
            opt._create_all_weights(model.trainable_variables)
            hypers = {k: v for k, v in opt._hyper.items() if isinstance(v, Variable)}
            return Checkpoint(model=model, optimizer_weights=list(opt.weights),
                              optimizer_hyper=hypers, training_state=state), state
        return Checkpoint(model=model, training_state=state), state

    def on_train_begin(self, logs=None):
        path = latest_checkpoint(os.path.join(self.backup_dir, "chief"))
        if path is not None and not self.model.built:
            raise ValueError(f"BackupAndRestore found a backup in {self.backup_dir} but the "
                             f"model is not built yet, so its variables cannot be restored: "
                             f"build it before fit (an Input layer, input_shape=..., or "
                             f"model.build(input_shape))")
        self._ckpt, self._state = self._checkpoint() if self.model.built else (None, None)
        self._resume_at = None
        if path is not None:
            self._ckpt.restore(path)
            self._ckpt._ckpt_counter = int(path.rsplit("-", 1)[1])
            self._resume_at = (int(self._state.epoch.numpy()), int(self._state.step.numpy()))
        self._epoch = self._resume_at[0] if self._resume_at else 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches += 1
        if self._batches % self.save_freq == 0:
            self._save(self._epoch, batch + 1)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch + 1, 0)

    def _save(self, epoch, step):
        if self._ckpt is None:  # the model was built by the first batch
            self._ckpt, self._state = self._checkpoint()
        self._state.epoch.assign(np.int64(epoch))
        self._state.step.assign(np.int64(step))
        path = self._ckpt.save(os.path.join(self.backup_dir, "chief", "ckpt"))
        for old in glob.glob(os.path.join(self.backup_dir, "chief", "ckpt-*.index")):
            prefix = old[:-len(".index")]
            if prefix != path and int(prefix.rsplit("-", 1)[1]) < int(path.rsplit("-", 1)[1]):
                for f in glob.glob(prefix + ".*"):
                    os.unlink(f)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.isdir(self.backup_dir):
            shutil.rmtree(self.backup_dir, ignore_errors=True)
