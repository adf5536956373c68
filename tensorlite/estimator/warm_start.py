"""`tf.estimator.WarmStartSettings` and `Estimator(warm_start_from=...)`: a graph-mode
Estimator whose model_dir has no checkpoint yet starts its variables from another model's
checkpoint (TF's warm start), before the first training step.

`vars_to_warm_start` is a regular expression matched from the start of each trainable
variable's name (TF's default '.*': every trainable variable), or a list of them (then
non-trainable variables match too, as in TF); `var_name_to_prev_var_name` renames.
Vocabulary remapping (`var_name_to_vocab_info`) is not implemented.

Example:
    >>> est = tf.estimator.Estimator(model_fn, warm_start_from="/tmp/pretrained")
"""
import collections
import os
import re


from tensorlite.checkpoint.state import latest_checkpoint
from tensorlite.estimator import graph_checkpoint
from tensorlite.framework import errors


class WarmStartSettings(collections.namedtuple(
        "WarmStartSettings", ["ckpt_to_initialize_from", "vars_to_warm_start",
                              "var_name_to_vocab_info", "var_name_to_prev_var_name"])):
    """Where and which variables to warm-start from."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*",
                var_name_to_vocab_info=None, var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("Need to specify ckpt_to_initialize_from.")
        if var_name_to_vocab_info:
            raise NotImplementedError("WarmStartSettings.var_name_to_vocab_info (vocabulary "
                                      "remapping) is not implemented in tensorlite")
        return super().__new__(cls, os.fspath(ckpt_to_initialize_from), vars_to_warm_start,
                               var_name_to_vocab_info, dict(var_name_to_prev_var_name or {}))


def settings(warm_start_from):
    """WarmStartSettings of Estimator's warm_start_from (a path or the settings)."""
    if warm_start_from is None or isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, os.PathLike)):
        return WarmStartSettings(warm_start_from)
    raise ValueError(f"warm_start_from must be a string or a WarmStartSettings, instead got "
                     f"{type(warm_start_from).__name__}")


def _prefix(path):
    if os.path.isdir(path):
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError(f"warm_start_from: no checkpoint in {path}")
        return found
    return path


def _chosen(ws, variables):
    patterns = ws.vars_to_warm_start
    if patterns is None:
        return []
    if isinstance(patterns, str):
        pool, patterns = [v for v in variables if v.trainable], [patterns]
    else:
        pool = list(variables)
    key = lambda v: v.name[:-2] if v.name.endswith(":0") else v.name  # noqa: E731
    return [(key(v), v) for v in pool if any(re.match(p, key(v)) for p in patterns)]


def apply(session, variables, ws):
    """Loads the chosen variables' values from ws's checkpoint into the session."""
    from tensorlite.checkpoint import bundle  # noqa: PLC0415 - protobuf, when used
    reader = bundle.BundleReader(_prefix(ws.ckpt_to_initialize_from))
    for name, v in _chosen(ws, variables):
        prev = ws.var_name_to_prev_var_name.get(name, name)
        if prev not in reader.entries:
            raise errors.NotFoundError(None, None, f"warm_start_from: {prev} is not in "
                                       f"checkpoint {reader.prefix}")
        graph_checkpoint.assign_from(session, v, reader, prev,
                                     f"warm_start_from ({reader.prefix})")
