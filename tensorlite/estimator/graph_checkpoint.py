"""Checkpoints of a graph-mode Estimator, as TensorFlow's Estimator writes them:
`model_dir/model.ckpt-<step>.index` + `.data-00000-of-00001` (a tensor bundle keyed by each
global variable's op name: `dense/kernel`, `global_step`, ...) and the `checkpoint` state
file naming the latest, so real TensorFlow's `tf.train.load_checkpoint(model_dir)` and a
TF Estimator read them. At most `keep_checkpoint_max` are kept (the oldest are removed).

Example:
    >>> prefix = save(sess, tf.compat.v1.global_variables(), "/tmp/m", step=10)
    >>> restore(sess, tf.compat.v1.global_variables(), prefix)
"""
import glob
import os

import numpy as np

from tensorlite.checkpoint import state
from tensorlite.framework import errors


def var_key(variable):
    """The checkpoint key of a graph variable: its op name (`dense/kernel`)."""
    name = variable.name
    return name[:-2] if name.endswith(":0") else name


def kind(model_dir):
    """'graph' when model_dir's `checkpoint` file is TF's CheckpointState text (this
    module's), 'eager' when it names an eager Estimator's .npz archive, None without one."""
    try:
        with open(os.path.join(model_dir, state.STATE_FILE), encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return "graph" if text.lstrip().startswith("model_checkpoint_path") else "eager"


def latest(model_dir):
    """The prefix of model_dir's latest TF-format checkpoint, or None (also for an eager
    Estimator's model_dir)."""
    if kind(model_dir) != "graph":
        return None
    found = state.get_checkpoint_state(model_dir)
    if found is None or not found.model_checkpoint_path:
        return None
    prefix = found.model_checkpoint_path
    return prefix if os.path.exists(prefix + ".index") else None


def step_of(prefix):
    """The global step a `model.ckpt-<step>` prefix names."""
    return int(prefix.rsplit("-", 1)[1])


def save(session, variables, model_dir, step, keep_max=5):
    """Writes the session's values of `variables` as model.ckpt-<step>; returns the prefix."""
    from tensorlite.checkpoint import bundle  # noqa: PLC0415 - protobuf, when used
    prefix = os.path.join(model_dir, f"model.ckpt-{int(step)}")
    bundle.write_bundle(prefix, [(var_key(v), session.run(v)) for v in variables])
    old = state.get_checkpoint_state(model_dir)
    paths = [p for p in (list(old.all_model_checkpoint_paths) if old else []) if p != prefix]
    paths.append(prefix)
    if keep_max:
        for gone in paths[:-keep_max]:
            for f in glob.glob(glob.escape(gone) + ".*"):
                os.remove(f)
        paths = paths[-keep_max:]
    state.update_state(model_dir, prefix, paths)
    return prefix


def restore(session, variables, prefix):
    """Loads `prefix`'s values into the session's `variables` (each must be there)."""
    from tensorlite.checkpoint import bundle  # noqa: PLC0415 - protobuf, when used
    reader = bundle.BundleReader(prefix)
    for v in variables:
        key = var_key(v)
        if key not in reader.entries:
            raise errors.NotFoundError(
                None, None, f"Key {key} not found in checkpoint {prefix}: model_fn builds a "
                f"different model than the one saved in this model_dir (use a new model_dir "
                f"or warm_start_from)")
        assign_from(session, v, reader, key, f"checkpoint {prefix}")


def assign_from(session, variable, reader, key, where):
    """Sets `variable` in `session` to the checkpoint entry `key`, whose shape must match."""
    value = np.asarray(reader.tensor(key), dtype=variable.dtype.as_numpy_dtype)
    if tuple(value.shape) != tuple(variable.shape.as_list()):
        raise errors.InvalidArgumentError(
            None, None, f"{where}: {key} has shape {list(value.shape)} but the model_fn's "
                        f"variable {variable.name} has shape {variable.shape.as_list()}")
    session._state[id(variable)] = (variable, value.copy())
