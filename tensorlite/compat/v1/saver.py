"""`tf.compat.v1.train.Saver`: saves and restores a Session's variable values through the
checkpoint module's public API (tf.train.Checkpoint's write/read), keyed by variable name.

Example:
    >>> saver = tf.compat.v1.train.Saver()
    >>> path = saver.save(sess, "/tmp/model.ckpt", global_step=step)  # doctest: +SKIP
    >>> saver.restore(sess, path)                                      # doctest: +SKIP
"""
import os

import numpy as np

from tensorlite.compat.v1.variables import global_variables
from tensorlite.framework import errors


class _SessionValue:
    """A variable's value in one Session, shaped like a variable for tf.train.Checkpoint."""

    _is_variable = True

    def __init__(self, session, variable):
        self._session, self._variable = session, variable
        self.shape, self.dtype = variable.shape, variable.dtype

    def numpy(self):
        return np.asarray(self._session._value_of(self._variable))

    def assign(self, value):
        arr = np.array(value, dtype=self._variable.dtype.as_numpy_dtype, copy=True)
        self._session._state[id(self._variable)] = (self._variable, arr)


class Saver:
    """`tf.compat.v1.train.Saver(var_list=None)`: save(sess, path, global_step) and
    restore(sess, path)."""

    def __init__(self, var_list=None, max_to_keep=5, **_):
        if isinstance(var_list, dict):
            self._vars = dict(var_list)
        else:
            found = list(var_list) if var_list is not None else global_variables()
            self._vars = {v.name.split(":")[0]: v for v in found}
        if not self._vars:
            raise ValueError("No variables to save")

    def _checkpoint(self, sess):
        from tensorlite.checkpoint import Checkpoint  # noqa: PLC0415 - loaded when used
        return Checkpoint(**{name.replace("/", "."): _SessionValue(sess, v)
                             for name, v in self._vars.items()})

    def save(self, sess, save_path, global_step=None, **_):
        """Writes the session's values to `save_path[-global_step]`; returns that prefix."""
        if global_step is not None:
            step = global_step if isinstance(global_step, int) else \
                int(sess.run(global_step))
            save_path = f"{os.fspath(save_path)}-{step}"
        return self._checkpoint(sess).write(save_path)

    def restore(self, sess, save_path):
        """Loads the values saved at `save_path` into the session (every variable must be
        in the checkpoint: NotFoundError otherwise)."""
        status = self._checkpoint(sess).read(save_path)
        try:
            status.assert_existing_objects_matched()
        except AssertionError as e:
            raise errors.NotFoundError(None, None, f"restoring from checkpoint {save_path} "
                                       f"failed: {e}") from None
