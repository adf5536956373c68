"""`tf.keras.callbacks.Callback`, the base class of callbacks: every hook a no-op. Its own
module (as Keras 3's callbacks/callback.py) so that callbacks defined in other modules
(backup_and_restore.py) subclass it without importing the callbacks namespace, which
imports them.

Example:
    >>> class Stop(tf.keras.callbacks.Callback):
    ...     def on_epoch_end(self, epoch, logs=None):
    ...         self.model.stop_training = logs["loss"] < 0.1
"""


class Callback:
    """Base class: every hook is a no-op; override the ones you need."""

    def __init__(self):
        self.validation_data = None
        self.model = None
        self.params = {}
        self._chief_worker_only = None
        self._supports_tf_logs = False

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    # Legacy batch hooks: the train-batch hooks call them, as in Keras.
    def on_batch_begin(self, batch, logs=None):
        """Called at the beginning of a training batch (legacy name)."""

    def on_batch_end(self, batch, logs=None):
        """Called at the end of a training batch (legacy name)."""

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of an epoch (training only)."""

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of an epoch with its logs (validation ones prefixed 'val_')."""

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        """Called at the beginning of a batch in evaluate (and fit's validation)."""

    def on_test_batch_end(self, batch, logs=None):
        """Called at the end of a batch in evaluate (and fit's validation)."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Called at the beginning of a batch in predict."""

    def on_predict_batch_end(self, batch, logs=None):
        """Called at the end of a batch in predict."""

    def on_train_begin(self, logs=None):
        """Called at the beginning of training."""

    def on_train_end(self, logs=None):
        """Called at the end of training."""

    def on_test_begin(self, logs=None):
        """Called at the beginning of evaluation or validation."""

    def on_test_end(self, logs=None):
        """Called at the end of evaluation or validation."""

    def on_predict_begin(self, logs=None):
        """Called at the beginning of prediction."""

    def on_predict_end(self, logs=None):
        """Called at the end of prediction."""
