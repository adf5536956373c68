"""Temporary names for writes that must appear whole, and the cleanup of those left by
killed writers.

A writer writes `NAME.tmp-PID`, fsyncs it and renames it over `NAME`. A writer killed
before its rename leaves `NAME.tmp-PID` behind; the next writer in the same directory calls
`remove_dead_temps`, which removes the temporary files of processes that no longer run
(a `keep` callback may first salvage one, as the checkpoint writer does with an index whose
data file was already renamed into place).

Example:
    >>> tmp = temp_name("/tmp/x.index")   # '/tmp/x.index.tmp-1234'
"""
import os
import re

_TEMP = re.compile(r"^(?P<name>.+)\.tmp-(?P<pid>\d+)$")


def temp_name(path):
    """The temporary name this process writes `path` under."""
    return f"{path}.tmp-{os.getpid()}"


def pid_alive(pid):
    """Whether a process with this id runs (one we may not signal counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def dead_temps(directory):
    """(temporary path, final path) of the temporary files in `directory` whose writer is
    gone."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    out = []
    for name in names:
        m = _TEMP.match(name)
        if m and int(m["pid"]) != os.getpid() and not pid_alive(int(m["pid"])):
            out.append((os.path.join(directory, name), os.path.join(directory, m["name"])))
    return out


def remove_dead_temps(directory, keep=None):
    """Removes the temporary files of dead writers in `directory`; `keep(tmp, final)`
    returning True means it dealt with that file itself."""
    for tmp, final in dead_temps(directory):
        if keep is not None and keep(tmp, final):
            continue
        try:
            os.remove(tmp)
        except OSError:
            pass  # another writer removed it first


def fsync_file(f):
    f.flush()
    os.fsync(f.fileno())


def fsync_dir(directory):
    """Makes renames in `directory` durable (where the platform allows opening a dir)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_with(path, write):
    """Makes `path` atomically with `write(temporary_path)`: dead writers' temporaries in
    the directory are removed first; the written file is fsynced, then renamed over `path`
    (removed instead if `write` fails)."""
    directory = os.path.dirname(os.path.abspath(path))
    remove_dead_temps(directory)
    tmp = temp_name(path)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    fsync_dir(directory)


def write_bytes(path, data):
    """Writes `data` to `path` atomically: the old or the new complete file after a crash."""
    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(data)
    write_with(path, write)
