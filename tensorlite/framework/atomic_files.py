"""Crash-safe files: write to `<path>.tmp-<pid>`, flush, rename; reclaim what dead writers left.

Every file tensorlite writes for later (models, checkpoints, caches) goes through here, so a
process killed at any instant leaves the old complete file or the new one, and the next
writer removes the temporary files and lock files of writers that no longer run.

Example:
    >>> write_file("/tmp/out.bin", b"data")        # old or new, never torn
    >>> remove_dead_temps("/tmp/out.bin")          # leftovers of killed writers
"""
import os
import re

from tensorlite.framework import errors

_TEMP = re.compile(r"\.tmp-(\d+)$")


def pid_alive(pid):
    """Whether process `pid` exists (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def temp_path(path):
    """The temporary name this process writes `path` under."""
    return f"{path}.tmp-{os.getpid()}"


def dead_temp_pid(name):
    """The pid of a temp file name whose writer is dead, else None."""
    m = _TEMP.search(name)
    if m is None:
        return None
    pid = int(m.group(1))
    return pid if pid != os.getpid() and not pid_alive(pid) else None


def fsync_dir(directory):
    """Makes a rename in `directory` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_temp(path, data):
    """Writes `data` to `temp_path(path)`, flushed to disk; returns that name."""
    tmp = temp_path(path)
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return tmp


def publish(tmp, path):
    """Renames a complete temp file over `path` (atomic) and makes the rename durable."""
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(os.path.abspath(path)))


def write_file(path, data):
    """Replaces `path` by `data` atomically: a kill leaves the old or the new contents."""
    publish(write_temp(path, data), path)


def remove_dead_temps(path, keep=None):
    """Removes `<path>*.tmp-<pid>` files in `path`'s directory whose writer is dead.
    `keep(name)` may return True for temps a caller still needs (e.g. to finish a commit)."""
    directory = os.path.dirname(os.path.abspath(path))
    stem = os.path.basename(path)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(stem) and dead_temp_pid(name) is not None \
                and not (keep and keep(name)):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:  # another writer removed it first
                pass


def acquire_lock(lock_path, what):
    """Creates `lock_path` holding this pid; a lock whose writer died is reclaimed, a live
    one is AlreadyExistsError. Returns the path (delete it to release)."""
    for _ in range(2):
        try:
            fd = os.open(lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            owner = _lock_owner(lock_path)
            if (owner is not None and not pid_alive(owner)) or _abandoned_empty(lock_path):
                try:
                    os.unlink(lock_path)  # a killed writer's lock: take it over
                except FileNotFoundError:
                    pass
                continue
            raise errors.AlreadyExistsError(
                None, None, f"There appears to be a concurrent {what} running - lockfile "
                f"already exists ('{lock_path}'"
                + (f", held by running process {owner}" if owner else "")
                + "). If you are sure no other running job is writing it, delete the "
                "lockfile and re-run.") from None
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return lock_path
    raise errors.AlreadyExistsError(None, None, f"could not take the lock {lock_path}: other "
                                    f"writers keep taking it; retry")


def _abandoned_empty(lock_path, age_s=10.0):
    """A lock file left empty (its writer died between creating it and writing its pid)."""
    import time  # noqa: PLC0415
    try:
        st = os.stat(lock_path)
    except OSError:
        return False
    return st.st_size == 0 and time.time() - st.st_mtime > age_s


def _lock_owner(lock_path):
    try:
        with open(lock_path, encoding="ascii", errors="replace") as f:
            text = f.read(32).strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
