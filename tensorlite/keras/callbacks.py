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
import os
import sys

import numpy as np

from tensorlite.keras.backup_and_restore import BackupAndRestore  # noqa: F401 - a callback
from tensorlite.keras.callback import Callback
from tensorlite.keras.monitor_callbacks import (  # noqa: F401 - callbacks
    EarlyStopping, LearningRateScheduler, ModelCheckpoint, ReduceLROnPlateau, logged_float)
from tensorlite.keras.tensorboard_callback import TensorBoard  # noqa: F401 - a callback
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
        loss = logged_float(logs, "loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class BaseLogger(Callback):
    """Deprecated in TF 2 (fit's logs are already averaged); kept as a no-op for old code."""

    def __init__(self, stateful_metrics=None):
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or ())


__all__ = ["Callback", "CallbackList", "History", "ProgbarLogger", "ModelCheckpoint",
           "EarlyStopping", "ReduceLROnPlateau", "LearningRateScheduler", "CSVLogger",
           "LambdaCallback", "TerminateOnNaN", "TensorBoard", "BaseLogger", "BackupAndRestore"]
