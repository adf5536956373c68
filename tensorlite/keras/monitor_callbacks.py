"""The callbacks that watch a monitored metric or drive the learning rate: ModelCheckpoint,
EarlyStopping, ReduceLROnPlateau and LearningRateScheduler, with their shared helpers (the
monitor's comparison, reading logs, getting and setting the optimizer's learning rate).
Re-exported as `tf.keras.callbacks.*`.
"""
import inspect
import os
import warnings

import numpy as np

from tensorlite.keras.callback import Callback


# -- monitoring helpers -----------------------------------------------------------------------
def _monitor_op(cls_name, monitor, mode, auto_max):
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{cls_name} mode {mode} is unknown, fallback to auto mode.",
                      stacklevel=3)
        mode = "auto"
    if mode == "max" or (mode == "auto" and auto_max(monitor)):
        return np.greater
    return np.less


def logged_float(logs, key):
    """The value logged under `key` as a float, None when it was not logged."""
    v = (logs or {}).get(key)
    return None if v is None else float(np.asarray(v))


def _get_lr(model, who):
    opt = getattr(model, "optimizer", None)
    if opt is None or not hasattr(opt, "learning_rate"):
        raise ValueError(f'{who}: Optimizer must have a "lr" attribute (the model needs an '
                         f'optimizer with a learning_rate).')
    lr = opt.learning_rate
    from tensorlite.keras.optimizers.schedules import LearningRateSchedule  # noqa: PLC0415
    if isinstance(lr, LearningRateSchedule):
        raise TypeError(f"{who}: the optimizer's learning rate is a schedule "
                        f"({type(lr).__name__}), which this callback cannot change; give the "
                        f"optimizer a float learning rate")
    return float(np.asarray(lr))


def _set_lr(model, value):
    opt = model.optimizer
    current = opt.learning_rate
    if hasattr(current, "assign") and not callable(current):
        current.assign(np.asarray(value, dtype=getattr(current.dtype, "as_numpy_dtype",
                                                        np.float32)))
    else:
        opt.learning_rate = float(value)


# -- ModelCheckpoint --------------------------------------------------------------------------
class ModelCheckpoint(Callback):
    """Saves the model (or its weights) every epoch or every `save_freq` batches, at a path
    formatted with the epoch and the logs, e.g. 'ckpt-{epoch:02d}-{val_loss:.2f}.h5';
    with save_best_only, only when `monitor` improves."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch", options=None,
                 initial_value_threshold=None, **kwargs):
        super().__init__()
        self.monitor = monitor
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self.options = options
        self.monitor_op = _monitor_op("ModelCheckpoint", monitor, mode,
                                      lambda m: "acc" in m or m.startswith("fmeasure")
                                      or "auc" in m)
        if initial_value_threshold is not None:
            self.best = float(initial_value_threshold)
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are "
                             f'"epoch" or integer > 0')
        self._batches_since_save = 0
        self._current_epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_since_save += 1
        if self._batches_since_save >= self.save_freq:
            self._batches_since_save = 0
            self._save(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _get_file_path(self, epoch, batch, logs):
        try:
            if batch is None or "batch" in logs:
                return self.filepath.format(epoch=epoch + 1, **logs)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". '
                           f"Reason: {e}; the available keys are 'epoch', 'batch' and the "
                           f"logs: {sorted(logs)}") from None

    def _save(self, epoch, batch, logs):
        logs = dict(logs or {})
        path = self._get_file_path(epoch, batch, logs)
        if self.save_best_only:
            current = logged_float(logs, self.monitor)
            if current is None:
                warnings.warn(f"Can save best model only with {self.monitor} available, "
                              f"skipping.", stacklevel=3)
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from "
                          f"{self.best:.5f}")
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to "
                      f"{current:.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


# -- EarlyStopping ----------------------------------------------------------------------------
class EarlyStopping(Callback):
    """Stops training (model.stop_training = True) when `monitor` has not improved by more
    than `min_delta` for `patience` epochs; can restore the best epoch's weights."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.monitor_op = _monitor_op("EarlyStopping", monitor, mode,
                                      lambda m: m.endswith(("acc", "accuracy", "auc")))
        if self.monitor_op is np.less:
            self.min_delta *= -1
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf if self.monitor_op is np.less else -np.inf
        self.best_weights = None
        self.best_epoch = 0

    def _is_improvement(self, value, reference):
        return bool(self.monitor_op(value - self.min_delta, reference))

    def get_monitor_value(self, logs):
        value = logged_float(logs, self.monitor)
        if value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs or {})}",
                          stacklevel=3)
        return value

    def on_epoch_end(self, epoch, logs=None):
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
                return
        # Not improving, or improving without beating the baseline: after `patience` such
        # epochs, stop.
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose > 0:
                    print("Restoring model weights from the end of the best epoch: "
                          f"{self.best_epoch + 1}.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")


# -- learning-rate callbacks --------------------------------------------------------------------
class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` (not below `min_lr`) when `monitor` has not
    improved by `min_delta` for `patience` epochs, then waits `cooldown` epochs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Got "
                             f"{factor}")
        if "epsilon" in kwargs:
            min_delta = kwargs.pop("epsilon")
        if kwargs:
            raise TypeError(f"ReduceLROnPlateau got unexpected arguments {sorted(kwargs)}")
        self.monitor = monitor
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = min_delta
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.mode = mode
        self._reset()

    def _reset(self):
        if self.mode not in ("auto", "min", "max"):
            warnings.warn(f"Learning rate reduction mode {self.mode} is unknown, fallback to "
                          f"auto mode.", stacklevel=3)
            self.mode = "auto"
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        logs["lr"] = _get_lr(self.model, "ReduceLROnPlateau")
        current = logged_float(logs, self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` "
                          f"which is not available. Available metrics are: "
                          f"{','.join(logs)}", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = logs["lr"]
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    _set_lr(self.model, new_lr)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate "
                              f"to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class LearningRateScheduler(Callback):
    """Sets the learning rate at the start of each epoch to `schedule(epoch, lr)` (or
    `schedule(epoch)`)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose
        self._two_args = _positional_count(schedule) >= 2

    def on_epoch_begin(self, epoch, logs=None):
        lr = _get_lr(self.model, "LearningRateScheduler")
        lr = self.schedule(epoch, lr) if self._two_args else self.schedule(epoch)
        if hasattr(lr, "dtype") and not isinstance(lr, (float, np.floating)):
            if not np.dtype(getattr(lr.dtype, "as_numpy_dtype", lr.dtype)).kind == "f":
                raise ValueError(f"The dtype of `lr` Tensor should be float. Got: {lr.dtype}")
        elif not isinstance(lr, (float, np.floating)):
            raise ValueError(f'The output of the "schedule" function should be float. Got: '
                             f"{lr!r}")
        lr = float(np.asarray(lr))
        _set_lr(self.model, lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = _get_lr(self.model, "LearningRateScheduler")


def _positional_count(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 2
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
