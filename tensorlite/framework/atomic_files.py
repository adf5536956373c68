"""Crash-safe files: write `NAME.tmp-PID-HOST`, fsync, rename over `NAME`; reclaim what
dead writers of this host left, and nothing else.

Every file tensorlite writes for later (models, checkpoints, caches, hub modules) goes
through here, so a process killed at any instant leaves the old complete file or the new
one. A writer killed before its rename leaves `NAME.tmp-PID-HOST` behind (HOST: a digest
of the host name); the next writer in the same directory removes the temporary files that
this host's processes no longer running left (a `keep` callback may first salvage one, as
the checkpoint writer does with an index whose data file was already renamed into place),
and takes over lock files whose owner is dead. A name without this host's tag (a user's
`results.tmp-999`, another host's live writer on a shared file system) is never touched.

Example:
    >>> write_bytes("/tmp/out.bin", b"data")       # old or new, never torn
    >>> temp_name("/tmp/x.index")                  # '/tmp/x.index.tmp-1234-3f0c9a1b2d4e'
"""
import hashlib
import os
import re
import socket
import time

from tensorlite.framework import errors

_TEMP = re.compile(r"^(?P<name>.+)\.tmp-(?P<pid>\d{1,10})-(?P<host>[0-9a-f]{12})$")
_MAX_PID = 2 ** 31 - 1  # pid_t: larger ids are no process (and overflow os.kill)


def host_tag(host=None):
    """A short, file-name-safe digest of a host name (this host's by default)."""
    host = socket.gethostname() if host is None else host
    return hashlib.sha1(host.encode("utf-8")).hexdigest()[:12]


def temp_name(path):
    """The temporary name this process writes `path` under."""
    return f"{path}.tmp-{os.getpid()}-{host_tag()}"


def is_dead_own_temp(pid, host):
    """Whether a temporary's pid and host tag (strings from its name) prove it was left by
    a process of this host that no longer runs."""
    return host == host_tag() and pid.isdigit() and 0 < int(pid) <= _MAX_PID and \
        int(pid) != os.getpid() and not pid_alive(int(pid))


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
        if m and is_dead_own_temp(m["pid"], m["host"]) and \
                os.path.isfile(os.path.join(directory, name)):
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
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def publish(tmp, path):
    """Renames a complete, fsynced temporary file over `path` and makes that durable."""
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(os.path.abspath(path)))


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
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    publish(tmp, path)


def write_bytes(path, data):
    """Writes `data` to `path` atomically: the old or the new complete file after a crash."""
    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(data)
    write_with(path, write)


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
