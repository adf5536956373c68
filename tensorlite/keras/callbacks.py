"""`tf.keras.callbacks`: hooks that `fit`, `evaluate` and `predict` call around epochs and
batches.

A callback sees the model through a small interface: `model.stop_training`,
`model.optimizer.learning_rate`, `model.save(filepath)`, `model.save_weights(filepath)`,
`model.get_weights()`, `model.set_weights(weights)`. Logs are dicts of Python floats.

Example:
    >>> stop = tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=2)
    >>> model.fit(x, y, validation_split=0.2, callbacks=[stop])  # doctest: +SKIP
"""
import collections
import csv
import inspect
import os
import sys
import warnings

import numpy as np

from tensorlite.keras.backup_and_restore import BackupAndRestore  # noqa: F401 - a callback
from tensorlite.keras.callback import Callback
from tensorlite.keras.utils.progbar import Progbar


_HOOKS = ("on_batch_begin", "on_batch_end", "on_epoch_begin", "on_epoch_end",
          "on_train_batch_begin", "on_train_batch_end", "on_test_batch_begin",
          "on_test_batch_end", "on_predict_batch_begin", "on_predict_batch_end",
          "on_train_begin", "on_train_end", "on_test_begin", "on_test_end",
          "on_predict_begin", "on_predict_end")


class CallbackList:
    """Calls each hook on every callback in order; optionally adds the History and the
    ProgbarLogger that fit uses (the progress bar first, so it finishes its line before
    other callbacks print)."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None,
                 **params):
        self.callbacks = list(callbacks) if callbacks else []
        self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
        self._progbar = next((c for c in self.callbacks if isinstance(c, ProgbarLogger)),
                             None)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger(count_mode="steps")
            self.callbacks.insert(0, self._progbar)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        self.model = None
        self.params = {}
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback):
        self.callbacks.append(callback)
        if self.model is not None:
            callback.set_model(self.model)
        if self.params:
            callback.set_params(self.params)

    def set_params(self, params):
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model):
        self.model = model
        if self._history is not None:
            model.history = self._history
        for c in self.callbacks:
            c.set_model(model)

    def __iter__(self):
        return iter(self.callbacks)

    def __len__(self):
        return len(self.callbacks)


def _dispatcher(hook):
    takes_index = hook not in ("on_train_begin", "on_train_end", "on_test_begin",
                               "on_test_end", "on_predict_begin", "on_predict_end")

    if takes_index:
        def call(self, index, logs=None):
            logs = {} if logs is None else logs
            for c in self.callbacks:
                getattr(c, hook)(index, logs)
    else:
        def call(self, logs=None):
            logs = {} if logs is None else logs
            for c in self.callbacks:
                getattr(c, hook)(logs)
    call.__name__ = hook
    return call


for _hook in _HOOKS:
    setattr(CallbackList, _hook, _dispatcher(_hook))


# -- History and the progress bar ------------------------------------------------------------
class History(Callback):
    """Records each epoch's logs: `history.history['loss']` is the list of epoch losses."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if self.model is not None:
            self.model.history = self


class ProgbarLogger(Callback):
    """Prints the progress bar (and 'Epoch i/n' headers) from the logs. Logs from fit are
    running values already, so every log entry is shown as given (stateful)."""

    def __init__(self, count_mode="samples", stateful_metrics=None):
        super().__init__()
        if count_mode not in ("samples", "steps"):
            raise ValueError(f"Unknown `count_mode`: {count_mode}. Expected values are "
                             f"['samples', 'steps']")
        self.use_steps = count_mode == "steps"
        self._extra_stateful = set(stateful_metrics) if stateful_metrics else None
        self.verbose = 1
        self.epochs = 1
        self.progbar = None
        self.target = None
        self.seen = 0
        self._in_fit = False

    def set_params(self, params):
        super().set_params(params)
        self.verbose = params.get("verbose", 1)
        self.epochs = params.get("epochs", 1)
        if self.use_steps:
            self.target = params.get("steps")
        else:
            self.target = params.get("samples", params.get("steps"))

    def _new_bar(self, target=None):
        self.seen = 0
        self.progbar = Progbar(target=self.target if target is None else target,
                               verbose=self.verbose, stateful_metrics=self._extra_stateful,
                               unit_name="step" if self.use_steps else "sample")

    def _values(self, logs):
        """(name, value) pairs to show; fit's logs are running values, shown as given."""
        values = [(k, v) for k, v in logs.items() if _is_number(v)]
        self.progbar.stateful_metrics.update(k for k, _ in values)
        return values

    def _batch(self, batch, logs):
        if self.progbar is None:
            self._new_bar()
        logs = dict(logs or {})
        if self.use_steps:
            self.seen = batch + 1
        else:
            self.seen += logs.pop("size", 1) * logs.pop("num_steps", 1)
        logs.pop("batch", None)
        if self.verbose == 1:
            self.progbar.update(self.seen, self._values(logs), finalize=False)

    def _finish(self, logs):
        if self.progbar is None:
            self._new_bar()
        if self.target is None:
            self.target = self.seen
            self.progbar.target = self.seen
        self.progbar.update(self.target, self._values(logs or {}), finalize=True)
        self.progbar = None

    def on_train_begin(self, logs=None):
        self._in_fit = True

    def on_train_end(self, logs=None):
        self._in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        self.progbar = None
        if self.verbose and self.epochs > 1:
            sys.stdout.write(f"Epoch {epoch + 1}/{self.epochs}\n")
            sys.stdout.flush()

    def on_train_batch_end(self, batch, logs=None):
        self._batch(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finish(logs)

    def on_test_begin(self, logs=None):
        if not self._in_fit:
            self.progbar = None

    def on_test_batch_end(self, batch, logs=None):
        if not self._in_fit:
            self._batch(batch, logs)

    def on_test_end(self, logs=None):
        if not self._in_fit:
            self._finish(logs)

    def on_predict_begin(self, logs=None):
        self.progbar = None

    def on_predict_batch_end(self, batch, logs=None):
        self._batch(batch, None)

    def on_predict_end(self, logs=None):
        self._finish(None)


def _is_number(v):
    try:
        float(np.asarray(v))
        return np.ndim(v) == 0
    except (TypeError, ValueError):
        return False


# -- monitoring helpers -----------------------------------------------------------------------
def _monitor_op(cls_name, monitor, mode, auto_max):
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{cls_name} mode {mode} is unknown, fallback to auto mode.",
                      stacklevel=3)
        mode = "auto"
    if mode == "max" or (mode == "auto" and auto_max(monitor)):
        return np.greater
    return np.less


def _float_or_none(logs, key):
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
            current = _float_or_none(logs, self.monitor)
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
        value = _float_or_none(logs, self.monitor)
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
        current = _float_or_none(logs, self.monitor)
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


# -- CSVLogger, LambdaCallback, TerminateOnNaN ---------------------------------------------------
class CSVLogger(Callback):
    """Streams epoch results to a CSV file: a header 'epoch,<sorted log keys>', then one row
    per epoch ('NA' for keys missing from an epoch)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        mode = "w"
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not f.readline()
            mode = "a"
        self.csv_file = open(self.filename, mode, newline="")  # noqa: SIM115 - kept open
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if getattr(self.model, "stop_training", False):
            logs = {k: logs.get(k, "NA") for k in self.keys}
        if self.writer is None:
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys,
                                         delimiter=self.sep, lineterminator="\n")
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict(epoch=epoch)
        row.update((k, _csv_value(logs.get(k, "NA"))) for k in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None:
            self.csv_file.close()
        self.csv_file = None
        self.writer = None


def _csv_value(v):
    if isinstance(v, str):
        return v
    a = np.asarray(v)
    if a.ndim:
        return '"[%s]"' % ", ".join(str(x) for x in a.reshape(-1))
    return v


class LambdaCallback(Callback):
    """A callback from plain functions: on_epoch_begin/on_epoch_end(epoch, logs),
    on_batch_begin/on_batch_end(batch, logs), on_train_begin/on_train_end(logs), and any
    other hook by keyword."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None,
                 on_batch_end=None, on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        hooks = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
                     on_batch_begin=on_batch_begin, on_batch_end=on_batch_end,
                     on_train_begin=on_train_begin, on_train_end=on_train_end)
        unknown = set(kwargs) - set(_HOOKS)
        if unknown:
            raise TypeError(f"LambdaCallback got unknown hooks {sorted(unknown)}; known: "
                            f"{list(_HOOKS)}")
        hooks.update(kwargs)
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch loss is NaN or infinite."""

    def __init__(self):
        super().__init__()
        self._supports_tf_logs = True

    def on_batch_end(self, batch, logs=None):
        loss = _float_or_none(logs, "loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class TensorBoard(Callback):
    """`tf.keras.callbacks.TensorBoard`: writes fit's metrics (and weight histograms) as
    TensorBoard event files, train ones under `log_dir/train` and validation ones under
    `log_dir/validation`.

    Epoch metrics are tagged 'epoch_<metric>' at step = epoch; with `update_freq='batch'`
    or an int N, batch metrics are tagged 'batch_<metric>' every N batches at step = the
    number of batches trained so far. `histogram_freq=N` writes one histogram per weight
    every N epochs. `profile_batch=N` or `(start, stop)` (or `'150, 160'`) runs
    `tf.profiler` from the start of the start-th batch of the run (counted from 1 over all
    epochs, as Keras) to the end of the stop-th, writing the profile under
    `log_dir/plugins/profile/`; fit marks each step with `Trace('train', step_num=...)`.
    Profiling problems (another profiler running, an unwritable log_dir, a range the run never
    reaches) are warnings: training goes on. `write_graph=True` (the default) writes, at the
    start of training, the model's JSON config tagged 'keras' (TensorBoard's conceptual
    graph; Sequential and functional models only, as Keras) and, after the first batch, the
    op graph of the traced train step (forward, loss and gradients) as the run's graph;
    with `run_eagerly=True` there is no op graph, as in Keras. Not available in tensorlite:
    embeddings.
    """

    _DEPRECATED_KWARGS = ("write_grads", "embeddings_layer_names", "batch_size")

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None, **kwargs):
        super().__init__()
        self._supports_tf_logs = True
        unknown = set(kwargs) - set(self._DEPRECATED_KWARGS)
        if unknown:
            raise ValueError(f"Unrecognized arguments in `TensorBoard` Callback: "
                             f"{sorted(unknown)}")
        for key in kwargs:
            warnings.warn(f"TensorBoard: `{key}` is deprecated and ignored", stacklevel=2)
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = _tb_nonneg_int(histogram_freq, "histogram_freq")
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = _tb_update_freq(update_freq)
        self.embeddings_freq = _tb_nonneg_int(embeddings_freq, "embeddings_freq")
        self.embeddings_metadata = embeddings_metadata
        self._init_profile_batch(profile_batch)
        if self.embeddings_freq:
            warnings.warn("TensorBoard: embeddings are not available yet in tensorlite; "
                          "`embeddings_freq` is ignored", stacklevel=2)
        self._log_write_dir = self.log_dir
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self._writers = {}
        self._global_train_batch = 0
        self._epoch = 0
        self._epoch_start = None
        self._batch_start = None
        self._profiling = False
        self._profiled_batches = 0
        self._should_write_train_graph = False

    def _init_profile_batch(self, profile_batch):
        message = ("profile_batch must be a non-negative integer or 2-tuple of positive "
                   "integers. A pair of positive integers signifies a range of batches to "
                   f"profile. Found: {profile_batch}")
        value = profile_batch
        try:
            if isinstance(value, str):
                value = [int(part) for part in value.split(",")]
                value = value[0] if len(value) == 1 else value  # '3' as 3 (Keras refuses)
            if isinstance(value, (bool, np.bool_)):
                raise ValueError(message)
            if isinstance(value, (int, np.integer)):
                start = stop = int(value)
            elif isinstance(value, (tuple, list)) and len(value) == 2:
                start, stop = (_tb_int(v, message) for v in value)
            else:
                raise ValueError(message)
        except (TypeError, ValueError):
            raise ValueError(message) from None
        if start < 0 or stop < start:
            raise ValueError(message)
        self._start_batch, self._stop_batch = start, stop
        self._should_trace = not (start == 0 and stop == 0)

    # -- profiler --------------------------------------------------------------------------------
    def _start_profiler(self):
        from tensorlite import profiler  # noqa: PLC0415 - upper layer
        from tensorlite.framework import errors  # noqa: PLC0415
        try:
            profiler.experimental.start(self._log_write_dir)
        except (errors.OpError, ValueError) as e:
            warnings.warn(f"TensorBoard: failed to start the profiler for profile_batch="
                          f"{self._profile_range()}: {getattr(e, 'message', e)}; training "
                          f"continues without a profile", stacklevel=3)
            return
        self._profiling = True
        self._profiled_batches = 0

    def _stop_profiler(self):
        from tensorlite import profiler  # noqa: PLC0415
        from tensorlite.framework import errors  # noqa: PLC0415
        self._profiling = False
        try:
            profiler.experimental.stop()
        except errors.OpError as e:
            warnings.warn(f"TensorBoard: failed to save the profile of profile_batch="
                          f"{self._profile_range()}: {e.message}", stacklevel=3)

    def _profile_range(self):
        return f"({self._start_batch}, {self._stop_batch})"

    # -- writers ---------------------------------------------------------------------------------
    def _writer(self, which):
        writer = self._writers.get(which)
        if writer is None or writer._closed:
            from tensorlite import summary  # noqa: PLC0415 - upper layer, protobuf optional
            path = self._train_dir if which == "train" else self._val_dir
            writer = self._writers[which] = summary.create_file_writer(path)
        return writer

    def _close_writers(self):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    # -- hooks -----------------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._writer("train")
        if self.write_graph:
            self._write_keras_model_summary()
            self._should_write_train_graph = True

    def on_train_end(self, logs=None):
        if self._profiling:
            warnings.warn(f"TensorBoard: training ended after batch {self._global_train_batch}, "
                          f"before the end of profile_batch={self._profile_range()}; the "
                          f"profile covers the {self._profiled_batches} batches run",
                          stacklevel=2)
            self._stop_profiler()
        elif self._should_trace and self._global_train_batch < self._start_batch:
            warnings.warn(f"TensorBoard: profile_batch={self._profile_range()} was never "
                          f"reached: training ran {self._global_train_batch} batches, so "
                          f"nothing was profiled. Choose batches within the run.",
                          stacklevel=2)
        self._close_writers()

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        self._epoch_start = _tb_now()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self._should_trace and self._global_train_batch == self._start_batch:
            self._start_profiler()
        self._batch_start = _tb_now()

    def on_train_batch_end(self, batch, logs=None):
        if self._should_write_train_graph:
            self._should_write_train_graph = False
            self._write_keras_model_train_graph()
        if self._profiling:
            self._profiled_batches += 1
            if self._global_train_batch >= self._stop_batch:
                self._stop_profiler()
        if self.update_freq == "epoch" or self._global_train_batch % self.update_freq:
            return
        from tensorlite import summary  # noqa: PLC0415
        step = self._global_train_batch
        with self._writer("train").as_default():
            for name, value in _tb_scalars(logs).items():
                summary.scalar("batch_" + name, value, step=step)
            if self.write_steps_per_second and self._batch_start is not None:
                elapsed = max(_tb_now() - self._batch_start, 1e-9)
                summary.scalar("batch_steps_per_second", 1.0 / elapsed, step=step)

    # -- graphs ----------------------------------------------------------------------------------
    def _write_keras_model_summary(self):
        """The model's JSON for the conceptual graph (tag 'keras', step 0); subclassed
        models have no config and are skipped quietly, as in Keras."""
        from tensorlite.summary import graph_summaries  # noqa: PLC0415
        json_string = _tb_model_json(self.model)
        if json_string is None:
            return
        from tensorlite import summary  # noqa: PLC0415
        with self._writer("train").as_default(), summary.record_if(True):
            graph_summaries.keras_model_json("keras", json_string, step=0)

    def _write_keras_model_train_graph(self):
        """The traced train step's op graph as the train run's graph."""
        traced = getattr(self.model, "_traced_train_graph", None)  # a tensorlite Model
        graph = traced() if traced is not None else None
        if graph is None:
            return
        from tensorlite import summary  # noqa: PLC0415
        with self._writer("train").as_default(), summary.record_if(True):
            try:
                summary.graph(graph)
            except Exception as e:  # noqa: BLE001 - a summary must never stop training
                warnings.warn(f"TensorBoard: the train step's graph could not be written: "
                              f"{e}", stacklevel=3)

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch_metrics(epoch, logs)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _log_epoch_metrics(self, epoch, logs):
        from tensorlite import summary  # noqa: PLC0415
        scalars = _tb_scalars(logs)
        train = {k: v for k, v in scalars.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in scalars.items() if k.startswith("val_")}
        lr = self._learning_rate()
        if lr is not None:
            train.setdefault("learning_rate", lr)
        if self.write_steps_per_second and self._epoch_start is not None:
            steps = self.params.get("steps") if self.params else None
            elapsed = _tb_now() - self._epoch_start
            if steps and elapsed > 0:
                train["steps_per_second"] = steps / elapsed
        with self._writer("train").as_default():
            for name, value in train.items():
                summary.scalar("epoch_" + name, value, step=epoch)
        if val:
            iterations = self._iterations()
            with self._writer("validation").as_default():
                for name, value in val.items():
                    summary.scalar("epoch_" + name, value, step=epoch)
                    if iterations is not None:
                        summary.scalar(f"evaluation_{name}_vs_iterations", value,
                                       step=iterations)

    def _log_weights(self, epoch):
        from tensorlite import summary  # noqa: PLC0415
        with self._writer("train").as_default():
            for layer in getattr(self.model, "layers", ()):
                for weight in getattr(layer, "weights", ()):
                    name = _tb_weight_name(weight)
                    values = np.asarray(weight.numpy())
                    if values.size and not np.all(np.isfinite(values)):
                        continue  # a diverged run must still finish; TensorBoard can't bin NaN
                    summary.histogram(name, values, step=epoch)
                    if self.write_images:
                        image = _tb_weight_image(values)
                        if image is not None:
                            summary.image(name + "/image", image, step=epoch)

    def _learning_rate(self):
        opt = getattr(self.model, "optimizer", None)
        lr = getattr(opt, "learning_rate", None) if opt is not None else None
        if lr is None:
            return None
        try:
            if callable(lr) and not hasattr(lr, "numpy"):
                lr = lr(getattr(opt, "iterations", 0))
            value = np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr)
            return float(value) if value.shape == () and value.dtype.kind in "iuf" else None
        except Exception:  # noqa: BLE001 - optional summary, never break training for it
            return None

    def _iterations(self):
        opt = getattr(self.model, "optimizer", None)
        it = getattr(opt, "iterations", None) if opt is not None else None
        if it is None:
            return None
        try:
            return int(np.asarray(it.numpy() if hasattr(it, "numpy") else it))
        except (TypeError, ValueError):
            return None


def _tb_model_json(model):
    """`model.to_json()`, or for a Sequential / functional model its config in the layout
    of Keras's to_json (which TensorBoard's graph plugin reads); None for a subclassed
    model (no config) or a config that is not JSON."""
    import json  # noqa: PLC0415 - kept local to the TensorBoard section
    from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
    from tensorlite.keras.engine.sequential import Sequential  # noqa: PLC0415
    if not isinstance(model, (Functional, Sequential)):
        return None
    try:
        if hasattr(model, "to_json"):
            return model.to_json()
        entry = _tb_keras_layout({"class_name": type(model).__name__,
                                  "config": model.get_config()})
        entry.update(keras_version="tensorlite", backend="tensorflow")
        return json.dumps(entry, default=_tb_json_default)
    except Exception as e:  # noqa: BLE001 - a summary must never stop training
        warnings.warn(f"TensorBoard: the model failed to serialize as JSON, so the "
                      f"conceptual graph is not written: {e}", stacklevel=4)
        return None


def _tb_json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "as_list"):
        return o.as_list()
    return getattr(o, "name", str(o))


def _tb_keras_layout(entry):
    """A {class_name, config} model entry with functional configs (tensorlite's `nodes` and
    refs) given Keras's wiring: InputLayer entries, each layer's `inbound_nodes` (args of
    `__keras_tensor__` with a `keras_history`), `input_layers` and `output_layers`.
    Nested models are converted too; tensorlite's own keys are kept."""
    config = dict(entry.get("config") or {})
    layers = [_tb_keras_layout(layer) if isinstance(layer.get("config"), dict) and
              "layers" in layer["config"] else dict(layer)
              for layer in config.get("layers", [])]
    config["layers"] = layers
    if "nodes" in config and "inputs" in config:
        _tb_functional_wiring(config)
    return {**entry, "config": config}


def _tb_functional_wiring(config):
    layers, nodes = config["layers"], config["nodes"]
    names = [layer["config"].get("name", f"layer_{i}") for i, layer in enumerate(layers)]
    node_index, seen = [], {}  # a node's index among the calls of its layer
    for node in nodes:
        node_index.append(seen.get(node["layer"], 0))
        seen[node["layer"]] = node_index[-1] + 1
    inputs = config["inputs"]

    def history(ref):
        if ref[0] == "input":
            return [inputs[ref[1]]["name"], 0, 0]
        return [names[nodes[ref[1]]["layer"]], node_index[ref[1]], ref[2]]

    def tensor(ref):
        return {"class_name": "__keras_tensor__", "config": {"keras_history": history(ref)}}

    def args(x):
        if isinstance(x, dict) and "ref" in x:
            return tensor(x["ref"])
        if isinstance(x, dict):
            return [args(v) for v in x.values()]
        if isinstance(x, (list, tuple)):
            return [args(v) for v in x]
        return x
    for layer in layers:
        layer.setdefault("inbound_nodes", [])
    for node in nodes:
        layer = layers[node["layer"]]
        layer["name"] = names[node["layer"]]
        layer["inbound_nodes"].append({"args": [args(node["inputs"])], "kwargs": {}})
    config["layers"] = [{"class_name": "InputLayer", "name": i["name"], "inbound_nodes": [],
                         "config": {"name": i["name"], "batch_shape": i["shape"],
                                    "dtype": i["dtype"]}} for i in inputs] + layers
    config["input_layers"] = [[i["name"], 0, 0] for i in inputs]
    config["output_layers"] = [history(ref) for ref in config["outputs"]]


def _tb_now():
    import time  # noqa: PLC0415 - kept local to the TensorBoard section
    return time.perf_counter()


def _tb_int(value, message):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(message)
    return int(value)


def _tb_nonneg_int(value, what):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < 0:
        raise ValueError(f"TensorBoard: `{what}` must be a non-negative integer, got "
                         f"{value!r}")
    return int(value)


def _tb_update_freq(update_freq):
    if update_freq == "batch":
        return 1
    if update_freq == "epoch":
        return "epoch"
    if isinstance(update_freq, (int, np.integer)) and not isinstance(update_freq, bool) \
            and update_freq > 0:
        return int(update_freq)
    raise ValueError(f"TensorBoard: `update_freq` must be 'epoch', 'batch' or a positive "
                     f"integer (a number of batches), got {update_freq!r}")


def _tb_scalars(logs):
    """The scalar numeric entries of `logs` as floats (others, e.g. per-class arrays, are
    not scalars TensorBoard can plot)."""
    out = {}
    for name, value in (logs or {}).items():
        try:
            arr = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        except (TypeError, ValueError):
            continue
        if arr.shape == () and arr.dtype.kind in "biuf":
            out[name] = float(arr)
    return out


def _tb_weight_name(weight):
    name = getattr(weight, "name", None) or "weight"
    return name[:-2] if name.endswith(":0") else name.replace(":", "_")


def _tb_weight_image(values):
    """A weight as a [1, h, w, 1] grayscale image (vectors become one row; a 2-D kernel is
    laid out wide), or None for shapes with no natural picture."""
    if values.ndim == 1:
        values = values[None, :]
    elif values.ndim == 2:
        if values.shape[0] > values.shape[1]:
            values = values.T
    else:
        return None
    if not values.size:
        return None
    lo, hi = float(values.min()), float(values.max())
    scaled = (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values, dtype=np.float64)
    return scaled.astype(np.float32)[None, :, :, None]


class BaseLogger(Callback):
    """Deprecated in TF 2 (fit's logs are already averaged); kept as a no-op for old code."""

    def __init__(self, stateful_metrics=None):
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or ())


__all__ = ["Callback", "CallbackList", "History", "ProgbarLogger", "ModelCheckpoint",
           "EarlyStopping", "ReduceLROnPlateau", "LearningRateScheduler", "CSVLogger",
           "LambdaCallback", "TerminateOnNaN", "TensorBoard", "BaseLogger", "BackupAndRestore"]
