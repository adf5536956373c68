"""What a tuner reads from its project directory, checked, and where it may write.

The project directory (`directory/project_name`) may be shared, copied from elsewhere or
edited by hand, so its files are data to check, never trusted names:

* trial ids are what KerasTuner writes: decimal digits (zero-padded, "00", "01", ...),
  nothing with a path separator or `..`; a trial file must sit in `trial_<its id>/`;
* checkpoint names recorded in a trial are plain file names in the trial's directory;
* hyperparameter values lie in their declared domains (oracles may check more, such as
  Hyperband's epochs);
* every path the tuner reads or writes is resolved with realpath and must stay under the
  project directory (a `trial_NN` or `oracle.json` that is a link out of it is refused);
* a trial file that is corrupt or fails these checks is reported (a RuntimeWarning naming
  the file and what is wrong) and skipped, so the search goes on without it.

Example:
    >>> check_trial_id("07", "trial.json")
    '07'
    >>> check_trial_id("../../x", "trial.json")   # doctest: +SKIP
    DataLossError: trial.json: trial id '../../x' is not a KerasTuner trial id ...
"""
import json
import math
import os
import re
import shutil
import warnings

from tensorlite.framework import errors

__all__ = ["check_trial_id", "check_weights_name", "inside", "read_json_checked",
           "trial_dict_problem", "values_problem", "warn_skipped", "remove_project",
           "TRIAL_DIR"]

TRIAL_DIR = re.compile(r"^trial_(?P<id>[0-9]{1,9})$")
_TRIAL_ID = re.compile(r"^[0-9]{1,9}$")
_WEIGHTS = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")
_STATUSES = ("RUNNING", "IDLE", "INVALID", "STOPPED", "COMPLETED", "FAILED")
# A trial or oracle file is a few kilobytes; anything far larger is not one of ours.
MAX_STATE_FILE_BYTES = 64 << 20


def check_trial_id(trial_id, source):
    """`trial_id` if it is a KerasTuner trial id (decimal digits), else DataLossError."""
    if not isinstance(trial_id, str) or not _TRIAL_ID.match(trial_id):
        raise errors.DataLossError(
            None, None, f"{source}: trial id {trial_id!r} is not a KerasTuner trial id "
                        f"(decimal digits such as '00'); the file is corrupt or crafted")
    return trial_id


def check_weights_name(name, source):
    """A checkpoint name recorded in a trial: a plain file name (no directory, no `..`)."""
    if name is None:
        return None
    if not isinstance(name, str) or not _WEIGHTS.match(name) or ".." in name:
        raise errors.DataLossError(
            None, None, f"{source}: checkpoint name {name!r} is not a file name in the "
                        f"trial's directory; the file is corrupt or crafted")
    return name


def inside(project_dir, path):
    """`path` if its real path is under the project directory's, else
    PermissionDeniedError (a link in the project pointing out of it)."""
    base = os.path.realpath(project_dir)
    real = os.path.realpath(path)
    if os.path.commonpath([base, real]) != base:
        raise errors.PermissionDeniedError(
            None, None, f"{path} resolves to {real}, outside the tuner's project directory "
                        f"{base}; refusing to use it (remove the link, or use another "
                        f"directory)")
    return path


def read_json_checked(path):
    """The JSON in `path`; DataLossError (naming it) if it is too large or not JSON."""
    try:
        size = os.path.getsize(path)
        if size > MAX_STATE_FILE_BYTES:
            raise errors.DataLossError(None, None, f"{path}: {size} bytes is far too large "
                                                   f"for a tuner state file")
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, bad UTF-8, deep nesting
        raise errors.DataLossError(None, None, f"{path} is not valid JSON "
                                               f"({type(e).__name__}: {e})") from None


def trial_dict_problem(d, dir_id):
    """What is wrong with a parsed trial.json found in `trial_<dir_id>/`, or None."""
    if not isinstance(d, dict):
        return f"holds a {type(d).__name__}, not a trial"
    trial_id = d.get("trial_id")
    if not isinstance(trial_id, str) or not _TRIAL_ID.match(trial_id):
        return f"trial id {trial_id!r} is not a KerasTuner trial id (decimal digits)"
    if trial_id != dir_id:
        return f"trial id {trial_id!r} does not match its directory trial_{dir_id}"
    if d.get("status") not in _STATUSES:
        return f"status {d.get('status')!r} is not one of {list(_STATUSES)}"
    values = d.get("values", {})
    if not isinstance(values, dict):
        return "its values are not a mapping"
    parent = values.get("tuner/trial_id")
    if parent is not None and (not isinstance(parent, str) or not _TRIAL_ID.match(parent)):
        return f"tuner/trial_id {parent!r} is not a KerasTuner trial id"
    return _fields_problem(d)


def values_problem(values, space):
    """What is wrong with a trial's hyperparameter values, or None: a value of a declared
    hyperparameter must lie in its domain (a crafted `units: 10**12` would otherwise build
    a model of that size); a value of one not declared yet must be a JSON scalar."""
    for name, v in values.items():
        hp = space._space.get(name)
        if hp is not None and not hp.contains(v):
            return f"value {v!r} of {name!r} is outside its search space ({hp.config()})"
        if hp is None and not (v is None or isinstance(v, (str, bool, int, float))):
            return f"value of {name!r} is a {type(v).__name__}, not a hyperparameter value"
    return None


def _fields_problem(d):
    score = d.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                              or math.isnan(score)):
        return f"score {score!r} is not a number"
    if d.get("best_step") is not None and not isinstance(d.get("best_step"), int):
        return f"best_step {d.get('best_step')!r} is not an integer"
    if not isinstance(d.get("metrics") or {}, dict):
        return "its metrics are not a mapping"
    if d.get("message") is not None and not isinstance(d.get("message"), str):
        return "its message is not text"
    owner = d.get("owner")
    if owner is not None and not (isinstance(owner, dict) and
                                  isinstance(owner.get("host"), str) and
                                  _is_pid(owner.get("pid"))):
        return f"owner {owner!r} is not {{host, pid}} with a process id"
    weights = d.get("weights")
    if weights is not None and (not isinstance(weights, str) or not _WEIGHTS.match(weights)
                                or ".." in weights):
        return f"checkpoint name {weights!r} is not a file name in the trial's directory"
    return None


def remove_project(project_dir):
    """`overwrite=True`: removes what a tuner writes in its project directory (the
    trial_NN directories, oracle.json, oracle.lock) and then the directory if that left it
    empty. Anything else there (a user's file, a link, however named) is left alone: the
    directory is only ours in part."""
    if os.path.islink(project_dir):
        raise errors.PermissionDeniedError(
            None, None, f"{project_dir} is a link; overwrite=True removes a project "
                        f"directory's contents only where the directory itself is real")
    for name in os.listdir(project_dir):
        path = os.path.join(project_dir, name)
        if os.path.islink(path):
            continue
        if TRIAL_DIR.match(name) and os.path.isdir(path):
            shutil.rmtree(path)
        elif name in ("oracle.json", "oracle.lock") and os.path.isfile(path):
            os.remove(path)
    try:
        os.rmdir(project_dir)
    except OSError:
        pass  # other files remain: they are not the tuner's to remove


def _is_pid(pid):
    """A process id os.kill accepts as one process (not a group: 0 and negatives are)."""
    return isinstance(pid, int) and not isinstance(pid, bool) and 0 < pid <= 2 ** 31 - 1


def warn_skipped(path, reason, reported):
    """Reports a skipped state file once per version of it (`reported`: the set of what
    was already reported)."""
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
    except OSError:
        key = (path, None, None)
    if key in reported:
        return
    reported.add(key)
    warnings.warn(f"KerasTuner: skipping {path}: {reason}. The search goes on without it; "
                  f"remove or fix the file to silence this warning.", RuntimeWarning,
                  stacklevel=4)
